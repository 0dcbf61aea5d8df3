"""One probe run: a command, and what its exit and output say about the bug (present / absent / cannot test).

Why one function for every kind of bisection: the rule "a different failure is skip, never bad" (DESIGN.md's repro
protocol) must be the same for a Triton release, an `llc` binary and a commit built from source.
"""
from __future__ import annotations

import os
import re
import subprocess

from .core import ABSENT, PRESENT, SKIP


def judge(returncode: int, text: str, expect: str | None, skip_patterns=()) -> str:
    """Without `expect` the command speaks the repro protocol (exit 0 absent, 1 present, anything else cannot
    test). With it, the bug is present when the output matches, absent when the command succeeds without it, and
    any other failure cannot test. Output matching a skip pattern (an `llc` that does not know the processor and
    silently compiles for a generic one) cannot test either, whatever the exit."""
    if any(re.search(p, text, re.M) for p in skip_patterns):
        return SKIP
    if expect is not None:
        if re.search(expect, text, re.M):
            return PRESENT
        return ABSENT if returncode == 0 else SKIP
    return {0: ABSENT, 1: PRESENT}.get(returncode, SKIP)


def run_probe(argv: list, timeout: float, expect: str | None = None, env: dict | None = None, cwd=None,
              skip_patterns=()):
    """(outcome, detail): detail is the output's last line (or why it could not be judged)."""
    run_env = dict(os.environ, **(env or {}))
    try:
        proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=run_env, errors="replace")
    except subprocess.TimeoutExpired:
        return SKIP, f"did not finish in {timeout:.0f} s"
    except OSError as exc:
        return SKIP, f"cannot run {argv[0]}: {exc.strerror}"
    text = (proc.stdout + proc.stderr).strip()
    outcome = judge(proc.returncode, text, expect, skip_patterns)
    if expect is not None and outcome == PRESENT:
        line = re.search(expect, text, re.M)
        detail = text[text.rfind("\n", 0, line.start()) + 1:].splitlines()[0][:300]
        passes = re.findall(r"Running pass '([^']+)'", text)  # where a crash without a message happened
        if passes and passes[-1] not in detail:
            detail = f"{detail[:200]} [in pass '{passes[-1]}']"  # the innermost one
    else:  # the first error line says why (a parse error's last line is a caret), else the last line
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line for line in lines if re.search(r"error|not a recognized processor", line, re.I)]
        detail = (errors or lines or [f"exit {proc.returncode}"])[0 if errors else -1][:300]
    if outcome == SKIP and expect is not None and not detail.startswith("exit"):
        detail = f"exit {proc.returncode}: {detail}"
    return outcome, detail
