"""Running the conversion table: probe kernels compiled in batches by child processes under the Triton being
tested, each result judged against oracle/cast_table.py's expected code.

Why child processes: the Triton under test may be another interpreter's (a cached release venv), a compiler crash
must not end the table, and the C++ diagnostics Triton prints go to file descriptor 2, which only a process of
its own can capture per probe.
"""
from __future__ import annotations

import inspect
import json
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import cast_fold
from .cast_table import WIDTH, Probe, expected_code, kernel_source, pointer_type

# A conversion this Triton refuses with a diagnostic: no wrong code can come of it.
DIAGNOSTIC = r"Unsupported conversion from|not supported in this architecture|unsupported target"

_CHILD = '''
import importlib.util, json, os, sys, tempfile
import triton
from triton.backends.compiler import GPUTarget
{fold}
batch = json.load(open(sys.argv[1]))
spec = importlib.util.spec_from_file_location("gfxhound_probes", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps({{"version": triton.__version__}}), flush=True)
saved = os.dup(2)
for item in batch:
    row = {{"name": item["name"]}}
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        try:
            source = triton.compiler.ASTSource(getattr(module, item["name"]), signature={{"y_ptr": item["ptr"]}})
            kernel = triton.compile(source, target=GPUTarget("hip", item["arch"], item["warp"]))
            row["code"] = stored_code(kernel.asm["llir"], item["bits"])
        except Exception as exc:
            row["error"] = (type(exc).__name__ + ": " + str(exc))[-4000:]
        finally:
            os.dup2(saved, 2)
        err.seek(0)
        if "error" in row:
            row["error"] += "\\n" + err.read().decode(errors="replace")[-4000:]
    print(json.dumps(row), flush=True)
'''


def fold_source() -> str:
    """cast_fold's code, for a child or a repro to run without gfxhound installed."""
    return "\n".join(line for line in inspect.getsource(cast_fold).splitlines()
                     if not line.startswith("from __future__"))


def warp_size(arch: str) -> int:
    return 32 if arch.startswith("gfx1") else 64


@dataclass
class Result:
    probe: Probe
    arch: str
    status: str  # "pass" | "wrong" | "unfolded" | "unsupported" | "crash"
    code: "int | None" = None
    expected: int = 0
    detail: str = ""


@dataclass
class Table:
    version: str = ""
    results: list = field(default_factory=list)

    def count(self) -> dict:
        out = {}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out


def _judge(probe, arch, row) -> Result:
    import re
    want = expected_code(probe)
    if "error" in row:
        text = row["error"]
        if re.search(DIAGNOSTIC, text):
            return Result(probe, arch, "unsupported", None, want, re.search(rf"(?:{DIAGNOSTIC})[^\n]*", text)[0])
        return Result(probe, arch, "crash", None, want, text)
    if row.get("code") is None:
        return Result(probe, arch, "unfolded", None, want)
    return Result(probe, arch, "pass" if row["code"] == want else "wrong", row["code"], want)


def _run_batch(python: str, items: list, timeout: float) -> "tuple[str, list]":
    """(version, results) for one batch [(probe, arch)]; a child that dies leaves the rest as crashes."""
    with tempfile.TemporaryDirectory(prefix="gfxhound-casts-") as tmp:
        names = [f"probe_{i}" for i in range(len(items))]
        module = "import triton\nimport triton.language as tl\n\n\n" + "\n\n".join(
            kernel_source(p, n) for (p, _), n in zip(items, names))
        (Path(tmp) / "probes.py").write_text(module)
        batch = [{"name": n, "ptr": pointer_type(p), "arch": a, "warp": warp_size(a), "bits": WIDTH[p.dst]}
                 for (p, a), n in zip(items, names)]
        (Path(tmp) / "batch.json").write_text(json.dumps(batch))
        (Path(tmp) / "child.py").write_text(_CHILD.format(fold=fold_source()))
        try:
            proc = subprocess.run([python, str(Path(tmp) / "child.py"), str(Path(tmp) / "batch.json"),
                                   str(Path(tmp) / "probes.py")], capture_output=True, text=True, timeout=timeout,
                                  errors="replace")
            out, tail = proc.stdout, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            tail = f"the batch did not finish in {timeout:.0f} s"
    rows, version = {}, ""
    for line in out.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "version" in row:
            version = row["version"]
        elif "name" in row:
            rows[row["name"]] = row
    results = []
    for (probe, arch), name in zip(items, names):
        row = rows.get(name) or {"error": f"the probe's compile never reported ({tail.strip()})"}
        results.append(_judge(probe, arch, row))
    return version, results


def run_table(probes: list, archs: list, python: str, jobs: int = 1, batch: int = 150,
              timeout_per_probe: float = 20.0, progress=None) -> Table:
    """Every probe on every target. `progress(done, total)` is called after each batch."""
    items = [(p, a) for a in archs for p in probes]
    chunks = [items[i:i + batch] for i in range(0, len(items), batch)]
    table, done = Table(), 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for version, results in pool.map(lambda c: _run_batch(python, c, 60 + timeout_per_probe * len(c)), chunks):
            table.version = table.version or version
            table.results += results
            done += len(results)
            if progress:
                progress(done, len(items))
    return table
