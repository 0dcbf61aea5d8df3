"""Re-key a corpus recorded under an older signature normaliser (signature.NORMALISER_VERSION).

Why a migration and not a fresh start: a corpus holds history (first seen, counts), triage entries, bisections,
reductions and verifications keyed by finding id. When the normaliser changes what a bug's identity is, each
stored example is judged again from what it stored, and its finding moves to the new id with the old id kept as
an alias (gfxhound/corpus_store/fold.py); findings that turn out to be one bug are folded; nothing stored is deleted.

A finding whose examples now show several bugs splits: the id that keeps most of its examples inherits its
history (count, reductions, bisections, the old id as an alias); the others start from their own examples and
name the old id in `split_from`, so the old id still resolves to one finding.

What can be re-keyed from the record alone:
- memory-model findings: run.json holds every violation message, and the target names the table; an example
  whose kernel shows two defects goes to both findings;
- an unreduced wrong result: its provisional key is computed again from the spec, its capabilities and the
  recorded comparison (`culprit_of`, oracle/culprit.py through the CLI); one without ops or culprit is keyed by
  the spec's own hash (never a catch-all). A reduced one keeps its id: its reduced shape is its identity
  (reduce/regroup.py), and moving it would move its reduction and draft under aliases/;
- any other message: normalised again with the current normaliser; a generic diagnostic or an assertion in a
  generic header, whose identity (the pass) was only in the compiler's full output, is completed from the
  example's `output.txt` when it has one (without one it keeps its id); a pass's clean refusal becomes
  `unsupported` (version 8), keyed by its message template and pass.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from gfxhound.atomic import write_atomic as _atomic_write
from gfxhound.records import FORMAT_OF_VERDICT
from gfxhound.spec import family_of
from gfxhound.signature import (CAST_TABLE_STAGE, MEMORY_MODEL_MESSAGE, MEMORY_MODEL_STAGE, NORMALISER_VERSION,
                                generic_header, header_identity, identity, memory_model_headline,
                                memory_model_signatures, miscompile_signature, normalise, python_exception,
                                signature_hash, unsupported_key, unsupported_template, wrong_result_signature)

from .finding import Finding
from .fold import absorb, finish_pending
from .layout import EXAMPLES, Example


def rekey(run: dict, spec: dict, output: str, table_of, culprit: str = "",
          reduced: bool = False) -> "list[tuple[str | None, str, str, str]]":
    """[(signature, normalised, message, verdict)] of one stored example under the current normaliser; signature
    None: unchanged (the example stays with its finding, whatever id that finding has now). `culprit`: the op
    behind an unreduced wrong result's first wrong output; `reduced`: its finding has a reduced kernel."""
    verdict, stage, target = run["verdict"], run.get("stage", ""), run["target"]
    message = run.get("message", "")
    return [(sig, normalised, text, verdict if changed is None else changed)
            for sig, normalised, text, changed in _rekey(run, spec, output, table_of, culprit, reduced, verdict,
                                                           stage, target, message)]


def _rekey(run, spec, output, table_of, culprit, reduced, verdict, stage, target, message):
    if stage == MEMORY_MODEL_STAGE:
        lines = [m for m in message.splitlines() if m.strip() and not m.startswith("memory model (")]
        # a message cut at 2,000 characters is dropped
        whole = [m for m in lines if MEMORY_MODEL_MESSAGE.match(m.strip())]
        lines = whole or lines
        return [(sig, key, "\n".join([memory_model_headline(key, own), *own, *[m for m in lines if m not in own]]),
                 None) for key, sig, own in memory_model_signatures(lines, table_of(target) or target)]
    if stage == "run" and verdict in ("miscompile", "nondeterministic") and culprit and not reduced:
        normalised, signature = wrong_result_signature(verdict, target, run.get("backend", ""), culprit)
        return [(None if signature == run.get("signature") else signature, normalised, message, None)]
    if stage == "run" and run.get("normalised", "").rstrip().endswith(":"):  # no ops: this kernel alone
        family = family_of(spec)
        normalised, signature = miscompile_signature(verdict, target, [], f"{family} {run['spec_hash']}")
        return [(signature, normalised, message, None)]
    if stage == "run" or stage == CAST_TABLE_STAGE or not message:  # a conversion's identity is not a message's
        return [(None, run.get("normalised", ""), message, None)]
    if output and identity(output) and identity(output) not in message and (
            "pass pipeline" in message or "PassManager::run failed" == message.split(": ", 1)[-1].strip()):
        message = f"{message} {identity(output)}"
    native = _native(message)
    if output and generic_header(native) and header_identity(output) and header_identity(output) not in message:
        message = f"{message} {header_identity(output)}"  # version 8: the pass that hit a generic header's assert
    normalised = normalise(message)
    frames = run.get("frames", [])
    if output and "Traceback (most recent call last)" in output:  # frames judged again (version 7)
        frames = python_exception(output)[2]
    template = unsupported_template(native) if verdict in ("ice", "unsupported") else ""
    if template:  # a pass's clean refusal (version 8)
        verdict, frames, normalised = "unsupported", [], unsupported_key(template, output)
        if run["verdict"] == "unsupported" and not output:  # judged so when it was found: its key stands
            normalised = run.get("normalised", normalised)
    if normalised == run.get("normalised") and frames == run.get("frames", []) and verdict == run["verdict"]:
        return [(None, normalised, message, None)]
    return [(signature_hash(verdict, stage, normalised, frames), normalised, message, verdict)]


def _native(message: str) -> str:
    """The compiler's own diagnostic in a recorded message: after the `RuntimeError: ... | ` wrapper, without the
    `[signal:N]` a crash adds."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    native = first.split(" | ", 1)[1] if " | " in first else first
    return re.sub(r" \[signal:\d+\]$", "", native)


def migrate(corpus, table_of, forced_of, triage_path: "Path | None" = None, dry_run: bool = False,
            culprit_of=None) -> dict:
    """Re-key every finding recorded under an older normaliser, and label those seen only in forced configurations
    (`forced_of(env, target)`: fuzz/forced.py). `culprit_of(spec, caps, run)`: the op behind an unreduced wrong
    result (oracle/culprit.py; None leaves wrong results' provisional keys as they are). Returns {"moved": {old:
    [new, ...]}, "unchanged": n}; with dry_run, only says what it would do."""
    if not dry_run:
        finish_pending(corpus)
    moved, unchanged = {}, 0
    for finding in corpus.findings():
        if finding.normaliser >= NORMALISER_VERSION:
            unchanged += 1
            continue
        plan, labels = {}, set()  # new id -> [normalised, message, [(example dir, run)], verdict]; configurations
        reduced = corpus.reduction(finding.signature, "spec").exists
        for example in corpus.examples(finding.signature):
            ex, run, spec, output = example.dir, dict(example.run), example.spec, example.output()
            labels.add(forced_of((spec.get("launch") or {}).get("env") or {}, run["target"]) or "default")
            culprit = culprit_of(spec, example.caps, run) if culprit_of and run.get("stage") == "run" else ""
            for sig, normalised, message, verdict in rekey(run, spec, output, table_of, culprit, reduced):
                plan.setdefault(sig or finding.signature, [normalised, message, [], verdict])[2].append((ex, run))
        finding.configuration = "default" if "default" in labels or not labels else sorted(labels)[0]
        if not plan or set(plan) == {finding.signature}:
            unchanged += 1
            if not dry_run:
                _stamp(corpus, finding)
            continue
        moved[finding.signature] = sorted(plan)
        if not dry_run:
            _move(corpus, finding, plan, forced_of)
    if triage_path is not None and Path(triage_path).exists() and moved and not dry_run:
        _retarget_triage(Path(triage_path), moved, corpus.aliases())
    return {"moved": moved, "unchanged": unchanged, "normaliser": NORMALISER_VERSION}


def _move(corpus, finding, plan, forced_of):
    heir = finding.signature if finding.signature in plan else max(
        sorted(plan), key=lambda s: len(plan[s][2]))  # the id that inherits the finding's history
    owners = {}  # example name -> the ids it goes to
    for sig, (_, _, examples, _) in plan.items():
        for ex, _run in examples:
            owners.setdefault(ex.name, []).append(sig)
    for sig, (normalised, message, examples, verdict) in sorted(plan.items()):
        if sig != heir:
            _split_off(corpus, finding, sig, normalised, message, examples, owners, forced_of, verdict)
    normalised, message, examples, verdict = plan[heir]
    for ex, run in examples:  # the example's record says what it now is, and what it was
        _rewrite_run(ex, run, heir, normalised, message, verdict)
    with corpus._locked():  # the computed label and normaliser first: the fold keeps them
        finding.normaliser, finding.format = NORMALISER_VERSION, 2
        finding.examples = [e for e in finding.examples if heir in owners.get(e, [heir])]
        corpus._save(finding)
    if heir != finding.signature:
        target = Finding(**{**finding.to_json(), "signature": heir, "normalised": normalised, "count": 0,
                            "message": message.splitlines()[0] if message else "", "examples": [], "aliases": [],
                            "verdict": verdict, "format": 2})
        absorb(corpus, finding.signature, heir, target)


def _split_off(corpus, finding, sig, normalised, message, examples, owners, forced_of, verdict):
    """Examples of `finding` that show another bug now: a finding of their own (or folded into an existing one),
    with their own targets, times and configuration; the old id in `split_from`."""
    runs = [run for _, run in examples]
    with corpus._locked():
        existing = corpus._load(sig)
        new = existing or Finding(
            signature=sig, verdict=verdict, stage=finding.stage, normalised=normalised,
            message=message.splitlines()[0] if message else "", count=0, examples=[], aliases=[],
            first_seen=min(r.get("time") or finding.first_seen for r in runs),
            last_seen=max(r.get("time") or finding.last_seen for r in runs), targets=[], toolchains=[],
            normaliser=NORMALISER_VERSION)
        dest = corpus.path(sig) / EXAMPLES
        dest.mkdir(parents=True, exist_ok=True)
        labels = [] if existing is None else [existing.configuration]
        for ex, run in examples:
            if not (dest / ex.name).exists():
                if owners[ex.name] == [sig]:
                    ex.rename(dest / ex.name)
                else:  # the kernel shows this bug and another: each finding keeps a copy
                    shutil.copytree(ex, dest / ex.name)
                _rewrite_run(dest / ex.name, dict(run), sig, normalised, message, verdict)
                new.examples.append(ex.name)
                new.count += 1
            env = (Example(dest / ex.name).spec.get("launch") or {}).get("env")
            labels.append(forced_of(env or {}, run["target"]) or "default")
            new.targets = sorted(set(new.targets) | {run["target"]})
            new.toolchains = sorted(set(new.toolchains) | {run.get("toolchain", "")} - {""})
        new.configuration = "default" if "default" in labels else sorted(labels)[0]
        new.split_from = sorted(set(new.split_from) | {finding.signature})
        corpus._save(new)
        moved = {ex.name for ex, _ in examples if owners[ex.name] == [sig]}
        finding.count = max(1, finding.count - len(moved))
        finding.examples = [e for e in finding.examples if e not in moved]


def _rewrite_run(ex, run, sig, normalised, message, verdict):
    if run.get("signature") == sig and run.get("normaliser") == NORMALISER_VERSION:
        return
    run.update(signature=sig, normalised=normalised, message=message, normaliser=NORMALISER_VERSION,
               migrated_from=run.get("migrated_from") or run.get("signature"), verdict=verdict)
    if verdict in FORMAT_OF_VERDICT:  # a record an older gfxhound cannot read says so (records.py)
        run["format"] = max(run.get("format", 1), FORMAT_OF_VERDICT[verdict])
    Example(ex).rewrite_run(run, _atomic_write)


def _stamp(corpus, finding):
    finding.normaliser, finding.format = NORMALISER_VERSION, 2
    with corpus._locked():
        corpus._save(finding)


def _retarget_triage(path: Path, moved: dict, aliases: dict):
    """Triage entries (known issues and recorded searches) that name an old id now name the id that inherited it
    (they would still match through the alias; this names the finding plainly)."""
    data = json.loads(path.read_text())
    changed = False
    for entry in [*data.get("issues", []), *data.get("searched", [])]:
        old = entry.get("signature")
        hit = next((o for o in moved if old and o.startswith(old)), None)
        if hit and hit in aliases:
            entry["signature"] = aliases[hit]
            changed = True
    if changed:
        _atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")  # as Triage.save writes it
