"""How long one compile may hold a worker: a multiple of the running median, then a confirming second run.

Why: a fixed timeout lets every compile-time blow-up hold a worker for the whole timeout (on a 16-worker machine
28 blow-ups at 60 s stalled a campaign's tail), while the median kernel compiles in about a second. The first run
of a kernel gets `factor` times the running median of its target's compiles (at least `floor`, at most the
user's `--timeout`); a kernel past that is only *suspected*: it runs once more, on at most one worker at a time,
with twice that limit (still at most `--timeout`). Only a kernel that runs out twice is a `timeout` finding, and
its message says both times and the median it was measured against. A kernel that finishes on its second run is
judged like any other (a slow compile under load is not a bug).
"""
from __future__ import annotations

import statistics
from collections import defaultdict, deque
from dataclasses import dataclass, field

WINDOW = 200  # the median of the last this many compiles per target: follows a campaign's drift, stays cheap
WARM_UP = 20  # before this many compiles of a target, its first runs get the ceiling


@dataclass
class TimeoutPolicy:
    ceiling: float  # the user's --timeout: no compile is ever given more
    floor: float = 10.0
    factor: float | None = 10.0  # None: every run gets the ceiling (the interpreter: its runs are not compiles)
    confirm_factor: float = 2.0
    warm_up: int = WARM_UP
    durations: dict = field(default_factory=lambda: defaultdict(lambda: deque(maxlen=WINDOW)))
    counts: dict = field(default_factory=lambda: defaultdict(int))  # suspected, confirmed, cleared, seconds

    def observe(self, arch: str, seconds: float):
        """A compile that finished (whatever its verdict): its time counts towards the median."""
        if seconds > 0:
            self.durations[arch].append(seconds)

    def median(self, arch: str) -> float | None:
        seen = self.durations[arch]
        return statistics.median(seen) if len(seen) >= self.warm_up else None

    def first_limit(self, arch: str) -> float:
        median = self.median(arch) if self.factor else None
        if median is None:
            return self.ceiling
        return min(self.ceiling, max(self.floor, self.factor * median))

    def confirm_limit(self, first: float) -> float | None:
        """The second run's limit, or None when the first already had the ceiling (nothing left to confirm)."""
        if first >= self.ceiling:
            return None
        return min(self.ceiling, self.confirm_factor * first)

    def message(self, arch: str, first: float, second: float) -> str:
        median = self.median(arch)
        against = f"; this campaign's median compile for {arch}: {median:.2f} s" if median else ""
        return f"compile did not finish in {first:.0f} s, nor in {second:.0f} s when run again{against}"

    def summary(self) -> dict:
        return {"ceiling_s": self.ceiling, "floor_s": self.floor, "factor": self.factor,
                "median_s": {arch: round(m, 3) for arch in self.durations if (m := self.median(arch)) is not None},
                **{k: round(v, 1) if isinstance(v, float) else v for k, v in self.counts.items()}}
