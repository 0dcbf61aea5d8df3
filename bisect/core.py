"""One bisection over an ordered list of candidates and a probe that says present / absent / skip.

Why one algorithm (syzkaller's pkg/bisect): releases, commits, regressions and fixes are the same
search. The candidates are ordered oldest first; the oldest is in the "old" state and the newest in the "new"
state — for a regression old = the bug is absent, for a fix old = present. The result is the first candidate in
the new state. A candidate that cannot be tested (the repro is a different failure, an API the release lacks, a
build failure) is skipped, never counted as either state; when skips leave a gap, the result is the range.
Probes may be repeated: the majority decides, and agreement lowers the confidence below 1 when runs disagree.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gfxhound.atomic import write_atomic
from gfxhound.protocol import ABSENT, PRESENT, SKIP  # noqa: F401 - the probe outcomes bisection works on


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
    first_new: str | None  # the first candidate in the new state (the culprit or the fix)
    last_old: str | None  # the last candidate in the old state
    untested_between: list = field(default_factory=list)  # skipped candidates between the two
    probes: list = field(default_factory=list)
    confidence: float = 1.0
    format: int = 1

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
           repeat: int = 1, ahead=None) -> BisectResult:
    """`probe(candidate) -> (outcome, detail)`; `known` holds earlier probes (resuming), `on_probe(probe, step)` is
    called after every new probe (progress, saving state); `ahead(candidates)` is told, before a probe runs, the
    candidates the step after it may need (either answer), so their environments can be prepared meanwhile."""
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

    for index, want, end in ((len(candidates) - 1, new, "bad" if mode == "regression" else "fixed"),
                             (0, old, "good" if mode == "regression" else "bad")):
        got = state(index)
        if got == want:
            continue
        p = probes[candidates[index]]
        if got == SKIP:
            raise BisectError(f"{candidates[index]} (the {end} end) cannot test the bug ({p.detail[:200]}): "
                              f"move that end to a candidate that can")
        raise BisectError(f"{candidates[index]} (the {end} end) does not show the bug {want}: {got} "
                          f"({p.detail[:200]})")
    lo, hi = 0, len(candidates) - 1
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
    return BisectResult(mode, list(candidates), candidates[hi], candidates[lo], between, used, confidence)


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
