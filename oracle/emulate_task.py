"""What a worker of an `--backend emulate` campaign runs: the reference, the compile for the AMD target, the CPU
executor over the compiled kernel's LLVM IR (executors/llvm_ir/), the comparison.

The compile is the compile backend's: a crash here is an ICE as ever. The run is the device backend's `_execute`
with the executor standing in for the GPU, so buffers, canaries, inputs and the comparison are the same code. What
the executor does not model makes the kernel `unresolved` with the construct named ("emulation cannot judge: ..."),
never a finding.
"""
from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from gfxhound import compat

from .compile_task import _Fd2Redirect, load_kernel
from gfxhound.executors.llvm_ir.errors import NotModelled
from gfxhound.executors.llvm_ir.intrinsics import DeviceAssertion
from gfxhound.executors.llvm_ir.memory import EmulatedFault, EmulatedRace
from .emulate_machine import applies, judge_machine
from .evaluate import UndefinedBehaviour
from .run_task import _execute, _setup, reference

STATUS_UNMODELLED = "unmodelled"


def emulated_kernel(rendered, arch, compiled, every_argument=False):
    """The executor's launch object for a compiled kernel, given the rendered launch's arguments. The launch passes
    its non-constexpr arguments positionally (generated kernels), or `every_argument` in order (a kernel file's
    launch: oracle/user_task.py)."""
    from gfxhound.executors.llvm_ir.launch import EmulatedKernel
    with compat.environment(rendered.env):
        signature, _constexprs, _attrs = compat.specialise(rendered.args)
    passed = rendered.args if every_argument else [a for a in rendered.args if a["kind"] != "constexpr"]
    keep = [i for i, a in enumerate(passed) if signature[a["name"]] != "constexpr"]
    return EmulatedKernel(compiled, arch, keep)


def run_emulate(task: dict) -> dict:
    task_dir = Path(task["task_dir"])
    try:
        spec, caps, rendered = _setup(task, ir_stage=True)
        if spec.family == "collectives":  # ranks spin on each other's flags: the lockstep executor would deadlock
            return {"status": STATUS_UNMODELLED, "text": "multi-rank collectives are not emulated",
                    "features": rendered.features.to_json()}
        kernel = load_kernel(rendered.source, task_dir / "kernel.py", rendered.kernel_name)
        if spec.family == "user":
            return _run_user(task, spec, rendered, kernel)
        try:
            expected = reference(spec, caps, "device", "hip")
        except UndefinedBehaviour as exc:
            return {"status": "ub", "text": str(exc), "features": rendered.features.to_json()}
    except Exception:  # noqa: BLE001 - a harness failure must never look like a compiler bug
        return {"status": "harness", "text": traceback.format_exc()}
    result = _compile_and_run(task, spec, rendered, kernel, expected)
    result["features"] = rendered.features.to_json()
    return result


def _run_user(task, spec, rendered, kernel):
    """A kernel file's launch (a user's kernel or a kernel template): its own reference, its own comparison."""
    from .user_data import UserReferenceError
    from .user_task import _expected, execute
    try:
        expected = _expected(kernel, spec)
    except UserReferenceError as exc:
        return {"status": "harness", "text": f"reference: {exc}", "features": rendered.features.to_json()}
    result = _compile_and_run(task, spec, rendered, kernel, expected,
                              run=lambda emulated: execute(dict(task, reruns=0), spec, rendered, emulated, expected,
                                                           "cpu"), every_argument=True)
    result["features"] = rendered.features.to_json()
    return result


def _compile_and_run(task, spec, rendered, kernel, expected, run=None, every_argument=False):
    start = time.perf_counter()
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            compiled = compat.compile_for_amd(kernel, rendered.args, task["arch"], rendered.options, rendered.env)
        except BaseException:  # noqa: BLE001 - every compiler failure is data
            os.write(2, traceback.format_exc().encode(errors="replace"))
            return {"status": "exception", "phase": "compile", "duration": time.perf_counter() - start}
        compile_s = time.perf_counter() - start
        mutation = task.get("mutation")  # a planted lowering bug (executors/llvm_ir/mutations.py): edit the IR
        if mutation:
            from gfxhound.executors.llvm_ir.mutations import MUTATIONS
            text = compiled.asm["llir"]
            if not MUTATIONS[mutation].applies(text):
                return {"status": STATUS_UNMODELLED, "text": f"mutation {mutation} does not apply",
                        "compile_s": compile_s, "mutation_applied": False}
            compiled.asm["llir"] = MUTATIONS[mutation].edit(text)
        try:
            emulated = emulated_kernel(rendered, task["arch"], compiled, every_argument)
            judged = run or (lambda k: _execute(dict(task, reruns=0), spec, rendered, k, expected, "cpu"))
            result = judged(emulated)
        except NotModelled as exc:
            return {"status": STATUS_UNMODELLED, "text": str(exc), "duration": time.perf_counter() - start,
                    "compile_s": compile_s}
        except (EmulatedFault, EmulatedRace, DeviceAssertion) as exc:
            kind = {EmulatedFault: "Memory access fault", EmulatedRace: "LDS race"}.get(type(exc), "device-side assert")
            text = f"{kind} (emulated): {exc}"
            # the traceback's last line carries the kind, so the signature (gfxhound/signature.py) keys on it
            lines = traceback.format_exc().rstrip().splitlines()
            lines[-1] = f"EmulationError: {text}"  # a type the signature parser reads (signature._TRACEBACK_EXC)
            os.write(2, ("\n".join(lines) + "\n").encode(errors="replace"))
            return {"status": "exception", "phase": "run", "text": text, "duration": time.perf_counter() - start,
                    "compile_s": compile_s}
    result["compile_s"] = compile_s
    result["emulate_s"] = emulated.last_run_s + emulated.prepare_s
    if task.get("machine_code", True) and not mutation and applies(task["arch"]):
        # the third judge: LLVM's machine code for the same IR, on the same inputs (oracle/emulate_machine.py)
        result["machine"] = judge_machine(judged, emulated, compiled, task["arch"])
    if mutation:
        result["mutation_applied"] = True
    return result
