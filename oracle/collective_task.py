"""What execution workers run for a collective spec (the single-rank tasks in run_task.py hand over to these).

`interpret`: only kernels whose waits the sequential interpreter can satisfy (fuzz/collective/spec.py
`interpretable`, decided from the pattern, never by trying); the rest are `unresolved` with that limitation.
`device`: the CPU worker compiles (the JIT's warm-up fills the shared cache), the GPU worker launches all ranks
as virtual ranks on its one device and judges them.
"""
from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from gfxhound.fuzz.collective.render import MAX_SPIN
from gfxhound.fuzz.collective.spec import interpretable

from .collective import case_of, launch_options, resident_limit, run_virtual
from .compile_task import _Fd2Redirect, load_kernel

RERUNS = 2
CONTROL_LAUNCHES = 8  # a negative control is run until the oracle sees it, at most this many times: a race shows
# only sometimes, and the figure of interest is whether the oracle can see it at all
INTERPRET_MAX_SPIN = 4  # a wait the interpreter reaches has its signal already (that is what `interpretable` means)


def _load(task, spec, rendered, name="kernel.py"):
    return load_kernel(rendered.source, Path(task["task_dir"]) / name, rendered.kernel_name)


def _accepted():
    from .accepted_options import accepted_options
    return accepted_options()


def execute(task, spec, rendered, kernel, device) -> dict:
    """Launch and judge; a failing run is re-run, and runs that disagree make it nondeterministic."""
    case = case_of(spec)
    limit = resident_limit(device)
    programs = spec.collective["programs"] * spec.ranks
    if limit is not None and programs > limit:
        return {"status": "harness", "text": f"{programs} programs cannot all be resident on {limit} compute units"}
    options = launch_options(rendered, _accepted() if device != "cpu" else (), device)
    max_spin = INTERPRET_MAX_SPIN if device == "cpu" else _planted_spin(task) or MAX_SPIN
    start = time.perf_counter()
    judgement = run_virtual(case, kernel, options, device, max_spin)
    runs = 1
    while spec.collective["control"] and judgement.ok and runs < task.get("control_launches", CONTROL_LAUNCHES):
        judgement = run_virtual(case, kernel, options, device, max_spin)
        runs += 1
    out = {"status": "ok", "duration": time.perf_counter() - start, "message": "; ".join(judgement.problems[:3]),
           "checks": {"mismatches": judgement.mismatches + judgement.other, "compared": judgement.compared,
                      "gave_up": judgement.gave_up},
           "collective": {"pattern": spec.collective["pattern"], "control": spec.collective["control"],
                          "ranks": spec.ranks, "problems": judgement.problems, "runs": runs}}
    if not judgement.ok and not spec.collective["control"]:
        agree = 0
        for _ in range(task.get("reruns", RERUNS)):
            again = run_virtual(case, kernel, options, device, max_spin)
            agree += not again.ok
        out["reruns"], out["reruns_agreeing"] = task.get("reruns", RERUNS), agree
    return out


def _planted_spin(task):
    if task.get("plant"):
        from .planted import PLANTS
        return PLANTS[task["plant"]].max_spin
    return None


def run_interpret(task, spec, rendered) -> dict:
    if not interpretable(spec):
        return {"status": "exception", "phase": "run", "features": rendered.features.to_json(),
                "text": "collective waits on a later program: the sequential interpreter cannot run it"}
    try:
        kernel = _load(task, spec, rendered)
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            result = execute(task, spec, rendered, kernel, "cpu")
        except BaseException:  # noqa: BLE001 - the interpreter's failure is data
            os.write(2, traceback.format_exc().encode(errors="replace"))
            result = {"status": "exception", "phase": "run"}
    result["features"] = rendered.features.to_json()
    return result


def prepare_device(task, spec, rendered) -> dict:
    """Compile through the JIT's warm-up with CPU stand-ins for the heap table (the launch finds it cached)."""
    import torch
    start = time.perf_counter()
    try:
        kernel = _load(task, spec, rendered)
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            c = spec.collective
            bases = torch.zeros(spec.ranks, dtype=torch.int64)
            options = launch_options(rendered, _accepted(), "device")
            compiled = kernel.warmup(bases, 0, c["n"], 1, MAX_SPIN, R=spec.ranks, BLOCK=c["block"],
                                     NPROG=c["programs"], **options, grid=rendered.grid)
            init = getattr(compiled, "_init_handles", None)
            if callable(init):
                init()
            result = {"status": "ok", "expected": None, "duration": time.perf_counter() - start,
                      "kernel_hash": getattr(compiled, "hash", None)}
        except BaseException:  # noqa: BLE001 - every compiler failure is data
            os.write(2, traceback.format_exc().encode(errors="replace"))
            result = {"status": "exception", "phase": "compile", "duration": time.perf_counter() - start}
    result["features"] = rendered.features.to_json()
    return result


def launch_device(task, spec, rendered) -> dict:
    try:
        kernel = _load(task, spec, rendered, "kernel_gpu.py")
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            return execute(task, spec, rendered, kernel, "cuda")
        except BaseException:  # noqa: BLE001 - a fault is data; the pool replaces this worker afterwards
            os.write(2, traceback.format_exc().encode(errors="replace"))
            return {"status": "exception", "phase": "run", "fatal": True}
