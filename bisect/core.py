"""One bisection over an ordered list of candidates and a probe that says present / absent / skip.

Why one algorithm (syzkaller's pkg/bisect): releases, commits, regressions and fixes are the same
search. The candidates are ordered oldest first; the oldest is in the "old" state and the newest in the "new"
state — for a regression old = the bug is absent, for a fix old = present. The result is the first candidate in
the new state. A candidate that cannot be tested (the repro is a different failure, an API the release lacks, a
build failure) is skipped, never counted as either state; when skips leave a gap, the result is the range.
Probes may be repeated: the majority decides, and agreement lowers the confidence below 1 when runs disagree.

Releases answer instead of refusing (`move_ends`): an llc that does not know the processor or cannot parse the IR
(too old), or whose verifier rejects it (too new), says nothing about the bug, so an end that cannot test moves
inward to the nearest candidate that can, and the result says which end moved and why. Ends in the same state are
an answer too, "present (or absent) in every testable candidate", once every candidate between them says so.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gfxhound.atomic import write_atomic
from gfxhound.protocol import ABSENT, PRESENT, SKIP  # noqa: F401 - the probe outcomes bisection works on


BOUNDARY, PRESENT_THROUGHOUT, ABSENT_THROUGHOUT = "boundary", "present-throughout", "absent-throughout"


class BisectError(Exception):
    """The range cannot be bisected (one line for the user: the ends do not differ, or one cannot be tested)."""


@dataclass
class Probe:
    candidate: str
    outcome: str  # present | absent | skip
    runs: list = field(default_factory=list)  # every run's outcome
    seconds: float = 0.0
    detail: str = ""

    @property
    def agreement(self) -> float:
        counted = [r for r in self.runs if r != SKIP]
        return (sum(r == self.outcome for r in counted) / len(counted)) if counted else 1.0


@dataclass
class BisectResult:
    mode: str  # "regression" (find where the bug appeared) | "fix" (where it went away)
    candidates: list
    first_new: str | None  # the first candidate in the new state (the culprit or the fix); None unless BOUNDARY
    last_old: str | None  # the last candidate in the old state
    untested_between: list = field(default_factory=list)  # skipped candidates between the two
    probes: list = field(default_factory=list)
    confidence: float = 1.0
    format: int = 2  # 2: verdict, testable, ends_moved; first_new is None unless the verdict is BOUNDARY
    verdict: str = BOUNDARY  # or the bug is in one state at every candidate that can test it
    testable: list = field(default_factory=list)  # [oldest, newest] candidate that can test (the ends, moved)
    ends_moved: list = field(default_factory=list)  # {"end": "old"|"new", "from", "to", "why": {candidate: detail}}

    def to_json(self):
        data = asdict(self)
        data["probes"] = [dict(asdict(p), agreement=round(p.agreement, 3)) for p in self.probes]
        data["confidence"] = round(self.confidence, 4)
        data["steps_bound"] = math.ceil(math.log2(max(2, len(self.candidates))))
        return data


def majority(runs: list) -> str:
    counted = [r for r in runs if r != SKIP]
    if not counted:
        return SKIP
    present = sum(r == PRESENT for r in counted)
    if present * 2 == len(counted):
        return SKIP  # a tie says nothing
    return PRESENT if present * 2 > len(counted) else ABSENT


def bisect(candidates: list, probe, mode: str = "regression", known: dict | None = None, on_probe=None,
           repeat: int = 1, ahead=None, move_ends: bool = False) -> BisectResult:
    """`probe(candidate) -> (outcome, detail)`; `known` holds earlier probes (resuming), `on_probe(probe, step)` is
    called after every new probe (progress, saving state); `ahead(candidates)` is told, before a probe runs, the
    candidates the step after it may need (either answer), so their environments can be prepared meanwhile.
    `move_ends`: an end that cannot test moves inward, and ends in the same state are an answer (module doc)."""
    if len(candidates) < 2:
        raise BisectError("the range holds fewer than two candidates")
    old, new = (ABSENT, PRESENT) if mode == "regression" else (PRESENT, ABSENT)
    probes = dict(known or {})
    step = [0]

    def state(index):
        name = candidates[index]
        if name not in probes:
            runs, details, start = [], [], time.time()
            for _ in range(max(1, repeat)):
                outcome, detail = probe(name)
                runs.append(outcome)
                details.append(detail)
                if repeat > 1 and all(r == SKIP for r in runs):
                    break  # cannot test at all: repeating will not help
            step[0] += 1
            probes[name] = Probe(name, majority(runs), runs, round(time.time() - start, 2),
                                 next((d for d in details if d), ""))
            if on_probe:
                on_probe(probes[name], step[0])
        return probes[name].outcome

    lo, hi, moved = 0, len(candidates) - 1, []
    if move_ends:
        lo, hi, moved = _testable_ends(candidates, state, probes)
        if probes[candidates[lo]].outcome == probes[candidates[hi]].outcome:
            return _throughout(candidates, state, probes, mode, lo, hi, moved)
    for index, want, end in ((hi, new, _end_name(mode, "new")), (lo, old, _end_name(mode, "old"))):
        got = state(index)
        if got == want:
            continue
        p = probes[candidates[index]]
        if got == SKIP:
            raise BisectError(f"{candidates[index]} (the {end} end) cannot test the bug ({p.detail[:200]}): "
                              f"move that end to a candidate that can")
        raise BisectError(f"{candidates[index]} (the {end} end) does not show the bug {want}: {got} "
                          f"({p.detail[:200]})" + "".join(f"; {moved_words(m, mode)}" for m in moved))
    testable = [candidates[lo], candidates[hi]] if move_ends else []
    while hi - lo > 1:
        middle = (lo + hi) / 2
        untested = [i for i in range(lo + 1, hi) if probes.get(candidates[i]) is None
                    or probes[candidates[i]].outcome != SKIP]
        if not untested:
            break  # only skips between lo and hi: the answer is the range
        i = min(untested, key=lambda k: (abs(k - middle), k))
        if ahead:
            ahead([candidates[j] for j in (_next_index(lo, i, candidates, probes),
                                           _next_index(i, hi, candidates, probes)) if j is not None])
        outcome = state(i)
        if outcome == old:
            lo = i
        elif outcome == new:
            hi = i
    between = [candidates[i] for i in range(lo + 1, hi)]
    used = [probes[c] for c in candidates if c in probes]
    confidence = 1.0
    for p in used:
        if p.outcome != SKIP:
            confidence *= p.agreement
    if between:
        confidence *= 1.0 / (len(between) + 1)  # the culprit is any of the untested ones or hi
    return BisectResult(mode, list(candidates), candidates[hi], candidates[lo], between, used, confidence,
                        testable=testable, ends_moved=moved)


def _end_name(mode: str, end: str) -> str:
    """What the user calls an end: the good and the bad one of a regression, the bad and the fixed one of a fix."""
    return {("regression", "old"): "good", ("regression", "new"): "bad", ("fix", "old"): "bad",
            ("fix", "new"): "fixed"}[(mode, end)]


def moved_words(m: dict, mode: str) -> str:
    """One entry of ends_moved in words: which end moved, from where to where, and why."""
    return (f"the {_end_name(mode, m['end'])} end moved from {m['from']} to {m['to']} "
            f"({'; '.join(f'{c}: {d[:120]}' for c, d in m['why'].items())})")


def _testable_ends(candidates: list, state, probes: dict):
    """(lo, hi, moved): the newest candidate that can test, probed from the new end inward, then the oldest, from
    the old end inward up to it. None can: refused, with why the two ends cannot."""
    hi = len(candidates) - 1
    while hi >= 0 and state(hi) == SKIP:
        hi -= 1
    if hi < 0:
        first, last = probes[candidates[0]], probes[candidates[-1]]
        raise BisectError(f"none of {candidates[0]}..{candidates[-1]} can test the bug ({last.candidate}: "
                          f"{last.detail[:150]}; {first.candidate}: {first.detail[:150]})")
    lo = 0
    while lo < hi and state(lo) == SKIP:
        lo += 1
    moved = []
    for end, at, skipped in (("new", hi, candidates[hi + 1:]), ("old", lo, candidates[:lo])):
        if skipped:
            moved.append({"end": end, "from": skipped[-1] if end == "new" else skipped[0], "to": candidates[at],
                          "why": {c: probes[c].detail for c in skipped}})
    return lo, hi, moved


def _throughout(candidates: list, state, probes: dict, mode: str, lo: int, hi: int, moved: list) -> BisectResult:
    """The testable ends agree: the answer is that state at every testable candidate, once every candidate between
    them says so; a range where the bug comes and goes is refused (bisect a part of it)."""
    for i in range(lo + 1, hi):
        state(i)
    tested = [probes[c] for c in candidates[lo:hi + 1] if probes[c].outcome != SKIP]
    if len({p.outcome for p in tested}) > 1:
        raise BisectError(f"the bug comes and goes between {candidates[lo]} and {candidates[hi]} ("
                          + ", ".join(f"{p.candidate}: {p.outcome}" for p in tested)
                          + "): bisect a part of the range where it changes once")
    used = [probes[c] for c in candidates if c in probes]
    confidence = math.prod(p.agreement for p in used if p.outcome != SKIP)
    verdict = PRESENT_THROUGHOUT if tested[0].outcome == PRESENT else ABSENT_THROUGHOUT
    return BisectResult(mode, list(candidates), None, None, [], used, confidence, verdict=verdict,
                        testable=[candidates[lo], candidates[hi]], ends_moved=moved)


def _next_index(lo: int, hi: int, candidates: list, probes: dict):
    """The candidate bisect would probe next between lo and hi (None when none is left)."""
    untested = [k for k in range(lo + 1, hi) if candidates[k] not in probes]
    return min(untested, key=lambda k: (abs(k - (lo + hi) / 2), k)) if untested else None


class ProbeLog:
    """Resumability: every probe is written to `path` as it ends (temp file + rename), and a bisection of the same
    repro, range and direction started again reads them back as `known` probes."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict:
        try:
            return {p["candidate"]: Probe(**p) for p in json.loads(self.path.read_text())["probes"]}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError):
            return {}  # unreadable: start afresh, it is only a cache of probes

    def save(self, probes: dict):
        write_atomic(self.path, json.dumps({"probes": [asdict(p) for p in probes.values()]}))

    def done(self):
        self.path.unlink(missing_ok=True)
