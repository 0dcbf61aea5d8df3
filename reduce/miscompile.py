"""Spec-level reduction of a wrong result: every candidate is run on the finding's backend and judged by the oracle.

The interestingness test is differential: the candidate's run disagrees with the torch reference (verdict
`miscompile`; undefined behaviour is refused by the reference, so a candidate cannot become "interesting" by
turning into UB, which is the trap restricted delta passes avoid at the IR level). Each candidate runs in a warm
worker: the interpreter in a worker started with TRITON_INTERPRET=1, a GPU run (compile, reference, launch) in one
worker pinned to the GPU, replaced by the pool after a fault. A miscompile's signature is provisional (target and
op multiset, docs/design.md); the reduced kernel's own signature regroups it.
"""
from __future__ import annotations

from dataclasses import dataclass

from gfxhound.oracle.judge import judge_execute


def run_device_once(task: dict) -> dict:
    """Compile + reference + launch in one GPU worker (reduction runs one candidate at a time)."""
    from gfxhound.oracle.run_task import launch_device, prepare_device
    prepared = prepare_device(task)
    if prepared.get("status") != "ok":
        return prepared
    launched = launch_device(dict(task, expected=prepared.pop("expected"), kernel_hash=prepared.get("kernel_hash")))
    launched.setdefault("features", prepared.get("features"))
    return launched


@dataclass
class ExecutionTest:
    """The predicate: run a candidate spec on `backend` and say whether the oracle calls it a miscompile."""
    pool: object  # oracle.pool.CompilePool started with the backend's environment
    caps_json: dict
    arch: str
    backend: str  # "interpret" | "device" | "emulate"
    toolchain: str
    plant: str | None = None  # a planted bug (mutation testing of the reducer itself)
    device_kind: str = ""

    def judge(self, candidate):
        from gfxhound.fuzz.render import launch_options
        from gfxhound.oracle.run_task import run_interpret
        fn = run_interpret if self.backend == "interpret" else run_device_once
        if self.backend == "emulate":  # compile for the AMD target, run on the CPU executor (executors/llvm_ir/)
            from gfxhound.oracle.emulate_task import run_emulate as fn
        extra = {"plant": self.plant} if self.plant else {}
        if self.backend == "device":
            extra["device_kind"] = self.device_kind
        task, future = self.pool.submit(candidate.to_json(), self.caps_json, self.arch, fn=fn, extra=extra)
        outcome = self.pool.outcome(task, future)
        self.pool.discard(task)
        ops = []
        for name, count in ((outcome.get("features") or {}).get("ops") or {}).items():
            ops += [name] * count
        return judge_execute(outcome, candidate.spec_hash(), self.arch, self.toolchain, launch_options(candidate),
                             self.backend, ops)

    def __call__(self, candidate) -> bool:
        return self.judge(candidate).verdict == "miscompile"
