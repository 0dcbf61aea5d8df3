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
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

TEST_SCRIPT = '''"""gfxhound interestingness test (written by gfxhound.reduce.llvm_ir): exit 0 = keep the candidate."""
import re
import subprocess
import sys

PROPERTY = {property!r}
candidate = sys.argv[-1]
if PROPERTY["kind"] == "signature":
    from gfxhound.compat import LLC_ENDED, llc_verify
    from gfxhound.signature import summarise
    status, text = llc_verify(PROPERTY["llc"], PROPERTY["arch"], candidate, PROPERTY["timeout"],
                              PROPERTY["fp_contract"])
    if status not in ("failed", "timeout"):
        sys.exit(1)
    got = summarise(text, "timeout" if status == "timeout" else LLC_ENDED)["signature"]
    sys.exit(0 if got == PROPERTY["signature"] else 1)
cmd = [PROPERTY["llc"], "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + PROPERTY["arch"], "-O3", "-o", "-", candidate]
try:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PROPERTY["timeout"])
except subprocess.TimeoutExpired:
    sys.exit(1)
sys.exit(0 if proc.returncode == 0 and re.search(PROPERTY["asm_regex"], proc.stdout, re.M) else 1)
'''


class ReduceError(Exception):
    """A reduction that cannot start (the input does not show the property, a tool is missing): one line."""


@dataclass
class IrReduction:
    level: str
    property: dict
    lines_before: int
    lines_after: int
    seconds: float
    command: list  # the llc command line that shows the property on reduced.ll
    tools: dict = field(default_factory=dict)
    format: int = 1

    def to_json(self):
        return asdict(self)


def signature_property(signature, arch, llc, fp_contract=True, timeout=60):
    return {"kind": "signature", "signature": signature, "arch": arch, "llc": str(llc), "fp_contract": fp_contract,
            "timeout": timeout}


def asm_property(regex, arch, llc, timeout=60):
    return {"kind": "asm", "asm_regex": regex, "arch": arch, "llc": str(llc), "timeout": timeout}


def _interesting(test: Path, candidate: Path, timeout) -> bool:
    proc = subprocess.run([sys.executable, str(test), str(candidate)], capture_output=True, text=True,
                          timeout=timeout * 2 + 30)
    return proc.returncode == 0


def _tool_version(tool):
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
    test.write_text(TEST_SCRIPT.format(property=prop))
    start_copy = work / "input.ll"
    shutil.copyfile(source, start_copy)
    if not _interesting(test, start_copy, prop.get("timeout", 60)):
        raise ReduceError("the input does not show the property with this llc (signature or instruction "
                          "differs): nothing to reduce; check the llc version and the target")
    out = work / "reduced.ll"
    cmd = [llvm_reduce, f"--test={sys.executable}", f"--test-arg={test}", f"-j={max(1, jobs)}",
           "-o", str(out), str(start_copy)]
    started = time.time()
    with open(work / "reduce.log", "w") as logfile:
        try:
            subprocess.run(cmd, stdout=logfile, stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            logfile.write(f"\ngfxhound: llvm-reduce stopped after {timeout_s} s; keeping its best result\n")
    if not out.exists() or not _interesting(test, out, prop.get("timeout", 60)):
        shutil.copyfile(start_copy, out)  # llvm-reduce found nothing smaller (or was stopped before writing)
    command = [prop["llc"], "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={prop['arch']}", "-O3"]
    if prop["kind"] == "signature":
        command += ["-verify-machineinstrs", "-filetype=null"] + (["-fp-contract=fast"] if prop["fp_contract"]
                                                                 else [])
    command.append("reduced.ll")
    result = IrReduction("llvm-ir", prop, _lines(start_copy), _lines(out), round(time.time() - started, 2),
                         command, {"llvm-reduce": _tool_version(llvm_reduce), "llc": _tool_version(prop["llc"])})
    (work / "reduce.json").write_text(json.dumps(result.to_json(), indent=1))
    if log:
        log(f"llvm IR: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s")
    return result


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())
