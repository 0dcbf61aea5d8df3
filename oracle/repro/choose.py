"""Which repro a finding carries: the one place that chooses among the three writers.

A compile-stage bug (a crash, a hang, llc's verifier, a memory-model violation found in the compiled code) gets a
compile repro (compile.py); a wrong result or a fault seen when running gets an execution repro that embeds the
inputs and the reference's values (execute.py); a collective's run-time failure gets one that replays its ranks and
judges their heaps (collective.py). The campaign and `gfxhound reduce` both ask here, so a finding and its reduced
form always carry the same kind.
"""
from __future__ import annotations

from gfxhound.signature import MEMORY_MODEL_STAGE

# a run judged them: the repro must run the kernel too (a `hazard` is LLVM's machine code: its repro runs the kernel
# on an AMD GPU and says it cannot test under the embedded IR executor, as a machine-code wrong result's does)
RUN_VERDICTS = ("miscompile", "nondeterministic", "hazard")


def memory_model_source() -> str:
    """The static checker's source (its modules joined into one text), which a memory-model repro embeds and runs
    on what it compiles."""
    from ..memory_model import standalone_source
    return standalone_source()


def kind_of(execution, spec, backend: str) -> str:
    """'collective', 'execute' or 'compile': the writer a finding's repro comes from."""
    if execution.stage == MEMORY_MODEL_STAGE:
        return "compile"
    if spec.family == "collectives" and execution.stage == "run":
        return "collective"
    if spec.family == "user" and execution.stage == "run" and backend != "compile":
        return "user"
    if execution.verdict in RUN_VERDICTS or (execution.verdict == "runtime_fault" and backend != "compile"):
        return "execute"
    return "compile"


def write_repro(execution, spec, rendered, caps, *, backend: str, toolchain: str, timeout_s: int, lld: str,
                llc: "str | None" = None, ttgir: "str | None" = None, device_kind: str = "",
                expected=None) -> str:
    """The repro script of one judged kernel. `llc`: the llc a verifier finding was seen with; `ttgir`: a layout
    pair's mutated TTGIR; `expected`: the reference's values when the caller has them (else recomputed here: the
    reference is deterministic and cheap next to a finding)."""
    kind = kind_of(execution, spec, backend)
    if kind == "collective":
        from gfxhound.fuzz.collective.render import MAX_SPIN

        from ..collective import case_of
        from .collective import render_collective_repro
        return render_collective_repro(rendered, spec, case_of(spec), execution.to_json(), MAX_SPIN,
                                       timeout_s=timeout_s)
    if kind == "user":
        from .user import render_user_repro
        return render_user_repro(rendered, spec, execution.to_json(), timeout_s=timeout_s)
    if kind == "execute":
        from ..inputs import make_inputs
        from ..run_task import reference
        from .execute import render_exec_repro
        if expected is None:
            expected = reference(spec, caps, execution.backend, device_kind)
        return render_exec_repro(rendered, spec, make_inputs(spec), expected, execution.to_json(),
                                 timeout_s=timeout_s)
    from .compile import render_repro
    return render_repro(rendered, execution.target, execution.to_json(), toolchain, execution.spec_hash,
                        timeout_s=timeout_s, lld=lld, llc=llc if execution.stage == "llc-verify" else None,
                        ttgir=ttgir, memory_model_src=memory_model_source()
                        if execution.stage == MEMORY_MODEL_STAGE else None)
