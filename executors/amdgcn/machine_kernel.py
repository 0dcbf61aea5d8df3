"""A kernel's Function decoded once (machine_decode.py) and the loop that runs one wave of it.

Why a module of its own: the decoder and the cross-lane moves build on machine.py's wave state, and this loop
builds on the decoder; machine.py importing the decoder back would make a circle.
"""
from __future__ import annotations

from gfxhound.executors.amdgcn.machine import MachineFault, NotModelled, StepLimit, Wave
from gfxhound.executors.amdgcn.machine_calls import CALL_STEPS, link
from gfxhound.executors.amdgcn.machine_decode import decode
from gfxhound.executors.amdgcn.machine_hazards import step_info


def _decoded(ins, processor):
    """decode(ins), or for an instruction the machine does not model a step that says so when it runs: a kernel is
    unresolved by what its executed path meets, not by what it contains (Triton's failed-assertion path takes a
    printf format string's address, which link() leaves unresolved, and ends in an s_trap, whose text is prose; a
    passing kernel runs neither)."""
    try:
        return decode(ins, processor)
    except NotModelled as exc:
        def step(w, exc=exc):
            raise exc
        return step


# ---- a decoded kernel ---------------------------------------------------------------------------------------
class Kernel:
    """A Function decoded once into steps (machine_decode.py); ``run(wave, entry)`` runs one wave from ``entry``
    until s_endpgm or an s_barrier (``wave.at_barrier``; ``run(wave)`` again resumes it)."""

    def __init__(self, function, max_steps: int = 1_000_000, program=None, processor: str | None = None):
        self.function, self.max_steps = function, max_steps
        # what fp8/bf8 mean depends on the processor (machine_fp8.py): the program's target unless told
        self.processor = processor if processor is not None else (program.processor if program else "")
        calls = any(ins.mnemonic in CALL_STEPS for ins in function.instructions)
        # with calls, the kernel and the program's other functions form one code image (machine_calls.py)
        self.instructions, self.starts = link(function, program) if calls else (function.instructions, {})
        count = len(self.instructions)
        self.steps = [CALL_STEPS[ins.mnemonic](ins, count) if ins.mnemonic in CALL_STEPS
                      else _decoded(ins, self.processor) for ins in self.instructions]
        self.mnemonics = sorted({ins.mnemonic for ins in self.instructions})
        # the decisions of docs/amdgcn-pcode.md some step of this program rests on (a finding then is unconfirmed)
        self.decisions = sorted({d for step in self.steps for d in getattr(step, "decisions", ())})
        # wait-state hazards (machine_hazards.py), checked on the executed path
        self.infos = [step_info(ins, hasattr(step, "outputs"), getattr(step, "outputs", 1))
                      for ins, step in zip(self.instructions, self.steps)]

    def run(self, wave: Wave, entry: int | None = None) -> Wave:
        steps, n, limit = self.steps, len(self.steps), self.max_steps
        if entry is not None:
            wave.pc = entry
        wave.at_barrier = False
        while not wave.done and not wave.at_barrier:
            if not 0 <= wave.pc < n:
                raise MachineFault(f"ran past the end of {self.function.name} (instruction {wave.pc})")
            wave.steps += 1
            if wave.steps > limit:
                raise StepLimit(f"{self.function.name}: more than {limit} instructions in one wave",
                                self.instructions[wave.pc])
            for rule, producer in wave.waits.issue(self.infos[wave.pc]):
                wave.wait_hazards.append((rule.number, producer, wave.pc))
            steps[wave.pc](wave)
        return wave
