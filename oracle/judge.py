"""Turn what a compile attempt left behind into an Execution with a verdict and a signature."""
from __future__ import annotations

import datetime

from gfxhound.records import Execution
from gfxhound.compat import LLC_ENDED
from gfxhound.signature import NORMALISER_VERSION, environment_reason, summarise, user_error_reason


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
