"""What a bisection says while it runs and when it ends, in words: one progress line a probe, and the summary of
a record. Kept apart from the workflows (bisect/run.py) so every kind of candidate speaks the same way."""
from __future__ import annotations

import math
from pathlib import Path

from .core import BOUNDARY, PRESENT_THROUGHOUT, SKIP, moved_words


class Progress:
    """`step k (of about N): candidate: outcome [runs] - detail`, one line a probe, to `log` (stderr)."""

    def __init__(self, n: int, log, label=lambda c: c):
        self.steps = math.ceil(math.log2(max(2, n))) + 2  # both ends, then the halvings
        self.log = log
        self.label = label

    def __call__(self, p, step, title=""):
        runs = f" [{', '.join(p.runs)}]" if len(p.runs) > 1 else ""
        self.log(f"  step {step} (of about {self.steps}): {self.label(p.candidate)}"
                 f"{(' ' + title[:60]) if title else ''}: {p.outcome}{runs} - {p.detail[:120]}")


def release_lines(record: dict, noun: str, prefix: str) -> list:
    """The summary of a release or llc bisection: the boundary (or the state at every testable release), the ends
    that moved, then a warning a line."""
    mode = record["mode"]
    counts = (f"{len(record['probes'])} probes for {len(record['candidates'])} candidates; "
              f"confidence {record['confidence']:.2f}")
    verdict = record.get("verdict", BOUNDARY)
    if verdict == BOUNDARY:
        line = (f"first {noun} {'with' if mode == 'regression' else 'without'} the bug: {prefix} "
                f"{record['first_new']} (last {'good' if mode == 'regression' else 'bad'}: {prefix} "
                f"{record['last_old']}); {counts}"
                + (f"; untested between: {', '.join(record['untested_between'])}" if record["untested_between"]
                   else ""))
    else:
        oldest, newest = record["testable"]
        state = "present" if verdict == PRESENT_THROUGHOUT else "absent"
        inside = record["candidates"][record["candidates"].index(oldest) + 1:record["candidates"].index(newest)]
        cannot = [p["candidate"] for p in record["probes"] if p["outcome"] == SKIP and p["candidate"] in inside]
        line = (f"the bug is {state} in every testable release: "
                + (f"{prefix} {oldest} to {prefix} {newest}" if oldest != newest else f"only {prefix} {oldest} "
                   f"can test it") + f"; {counts}" + (f"; cannot test between: {', '.join(cannot)}" if cannot else ""))
    lines = [line] + [f"  {moved_words(m, mode)}" for m in record.get("ends_moved", [])]
    return lines + [f"warning: {warning}" for warning in record.get("warnings", [])]


def commit_lines(record: dict, mode: str, n: int) -> list:
    """The summary of a commit bisection: the culprit, the last commit in the old state, the hand-offs."""
    culprit, last = record["culprit"], record["last_old_commit"]
    verb = "first bad commit" if mode == "regression" else "first fixed commit"
    lines = [f"{verb}: {culprit['hash'][:12]} {culprit['title']} ({culprit['date'][:10]})"
             + (f" {culprit['link']}" if culprit.get("link") else "")
             + f"\n  last {'good' if mode == 'regression' else 'bad'}: {last['hash'][:12]} {last['title']}; "
             f"{len(record['probes'])} probes for {n} commits, {record['builds_built']} builds; "
             f"confidence {record['confidence']:.2f}"
             + (f"; untested between: {', '.join(c[:12] for c in record['untested_between'])}"
                if record["untested_between"] else "")]
    warnings = list(record["warnings"])
    for handoff in record.get("handoff", []):
        if handoff.get("result"):
            sub = handoff["result"]["culprit"]
            lines.append(f"  it moved {handoff['pin_file']}: in {Path(handoff['result']['repo']).name}, {verb}: "
                         f"{sub['hash'][:12]} {sub['title']}" + (f" {sub['link']}" if sub.get("link") else ""))
            warnings += handoff["result"]["warnings"]
        else:
            lines.append(f"  it moved {handoff['pin_file']}; no hand-off: "
                         f"{handoff.get('error') or handoff.get('skipped')}")
    return lines + [f"warning: {warning}" for warning in warnings]
