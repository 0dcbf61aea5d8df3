"""Turn what a compile attempt left behind into an Execution with a verdict and a signature."""
from __future__ import annotations

import datetime

from gfxhound.records import Execution
from gfxhound.compat import LLC_ENDED
from gfxhound.signature import (MEMORY_MODEL_STAGE, NORMALISER_VERSION, environment_reason, memory_model_signature,
                                summarise, user_error_reason)


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def judge_compile(outcome: dict, spec_hash: str, target: str, toolchain: str, options: dict) -> Execution:
    status = outcome["status"]
    base = dict(spec_hash=spec_hash, target=target, backend="compile", toolchain=toolchain,
                normaliser=NORMALISER_VERSION, options_requested=dict(options), time=now(),
                duration_s=round(outcome.get("duration", 0.0), 4), resources=outcome.get("resources", {}),
                options_applied=outcome.get("applied", {}), checks=outcome.get("checks", {}))
    if status == "ok":
        return Execution(verdict="pass", **base)
    if status == "harness":
        lines = outcome.get("text", "").strip().splitlines() or ["harness error"]
        return Execution(verdict="unresolved", reason=lines[-1][:500], message=outcome.get("text", "")[-2000:],
                         **base)
    if status == "memory_model":  # compiled, but a wait/writeback/invalidate the memory model needs is missing
        normalised, signature = memory_model_signature(outcome["messages"])
        return Execution(verdict="miscompile", stage=MEMORY_MODEL_STAGE, message="\n".join(outcome["messages"])[:2000],
                         normalised=normalised, signature=signature, **base)
    ended = {"exception": "exception", "timeout": "timeout", "llc_timeout": "timeout",
             "llc_failed": LLC_ENDED}.get(status, outcome.get("ended", "exit:?"))
    summary = summarise(outcome.get("text", ""), ended)
    reason = ""
    if summary["verdict"] == "user_error":
        reason = user_error_reason(summary["message"])
    elif summary["verdict"] == "unresolved":
        reason = environment_reason(outcome.get("text", ""))
    message = summary["message"]
    if status == "timeout":  # what the user needs to judge a blow-up; the signature keeps the time out
        message = f"compile did not finish in {outcome.get('duration', 0):.0f} s (stage {summary['stage'] or '?'})"
    return Execution(verdict=summary["verdict"], stage=summary["stage"], message=message,
                     normalised=summary["normalised"], frames=summary["frames"], signature=summary["signature"],
                     reason=reason, **base)


def _collective(outcome, base, target, ops):
    """A negative control is a check of the oracle (did it see the missing barrier?), never a finding: `pass`,
    with `control` caught or missed. A spin-wait that gave up is a hang the bound cut short: `timeout`."""
    from gfxhound.signature import miscompile_signature
    checks, coll = outcome["checks"], outcome["collective"]
    if coll.get("control"):
        seen = "caught" if checks["mismatches"] or checks.get("gave_up") else "missed"
        base["checks"]["control"] = f"{coll['control']}:{seen}"
        return Execution(verdict="pass", **base)
    if checks.get("gave_up"):
        normalised, signature = miscompile_signature("timeout", target, ops)
        message = f"{checks['gave_up']} spin-wait(s) gave up: " + outcome.get("message", "")
        return Execution(verdict="timeout", stage="run", message=message[:2000], normalised=normalised,
                         signature=signature, **base)
    return None


RUNTIME_FAULT_PATTERNS = (r"illegal memory access", r"unspecified launch failure", r"misaligned address",
                          r"hipError", r"HSA_STATUS_ERROR", r"an illegal instruction", r"CUDA error",
                          r"device-side assert", r"Memory access fault")


def judge_execute(outcome: dict, spec_hash: str, target: str, toolchain: str, options: dict, backend: str,
                  ops=()) -> Execution:
    """Turn an execution outcome into a verdict. A miscompile's signature is provisional (DESIGN.md): target and
    the kernel's op multiset, until reduction regroups it."""
    import re

    from gfxhound.signature import miscompile_signature

    from .limitations import match

    status = outcome["status"]
    text = outcome.get("text", "")
    base = dict(spec_hash=spec_hash, target=target, backend=backend, toolchain=toolchain,
                normaliser=NORMALISER_VERSION, options_requested=dict(options), time=now(),
                duration_s=round(outcome.get("duration", 0.0), 4), checks=dict(outcome.get("checks", {})))
    if status == "ok" and outcome.get("collective"):
        timed_out = _collective(outcome, base, target, ops)
        if timed_out is not None:
            return timed_out
    if status == "ok":
        if outcome["checks"]["mismatches"] == 0:
            return Execution(verdict="pass", **base)
        runs, agreeing = outcome.get("reruns", 0), outcome.get("reruns_agreeing", 0)
        if runs and agreeing < runs:
            base["checks"]["rerun_disagreement_rate"] = round((runs - agreeing) / runs, 3)
            verdict = "nondeterministic"
        else:
            verdict = "miscompile"
        normalised, signature = miscompile_signature(verdict, target, ops)
        return Execution(verdict=verdict, stage="run", message=outcome.get("message", ""), normalised=normalised,
                         signature=signature, **base)
    if status == "ub":
        return Execution(verdict="unresolved", reason=f"generator emitted undefined behaviour: {text}", **base)
    if status == "harness":
        lines = text.strip().splitlines() or ["harness error"]
        return Execution(verdict="unresolved", reason=lines[-1][:500], message=text[-2000:], **base)
    limitation = match(backend, text)
    if limitation is not None:
        return Execution(verdict="unresolved", reason=f"limitation {limitation.key}", message=text[-2000:], **base)
    if backend == "interpret" and status in ("exception", "timeout", "died"):
        # the interpreter is our instrument, not the toolchain under test: its failures are not compiler bugs
        summary = summarise(text, "exception")
        if summary["verdict"] == "user_error":
            return Execution(verdict="user_error", message=summary["message"],
                             reason=user_error_reason(summary["message"]), **base)
        last = (text.strip().splitlines() or [status])[-1]
        return Execution(verdict="unresolved", reason=f"interpreter {status}: {last[:300]}", message=text[-2000:],
                         **base)
    if outcome.get("phase") == "run" or status == "timeout" and outcome.get("phase") == "run":
        if status == "timeout":
            normalised, signature = miscompile_signature("timeout", target, ops)
            return Execution(verdict="timeout", stage="run", message="the kernel did not finish",
                             normalised=normalised, signature=signature, **base)
        if any(re.search(p, text) for p in RUNTIME_FAULT_PATTERNS) or status == "died":
            summary = summarise(text, outcome.get("ended", "exception"))
            return Execution(verdict="runtime_fault", stage="run", message=summary["message"],
                             normalised=summary["normalised"], signature=summary["signature"], **base)
        lines = text.strip().splitlines() or ["launch failed"]
        return Execution(verdict="unresolved", reason=f"launch: {lines[-1][:300]}", message=text[-2000:], **base)
    compiled = judge_compile(outcome, spec_hash, target, toolchain, options)  # the compile failed: as ever
    compiled.backend = backend
    return compiled
