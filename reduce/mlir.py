"""TTIR / TTGIR reduction: the IR that went into the failing stage, shrunk line by line with C-Vise.

Why this level: a crash while lowering TTGIR to LLVM IR (stage `llir`) or converting TTIR to TTGIR (stage `ttgir`)
lives in Triton's MLIR passes, below anything the spec can express; maintainers want the `.ttgir` and the one
command that crashes on it. `triton.compile(path)` accepts `.ttir` and `.ttgir` files (FACTS.md) and runs the
remaining stages, so the interestingness test is Triton's own pipeline from that point on, for the finding's
target, options and environment knobs, judged by the same normaliser as a campaign: a candidate is kept only
when its signature is the finding's, never for "any crash" (C-Vise's line deletions break SSA constantly, and the
parser's complaints are different signatures).

Why C-Vise and not our own delta loop: its line, blank and balanced-brace passes are what MLIR text needs, it runs
candidates in parallel (`--n`), caches tested candidates and keeps the best so far when stopped. `mlir-reduce` /
`triton-reduce` would be better still where a user has built one: `--mlir-reduce` is future work.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gfxhound import procgroup
from gfxhound.corpus_store.layout import REDUCE_LOG, REDUCE_RECORD

from .llvm_ir import ReduceError

# the stage a failure happened in -> the IR file that stage consumed
INPUT_FOR_STAGE = {"ttgir": "kernel.ttir", "llir": "kernel.ttgir"}

# physical lines only ("None": no topformflat regrouping; the file is printed one op per line first), and whole
# region bodies (a loop's or an if's ops at once)
PASS_GROUP = {
    "first": [{"pass": "blank"}],
    "main": [{"pass": "balanced", "arg": "curly-inside"}, {"pass": "lines", "arg": "None"}],
    "last": [],
}

TEST_SCRIPT = '''#!{python}
"""gfxhound interestingness test (written by gfxhound.reduce.mlir): exit 0 = the candidate fails the same way."""
import sys
from gfxhound.reduce.mlir import same_failure
sys.exit(0 if same_failure({property!r}, {name!r}) else 1)
'''

REPRINT = """
import sys
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
ctx = ir.context()
ir.load_dialects(ctx)
make_backend(GPUTarget("hip", sys.argv[1], 64)).load_dialects(ctx)
print(ir.parse_mlir_module(sys.argv[2], ctx))
"""

CHILD = """
import json, os, sys
prop = json.loads(sys.argv[1])
os.environ.update(prop["env"])
import triton
from triton.backends.compiler import GPUTarget
from gfxhound import compat
compat.install_stage_markers()
target = GPUTarget("hip", prop["arch"], compat.warp_size(prop["arch"]))
path = sys.argv[2]
options = dict(prop["options"])
for key in ("num_warps", "num_ctas", "threads_per_warp"):  # the IR module carries these
    options.pop(key, None)
triton.compile(path, target=target, options=options)
"""


@dataclass
class MlirReduction:
    level: str  # "ttgir" | "ttir"
    property: dict
    lines_before: int
    lines_after: int
    seconds: float
    command: list  # the command line that shows the failure on the reduced file (run in the bundle's folder)
    tools: dict = field(default_factory=dict)
    format: int = 1

    def to_json(self):
        return asdict(self)


def failure_property(signature, arch, options, env, toolchain, timeout=120):
    return {"signature": signature, "arch": arch, "options": dict(options), "env": {k: str(v) for k, v in env.items()},
            "toolchain": toolchain, "timeout": timeout}


def compile_file(prop: dict, path: Path) -> dict:
    """Compile one IR file in a child process (an LLVM abort must not kill us); returns a campaign-style outcome."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory(prefix="gfxhound-mlir-") as cache:
        env["TRITON_CACHE_DIR"] = cache
        start = time.perf_counter()
        try:
            proc = procgroup.run([sys.executable, "-P", "-c", CHILD, json.dumps(prop), str(path)], env=env,
                                 capture_output=True, text=True, timeout=prop.get("timeout", 120))
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "text": "", "duration": time.perf_counter() - start}
    text = proc.stdout + proc.stderr
    if proc.returncode == 0:
        return {"status": "ok", "text": text}
    if proc.returncode < 0:
        return {"status": "died", "ended": f"signal:{-proc.returncode}", "text": text}
    return {"status": "exception" if "Traceback (most recent call last)" in text else "died",
            "ended": f"exit:{proc.returncode}", "text": text}


def signature_of(prop: dict, path: Path):
    from gfxhound.oracle.judge import judge_compile
    outcome = compile_file(prop, path)
    execution = judge_compile(outcome, "mlir", prop["arch"], prop["toolchain"], prop["options"])
    return execution


def same_failure(prop: dict, path) -> bool:
    return prop["signature"] in signature_of(prop, Path(path)).signatures


_LOC_DEF = re.compile(r"^#loc\d*\s*=.*$\n?", re.M)
_LOC_USE = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


def strip_locations(text: str) -> str:
    """Drop MLIR source locations (`loc(...)` and the `#locN = ...` aliases): a third of a dumped TTGIR file,
    noise to a reader, and every line C-Vise would otherwise have to try deleting."""
    return _LOC_USE.sub("", _LOC_DEF.sub("", text))


def reduce_mlir(source: Path, prop: dict, work: Path, cvise="cvise", jobs=2, timeout_s=1800, log=None) -> MlirReduction:
    """Reduce `source` (a .ttir or .ttgir file) to the smallest file C-Vise finds that still fails with the
    finding's signature. Files go to `work`: reduced.<ext>, command.py, test.py, passes.json, reduce.log,
    reduce.json.
    An interrupted or timed-out run keeps C-Vise's best so far (C-Vise rewrites the file in place)."""
    work.mkdir(parents=True, exist_ok=True)
    if shutil.which(cvise) is None and not Path(cvise).exists():
        raise ReduceError(f"{cvise} not found: install Debian's cvise (apt-get install cvise) or pass --cvise PATH")
    ext = source.suffix.lstrip(".")
    name = f"reduced.{ext}"
    out = work / name
    shutil.copyfile(source, work / f"input.{ext}")
    if not same_failure(prop, source):
        raise ReduceError(f"the {ext} file does not fail the same way with this Triton (compile it with "
                          f"`triton.compile`): nothing to reduce; run under the release that found it")
    out.write_text(strip_locations(source.read_text()))
    if not same_failure(prop, out):  # locations are optional in MLIR text; if a release disagrees, keep them
        shutil.copyfile(source, out)
    _reprint(prop, out)  # one op per line: what the line passes below work on
    test = work / "test.py"
    test.write_text(TEST_SCRIPT.format(python=sys.executable, property=prop, name=name))
    test.chmod(0o755)
    passes = work / "passes.json"
    passes.write_text(json.dumps(PASS_GROUP))
    cmd = [cvise, "--n", str(max(1, jobs)), "--timeout", str(int(prop.get("timeout", 120)) + 30),
           "--pass-group-file", str(passes), "--not-c", "--tidy", str(test), name]
    started = time.time()
    with open(work / REDUCE_LOG, "w") as logfile:
        try:
            # C-Vise's workers, the tests they run and the compiles those start die with it (procgroup)
            procgroup.run(cmd, cwd=work, stdout=logfile, stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            logfile.write(f"\ngfxhound: C-Vise stopped after {timeout_s} s; keeping its best result\n")
        except KeyboardInterrupt:  # C-Vise rewrites the file in place (--tidy): it holds the best so far
            logfile.write("\ngfxhound: interrupted; keeping C-Vise's best result so far\n")
    if not same_failure(prop, out):  # never hand back a file that does not show the failure
        shutil.copyfile(work / f"input.{ext}", out)
    _reprint(prop, out)
    (work / "command.py").write_text(_command_program(prop, name))
    command = ["python3", "command.py"]
    result = MlirReduction(ext, prop, _lines(work / f"input.{ext}"), _lines(out), round(time.time() - started, 2),
                           command, {"cvise": _version(cvise), "triton": prop["toolchain"]})
    (work / REDUCE_RECORD).write_text(json.dumps(result.to_json(), indent=1))
    if log:
        log(f"{ext}: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s")
    return result


def _reprint(prop, path: Path):
    """C-Vise's line passes leave several ops on one line: print the module again through Triton's own MLIR
    parser (one op per line, no locations) and keep that only if it still fails the same way."""
    try:
        proc = subprocess.run([sys.executable, "-P", "-c", REPRINT, prop["arch"], str(path)], capture_output=True,
                              text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return
    if proc.returncode != 0 or "module" not in proc.stdout:
        return
    candidate = path.with_name("reprinted" + path.suffix)
    candidate.write_text(strip_locations(proc.stdout))
    if same_failure(prop, candidate):
        candidate.replace(path)
    else:
        candidate.unlink()


def _command_program(prop, name):
    """A Python program that compiles the reduced file the way the test does (the bundle's command.py)."""
    from gfxhound.compat import warp_size
    options = {k: v for k, v in prop["options"].items() if k not in ("num_warps", "num_ctas", "threads_per_warp")}
    lines = ["# compiles the reduced file as the interestingness test did: it fails with the finding's signature",
             "import os"]
    lines += [f"os.environ[{k!r}] = {v!r}" for k, v in prop["env"].items()]
    lines += ["import triton", "from triton.backends.compiler import GPUTarget",
              f"triton.compile({name!r}, target=GPUTarget('hip', {prop['arch']!r}, {warp_size(prop['arch'])}), "
              f"options={options!r})"]
    return "\n".join(lines) + "\n"


def _version(tool):
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.strip().splitlines()[0] if out.strip() else "unknown"


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())
