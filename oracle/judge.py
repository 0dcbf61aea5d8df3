"""Turn what a compile attempt left behind into an Execution with a verdict and a signature."""
from __future__ import annotations

import datetime

from gfxhound.records import Execution
from gfxhound.compat import LLC_ENDED
from gfxhound.signature import (MEMORY_MODEL_STAGE, NORMALISER_VERSION, environment_reason, memory_model_headline,
                                memory_model_signatures,
                                summarise, user_error_reason)

from .culprit import culprit, scaled_dot_layout  # noqa: F401  (reduce/regroup.py reads the layout through here)


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def judge_compile(outcome: dict, spec_hash: str, target: str, toolchain: str, options: dict) -> Execution:
    status = outcome["status"]
    base = dict(spec_hash=spec_hash, target=target, backend="compile", toolchain=toolchain,
                normaliser=NORMALISER_VERSION, options_requested=dict(options), time=now(),
                duration_s=round(outcome.get("duration", 0.0), 4), resources=outcome.get("resources", {}),
                options_applied=outcome.get("applied", {}), checks=dict(outcome.get("checks", {})))
    if status == "ok":
        return Execution(verdict="pass", **base)
    if status == "harness":
        lines = outcome.get("text", "").strip().splitlines() or ["harness error"]
        return Execution(verdict="unresolved", reason=lines[-1][:500], message=outcome.get("text", "")[-2000:],
                         **base)
    if status == "memory_model":  # compiled, but a wait/writeback/invalidate the memory model needs is missing
        return _memory_model(outcome["messages"], target, base)
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
        message = (outcome.get("message") or f"compile did not finish in {outcome.get('duration', 0):.0f} s") + \
            f" (stage {summary['stage'] or '?'})"
    return Execution(verdict=summary["verdict"], stage=summary["stage"], message=message,
                     normalised=summary["normalised"], frames=summary["frames"], signature=summary["signature"],
                     reason=reason, **base)


def _memory_model(messages, target, base):
    """One Execution per kernel whose signature is its first defect's; `checks["defects"]` holds every defect's
    signature (key -> signature), so `defects()` can turn it into one finding per defect."""
    from .memory_model_tables import TABLES
    table = TABLES.get(target.split(":")[0], target)
    found = memory_model_signatures(messages, table)
    key, signature, own = found[0]
    base["checks"]["defects"] = {k: sig for k, sig, _ in found}
    return Execution(verdict="miscompile", stage=MEMORY_MODEL_STAGE, message=_defect_message(key, own, messages),
                     normalised=key, signature=signature, **base)


def _defect_message(key, own, messages):
    """First line: the defect in words (the same for every kernel that shows it); then its violations, then the
    kernel's others: the full messages stay in the record."""
    rest = [m for m in messages if m not in own]
    return "\n".join([memory_model_headline(key, own), *own, *rest])[:2000]


def defects(execution: Execution) -> "list[Execution]":
    """The findings one judged kernel makes: itself, or one per memory-model defect (a kernel that misses a wait
    before an invalidate and one after a writeback shows two bugs)."""
    found = execution.checks.get("defects") or {}
    if len(found) < 2:
        return [execution]
    messages = execution.message.splitlines()[1:]
    table = execution.normalised.split(":", 1)[0]
    out = []
    for key, signature in sorted(found.items()):
        own = [m for m in messages if memory_model_signatures([m], table)[0][0] == key]
        out.append(Execution.from_json(dict(execution.to_json(), signature=signature, normalised=key,
                                            message=_defect_message(key, own, messages))))
    return out


def _collective(outcome, base, target, ops, fallback):
    """A negative control is a check of the oracle (did it see the missing barrier?), never a finding: `pass`,
    with `control` caught or missed. A spin-wait that gave up is a hang the bound cut short: `timeout`."""
    from gfxhound.signature import miscompile_signature
    checks, coll = outcome["checks"], outcome["collective"]
    if coll.get("control"):
        seen = "caught" if checks["mismatches"] or checks.get("gave_up") else "missed"
        base["checks"]["control"] = f"{coll['control']}:{seen}"
        return Execution(verdict="pass", **base)
    if checks.get("gave_up"):
        normalised, signature = miscompile_signature("timeout", target, ops, fallback)
        message = f"{checks['gave_up']} spin-wait(s) gave up: " + outcome.get("message", "")
        return Execution(verdict="timeout", stage="run", message=message[:2000], normalised=normalised,
                         signature=signature, **base)
    return None


RUNTIME_FAULT_PATTERNS = (r"illegal memory access", r"unspecified launch failure", r"misaligned address",
                          r"hipError", r"HSA_STATUS_ERROR", r"an illegal instruction", r"CUDA error",
                          r"device-side assert", r"Memory access fault", r"LDS race \(emulated\)")


def judge_execute(outcome: dict, spec_hash: str, target: str, toolchain: str, options: dict, backend: str,
                  ops=(), family="kernels", spec=None, caps=None) -> Execution:
    """Turn an execution outcome into a verdict. A wrong result's signature is provisional (docs/identity.md): with
    the spec and its capabilities, the target, the layer and the op behind the first wrong output (culprit.py);
    without them, or where that says nothing (a user's kernel), the target and the kernel's op multiset. Reduction
    regroups it either way."""
    import re

    from gfxhound.signature import miscompile_signature, wrong_result_signature
    from gfxhound.signature_machine import MACHINE_CODE_STAGE, hazard_signature, machine_code_signature

    from .limitations import match

    status = outcome["status"]
    text = outcome.get("text", "")
    base = dict(spec_hash=spec_hash, target=target, backend=backend, toolchain=toolchain,
                normaliser=NORMALISER_VERSION, options_requested=dict(options), time=now(),
                duration_s=round(outcome.get("duration", 0.0), 4), checks=dict(outcome.get("checks", {})))
    fallback = f"{family} {spec_hash}"  # no ops reported: this kernel alone, never a catch-all
    if status == "ok" and outcome.get("collective"):
        timed_out = _collective(outcome, base, target, ops, fallback)
        if timed_out is not None:
            return timed_out
    machine = outcome.get("machine") or {}  # --backend emulate: the machine code's run (oracle/emulate_machine.py)
    if machine:
        base["checks"]["machine"] = machine.get("status", "not run")
        base["checks"]["machine_s"] = machine.get("s", 0.0)
        if "compile_s" in outcome and "emulate_s" in outcome:  # the speed figure: executors against the compile
            base["checks"]["compile_s"] = round(outcome["compile_s"], 4)
            base["checks"]["ir_s"] = round(outcome["emulate_s"], 4)
    if status == "ok":
        if outcome["checks"]["mismatches"] == 0:
            if machine.get("status") == "disagree":  # the IR is right (torch agrees), LLVM's code for it is not
                base["checks"]["layer"] = "llvm"
                if machine.get("decisions"):  # rests on a reading of the guide docs/amdgcn-pcode.md tables
                    base["checks"]["confirmed"] = "no: decisions " + ", ".join(map(str, machine["decisions"]))
                normalised, signature = machine_code_signature(target, ops, fallback)
                return Execution(verdict="miscompile", stage=MACHINE_CODE_STAGE, message=machine.get("text", ""),
                                 normalised=normalised, signature=signature, **base)
            if machine.get("status") in ("hazard", "unresolved"):
                base["checks"]["machine_detail"] = machine.get("text", "")[:300]
            if machine.get("status") == "hazard":  # right values, code the hardware need not run right: LLVM's
                base["checks"]["layer"] = "llvm"
                normalised, signature = hazard_signature(target, machine["key"])
                return Execution(verdict="hazard", stage=MACHINE_CODE_STAGE, message=machine.get("text", ""),
                                 normalised=normalised, signature=signature, **base)
            return Execution(verdict="pass", **base)
        if machine:  # the IR executor's outputs are wrong: Triton (its lowering or earlier) owns it
            base["checks"]["layer"] = "triton"
        runs, agreeing = outcome.get("reruns", 0), outcome.get("reruns_agreeing", 0)
        if runs and agreeing < runs:
            base["checks"]["rerun_disagreement_rate"] = round((runs - agreeing) / runs, 3)
            verdict = "nondeterministic"
        else:
            verdict = "miscompile"
        named = culprit(spec, caps, outcome.get("message", "")) if spec is not None and caps is not None else ""
        normalised, signature = (wrong_result_signature(verdict, target, backend, named) if named else
                                 miscompile_signature(verdict, target, ops, f"{family} {spec_hash}"))
        return Execution(verdict=verdict, stage="run", message=outcome.get("message", ""), normalised=normalised,
                         signature=signature, **base)
    if status == "ub":
        return Execution(verdict="unresolved", reason=f"generator emitted undefined behaviour: {text}", **base)
    if status == "unmodelled":  # the CPU executor (executors/llvm_ir/) meets what it does not model
        return Execution(verdict="unresolved", reason=f"emulation cannot judge: {text[:300]}", **base)
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
            normalised, signature = miscompile_signature("timeout", target, ops, fallback)
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
