"""Fix verification: replay every open finding's repros on a toolchain and say fixed / still failing / cannot test;
for a fixed one, the fix bisection over releases names the first release without it.

Why every repro of a finding (examples, the reduced one, a hand-minimised one) and not just the first: one release
may not be able to test one kernel (an option it does not know) while another kernel of the same bug runs. The
finding is still failing when any repro shows the bug, fixed when none does and at least one ran clean.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gfxhound.bisect.core import ABSENT, PRESENT, BisectError, Probe, bisect
from gfxhound.bisect.releases import version_key
from gfxhound.protocol import run_repro

STILL, FIXED, CANNOT = "still failing", "fixed", "cannot test"
CLOSED = ("fixed", "invalid", "wontfix")


def repros(corpus, finding) -> list:
    return corpus.repros(finding.signature)


@dataclass
class Verification:
    signature: str
    toolchain: str
    outcome: str  # still failing | fixed | cannot test
    runs: dict = field(default_factory=dict)  # repro (relative) -> (outcome, detail)
    fixed_in: str | None = None
    bisect: dict | None = None
    seconds: float = 0.0

    def entry(self) -> dict:
        return {"toolchain": self.toolchain, "outcome": self.outcome, "fixed_in": self.fixed_in,
                "runs": {k: list(v) for k, v in self.runs.items()}, "seconds": round(self.seconds, 1),
                "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def check(corpus, finding, python: Path, toolchain: str, timeout: float, env: dict, stop_at_present=True):
    start = time.time()
    folder = corpus.path(finding.signature)
    runs = {}
    for script in repros(corpus, finding):
        outcome, detail = run_repro(python, script, timeout, None, env)
        runs[str(script.relative_to(folder))] = (outcome, detail[:200])
        if outcome == PRESENT and stop_at_present:
            break
    outcomes = [o for o, _ in runs.values()]
    verdict = STILL if PRESENT in outcomes else FIXED if ABSENT in outcomes else CANNOT
    return Verification(finding.signature, toolchain, verdict, runs, seconds=time.time() - start)


def releases_seen(finding) -> list:
    """The published releases a finding was seen on ("triton-3.4.0" -> "3.4.0"), oldest first."""
    found = {m.group(1) for t in finding.toolchains if (m := re.fullmatch(r"triton-(\d+\.\d+\.\d+)", t))}
    return sorted(found, key=version_key)


def name_the_fix(corpus, finding, fixed_release: str, versions: list, python_for, timeout: float, env: dict,
                 on_probe=None) -> dict:
    """Fix bisection between the newest release the finding was seen on and the release that fixed it, with the
    first repro that shows the bug at the old end. Raises BisectError when no range can be bisected."""
    seen = [v for v in releases_seen(finding) if v in versions and version_key(v) < version_key(fixed_release)]
    if not seen:
        raise BisectError(f"no release older than {fixed_release} is known to have {finding.signature}")
    folder = corpus.path(finding.signature)
    for old in reversed(seen):  # the nearest first: fewer probes
        candidates = [v for v in versions if version_key(old) <= version_key(v) <= version_key(fixed_release)]
        for script in repros(corpus, finding):
            outcome, detail = run_repro(python_for(old), script, timeout, None, env)
            if outcome != PRESENT:
                continue
            result = bisect(candidates, lambda v: _probe(python_for, v, script, timeout, env), mode="fix",
                            known={old: Probe(old, PRESENT, [PRESENT], 0.0, detail)}, on_probe=on_probe)
            return dict(result.to_json(), kind="triton-releases", range=f"{old}..{fixed_release}",
                        repro=str(script.relative_to(folder)), signature=finding.signature, expect=None)
    raise BisectError(f"no repro of {finding.signature} shows the bug on {', '.join(seen)}: cannot bisect the fix")


def _probe(python_for, version, script, timeout, env):
    from gfxhound.bisect.releases import ReleaseError
    try:
        return run_repro(python_for(version), script, timeout, None, env)
    except ReleaseError as exc:  # a release pip cannot install: that release cannot test, the others still can
        return "skip", str(exc)


def open_findings(corpus) -> list:
    from gfxhound.records import BUG_VERDICTS
    return [f for f in corpus.findings() if f.status not in CLOSED and f.verdict in BUG_VERDICTS]

