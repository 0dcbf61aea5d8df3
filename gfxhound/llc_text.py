"""What an llc run's exit code and stderr mean, with nothing but `re`: the LLVM IR reducer's interestingness test
imports this (and gfxhound.signature) in a bare interpreter (`python -S -E`) once per failing candidate, where
importing gfxhound.compat's subprocess machinery would double the cost of a test."""

import re

STAGE_MARK = "##gfxhound-stage"
LLC_STAGE = "llc-verify"
LLC_ENDED = "exit:llc"


def classify_llc(returncode, text):
    """(status, text) of one llc run from its exit code (negative: killed by that signal) and its stderr."""
    if "is not a recognized processor" in text or "not a recognized feature" in text:
        return "unsupported", text
    if returncode == 0:
        return "ok", ""
    if returncode == 1 and re.search(r"\.\w+:\d+:\d+: error:", text) and "LLVM ERROR" not in text:
        return "unparsable", text
    if "Broken module found" in text or "input module cannot be verified" in text:
        # The IR verifier of this llc rejects what Triton's own (newer) LLVM verified and compiled: version skew
        # (e.g. an intrinsic's signature changed), not a bug in either.
        return "unparsable", text
    ended = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
    return "failed", f"{STAGE_MARK} {LLC_STAGE}\n{text}\nllc ended: {ended}"
