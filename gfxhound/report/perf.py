"""Regressions without a crash: compile time and the resources of a fixed set of kernels (VGPRs, SGPRs, AGPRs,
spills, scratch, LDS, occupancy), on two toolchains, compared.

Why a standalone measuring script: the previous toolchain lives in another virtual environment (a release venv
from the bisect cache) that has Triton but not gfxhound. Kernels are rendered here, once, from the checked-in set
(`corpus/perfset/`: spec.json files and the capabilities they were rendered with), and the script that compiles
them needs only Triton and an embedded copy of gfxhound/compat.py, like a repro. One process a kernel: a kernel
that crashes a toolchain costs that kernel's figures (it is recorded as failed), not the run.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PERF_FORMAT = 1
# metric -> (relative growth, absolute growth) that both must be exceeded to be a regression; occupancy shrinks
THRESHOLDS = {"compile_s": (0.5, 0.15), "vgpr_count": (0.10, 8), "sgpr_count": (0.25, 16), "agpr_count": (0.10, 8),
              "vgpr_spill_count": (0.0, 1), "sgpr_spill_count": (0.0, 1), "private_segment_fixed_size": (0.0, 16),
              "lds": (0.10, 1024), "occupancy": (0.0, 1)}

DRIVER = r'''
import importlib.util, json, os, statistics, sys, tempfile, time

def measure(kernel, repeat):
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRITON_CACHE_DIR"] = tmp
        os.environ["TRITON_ALWAYS_COMPILE"] = "1"
        path = os.path.join(tmp, "kernel.py")
        with open(path, "w") as f:
            f.write(kernel["source"])
        spec = importlib.util.spec_from_file_location("gfxhound_perf_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, kernel["kernel_name"])
        times, compiled = [], None
        for _ in range(repeat + 1):  # the first compile pays one-time start-up: not counted
            start = time.perf_counter()
            compiled = compile_for_amd(fn, kernel["args"], kernel["arch"], kernel["options"], kernel["env"])
            times.append(time.perf_counter() - start)
        out = resources(compiled)
        out["compile_s"] = round(statistics.median(times[1:]), 4)
        return out

kernels = json.load(open(sys.argv[1]))
index, repeat = int(sys.argv[2]), int(sys.argv[3])
print("GFXHOUND-PERF " + json.dumps(measure(kernels[index], repeat)))
'''


class PerfError(Exception):
    """A one-line problem with the kernel set or a measurement file."""


def load_set(set_dir: Path):
    """(caps, [(name, spec)]) of a kernel set."""
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.spec import KernelSpec
    set_dir = Path(set_dir)
    try:
        caps = Capabilities.from_json(json.loads((set_dir / "caps.json").read_text()))
    except FileNotFoundError:
        raise PerfError(f"{set_dir}: not a kernel set (no caps.json; see corpus/perfset/README.md)") from None
    specs = [(p.stem, KernelSpec.from_json(json.loads(p.read_text()))) for p in sorted(set_dir.glob("specs/*.json"))]
    if not specs:
        raise PerfError(f"{set_dir}: no specs/*.json")
    return caps, specs


def render_set(set_dir: Path, arch: str | None = None) -> list:
    from gfxhound.fuzz.render import render
    caps, specs = load_set(set_dir)
    kernels = []
    for name, spec in specs:
        r = render(spec, caps)
        kernels.append({"name": name, "source": r.source, "kernel_name": r.kernel_name, "args": r.args,
                        "options": r.options, "env": r.env, "arch": arch or caps.arch})
    return kernels


def driver_source() -> str:
    from gfxhound.embedded import SOURCES
    return "\n".join([SOURCES["llc_text"], SOURCES["compat"], DRIVER])


def measure(python: str, kernels: list, repeat: int = 3, timeout: float = 300, env: dict | None = None,
            log=None) -> dict:
    """{format, toolchain, kernels: {name: figures | {"failed": why}}} of `python`'s Triton."""
    run_env = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
    version = subprocess.run([python, "-c", "import triton; print(triton.__version__)"], capture_output=True,
                             text=True, timeout=120, env=run_env)
    if version.returncode != 0:
        raise PerfError(f"{python}: cannot import triton ({(version.stderr.strip().splitlines() or ['?'])[-1]})")
    results = {}
    with tempfile.TemporaryDirectory(prefix="gfxhound-perf-") as tmp:
        (Path(tmp) / "kernels.json").write_text(json.dumps(kernels))
        (Path(tmp) / "measure.py").write_text(driver_source())
        for index, kernel in enumerate(kernels):
            try:
                proc = subprocess.run([python, "measure.py", "kernels.json", str(index), str(repeat)], cwd=tmp,
                                      capture_output=True, text=True, timeout=timeout, env=run_env)
                line = next((x for x in proc.stdout.splitlines() if x.startswith("GFXHOUND-PERF ")), None)
                results[kernel["name"]] = json.loads(line.split(" ", 1)[1]) if line else {
                    "failed": ((proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1])[:300]}
            except subprocess.TimeoutExpired:
                results[kernel["name"]] = {"failed": f"compile ran over {timeout:.0f} s"}
            if log:
                log(f"{kernel['name']}: {results[kernel['name']]}")
    return {"format": PERF_FORMAT, "toolchain": f"triton-{version.stdout.strip()}",
            "arch": kernels[0]["arch"] if kernels else None, "repeat": repeat, "kernels": results}


def compare(old: dict, new: dict, thresholds: dict = THRESHOLDS) -> list:
    """Regressions of `new` against `old`: one record per (kernel, metric) beyond both its thresholds."""
    found = []
    for name, before in sorted(old["kernels"].items()):
        after = new["kernels"].get(name, {})
        if "failed" in before or "failed" in after or not after:
            continue
        for metric, (relative, absolute) in thresholds.items():
            if metric not in before or metric not in after:
                continue
            a, b = before[metric], after[metric]
            growth = (a - b) if metric == "occupancy" else (b - a)
            base = max(abs(a), 1e-9)
            if growth >= absolute and growth / base > relative:
                found.append({"kernel": name, "target": new.get("arch"), "metric": metric, "old": a, "new": b,
                              "growth": round(growth / base, 3)})
    return found


def newly_failing(old: dict, new: dict) -> list:
    """Kernels the old toolchain compiled and the new one does not (a crash: the campaign's business too)."""
    return sorted(n for n, f in new["kernels"].items() if "failed" in f and "failed" not in old["kernels"].get(n, {
        "failed": ""}))


def summary(result: dict) -> str:
    ok = [f for f in result["kernels"].values() if "failed" not in f]
    if not ok:
        return f"{result['toolchain']}: no kernel compiled"
    return (f"{result['toolchain']}: {len(ok)}/{len(result['kernels'])} kernels, median compile "
            f"{statistics.median(f['compile_s'] for f in ok):.3f} s, max VGPRs "
            f"{max(f.get('vgpr_count', 0) for f in ok)}")


def make_set(caps_path: Path, out: Path, count: int, seed: int, pythons: list, log=None, env=None,
             max_batches: int = 10) -> list:
    """A kernel set: generated specs (rendered with `caps_path`, the oldest toolchain's capabilities, so every
    newer one can compile them) kept only when every interpreter in `pythons` compiles them."""
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.fuzz.generate import spec_stream
    from gfxhound.fuzz.render import render
    import shutil

    from gfxhound.atomic import install_dir
    caps = Capabilities.from_json(json.loads(Path(caps_path).read_text()))
    final = Path(out)
    kept = []

    def build(out):  # the whole set is written aside, then renamed into place (gfxhound/atomic.py)
        (out / "specs").mkdir(parents=True)
        (out / "caps.json").write_text(caps.dumps())
        stream = spec_stream(caps, seed, max_ops=12)
        for _ in range(max_batches):
            if len(kept) >= count:
                break
            # an explicit occupancy request (waves_per_eu) makes occupancy the request, not a figure to compare
            # (and releases before 3.5 ignore it on gfx942): such kernels stay out of the set
            batch = [spec for spec in (next(stream) for _ in range(count))
                     if "waves_per_eu" not in spec.launch.options]
            kernels = []
            for i, spec in enumerate(batch):
                r = render(spec, caps)
                kernels.append({"name": f"k{i}", "source": r.source, "kernel_name": r.kernel_name, "args": r.args,
                                "options": r.options, "env": r.env, "arch": caps.arch})
            results = [measure(p, kernels, repeat=1, timeout=120, env=env)["kernels"] for p in pythons]
            for i, spec in enumerate(batch):
                if all("failed" not in r[f"k{i}"] for r in results) and len(kept) < count:
                    name = f"perf-{len(kept):02d}"
                    (out / "specs" / f"{name}.json").write_text(spec.dumps())
                    kept.append(name)
                    if log:
                        log(f"{name}: kept")
        if (previous / "README.md").exists():  # a person's notes on the set stay with it
            shutil.copy(previous / "README.md", out / "README.md")

    previous = final.with_name(f".old-{final.name}")
    shutil.rmtree(previous, ignore_errors=True)
    if final.exists():
        final.rename(previous)  # the set being replaced, until the new one is in place
    try:
        install_dir(final, build)
    except BaseException:
        if previous.exists() and not final.exists():
            previous.rename(final)
        raise
    shutil.rmtree(previous, ignore_errors=True)
    return kept


if __name__ == "__main__":  # python -m gfxhound.report.perf SET_DIR PYTHON OUT.json
    data = measure(sys.argv[2], render_set(Path(sys.argv[1])))
    Path(sys.argv[3]).write_text(json.dumps(data, indent=1))
