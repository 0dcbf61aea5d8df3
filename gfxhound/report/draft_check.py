"""What a pasted reproducer checks for, and the one run of it that a draft's hidden comment reports.

Why: a reproducer that exits 1 for any failure says "present" on a release that rightly refuses the kernel with
another error, and a bisection then blames the wrong release. The pasted snippet (oracle/repro/snippet.py
`with_check`) exits 1 only when its output holds every part of the failure chosen here, 0 when the kernel
compiles and 125 otherwise: the repro protocol of gfxhound/protocol.py, so `gfxhound bisect --repro snippet.py`
reads it the same way. The parts come from the finding's message, normalised (no paths, addresses, SSA or node
numbers): the assertion's own words, LLVM's error text, or the diagnostic; where those name no bug by themselves
(an assertion in a generic LLVM header, a pass that failed without a diagnostic) the failing pass is added.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gfxhound import procgroup
from gfxhound.protocol import describe
from gfxhound.report.draft_text import headline
from gfxhound.signature import normalise

# what the normaliser writes in place of what changes from run to run: a part never spans one
PLACEHOLDER = re.compile(r"<path>/\S*|\bPROG: |0xADDR|%argN|%ir\.N|%N\b|\^bbN|\btN\b|<kernel>|\bspec_H\b|<Sx|"
                         r"loc\(\.\.\.\)|:L:C|\bline N\b|\bID\b|\bN\b|#[A-Za-z_]\w*")
GENERIC_FILES = (".h", ".hpp", ".inc")  # LLVM's and MLIR's templates: their assertions fire for many bugs
_PASS = re.compile(r"Pipeline failed while executing \[`([^`]+)`|^\s*\d+\.\s+Running pass '([^']+)'", re.M)
MAX_PARTS = 3


def _fragments(text: str) -> list:
    """The pieces of normalised text between placeholders that say something (a few words, or a long name)."""
    pieces = [p.strip(" \t:;,") for p in PLACEHOLDER.split(text)]
    pieces = [re.sub(r"^error: ", "", p) for p in pieces]
    kept = [p for p in pieces if len(p) >= 8 or (len(p.split()) >= 2 and len(p) >= 5)]
    longest = sorted(kept, key=len, reverse=True)[:MAX_PARTS]
    return [p for p in kept if p in longest]


def failing_pass(output: str) -> str:
    """The pass a failure names: MLIR's pipeline note, else the innermost of LLVM's `Running pass` lines."""
    found = _PASS.findall(output or "")
    return next((a or b for a, b in reversed(found)), "") if found else ""


def bug_parts(message: str, output: str = "") -> list:
    """The substrings a reproducer's output must all hold for the bug to count as present: from the finding's
    message (its last ` | ` part, the compiler's own line), normalised; `output` (a run that showed the bug) gives
    the failing pass where the message alone is generic. [] when nothing in the message can be checked."""
    raw = message.split(" | ")[-1] if message else ""
    # an assertion's condition, normalised apart: the normaliser keeps 400 characters, a C++ signature takes more
    assertion = re.search(r"Assertion `(.*?)(?:' failed|$)", raw, re.S)
    key = re.sub(r"\s*\[signal:N\]\s*$", "", normalise(raw[:assertion.start()] if assertion else raw))
    named = re.search(r"\s*\[pass ([^\],]+)[^\]]*\]", key)  # a generic pipeline failure, completed with its pass
    if named:
        key = key[:named.start()] + key[named.end():]
    generic = bool(named) or "Failures have been detected" in key
    if assertion:
        condition = normalise(assertion.group(1))
        literal = re.search(r'"([^"]{12,})"', condition)
        parts = [literal.group(1)] if literal and len(literal.group(1).split()) >= 3 else _fragments(condition)
        where = re.search(r"([\w.+-]+):N:", key)  # the file the assertion is in
        if where and where.group(1).endswith(GENERIC_FILES):
            generic = True
            instance = re.search(r"\[(To = [^,\]]+)", key)  # llvm::cast<To>: the type it was asked for
            parts += [instance.group(1)] if instance else []
    else:
        error = re.search(r"LLVM ERROR: .*", key)
        parts = _fragments(error.group(0) if error else key)
    if generic:
        where = (named.group(1).strip() if named else "") or failing_pass(output)
        parts += [where] if where and where not in parts else []
    return parts


def without_diagnostic(message: str) -> bool:
    """Whether the failure is a pass that failed and said nothing of its own (MLIR's "Failures have been
    detected" alone, a signal its crash recovery caught): its parts then match any failure of that pass, an older
    release's 'op NYI' diagnostic included, so the pasted check also requires that no other diagnostic shows
    (oracle/repro/snippet.py `with_check`, `alone`)."""
    return headline(message or "") == "fails without a diagnostic of its own"


@dataclass
class Checked:
    """One run of a pasted script as a reader runs it."""
    rc: int | None  # None: it did not finish
    stdout: str
    stderr: str

    @property
    def verdict(self) -> str:
        """The script's own last line ("reproduced: ...", "not reproduced: ...", "other failure ...")."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""

    def said(self, command: str, toolchain: str) -> str:
        """What ran, with what, the exit code it really gave and its verdict: a draft's check."""
        code = "did not finish" if self.rc is None else f"exited {self.rc} ({describe(self.rc)})"
        return f"`{command}` with {toolchain} {code}" + (f": {self.verdict[:300]}" if self.verdict else "")

    def comment(self, command: str, toolchain: str) -> str:
        """The hidden line a draft keeps of its check."""
        return f"<!-- checked before this draft was written: {self.said(command, toolchain)} -->"


def run_pasted(files: dict, argv: list, timeout: float, env: dict | None = None) -> Checked:
    """Save `files` ({name: text}) in a fresh folder and run `argv` there, as a reader would after pasting.
    Through procgroup.run: the script's own compile child dies with it on a timeout."""
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        for name, text in files.items():
            (Path(tmp) / name).write_text(text)
        run_env = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
        try:
            proc = procgroup.run(argv, timeout, capture_output=True, text=True, cwd=tmp, env=run_env,
                                 errors="replace")
        except subprocess.TimeoutExpired:
            return Checked(None, "", f"did not finish in {timeout:.0f} s")
        except OSError as exc:
            return Checked(None, "", f"cannot run {argv[0]}: {exc.strerror}")
    return Checked(proc.returncode, proc.stdout, proc.stderr)
