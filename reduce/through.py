"""LLVM IR reduction through a named code generator (gfxhound/codegen.py), keeping the bug's identity.

Why: the code generator that has the bug is often not Debian's llc (Triton 3.9's pinned AMD code generator drops
a wait that llc 22 keeps, FACTS.md), so `llvm-reduce`'s interestingness test must run that one. What a candidate
must keep is the finding's identity, never "any failure" (docs/identity.md):

- a crash: the same first crash line, as `gfxhound.signature.summarise` normalises it (verdict, stage and
  normalised message; the Python frames of a `python -c` call are not the campaign's, so they are left out), or
  the user's `--expect` regular expression over the diagnostics (and the assembly of a run that succeeds);
- a memory-model defect: the code compiles and `gfxhound.oracle.memory_model.check(asm, arch, llir)` still reports
  the finding's key (`gfxhound.signature.memory_model_key`: table, defect, counter), as oracle/judge.py keys it.

llvm-reduce does the shrinking (its delta passes know LLVM IR); each candidate is judged by `judge` in a fresh
process of this interpreter, the compile going to the warm server (reduce/warm.py) when one runs. The result is
re-checked with the plain command that the record names, so what the record says reproduces was seen to.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gfxhound.codegen import Codegen, Compiled

if TYPE_CHECKING:
    from .llvm_ir import IrReduction

# llvm-reduce starts `judge` once a candidate: what only the reduction itself needs (the corpus layout, llvm_ir's
# machinery) is imported inside the functions that use it, which halves a test's start-up

TEST_SCRIPT = '''"""gfxhound interestingness test (written by gfxhound.reduce.through): exit 0 = keep the candidate."""
import json
import sys

from gfxhound.reduce.through import judge
sys.exit(0 if judge(json.loads(open({prop!r}).read()), sys.argv[-1], {server!r}) else 1)
'''


def crash_property(codegen: Codegen, verdict: str = "", stage: str = "", normalised: str = "",
                   expect: str | None = None, timeout: float = 120) -> dict:
    """Keep a crash: its (verdict, stage, normalised first line), or output matching `expect`."""
    return {"kind": "crash", "codegen": codegen.to_json(), "verdict": verdict, "stage": stage,
            "normalised": normalised, "expect": expect, "timeout": timeout}


def memory_model_property(codegen: Codegen, key: str, timeout: float = 120) -> dict:
    """Keep a memory-model defect: the checker's key on the code this code generator makes."""
    return {"kind": "memory-model", "codegen": codegen.to_json(), "key": key, "timeout": timeout}


def failure_of(compiled: Compiled) -> dict:
    """summarise()'s verdict, stage, normalised and message of a failed run."""
    from gfxhound.signature import summarise
    return summarise(compiled.text, compiled.ended)


def memory_model_keys(asm: str, arch: str, llir: str | None) -> list:
    from gfxhound.oracle.memory_model import check
    from gfxhound.oracle.memory_model_tables import TABLES
    from gfxhound.signature import memory_model_key
    table = TABLES.get(arch.split(":")[0], arch)
    return sorted({memory_model_key(v.message(), table) for v in check(asm, arch, llir).violations})


def keeps(prop: dict, compiled: Compiled, candidate_text: str) -> bool:
    """Whether one run of a candidate still shows the property."""
    if prop["kind"] == "memory-model":
        return compiled.status == "ok" and prop["key"] in memory_model_keys(
            compiled.asm, prop["codegen"]["arch"], candidate_text)
    if prop.get("expect"):
        return compiled.status in ("ok", "failed") and bool(
            re.search(prop["expect"], compiled.text + "\n" + compiled.asm, re.M))
    if compiled.status != "failed":
        return False
    found = failure_of(compiled)
    return (found["verdict"], found["stage"], found["normalised"]) == (
        prop["verdict"], prop["stage"], prop["normalised"])


def shows(prop: dict, codegen: Codegen, compiled: Compiled, text: str) -> "bool | None":
    """Whether a run of `text` by `codegen` (not necessarily the property's own) shows the property; None when
    that run could not test it (unparsable IR, unknown processor, timeout)."""
    if compiled.status not in ("ok", "failed"):
        return None
    return keeps(dict(prop, codegen=codegen.to_json()), compiled, text)


def judge(prop: dict, candidate: str, server: str | None = None) -> bool:
    """The interestingness test: compile the candidate (through the warm server when there is one)."""
    from .warm import run
    codegen = Codegen.from_json(prop["codegen"])
    compiled = run(codegen, Path(candidate), prop["timeout"], server)
    return keeps(prop, compiled, Path(candidate).read_text(errors="replace"))


def what_it_shows(prop: dict, compiled: Compiled, candidate_text: str) -> str:
    """One line on what a run of the input showed, for an error that it does not show the property."""
    if compiled.status == "cannot":
        return "cannot test: " + (compiled.text.strip().splitlines() or ["?"])[0][:200]
    if compiled.status == "timeout":
        return "it did not finish"
    if compiled.status == "ok":
        if prop["kind"] == "memory-model":
            keys = memory_model_keys(compiled.asm, prop["codegen"]["arch"], candidate_text)
            return f"it compiles; memory-model defects: {', '.join(keys) or 'none'}"
        return "it compiles without a crash"
    found = failure_of(compiled)
    return f"it fails in stage {found['stage'] or '?'}: {found['message'].splitlines()[0][:200]}"


def reduce_through(source: Path, prop: dict, work: Path, llvm_reduce: str = "llvm-reduce", jobs: int = 2,
                   timeout_s: float = 1800, log=None) -> "IrReduction":
    """Reduce `source` with llvm-reduce while the property's code generator still shows it; files go to `work`
    (reduced.ll, test.py, property.json, reduce.log, reduce.json). An interrupted run keeps the best so far."""
    from gfxhound.corpus_store.layout import REDUCE_LOG, REDUCE_RECORD, REDUCED_LL

    from .llvm_ir import IrReduction, ReduceError, lines_of, run_llvm_reduce, tool_version
    from .warm import Server
    work.mkdir(parents=True, exist_ok=True)
    if shutil.which(llvm_reduce) is None and not Path(llvm_reduce).exists():
        raise ReduceError(f"{llvm_reduce} not found: install Debian's llvm-22 or pass --llvm-reduce PATH")
    codegen = Codegen.from_json(prop["codegen"])
    start_copy, out = work / "input.ll", work / REDUCED_LL
    shutil.copyfile(source, start_copy)
    first = codegen.run(start_copy, prop["timeout"])
    if not keeps(prop, first, start_copy.read_text(errors="replace")):
        raise ReduceError(f"{source.name} does not show the property with {codegen.name} "
                          f"({what_it_shows(prop, first, start_copy.read_text(errors='replace'))}): nothing to "
                          "reduce")
    unreadable = llvm_reduce_parses(llvm_reduce, start_copy)
    if unreadable:
        raise ReduceError(f"{llvm_reduce} cannot read {source.name} ({unreadable}): the IR is newer than its LLVM; "
                          "pass --llvm-reduce from a newer LLVM")
    (work / "property.json").write_text(json.dumps(prop, indent=1))
    started = time.time()
    with Server(codegen) as server:
        test = work / "test.py"
        test.write_text(TEST_SCRIPT.format(prop=str(work / "property.json"), server=server))
        if log:
            log(f"reducing {lines_of(start_copy)} lines through {codegen.name}"
                + (" (warm server)" if server else ""))
        run_llvm_reduce([llvm_reduce, f"--test={sys.executable}", f"--test-arg={test}", f"-j={max(1, jobs)}",
                         "-o", str(out), str(start_copy)], work / REDUCE_LOG, timeout_s)
    note = ""
    if not out.exists() or not keeps(prop, codegen.run(out, prop["timeout"]), out.read_text(errors="replace")):
        note = "llvm-reduce left nothing smaller that the plain command confirms: the input is kept"
        shutil.copyfile(start_copy, out)
        with open(work / REDUCE_LOG, "a") as logfile:
            logfile.write(f"\ngfxhound: {note}\n")
    polished = []
    if not note:  # read like a hand-written test case, where the code generator still shows the property
        from .polish import polish
        trial = work / "polish.ll"

        def still(text):
            trial.write_text(text)
            return keeps(prop, codegen.run(trial, prop["timeout"]), text)
        text, polished = polish(out.read_text(errors="replace"), still)
        out.write_text(text)
    record = dict(codegen.to_json(), command=codegen.command(REDUCED_LL), polished=polished)
    result = IrReduction("llvm-ir", prop, lines_of(start_copy), lines_of(out), round(time.time() - started, 2),
                         codegen.command(REDUCED_LL), {"llvm-reduce": tool_version(llvm_reduce)}, codegen=record,
                         note=note)
    (work / REDUCE_RECORD).write_text(json.dumps(result.to_json(), indent=1))
    if log:
        log(f"llvm IR: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s")
    return result


def llvm_reduce_parses(llvm_reduce: str, source: Path) -> str:
    """'' when llvm-reduce's LLVM can read `source`, else its first error line (Triton 3.9 writes IR syntax newer
    than Debian's LLVM 22 reads)."""
    as_ = Path(llvm_reduce).with_name("llvm-as")
    if not as_.exists():
        return ""
    proc = subprocess.run([str(as_), "-o", "/dev/null", str(source)], capture_output=True, text=True, timeout=120)
    return "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[0][:200]


def reduce_file(source: Path, codegen: Codegen, output: Path, work: Path, expect: str | None = None,
                memory_model: bool = False, timeout: float = 120, **reduce_args) -> "IrReduction":
    """A user's .ll (`gfxhound reduce --ll`): keep its first crash line through `codegen`, or what `expect`
    matches, or (memory_model) its first memory-model defect; write the result to `output` and nothing else
    outside `work`."""
    from gfxhound.corpus_store.layout import REDUCED_LL

    from .llvm_ir import ReduceError
    if output.resolve() == source.resolve():
        raise ReduceError(f"--output {output} is the input: name another file")
    copy = work / "given.ll"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, copy)
    if memory_model:
        first = codegen.run(copy, timeout)
        keys = memory_model_keys(first.asm, codegen.arch, copy.read_text(errors="replace")) \
            if first.status == "ok" else []
        if not keys:
            why = "it compiles" if first.status == "ok" else what_it_shows({"kind": "crash"}, first, "")
            raise ReduceError(f"{source.name} shows no memory-model defect with {codegen.name} ({why})")
        prop = memory_model_property(codegen, keys[0], timeout)
    elif expect:
        prop = crash_property(codegen, expect=expect, timeout=timeout)
    else:
        first = codegen.run(copy, timeout)
        if first.status != "failed":
            raise ReduceError(f"{source.name}: {what_it_shows({'kind': 'crash'}, first, '')} with {codegen.name}; "
                              "give --expect REGEX (or --memory-model) for what to keep")
        found = failure_of(first)
        prop = crash_property(codegen, found["verdict"], found["stage"], found["normalised"], timeout=timeout)
    result = reduce_through(copy, prop, work / "reduce", **reduce_args)
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(work / "reduce" / REDUCED_LL, output)
    return result
