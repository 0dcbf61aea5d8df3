"""Merge one corpus into another (`gfxhound corpus merge`, a nightly's shards): counts summed, sets unioned,
missing example directories copied, each installed atomically under the target's lock."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from gfxhound.atomic import install_dir, write_synced

from .finding import CorpusError, Finding
from .layout import EXAMPLES, TOOLCHAINS, is_temp


def merge(into, other) -> "tuple[int, int]":
    """Fold other's findings into this corpus: counts summed, sets unioned, missing example dirs copied.

    Sums are not idempotent: merging the same source twice counts its occurrences twice, so merging a corpus
    into itself is refused. Example dirs already here are kept as they are (never overwritten); reduced/ and
    bisect.json are derived data and are not copied. Returns (signatures added, signatures merged)."""
    if other.root.resolve() == into.root.resolve():
        raise CorpusError(f"corpus at {into.root}: cannot merge a corpus into itself")
    for tool in sorted(other.toolchain_files()):  # what the toolchain ids name
        mine_tool = into.root / TOOLCHAINS / tool.name
        if not mine_tool.exists():
            into.write_toolchain(json.loads(tool.read_text()))
    theirs = other.findings()
    added = merged = 0
    with into._locked():
        table = {**other.aliases(), **into.aliases()}  # ids folded on either side stay folded here
        if table:
            into.write_aliases(table)
        for t in theirs:
            their_id, t.signature = t.signature, into.aliases().get(t.signature, t.signature)
            mine = into._load(t.signature)
            ex_root = into.path(t.signature) / EXAMPLES
            have = into._disk_examples(t.signature)
            copied = []
            for src in other.example_dirs(their_id):
                if src.name in have:
                    continue
                install_dir(ex_root / src.name, lambda tmp, src=src: shutil.copytree(
                    src, tmp, copy_function=lambda s, d: write_synced(d, Path(s).read_bytes()),
                    ignore=lambda d, names: [n for n in names if is_temp(n)]))
                copied.append(src.name)
            if mine is None:
                added += 1
                mine = Finding(**{**t.to_json(), "examples": []})
            else:
                merged += 1
                mine.count += t.count
                mine.first_seen = min(mine.first_seen, t.first_seen)
                mine.last_seen = max(mine.last_seen, t.last_seen)
                mine.targets = sorted(set(mine.targets) | set(t.targets))
                mine.toolchains = sorted(set(mine.toolchains) | set(t.toolchains))
                mine.aliases = sorted(set(mine.aliases) | set(t.aliases))
                if t.configuration == "default":
                    mine.configuration = "default"
                if mine.status == "new":
                    mine.status = t.status
            mine.examples += [e for e in have + copied if e not in mine.examples]
            into._save(mine)
    return added, merged
