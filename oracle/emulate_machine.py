"""The third judge of `--backend emulate`: Triton's own AMDGCN code for the kernel, run on the machine-code executor
(executors/amdgcn/) on the inputs the IR executor ran, and judged against torch by the same comparison.

Why three: torch judges the IR executor's outputs, which says whether Triton (lowering or earlier) is right; it
says nothing of what LLVM's AMDGPU backend made of that IR. With the machine code beside it the layer is named:

* the IR executor's outputs wrong against torch: ``layer`` "triton" (the machine code's run is noted);
* the IR executor's outputs right and the machine code's wrong (or faulting): ``layer`` "llvm", a miscompile of
  LLVM's AMDGPU backend (instruction selection, combines, scheduling, register allocation, waitcnts);
* the machine code reads a register whose load no ``s_waitcnt`` retired, or breaks a wait-state row the machine
  checks, with its outputs right: the verdict ``hazard`` (layer "llvm": LLVM's waitcnt insertion or hazard
  recognizer), a finding of its own and never a wrong result, keyed by the instructions (``hazard_key``).

Why against torch and not bit for bit against the IR executor: the hardware's v_exp_f32, v_rcp_f32 and
v_log_f32 are approximations the guide bounds, not the correctly rounded results the IR executor computes, so
the two executors may differ in the last bits where both are right; the tolerance model (docs/tolerance.md) is
what says "right". The inputs are the same: make_inputs(spec) is deterministic.

The two executors share plumbing, never semantics (docs/amdgcn-pcode.md): the machine decodes the assembly with
its own decoder, runs AMD's pseudocode and keeps its own memory; only the launch's bytes cross. What the machine
does not model leaves its judgement ``unresolved`` with the instruction named: the kernel is still judged by
torch and the IR executor, as before. One wave order (forward): the IR executor reports races between waves on
its own (EmulatedRace).
"""
from __future__ import annotations

import contextlib
import signal
import threading
import time

import numpy as np

MACHINE_TARGETS = ("gfx942", "gfx950")  # what the machine-code executor models (wave64 CDNA3/CDNA4)
MAX_STEPS = 2_000_000  # instructions per wave before the run is unresolved (a long loop, a hang)
TIME_CAP_S = 15.0  # seconds of machine-code judgement per kernel; past it: unresolved (the task's own timeout
#                    is the compile's, and a slow executor must never turn into a `timeout` finding)
__all__ = ["MACHINE_TARGETS", "MachineKernel", "applies", "judge_machine"]


def applies(arch: str) -> bool:
    return arch.split(":")[0] in MACHINE_TARGETS


class MachineKernel:
    """Stands in for the IR executor's launch object (executors/llvm_ir/launch.py EmulatedKernel) with the same
    launch protocol (``kernel[grid](*values)``, oracle/execute.py): the launch's tensors are mapped into the
    machine's own memory (each tensor's whole storage, guard regions included), the machine code runs, and the
    bytes are written back into the tensors, so the campaign's buffers, canaries and comparison with torch judge
    it exactly as they judge the IR executor. ``report``: hazards seen, the run's seconds."""

    def __init__(self, emulated, compiled, arch):
        self.emulated, self.compiled, self.arch = emulated, compiled, arch.split(":")[0]
        self.report = {"hazards": ""}
        self.last_run_s, self.prepare_s = 0.0, 0.0
        self._decoded = None

    def __getitem__(self, grid):
        return lambda *values, **keywords: self.run(grid, values)

    def _decode(self):
        if self._decoded is None:
            from gfxhound.executors.amdgcn.abi import kernel_abi
            from gfxhound.executors.amdgcn.asm import parse_program
            from gfxhound.executors.amdgcn.machine_kernel import Kernel
            started = time.perf_counter()
            text = self.compiled.asm["amdgcn"]
            program = parse_program(text)
            abi = kernel_abi(text, self.compiled.metadata.name, program)
            self._decoded = (Kernel(program.function(abi.name), program=program), abi)
            self.prepare_s = time.perf_counter() - started
        return self._decoded

    def run(self, grid, values):
        """Raises the machine's NotModelled / StepLimit (cannot judge) and MachineFault (the code faults)."""
        import torch

        from gfxhound.executors.amdgcn.run import launch
        from gfxhound.executors.llvm_ir.launch import scalar_argument, tensor_storage
        started = time.perf_counter()
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        kept = [values[i] for i in self.emulated.keep]
        args, mapped = [], []
        for value, (ty, _name) in zip(kept, self.emulated.kernel.params):
            if isinstance(value, torch.Tensor):
                raw, offset = tensor_storage(value)
                copy = raw.copy()
                args.append((copy, offset))
                mapped.append((raw, len(args) - 1))
            else:  # the launch's bytes as the IR's parameter type has them (a bf16 scalar: NotModelled)
                args.append(scalar_argument(ty, value))
        kernel, abi = self._decode()
        visible = [a for a in abi.kernargs if not a.hidden]
        programs = grid[0] * grid[1] * grid[2]
        sizes = [self.emulated.scratch, self.emulated.profile_scratch]
        while len(args) < len(visible):  # Triton's trailing global- and profile-scratch pointers
            size = sizes.pop(0) if sizes else 0
            args.append(np.zeros(max(size, 0) * programs + 1, np.uint8))
        block = (self.emulated.num_warps * self.emulated.warp_size, 1, 1)
        result = launch(kernel, abi, args, grid, block, max_steps=MAX_STEPS, dynamic_lds=self.emulated.shared)
        for raw, index in mapped:
            raw[:] = np.asarray(result.outputs[index]).view(np.uint8)
        what = []
        if result.hazards:
            what.append(f"{len(result.hazards)} read(s) of a register whose load no s_waitcnt retired")
        if result.wait_hazards:
            what.append(f"{len(result.wait_hazards)} pair(s) run with fewer wait states than the guide requires "
                        f"(rule {result.wait_hazards[0][4]})")
        self.report = {"hazards": "; ".join(what), "decisions": list(kernel.decisions),
                       "hazard_key": hazard_key(kernel, result)}
        self.last_run_s = time.perf_counter() - started


def hazard_key(kernel, result) -> str:
    """The first hazard the run met, by instructions and not registers or positions, so one hazard bug met
    through many kernels keys one finding (gfxhound/signature_machine.py hazard_signature): a wait-state row broken,
    "rule N: producer -> consumer", else "<reader> reads a register no s_waitcnt retired"; "" without one."""
    names = [ins.mnemonic for ins in kernel.instructions]
    if result.wait_hazards:
        _gx, _gy, _gz, _wave, rule, producer, consumer = result.wait_hazards[0]
        return f"rule {rule}: {names[producer]} -> {names[consumer]}"
    if result.hazards:
        return f"{names[result.hazards[0][4]]} reads a register no s_waitcnt retired"
    return ""


class OverCap(Exception):
    """The machine-code judgement ran past its time cap."""


@contextlib.contextmanager
def _time_cap(seconds: float):
    """Raise OverCap in this (the worker's main) thread after `seconds`; a no-op off the main thread."""
    if threading.current_thread() is not threading.main_thread() or not seconds:
        yield
        return

    def expire(signum, frame):
        raise OverCap()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def judge_machine(run, emulated, compiled, arch, cap: float = TIME_CAP_S) -> dict:
    """Run the campaign's judgement (`run`: a callable taking the launch object, returning the result dict with
    ``checks``) with the machine code in place of the IR executor: {"status": agree | disagree | hazard |
    unresolved, "text", "s"}. ``agree``: the machine code's outputs pass the torch comparison; ``disagree``: they
    do not (or the code faults where the IR ran), with the comparison's message."""
    from gfxhound.executors.amdgcn.machine import MachineFault, StepLimit
    from gfxhound.executors.amdgcn.run import NotModelled
    from gfxhound.executors.llvm_ir.errors import NotModelled as LaunchNotModelled
    machine = MachineKernel(emulated, compiled, arch)
    started = time.perf_counter()
    try:
        with _time_cap(cap):
            result = run(machine)
    except OverCap:
        return {"status": "unresolved", "text": f"over the time cap ({cap:g} s)", "s": round(time.perf_counter() - started, 4)}
    except (NotModelled, LaunchNotModelled) as exc:
        return {"status": "unresolved", "text": str(exc)[:300], "s": round(time.perf_counter() - started, 4)}
    except StepLimit as exc:
        return {"status": "unresolved", "text": f"step limit: {exc}"[:300], "s": round(time.perf_counter() - started, 4)}
    except MachineFault as exc:
        return {"status": "disagree", "text": f"the machine code faults where the IR runs: {exc}"[:500],
                "s": round(time.perf_counter() - started, 4), "decisions": []}
    except Exception as exc:  # noqa: BLE001 - the machine's own failure must never become a finding
        return {"status": "unresolved", "text": f"machine executor error: {type(exc).__name__}: {str(exc)[:200]}",
                "s": round(time.perf_counter() - started, 4)}
    seconds = round(time.perf_counter() - started, 4)
    decisions = machine.report.get("decisions", [])
    if result.get("status") != "ok":
        return {"status": "unresolved", "text": f"machine run: {result.get('status')}", "s": seconds}
    if result["checks"].get("mismatches"):
        return {"status": "disagree", "text": result.get("message", "")[:1500], "s": seconds, "decisions": decisions}
    if machine.report.get("hazards"):
        return {"status": "hazard", "text": machine.report["hazards"], "key": machine.report["hazard_key"],
                "s": seconds}
    return {"status": "agree", "text": "", "s": seconds}
