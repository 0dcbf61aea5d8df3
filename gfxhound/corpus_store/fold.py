"""Fold one finding into another: one bug found under two ids (a re-keyed signature, two reduced wrong results of
one shape). The folded id becomes an alias: `Corpus.get`, `Corpus.record` (a campaign that meets the old id again
counts it where it went) and `corpus merge` follow <root>/aliases.json.

Why in steps, each safe to repeat: a corpus is shared and a process can be killed at any instant. The source is
first marked with a tombstone (`absorbed_into`) and the alias is written, so from then on every reader sees the
bug under its new id and nobody counts it twice; then its examples and other files move; the target is saved with
the summed counts only if it does not list the source as an alias yet; the source directory goes last.
`finish_pending` completes what a killed fold left, and runs before every fold.
"""
from __future__ import annotations

import os
import shutil

from gfxhound.atomic import fsync_dir

from .finding import CorpusError, Finding
from .layout import ALIASES_DIR, EXAMPLES, FINDING_FILE


def absorb(corpus, source: str, into: str, finding: "Finding | None" = None) -> Finding:
    """Fold finding `source` into `into`: counts summed, sets unioned, examples moved (an example of a spec
    `into` already has, and every other file of `source` (reduced/, bisect.json, verify.json, drafts) go to
    `<into>/aliases/<source>/`), `source` and its aliases kept as aliases. `finding`: what `into` starts as when
    it does not exist yet (re-keying); then `into` is `source` under a new id, and what `source` held (its
    reduction, draft, bisection) stays at the top of `into`'s folder, where every stage looks for it."""
    if source == into:
        raise CorpusError(f"corpus at {corpus.root}: cannot fold finding {source} into itself")
    finish_pending(corpus)
    with corpus._locked():
        return _absorb(corpus, source, into, finding)


def finish_pending(corpus) -> "list[str]":
    """Complete the folds a killed process left half done (findings carrying a tombstone)."""
    done = []
    if not corpus.root.is_dir():
        return done
    with corpus._locked():
        for path in sorted(corpus.root.iterdir()):
            f = corpus._load(path.name) if (path / FINDING_FILE).is_file() else None
            if f is not None and f.absorbed_into:
                _absorb(corpus, f.signature, f.absorbed_into, None)
                done.append(f.signature)
    return done


def _absorb(corpus, source, into, finding):
    src = corpus._load(source)
    if src is None:
        raise CorpusError(f"corpus at {corpus.root}: no finding {source}")
    if src.absorbed_into not in ("", into):
        raise CorpusError(f"corpus at {corpus.root}: finding {source} is being folded into {src.absorbed_into}")
    if not src.absorbed_into:  # 1: the tombstone, then the alias: readers now find the bug under `into`
        src.absorbed_into = into
        corpus._save(src)
    table = corpus.aliases()
    table.update({old: into for old in [source, *src.aliases] if old != into})
    table = {old: (into if new in (source, *src.aliases) else new) for old, new in table.items() if old != into}
    corpus.write_aliases(table)
    src_dir, dst_dir = corpus.path(source), corpus.path(into)
    renamed = corpus._load(into) is None  # a re-keying to a new id: its reduction, draft, bisection stay its own
    dst_dir.mkdir(parents=True, exist_ok=True)
    have = set(corpus._disk_examples(into))  # 2: the examples, then everything else the source holds
    for ex in corpus._disk_examples(source):
        if ex not in have:
            (dst_dir / EXAMPLES).mkdir(exist_ok=True)
            os.rename(src_dir / EXAMPLES / ex, dst_dir / EXAMPLES / ex)
    rest = [p for p in src_dir.iterdir() if p.name not in (FINDING_FILE, EXAMPLES)] if src_dir.is_dir() else []
    if (src_dir / EXAMPLES).is_dir():
        rest += list((src_dir / EXAMPLES).iterdir())  # an example of a spec `into` already has
    keep = dst_dir / ALIASES_DIR / source
    for p in rest:
        if renamed and p.parent == src_dir and not (dst_dir / p.name).exists():
            os.rename(p, dst_dir / p.name)
            continue
        keep.mkdir(parents=True, exist_ok=True)
        os.rename(p, keep / (p.name if p.parent == src_dir else f"examples-{p.name}"))
    dst = corpus._load(into)  # 3: the target, counted once
    if dst is None:
        dst = finding or Finding(**{**src.to_json(), "signature": into, "examples": [], "aliases": [],
                                    "absorbed_into": ""})
        dst.count, dst.examples, dst.aliases = 0, [], []
    if source not in dst.aliases:
        dst.count += src.count
        dst.first_seen = min(dst.first_seen, src.first_seen) if dst.first_seen else src.first_seen
        dst.last_seen = max(dst.last_seen, src.last_seen)
        dst.targets = sorted(set(dst.targets) | set(src.targets))
        dst.toolchains = sorted(set(dst.toolchains) | set(src.toolchains))
        if src.configuration == "default":  # one default-configuration occurrence makes it a default bug
            dst.configuration = "default"
        if dst.status == "new":
            dst.status = src.status
        dst.aliases = sorted((set(dst.aliases) | set(src.aliases) | {source}) - {into})
    dst.examples += [e for e in corpus._disk_examples(into) if e not in dst.examples]
    corpus._save(dst)
    shutil.rmtree(src_dir, ignore_errors=True)  # 4: the source, last
    fsync_dir(corpus.root)
    return dst
