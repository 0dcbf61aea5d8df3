"""LLVM IR reduction with `llvm-reduce`, keeping the bug's identity.

Why a wrapper and not a bare `llvm-reduce --test crash.sh`: a naive "does llc crash" test slides from the bug
being reduced to any other crash the shrinking exposes (ClusterFuzz and Hypothesis both keep the crash state; so
do we). The interestingness test here runs `llc` with the flags Triton's own code generation uses
(gfxhound.compat.llc_verify: -O3, the kernel's fp-contraction, the machine verifier) and accepts a candidate only
when the normalised signature (gfxhound.signature) is the finding's. A second kind of property, "the llc output
contains this instruction", serves planted properties and code-quality questions.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gfxhound import procgroup
from gfxhound.corpus_store.layout import REDUCE_LOG, REDUCE_RECORD, REDUCED_LL
from gfxhound.compat import llc_command, llc_verify

from gfxhound.codegen import Codegen

TEST_SCRIPT = '''"""gfxhound interestingness test (written by gfxhound.reduce.llvm_ir): exit 0 = keep the candidate."""
import sys

PROPERTY = {property!r}
candidate = sys.argv[-1]
if PROPERTY["kind"] == "miscompile":  # the machine code of the candidate disagrees with its own IR semantics
    sys.path.append({root!r})
    from gfxhound.oracle.crosscheck import compare
    try:
        result = compare(candidate, PROPERTY["arch"], PROPERTY["opts"], PROPERTY["launch"], PROPERTY["llc"],
                         PROPERTY["kernel"], PROPERTY["seed"], tritons=PROPERTY["tritons"])
    except Exception:  # a candidate the launch no longer fits, a code generator that refuses it: not the bug
        sys.exit(1)
    rows = [row for row in result.verdict["rows"] if row["verdict"] != "agree"]
    # exit 1 only where a strict majority with the IR executor in it outvotes exactly the finding's runs; a
    # candidate whose IR meets undefined behaviour (poison reaching a store, a branch, an address) is 125
    keep = result.exit_code == 1 and rows and all(sorted(row.get("minority", ())) == PROPERTY["minority"]
                                                  and "IR" in row.get("majority", ()) for row in rows)
    sys.exit(0 if keep else 1)
if PROPERTY["kind"] == "signature":
    if sys.argv[1] == "--stdin":  # test.sh ran llc: its exit code (128 + N: signal N) and stderr; bare interpreter
        sys.path.append({root!r})  # appended: the checkout's own folders must not shadow the standard library
        from gfxhound.llc_text import LLC_ENDED, classify_llc
        from gfxhound.signature import summarise
        code = int(sys.argv[2])
        status, text = classify_llc(-(code - 128) if code > 128 else code, sys.stdin.read())
    else:
        from gfxhound.compat import LLC_ENDED, llc_verify
        from gfxhound.signature import summarise
        status, text = llc_verify(PROPERTY["llc"], PROPERTY["arch"], candidate, PROPERTY["timeout"],
                                  PROPERTY["fp_contract"])
    if status not in ("failed", "timeout"):
        sys.exit(1)
    got = summarise(text, "timeout" if status == "timeout" else LLC_ENDED)["signature"]
    sys.exit(0 if got == PROPERTY["signature"] else 1)
import re
import subprocess
cmd = [PROPERTY["llc"], "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + PROPERTY["arch"], "-O3", "-o", "-", candidate]
try:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PROPERTY["timeout"])
except subprocess.TimeoutExpired:
    sys.exit(1)
sys.exit(0 if proc.returncode == 0 and re.search(PROPERTY["asm_regex"], proc.stdout, re.M) else 1)
'''


PREFILTER = """#!/bin/sh
# gfxhound interestingness test (written by gfxhound.reduce.llvm_ir): exit 0 = keep the candidate.
# llc runs here; Python (the normalised signature) runs only when llc fails with the finding's key message, so
# the many candidates that compile, or fail otherwise, cost one llc run and no interpreter start.
text=$(timeout {timeout} {llc_command} "$1" 2>&1 >/dev/null)
code=$?
[ "$code" -eq 0 ] && exit 1
[ "$code" -eq 124 ] && exit 1
case "$text" in *{key}*) ;; *) exit 1 ;; esac
# the same failure text up to the candidate's path and addresses (ASLR) has the same signature: ask Python once
fp=$(printf '%s\n%s' "$code" "$text" | sed -e "s|$1|CANDIDATE|g" -e 's/0x[0-9a-fA-F]*/0x/g' | md5sum | cut -d' ' -f1)
[ -f {cache}/"$fp".yes ] && exit 0
[ -f {cache}/"$fp".no ] && exit 1
printf '%s' "$text" | {python} -S -E {test} --stdin "$code" "$1"
verdict=$?
if [ "$verdict" -eq 0 ]; then : > {cache}/"$fp".yes; else : > {cache}/"$fp".no; fi
exit "$verdict"
"""


class ReduceError(Exception):
    """A reduction that cannot start (the input does not show the property, a tool is missing): one line."""


@dataclass
class IrReduction:
    level: str
    property: dict
    lines_before: int
    lines_after: int
    seconds: float
    command: list  # the command line that shows the property on reduced.ll (run where it lies)
    tools: dict = field(default_factory=dict)
    codegen: dict = field(default_factory=dict)  # the code generator: kind, tool, version, revision, command
    note: str = ""
    format: int = 1

    def to_json(self):
        return asdict(self)


def signature_property(signature, arch, llc, fp_contract=True, timeout=60):
    return {"kind": "signature", "signature": signature, "arch": arch, "llc": str(llc), "fp_contract": fp_contract,
            "timeout": timeout}


# llvm-reduce's passes for a miscompile (each candidate costs a compile at each level and two executions, about a
# second): the ones that remove code and constants; never `arguments` (the launch names the kernel's arguments)
MISCOMPILE_PASSES = ("simplify-conditionals-true,simplify-conditionals-false,unreachable-basic-blocks,basic-blocks,"
                     "instructions,operands-zero,operands-one,operands-skip,simplify-instructions,metadata,"
                     "attributes")


def miscompile_property(launch, arch, opts, minority, llc, kernel=None, seed=0, tritons=(), timeout=300):
    """The candidate's machine code (llc at each of `opts`, and each Triton code generator in `tritons`) run on the
    machine-code executor disagrees with the IR executor's run of the candidate itself, with exactly the runs in
    `minority` outvoted by a majority holding the IR (oracle/crosscheck.compare, as `gfxhound emulate` exits 1).
    The IR is its own oracle, so a reduction can never slide into undefined behaviour: a candidate whose IR lets
    poison reach a store, a branch or an address is unresolved there, never interesting."""
    return {"kind": "miscompile", "launch": launch, "arch": arch, "opts": [int(o) for o in opts],
            "minority": sorted(minority), "llc": str(llc), "kernel": kernel, "seed": int(seed),
            "tritons": [str(t) for t in tritons], "timeout": timeout}


def asm_property(regex, arch, llc, timeout=60):
    return {"kind": "asm", "asm_regex": regex, "arch": arch, "llc": str(llc), "timeout": timeout}


def _interesting(test: Path, candidate: Path, timeout) -> bool:
    proc = procgroup.run([sys.executable, str(test), str(candidate)], capture_output=True, text=True,
                         timeout=timeout * 2 + 30)  # the test's llc child dies with it
    return proc.returncode == 0


def _interesting_sh(test: Path, candidate: Path, timeout) -> bool:
    proc = procgroup.run([str(test), str(candidate)], capture_output=True, text=True, timeout=timeout * 2 + 30)
    return proc.returncode == 0


def _key(prop, source: Path):
    """A fixed piece of the finding's key error line (the longest run without digits), for the shell prefilter;
    None when the input does not fail in llc (a timeout finding) or no piece is long enough to be specific."""
    from gfxhound.signature import key_line
    status, text = llc_verify(prop["llc"], prop["arch"], source, prop.get("timeout", 60), prop["fp_contract"])
    if status != "failed":
        return None
    line = key_line(text, complete=False) or ""
    pieces = [p.strip() for p in re.split(r"[0-9]+|%[\w.]+", line)]
    best = max(pieces, key=len, default="")
    return best if len(best) >= 12 else None


def tool_version(tool):
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return next((line.strip() for line in out.splitlines() if "version" in line.lower()), "unknown")


def reduce_ir(source: Path, prop: dict, work: Path, llvm_reduce="llvm-reduce", jobs=2, timeout_s=1800,
              log=None) -> IrReduction:
    """Reduce `source` to the smallest module llvm-reduce finds that still has `prop`; files go to `work`
    (reduced.ll, test.py, reduce.log, reduce.json). An interrupted run keeps llvm-reduce's best so far."""
    work.mkdir(parents=True, exist_ok=True)
    if shutil.which(llvm_reduce) is None and not Path(llvm_reduce).exists():
        raise ReduceError(f"{llvm_reduce} not found: install Debian's llvm-22 or pass --llvm-reduce PATH")
    test = work / "test.py"
    import gfxhound
    test.write_text(TEST_SCRIPT.format(property=prop, root=str(Path(gfxhound.__file__).resolve().parent.parent)))
    start_copy = work / "input.ll"
    shutil.copyfile(source, start_copy)
    if not _interesting(test, start_copy, prop.get("timeout", 60)):
        raise ReduceError("the input does not show the property with this llc (signature or instruction "
                          "differs): nothing to reduce; check the llc version and the target")
    out = work / REDUCED_LL
    cmd = [llvm_reduce, f"--test={sys.executable}", f"--test-arg={test}", f"-j={max(1, jobs)}",
           "-o", str(out), str(start_copy)]
    if prop["kind"] == "miscompile":  # each candidate compiles and runs: a few passes that shrink code, once each
        cmd[1:1] = [f"--delta-passes={MISCOMPILE_PASSES}", "--max-pass-iterations=2"]
    key = _key(prop, start_copy) if prop["kind"] == "signature" else None
    if key:
        shell = work / "test.sh"
        llc = " ".join(shlex.quote(a) for a in llc_command(prop["llc"], prop["arch"], "", prop["fp_contract"])[:-1])
        cache = work / "verdicts"
        cache.mkdir(exist_ok=True)
        shell.write_text(PREFILTER.format(timeout=int(prop.get("timeout", 60)), key=shlex.quote(key),
                                          python=shlex.quote(sys.executable), test=shlex.quote(str(test)),
                                          llc_command=llc, cache=shlex.quote(str(cache))))
        shell.chmod(0o755)
        if not _interesting_sh(shell, start_copy, prop.get("timeout", 60)):
            raise ReduceError("the shell form of the interestingness test rejects the input (report this)")
        cmd = [llvm_reduce, f"--test={shell}", f"-j={max(1, jobs)}", "-o", str(out), str(start_copy)]
    started = time.time()
    run_llvm_reduce(cmd, work / REDUCE_LOG, timeout_s)
    if not out.exists() or not _interesting(test, out, prop.get("timeout", 60)):
        shutil.copyfile(start_copy, out)  # llvm-reduce found nothing smaller (or was stopped before writing)
    if prop["kind"] == "miscompile":
        return _miscompile_record(prop, start_copy, out, started, llvm_reduce, work, log)
    command = [prop["llc"], "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={prop['arch']}", "-O3"]
    if prop["kind"] == "signature":
        command += ["-verify-machineinstrs", "-filetype=null"] + (["-fp-contract=fast"] if prop["fp_contract"]
                                                                 else [])
    command.append(REDUCED_LL)
    llc = Codegen("llc", prop["llc"], prop["arch"], tuple(command[1:-1]), version=tool_version(prop["llc"]),
                  verifier=prop["kind"] == "signature")
    result = IrReduction("llvm-ir", prop, lines_of(start_copy), lines_of(out), round(time.time() - started, 2),
                         command, {"llvm-reduce": tool_version(llvm_reduce), "llc": llc.version},
                         codegen=dict(llc.to_json(), command=command))
    (work / REDUCE_RECORD).write_text(json.dumps(result.to_json(), indent=1))
    if log:
        log(f"llvm IR: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s")
    return result


def run_llvm_reduce(cmd: list, log: Path, timeout_s: float):
    """Run llvm-reduce, its output to `log`; stopped after `timeout_s` or by Ctrl-C, it keeps its best so far."""
    with open(log, "w") as logfile:
        try:
            # its -j test processes and their llc children die with it (procgroup)
            procgroup.run(cmd, stdout=logfile, stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            logfile.write(f"\ngfxhound: llvm-reduce stopped after {timeout_s} s; keeping its best result\n")
        except KeyboardInterrupt:
            logfile.write("\ngfxhound: interrupted; keeping the best result so far\n")


def lines_of(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def _miscompile_record(prop, start, out, started, llvm_reduce, work, log) -> IrReduction:
    """The record of a miscompile's reduction: the `gfxhound emulate` command that shows it on reduced.ll."""
    levels = ",".join(str(o) for o in prop["opts"]) or "none"
    command = ["gfxhound", "emulate", REDUCED_LL, "--mcpu", prop["arch"], "--opt", levels, "--llc", prop["llc"],
               "--launch", prop["launch"], "--seed", str(prop["seed"])]
    for python in prop["tritons"]:
        command += ["--triton", python]
    result = IrReduction("llvm-ir", prop, lines_of(start), lines_of(out), round(time.time() - started, 2), command,
                         {"llvm-reduce": tool_version(llvm_reduce), "llc": tool_version(prop["llc"])},
                         note="interesting: the runs " + ", ".join(prop["minority"]) + " outvoted by the IR "
                              "executor and the other runs (exit 1 of the command)")
    (work / REDUCE_RECORD).write_text(json.dumps(result.to_json(), indent=1))
    if log:
        log(f"llvm IR: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s")
    return result
