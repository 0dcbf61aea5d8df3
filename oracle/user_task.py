"""What execution workers run for a user's kernel (`gfxhound fuzz --kernel`): the run tasks of oracle/run_task.py
hand a spec of the `user` family over to these.

`interpret`: the reference on the CPU, the kernel in the interpreter, the comparison (oracle/user_data.py).
`device`: the CPU worker computes the reference and compiles through the JIT's warm-up (the GPU worker's launch
finds it in the shared cache); the GPU worker launches and compares. Without a reference in the launch spec a run
still finds faults and hangs; a wrong result needs one. A reference that fails is `unresolved` (its message says
so), never a finding: the reference is the user's code, not the compiler's.
"""
from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from gfxhound import compat

from .compile_task import _Fd2Redirect, load_kernel
from .user_data import (UserReferenceError, compare, expected_outputs, make_tensors, outputs_of,
                        set_device_allocator)

RERUNS = 2


def _load(task, rendered, name="kernel.py"):
    return load_kernel(rendered.source, Path(task["task_dir"]) / name, rendered.kernel_name)


def _reference(kernel, user):
    """The reference function from the kernel's own module, or None."""
    if not user.get("reference"):
        return None
    return kernel.fn.__globals__[user["reference"]]


def _values(user, tensors):
    return [tensors[a["name"]] if a["kind"] == "tensor" else a["value"] for a in user["args"]]


def _options(rendered, device):
    from .accepted_options import launch_options
    return {} if device == "cpu" else launch_options(rendered)


def _run_once(kernel, user, rendered, device):
    tensors = {k: v.to(device) if device != "cpu" else v for k, v in make_tensors(user).items()}
    set_device_allocator(device)
    with compat.environment(rendered.env):
        kernel[tuple(user["grid"])](*_values(user, tensors), **_options(rendered, device))
    if device != "cpu":
        import torch
        torch.cuda.synchronize()
    return [tensors[a["name"]].cpu() for a in outputs_of(user)]


def execute(task, spec, rendered, kernel, expected, device) -> dict:
    """Launch, compare with the reference's outputs (when there is a reference), re-run a mismatch."""
    import torch
    user = spec.user
    start = time.perf_counter()
    got = _run_once(kernel, user, rendered, device)
    out = {"status": "ok", "duration": time.perf_counter() - start, "message": "",
           "checks": {"compared": 0, "undetermined": 0, "mismatches": 0}}
    if expected is None:
        return out
    mismatches, compared, lines = compare(user, expected, got)
    out["checks"].update(compared=compared, mismatches=mismatches)
    out["message"] = "\n".join(lines)
    if mismatches:
        agree = 0
        for _ in range(task.get("reruns", RERUNS)):
            again = _run_once(kernel, user, rendered, device)
            agree += all(torch.equal(_bits(a), _bits(b)) for a, b in zip(got, again))
        out["reruns"], out["reruns_agreeing"] = task.get("reruns", RERUNS), agree
    return out


def _bits(t):
    """A tensor's bytes (NaNs compare equal to themselves), strided outputs included."""
    import torch
    return t if t.dtype == torch.bool else t.contiguous().view(torch.uint8)


def _expected(kernel, spec):
    reference = _reference(kernel, spec.user)
    return None if reference is None else expected_outputs(spec.user, reference)


def _unheld(task, spec):
    """The tensor dtypes this backend cannot run (the interpreter computes bf16 wrongly: docs/design.md's
    limitations), as one line; empty when it can run them all."""
    from gfxhound.fuzz import dtypes as D
    from gfxhound.fuzz.capabilities import Capabilities
    caps = Capabilities.from_json(task["caps"])
    unheld = sorted({a["dtype"] for a in spec.user["args"] if a["kind"] == "tensor" and not D.usable([a["dtype"]], caps)})
    return f"limitation: this backend cannot run {', '.join(unheld)} tensors" if unheld else ""


def run_interpret(task, spec, rendered) -> dict:
    unheld = _unheld(task, spec)
    if unheld:  # judged unresolved with this reason, never a finding
        return {"status": "harness", "text": unheld, "features": rendered.features.to_json()}
    try:
        kernel = _load(task, rendered)
        expected = _expected(kernel, spec)
    except UserReferenceError as exc:
        return {"status": "harness", "text": f"reference: {exc}", "features": rendered.features.to_json()}
    except Exception:  # noqa: BLE001 - a harness failure must never look like a compiler bug
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            result = execute(task, spec, rendered, kernel, expected, "cpu")
        except BaseException:  # noqa: BLE001 - the interpreter's failure is data
            os.write(2, traceback.format_exc().encode(errors="replace"))
            result = {"status": "exception", "phase": "run"}
    result["features"] = rendered.features.to_json()
    return result


def prepare_device(task, spec, rendered) -> dict:
    """CPU side: the reference, and the compile through the JIT's warm-up (CPU tensors stand in for the GPU's)."""
    start = time.perf_counter()
    user = spec.user
    try:
        kernel = _load(task, rendered)
        expected = _expected(kernel, spec)
        values = _values(user, make_tensors(user))  # the spec's data, not the compiler: outside the compile's try
    except UserReferenceError as exc:
        return {"status": "harness", "text": f"reference: {exc}", "features": rendered.features.to_json()}
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            with compat.environment(rendered.env):
                compiled = kernel.warmup(*values, grid=tuple(user["grid"]),
                                         **_options(rendered, "device"))
                init = getattr(compiled, "_init_handles", None)
                if callable(init):
                    init()
            result = {"status": "ok", "expected": expected, "duration": time.perf_counter() - start,
                      "kernel_hash": getattr(compiled, "hash", None)}
        except BaseException:  # noqa: BLE001 - every compiler failure is data
            os.write(2, traceback.format_exc().encode(errors="replace"))
            result = {"status": "exception", "phase": "compile", "duration": time.perf_counter() - start}
    result["features"] = rendered.features.to_json()
    return result


def launch_device(task, spec, rendered) -> dict:
    try:
        kernel = _load(task, rendered, "kernel_gpu.py")
    except Exception:  # noqa: BLE001
        return {"status": "harness", "text": traceback.format_exc()}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            return execute(task, spec, rendered, kernel, task.get("expected"), "cuda")
        except BaseException:  # noqa: BLE001 - a fault is data; the pool replaces this worker afterwards
            os.write(2, traceback.format_exc().encode(errors="replace"))
            return {"status": "exception", "phase": "run", "fatal": True}
