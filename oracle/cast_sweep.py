"""Running the conversion table: probe kernels compiled in batches by child processes under the Triton being
tested, each result judged against oracle/cast_table.py's expected code.

Why child processes: the Triton under test may be another interpreter's (a cached release venv), a compiler crash
must not end the table, and the C++ diagnostics Triton prints go to file descriptor 2, which only a process of
its own can capture per probe.
"""
from __future__ import annotations

import inspect
import json
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import cast_fold
from .cast_table import WIDTH, Probe, acceptable_codes, expected_code, kernel_source, pointer_type

# A conversion this Triton refuses with a diagnostic: no wrong code can come of it.
DIAGNOSTIC = r"Unsupported conversion from|not supported in this architecture|unsupported target"

_CHILD = '''
import importlib.util, json, os, sys
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
    with open(os.path.join(os.path.dirname(sys.argv[1]), item["name"] + ".err"), "w+b") as err:
        os.dup2(err.fileno(), 2)  # a file of its own: if the compile kills the process, the parent reads why
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
    want = expected_code(probe)
    if "error" in row:
        text = row["error"]
        if re.search(DIAGNOSTIC, text):
            return Result(probe, arch, "unsupported", None, want, re.search(rf"(?:{DIAGNOSTIC})[^\n]*", text)[0])
        return Result(probe, arch, "crash", None, want, text)
    if row.get("code") is None:
        return Result(probe, arch, "unfolded", None, want)
    return Result(probe, arch, "pass" if row["code"] in acceptable_codes(probe) else "wrong", row["code"], want)


def _run_child(python: str, items: list, timeout: float, tmp: Path) -> "tuple[str, dict, str]":
    """One child over `items`: (version, {index: row}, why it ended). Rows come in order, so the rows present are a
    prefix of the batch; the first index missing is the probe the child died or hung on."""
    names = [f"probe_{i}" for i in range(len(items))]
    module = "import triton\nimport triton.language as tl\n\n\n" + "\n\n".join(
        kernel_source(p, n) for (p, _), n in zip(items, names))
    (tmp / "probes.py").write_text(module)
    batch = [{"name": n, "ptr": pointer_type(p), "arch": a, "warp": warp_size(a), "bits": WIDTH[p.dst]}
             for (p, a), n in zip(items, names)]
    (tmp / "batch.json").write_text(json.dumps(batch))
    (tmp / "child.py").write_text(_CHILD.format(fold=fold_source()))
    try:
        proc = subprocess.run([python, str(tmp / "child.py"), str(tmp / "batch.json"), str(tmp / "probes.py")],
                              capture_output=True, text=True, timeout=timeout, errors="replace")
        out, ended = proc.stdout, f"the process ended with exit {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        ended = f"the compile did not finish in {timeout:.0f} s"
    rows, version = {}, ""
    for line in out.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "version" in row:
            version = row["version"]
        elif row.get("name") in names:
            rows[names.index(row["name"])] = row
    missing = next((i for i in range(len(items)) if i not in rows), None)
    if missing is not None:
        err = tmp / f"probe_{missing}.err"
        ended += ": " + (err.read_text(errors="replace")[-4000:] if err.exists() else "")
    return version, rows, ended


def _run_batch(python: str, items: list, timeout_per_probe: float) -> "tuple[str, list]":
    """(version, results) for one batch [(probe, arch)]. A probe whose compile kills (or hangs) its process is a
    crash with what it printed; the child is started again on the probes after it."""
    rows, version, start = {}, "", 0
    with tempfile.TemporaryDirectory(prefix="gfxhound-casts-") as tmp:
        while start < len(items):
            part = items[start:]
            got, part_rows, ended = _run_child(python, part, 60 + timeout_per_probe * len(part), Path(tmp))
            version = version or got
            done = next((i for i in range(len(part)) if i not in part_rows), len(part))
            rows.update({start + i: part_rows[i] for i in range(done)})
            if done < len(part):
                rows[start + done] = {"error": ended}
            start += done + 1
    return version, [_judge(probe, arch, rows[i]) for i, (probe, arch) in enumerate(items)]


def run_table(probes: list, archs: list, python: str, jobs: int = 1, batch: int = 150,
              timeout_per_probe: float = 20.0, progress=None) -> Table:
    """Every probe on every target. `progress(done, total)` is called after each batch."""
    items = [(p, a) for a in archs for p in probes]
    chunks = [items[i:i + batch] for i in range(0, len(items), batch)]
    table, done = Table(), 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for version, results in pool.map(lambda c: _run_batch(python, c, timeout_per_probe), chunks):
            table.version = table.version or version
            table.results += results
            done += len(results)
            if progress:
                progress(done, len(items))
    return table
