"""The reduced LLVM IR through each Triton release's own code generator: which LLVM revisions have the bug.

Why: a release bisection of a finding's kernel says which Triton release first fails, but when the fault is in
LLVM's code generation (a finding whose IR was reduced through Triton's code generator, reduce/through.py), the
maintainer who fixes it works in llvm-project and wants a revision range. Each release ships one LLVM (bundled, or
from 3.9 a separately pinned AMD code generator), so running the *reduced IR* through each release's code
generator, with the property the reduction kept, turns the release range into an LLVM range: the revision of the
last release without the bug and of the first with it. Nothing is built: the releases are the bisection's venvs.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL
from gfxhound.codegen import CodegenError, bundled_llvm, triton_codegen
from gfxhound.reduce.through import shows, what_it_shows

COMPARE = "https://github.com/llvm/llvm-project/compare/{old}...{new}"


def survey(reduction, versions: list, python_of, timeout: float = 120, log=None) -> dict | None:
    """Run the reduced IR of `reduction` (a corpus Reduction at level llvm-ir, reduced through a Triton code
    generator) through the code generator of each release in `versions` (oldest first); `python_of(version)` is
    that release's interpreter, or None when it cannot be had. None when the reduction is not of that kind."""
    record = reduction.record
    codegen, prop = record.get("codegen") or {}, record.get("property") or {}
    if codegen.get("kind") != "triton" or not reduction.ll.exists() or not prop:
        return None
    text = reduction.ll.read_text(errors="replace")
    extra = codegen.get("extra") or {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="gfxhound-codegens-") as tmp:
        ll = Path(tmp) / REDUCED_LL
        ll.write_text(text)
        for version in versions:
            row = {"version": version}
            python = python_of(version)
            if python is None:
                rows.append(dict(row, present=None, shows="no venv for this release"))
                continue
            try:
                release = triton_codegen(python, codegen["arch"], extra.get("fp_fusion", True),
                                         extra.get("schedule_hint", "none"))
            except CodegenError as exc:
                rows.append(dict(row, present=None, shows=str(exc)[:200]))
                continue
            compiled = release.run(ll, timeout)
            present = shows(prop, release, compiled, text)
            rows.append(dict(row, codegen=release.name, llvm=revision_of(release, python), present=present,
                             shows=what_it_shows(prop, compiled, text)))
            if log:
                log(f"  reduced IR through {release.name}: {'present' if present else 'absent' if present is False else 'cannot test'}")
    return {"arch": codegen["arch"], "property": prop.get("kind"), "rows": rows, "range": llvm_range(rows)}


def revision_of(codegen, python: str) -> str:
    """The LLVM revision of a release's code generator: the pinned AMD code generator's (3.9+, build suffix
    dropped), else the bundled LLVM's."""
    if codegen.revision:
        return codegen.revision.split("-")[0]
    return bundled_llvm(python)


def llvm_range(rows: list) -> dict | None:
    """The LLVM revisions around the change: the last release without the bug before the first with it, when the
    releases that could test say absent up to one point and present after it; None otherwise."""
    tested = [r for r in rows if r.get("present") is not None]
    states = [r["present"] for r in tested]
    if True not in states or False not in states:
        return None
    first = states.index(True)
    if first == 0 or not all(states[first:]) or any(states[:first]):
        return None
    old, new = tested[first - 1], tested[first]
    if not old.get("llvm") or not new.get("llvm"):
        return None
    return {"good": {"version": old["version"], "llvm": old["llvm"]},
            "bad": {"version": new["version"], "llvm": new["llvm"]},
            "compare": COMPARE.format(old=old["llvm"], new=new["llvm"])}
