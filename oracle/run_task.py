"""What execution workers run: the reference (CPU), the kernel (interpreter or GPU), the comparison.

`interpret`: one task does everything in a worker started with TRITON_INTERPRET=1.
`device`: a CPU worker runs `prepare_device` (the reference, and the compile through the JIT's own warm-up so the
GPU worker's launch finds it in the shared cache); the GPU worker, pinned to one device, runs `launch_device`.
A mismatch is re-run (`reruns`) in the same worker; runs that disagree make the verdict `nondeterministic`.
"""
from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from gfxhound import compat
from gfxhound.fuzz.capabilities import Capabilities
from gfxhound.fuzz.program import walk
from gfxhound.fuzz.render import render
from gfxhound.fuzz.pairs import LAUNCH_KINDS
from gfxhound.spec import KernelSpec

from . import collective_task, user_task
from .accepted_options import launch_options as _gpu_launch_options
from .compare import compare, runs_agree
from .compile_task import _Fd2Redirect, load_kernel
from .evaluate import UndefinedBehaviour, evaluate
from .execute import collect, launch, prepare
from .inputs import make_inputs
from .planted import PLANTS, mutate_ir, mutate_source
from .tolerance import table_for

# the run tasks of the other kernel families (gfxhound.spec.FAMILIES), each with run_interpret, prepare_device
# and launch_device; single-rank kernels are this module's own
FAMILY_TASKS = {"collectives": collective_task, "user": user_task}

RERUNS = 3


def _setup(task, ir_stage=False):
    spec = KernelSpec.from_json(task["spec"])
    caps = Capabilities.from_json(task["caps"])
    rendered = render(spec, caps)
    plant = task.get("plant")
    if plant and not (ir_stage and PLANTS[plant].ir_edit):  # a planted bug (oracle/planted.py): edit the source
        rendered.source = mutate_source(plant, rendered.source)
    return spec, caps, rendered


def reference(spec, caps, backend, device_kind=""):
    """The expected outputs, or raises UndefinedBehaviour."""
    walker = walk(spec, caps)
    return evaluate(spec, caps, make_inputs(spec), table_for(backend, device_kind), walker=walker)


def _device_kind():
    import torch
    return "hip" if getattr(torch.version, "hip", None) else "cuda"


def _launch_options(rendered, backend):
    return {} if backend in ("interpret", "emulate") else _gpu_launch_options(rendered)


def _run_once(spec, rendered, kernel, inputs, options, device, timings=None):
    """One run; `timings` (a dict) gets the seconds of its buffers, its launch (the JIT's cache lookup and module
    load included) and reading back, where the GPU worker's turn goes (oracle/gpu_pool.py)."""
    mark = time.perf_counter()
    buffers, values, constexprs = prepare(spec, rendered, inputs, device)
    prepared = time.perf_counter()
    launch(kernel, rendered, values, constexprs, options, device)
    launched = time.perf_counter()
    outputs = collect(spec, buffers)
    if timings is not None:
        timings.update(buffers_s=prepared - mark, launch_s=launched - prepared,
                       read_s=time.perf_counter() - launched)
    return outputs


def _execute(task, spec, rendered, kernel, expected, device):
    """Launch, compare, and re-run a mismatch; returns the result dict."""
    mark = time.perf_counter()
    inputs = make_inputs(spec)
    options = _launch_options(rendered, task["backend"])
    start = time.perf_counter()
    timings = {"inputs_s": start - mark}
    with compat.environment(rendered.env):
        outputs, problems = _run_once(spec, rendered, kernel, inputs, options, device, timings)
        first_run = time.perf_counter() - start  # on a GPU: a cache miss would show here as a compile
        result = compare(expected, outputs, problems)
        timings["compare_s"] = time.perf_counter() - start - first_run
        out = {"status": "ok", "checks": result.checks(), "message": result.message(), "timings": timings,
               "duration": time.perf_counter() - start, "first_run_s": first_run, "undetermined_share": round(
                   result.undetermined / max(1, sum(b.numel for b in expected.outputs.values())), 4)}
        if result.ok and device != "cpu" and (spec.pair or {}).get("kind") in LAUNCH_KINDS:
            out["pair"] = _run_pair(spec, rendered, kernel, inputs, expected, outputs, task, device)
        if not result.ok:
            agree = 0
            for _ in range(task.get("reruns", RERUNS)):
                again, again_problems = _run_once(spec, rendered, kernel, inputs, options, device)
                agree += runs_agree(expected, outputs, again) and again_problems == problems
            out["reruns"] = task.get("reruns", RERUNS)
            out["reruns_agreeing"] = agree
        return out


def _pair_rendered(spec, rendered):
    """The second member of a launch pair: the same source under the pair's launch configuration."""
    from dataclasses import replace

    from gfxhound.fuzz.pairs import variant
    from gfxhound.fuzz.render import launch_options
    second, _ = variant(spec, "")
    return replace(rendered, options=launch_options(second), env=dict(second.launch.env))


def _run_pair(spec, rendered, kernel, inputs, expected, outputs, task, device):
    """Run the metamorphic pair's second member (fuzz/pairs.py) and judge it against the reference; where the
    pair keeps every accumulation order, also bit for bit against the first member's outputs. `mismatch`: the
    second member is wrong on its own (a finding, as its own spec); `differs`: both are within bounds but not
    bit-identical (counted, not reported: no standalone repro shows it)."""
    from gfxhound.fuzz.pairs import ORDER_PRESERVING
    # the first member's inputs and reference are the second's too: the data leave the launch and the pair out
    # (inputs.data_key), so the second member, recorded as a spec of its own, regenerates exactly what it was
    # judged with here (and its repro embeds the values this message quotes)
    kind = spec.pair["kind"]
    second = _pair_rendered(spec, rendered)
    start = time.perf_counter()
    try:
        with compat.environment(second.env):
            got, problems = _run_once(spec, second, kernel, inputs, _launch_options(second, task["backend"]), device)
            judged = compare(expected, got, problems)
            pair = {"kind": kind, "checks": judged.checks(), "message": judged.message()}
            if not judged.ok:
                again, again_problems = _run_once(spec, second, kernel, inputs,
                                                  _launch_options(second, task["backend"]), device)
                pair.update(status="mismatch", reruns=1,
                            reruns_agreeing=int(runs_agree(expected, got, again) and again_problems == problems))
            elif kind in ORDER_PRESERVING and not runs_agree(expected, outputs, got):
                pair["status"] = "differs"
            else:
                pair["status"] = "ok"
    except BaseException:  # noqa: BLE001 - a fault is data
        os.write(2, traceback.format_exc().encode(errors="replace"))
        pair = {"kind": kind, "status": "exception", "fatal": True}
    pair["duration"] = time.perf_counter() - start
    return pair


def run_interpret(task: dict) -> dict:
    """Reference + interpreted run + comparison, in a worker started with TRITON_INTERPRET=1."""
    task_dir = Path(task["task_dir"])
    try:
        spec, caps, rendered = _setup(task)
        if spec.family in FAMILY_TASKS:  # another family's run task
            return FAMILY_TASKS[spec.family].run_interpret(task, spec, rendered)
        kernel = load_kernel(rendered.source, task_dir / "kernel.py", rendered.kernel_name)
        try:
            expected = reference(spec, caps, "interpret")
        except UndefinedBehaviour as exc:
            return {"status": "ub", "text": str(exc), "features": rendered.features.to_json()}
    except Exception:  # noqa: BLE001 - a harness failure must never look like a compiler bug
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            result = _execute(task, spec, rendered, kernel, expected, "cpu")
        except BaseException:  # noqa: BLE001 - the interpreter's failure is data
            text = traceback.format_exc()
            os.write(2, text.encode(errors="replace"))
            result = {"status": "exception", "phase": "run"}
    result["features"] = rendered.features.to_json()
    return result


def prepare_device(task: dict) -> dict:
    """CPU side of a device run: the reference, and the compile (the JIT's warm-up fills the shared cache)."""
    task_dir = Path(task["task_dir"])
    began, clock = time.perf_counter(), time.time()  # the clock: the campaign's trace of where kernels wait
    try:
        spec, caps, rendered = _setup(task, ir_stage=True)
        if spec.family in FAMILY_TASKS:  # another family's run task
            return FAMILY_TASKS[spec.family].prepare_device(task, spec, rendered)
        kernel = load_kernel(rendered.source, task_dir / "kernel.py", rendered.kernel_name)
        set_up = time.perf_counter()
        try:
            expected = reference(spec, caps, "device", task.get("device_kind", "cuda"))
        except UndefinedBehaviour as exc:
            return {"status": "ub", "text": str(exc), "features": rendered.features.to_json()}
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    start = time.perf_counter()
    phases = {"setup_s": set_up - began, "reference_s": start - set_up}  # where a worker's time goes
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            plant = task.get("plant")
            if plant and PLANTS[plant].ir_edit:
                compiled = _warmup_with_ir_edit(spec, rendered, kernel, task, plant)
            else:
                compiled = _warmup(spec, rendered, kernel, task)
            if (spec.pair or {}).get("kind") in LAUNCH_KINDS:  # the pair's compile too: the GPU worker only runs
                _warmup(spec, _pair_rendered(spec, rendered), kernel, task)
            result = {"status": "ok", "expected": expected, "duration": time.perf_counter() - start,
                      "kernel_hash": getattr(compiled, "hash", None), **phases}
        except BaseException:  # noqa: BLE001 - every compiler failure is data
            os.write(2, traceback.format_exc().encode(errors="replace"))
            result = {"status": "exception", "phase": "compile", "duration": time.perf_counter() - start}
    result["features"] = rendered.features.to_json()
    result["span"] = (clock, time.time(), os.getpid())
    return result


def _warmup(spec, rendered, kernel, task):
    buffers, values, constexprs = prepare(spec, rendered, make_inputs(spec), "cpu")
    del buffers
    options = _launch_options(rendered, "device")
    with compat.environment(rendered.env):  # a kernel's knobs must not leak into the worker's next kernel
        compiled = kernel.warmup(*values, **constexprs, **options, grid=rendered.grid)
        init = getattr(compiled, "_init_handles", None)
        if callable(init):  # build the launcher here (a C compile per new signature): the GPU worker only launches
            init()
    return compiled


def _warmup_with_ir_edit(spec, rendered, kernel, task, plant):
    """Compile once with Triton's IR dump, edit the dumped stage, and compile again with Triton's IR override:
    the override is not part of the cache key, so the edited kernel replaces the cache entry the GPU worker's
    launch will find (FACTS.md). The first, unedited compile goes to a cache of this task's own: planted kernels
    of one campaign often share a hash (sizes are arguments), and an unedited compile written to the shared
    cache by one worker while another worker's edited kernel waited for its launch made that launch run the
    unedited code (2 to 6 of 40 planted runs "missed" on an H100/H200, varying from run to run)."""
    stage = PLANTS[plant].ir_edit[0]
    base = Path(task["task_dir"])
    dump, override = base / "dump", base / "override"
    knobs = {"TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": str(dump), "TRITON_ALWAYS_COMPILE": "1",
             "TRITON_CACHE_DIR": str(base / "unedited-cache")}
    try:
        with compat.environment(knobs):
            _refresh_knobs()
            _warmup(spec, rendered, kernel, task)
        found = sorted(dump.glob(f"*/*.{stage}"))
        if not found:
            raise RuntimeError(f"planted bug: no .{stage} was dumped")
        target = override / found[0].parent.name / found[0].name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(mutate_ir(plant, found[0].read_text()))
        with compat.environment({"TRITON_KERNEL_OVERRIDE": "1", "TRITON_OVERRIDE_DIR": str(override),
                                 "TRITON_ALWAYS_COMPILE": "1"}):
            _refresh_knobs()
            kernel = load_kernel(rendered.source, base / "kernel_override.py", rendered.kernel_name)
            return _warmup(spec, rendered, kernel, task)
    finally:
        _refresh_knobs()


def _refresh_knobs():
    """Triton >= 3.4 reads these knobs through triton.knobs, which caches environment reads: reset them."""
    try:
        import triton.knobs as knobs
    except ImportError:
        return
    for group in ("compilation", "cache"):
        holder = getattr(knobs, group, None)
        reset = getattr(holder, "reset", None)
        if callable(reset):
            reset()


def launch_device(task: dict) -> dict:
    """GPU side: launch (the compiled kernel is in the shared cache), compare, re-run a mismatch."""
    task_dir = Path(task["task_dir"])
    began = time.perf_counter()
    try:
        # an IR-edit plant's edited kernel sits in the shared cache under the unedited source's key: launch that
        spec, caps, rendered = _setup(task, ir_stage=True)
        if spec.family in FAMILY_TASKS:  # another family's run task
            return FAMILY_TASKS[spec.family].launch_device(task, spec, rendered)
        set_up = time.perf_counter()
        kernel = load_kernel(rendered.source, task_dir / "kernel_gpu.py", rendered.kernel_name)
        loaded = time.perf_counter()
        expected = task["expected"]
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):  # a device-side assert's message is printed on fd 1
        try:
            result = _execute(task, spec, rendered, kernel, expected, "cuda")
        except BaseException:  # noqa: BLE001 - a fault is data; the pool replaces this worker afterwards
            os.write(2, traceback.format_exc().encode(errors="replace"))
            result = {"status": "exception", "phase": "run", "fatal": True}
    launched = _compiled_hashes(kernel)
    if task.get("kernel_hash") and launched is not None:
        # the launch must have found the CPU worker's compile in the shared cache: a different key means the GPU
        # worker compiled again (seconds, serialised on the GPU worker), which the campaign summary counts
        result["recompiled"] = task["kernel_hash"] not in launched
    result.setdefault("timings", {}).update(setup_s=set_up - began, load_s=loaded - set_up,
                                            turn_s=time.perf_counter() - began)
    return result


def _compiled_hashes(kernel):
    """The cache keys of what this JIT function compiled in this process (None where the release hides them)."""
    try:
        return {compiled.hash for cache in kernel.device_caches.values() for compiled in cache[0].values()}
    except (AttributeError, TypeError, IndexError, KeyError):
        return None


def known_good(task: dict) -> dict:
    """A trivial kernel that must run after a worker was replaced: if it fails, the device is wedged."""
    import torch

    from .known_good import add_one
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    y = torch.zeros_like(x)
    add_one[(4,)](x, y, 1000, BLOCK=256)
    torch.cuda.synchronize()
    ok = bool(torch.equal(y.cpu(), torch.arange(1000, dtype=torch.float32) + 1))
    return {"status": "ok" if ok else "exception", "text": "known-good kernel " + ("ran" if ok else "was wrong")}
