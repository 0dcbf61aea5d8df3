"""The repro protocol, in one place: what a repro's (or any probe's) exit says about a bug, and how to run one.

A repro exits 0 when the bug is absent, 1 when it is present with the same signature, and 125 when it cannot test
here (missing feature, API drift, a different failure). Bisection, verification, reduction, the nightly and the
drafts all read exits through `outcome`, so "a different failure is skip, never bad" means the same everywhere.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from . import procgroup

EXIT_ABSENT, EXIT_PRESENT, EXIT_CANNOT_TEST = 0, 1, 125
PRESENT, ABSENT, SKIP = "present", "absent", "skip"
_WORDS = {EXIT_ABSENT: "absent", EXIT_PRESENT: "present", EXIT_CANNOT_TEST: "cannot test"}


def outcome(returncode: int) -> str:
    """PRESENT, ABSENT, or SKIP for any other exit (a signal, 125, a harness error)."""
    return {EXIT_ABSENT: ABSENT, EXIT_PRESENT: PRESENT}.get(returncode, SKIP)


def describe(returncode: int) -> str:
    """A repro's exit in words: 'present', 'absent', 'cannot test', or 'exit N'."""
    return _WORDS.get(returncode, f"exit {returncode}")


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
    return outcome(returncode)


def run_probe(argv: list, timeout: float, expect: str | None = None, env: dict | None = None, cwd=None,
              skip_patterns=()):
    """(outcome, detail): detail is the output's last line (or why it could not be judged)."""
    run_env = dict(os.environ, **(env or {}))
    try:
        proc = procgroup.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                             env=run_env, errors="replace")  # a repro's compile child dies with it
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


def run_repro(python, script, timeout: float, expect: str | None = None, env: dict | None = None, args=()):
    """One run of a repro script under `python` (a release's venv, or this one), judged by the protocol:
    (outcome, detail). `args`: e.g. ["--interpret"] for a wrong result found by the interpreter."""
    python, script = os.path.abspath(python), Path(os.path.abspath(script))  # a relative corpus or cache
    return run_probe([python, script, *args], timeout, expect, env, cwd=script.parent)
