"""Re-key a corpus recorded under an older signature normaliser (signature.NORMALISER_VERSION).

Why a migration and not a fresh start: a corpus holds history (first seen, counts), triage entries, bisections,
reductions and verifications keyed by finding id. When the normaliser changes what a bug's identity is, each
stored example is judged again from what it stored, its finding moves to the new id, and the old id stays as an
alias (`corpus get`, triage and `corpus merge` still know it). Findings that turn out to be one bug are merged
(Corpus.absorb); nothing stored is deleted.

What can be re-keyed from the record alone:
- memory-model findings: run.json holds every violation message, and the target names the table;
- a miscompile whose provisional signature held no ops: the spec's own hash stands in (never a catch-all);
- any other message: normalised again with the current normaliser; a generic diagnostic whose identity (the pass)
  was only in the compiler's full output is completed from the example's `output.txt` when it has one.
"""
from __future__ import annotations

import json
from pathlib import Path

from gfxhound.corpus_store import Corpus, Finding, _atomic_write
from gfxhound.signature import (MEMORY_MODEL_STAGE, NORMALISER_VERSION, identity, memory_model_headline,
                                memory_model_signatures,
                                miscompile_signature, normalise, signature_hash)


def rekey(run: dict, spec: dict, output: str, table_of) -> "tuple[str, str, str]":
    """(signature, normalised, message) of one stored example under the current normaliser."""
    verdict, stage, target = run["verdict"], run.get("stage", ""), run["target"]
    message = run.get("message", "")
    if stage == MEMORY_MODEL_STAGE:
        lines = [m for m in message.splitlines() if m.strip() and not m.startswith("memory model (")]
        key, signature, own = memory_model_signatures(lines, table_of(target) or target)[0]
        rest = [m for m in lines if m not in own]
        return signature, key, "\n".join([memory_model_headline(key, own), *own, *rest])
    if stage == "run" and run.get("normalised", "").rstrip().endswith(":"):  # no ops: this kernel alone
        family = "collectives" if spec.get("collective") else "kernels"
        normalised, signature = miscompile_signature(verdict, target, [], f"{family} {run['spec_hash']}")
        return signature, normalised, message
    if stage == "run" or not message:
        return run["signature"], run.get("normalised", ""), message
    if output and identity(output) and identity(output) not in message and (
            "pass pipeline" in message or "PassManager::run failed" == message.split(": ", 1)[-1].strip()):
        message = f"{message} {identity(output)}"
    normalised = normalise(message)
    if normalised == run.get("normalised"):
        return run["signature"], normalised, message
    return signature_hash(verdict, stage, normalised, run.get("frames", [])), normalised, message


def migrate(corpus: Corpus, table_of, forced_of, triage_path: "Path | None" = None, dry_run: bool = False) -> dict:
    """Re-key every finding recorded under an older normaliser, and label those seen only in forced configurations
    (`forced_of(env, target)`: fuzz/forced.py). Returns {"moved": {old: [new, ...]}, "unchanged": n}; with dry_run,
    only says what it would do."""
    moved, unchanged = {}, 0
    for finding in corpus.findings():
        if finding.normaliser >= NORMALISER_VERSION and finding.format >= 2:
            unchanged += 1
            continue
        plan, labels = {}, set()  # new signature -> (normalised, message, [example dirs]); configurations seen
        for ex in corpus.example_dirs(finding.signature):
            run = json.loads((ex / "run.json").read_text())
            spec = json.loads((ex / "spec.json").read_text()) if (ex / "spec.json").exists() else {}
            labels.add(forced_of((spec.get("launch") or {}).get("env") or {}, run["target"]) or "default")
            output = (ex / "output.txt").read_text(errors="replace") if (ex / "output.txt").exists() else ""
            sig, normalised, message = rekey(run, spec, output, table_of)
            plan.setdefault(sig, [normalised, message, []])[2].append((ex, run))
        finding.configuration = "default" if "default" in labels or not labels else sorted(labels)[0]
        if not plan or set(plan) == {finding.signature}:
            unchanged += 1
            if not dry_run:
                _stamp(corpus, finding)
            continue
        moved[finding.signature] = sorted(plan)
        if dry_run:
            continue
        for sig, (normalised, message, examples) in plan.items():
            for ex, run in examples:  # the example's record says what it now is, and what it was
                run.update(signature=sig, normalised=normalised, message=message, normaliser=NORMALISER_VERSION,
                           migrated_from=run.get("signature"))
                _atomic_write(ex / "run.json", json.dumps(run, indent=1, sort_keys=True))
        first, (normalised, message, _) = sorted(plan.items())[0]
        for sig, (normalised, message, examples) in sorted(plan.items())[1:]:  # a split: later defects apart
            _split_off(corpus, finding, sig, normalised, message, [ex for ex, _ in examples])
        target = Finding(**{**finding.to_json(), "signature": first, "normalised": normalised,
                            "message": message.splitlines()[0] if message else "", "count": 0, "examples": [],
                            "aliases": [], "normaliser": NORMALISER_VERSION, "format": 2})
        corpus.absorb(finding.signature, first, target)
    if triage_path is not None and Path(triage_path).exists() and moved and not dry_run:
        _retarget_triage(Path(triage_path), moved)
    return {"moved": moved, "unchanged": unchanged, "normaliser": NORMALISER_VERSION}


def _stamp(corpus, finding):
    finding.normaliser, finding.format = NORMALISER_VERSION, 2
    with corpus._locked():
        corpus._save(finding)


def _split_off(corpus, finding, sig, normalised, message, examples):
    """Examples of `finding` that are another bug now: a finding of their own (or folded into an existing one)."""
    with corpus._locked():
        existing = corpus._load(sig)
        new = existing or Finding(**{**finding.to_json(), "signature": sig, "normalised": normalised,
                                     "message": message.splitlines()[0] if message else "", "count": 0,
                                     "examples": [], "aliases": [], "normaliser": NORMALISER_VERSION, "format": 2})
        dest = corpus.path(sig) / "examples"
        dest.mkdir(parents=True, exist_ok=True)
        for ex in examples:
            if not (dest / ex.name).exists():
                ex.rename(dest / ex.name)
                new.examples.append(ex.name)
        new.count += len(examples)
        new.aliases = sorted(set(new.aliases) | {finding.signature})
        corpus._save(new)
        finding.examples = [e for e in finding.examples if e not in {ex.name for ex in examples}]
        finding.count = max(0, finding.count - len(examples))
        corpus._save(finding)


def _retarget_triage(path: Path, moved: dict):
    """Triage entries that name an old id now name the new one (the first, where a finding split)."""
    data = json.loads(path.read_text())
    changed = False
    for entry in data.get("issues", []):
        old = entry.get("signature")
        hit = next((o for o in moved if old and o.startswith(old)), None)
        if hit:  # the finding keeps the old id as an alias, so the entry would still match; this names it plainly
            entry["signature"] = moved[hit][0]
            changed = True
    if changed:
        _atomic_write(path, json.dumps(data, indent=1) + "\n")
