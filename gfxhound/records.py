"""Execution: the record the run stage writes (run.json) and the judge, corpus and later stages read."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

# The newest run.json format this gfxhound reads. 2: the verdict `unsupported` (a pass's clean refusal); 3: the
# verdict `hazard` (--backend emulate: values right, machine code the hardware need not run right). A record is
# written in the oldest format that holds it, so a gfxhound that predates a verdict still reads every other record
# and refuses only those, with a message, instead of failing on an unknown verdict. Records of formats 1 and 2
# read unchanged: a hazard was then a `pass` with checks.machine == "hazard", never stored as a finding.
EXECUTION_FORMAT = 3
VERDICTS = ("pass", "miscompile", "ice", "unsupported", "hazard", "user_error", "runtime_fault", "timeout",
            "nondeterministic", "unresolved")
BUG_VERDICTS = ("miscompile", "ice", "unsupported", "hazard", "runtime_fault", "timeout", "nondeterministic")
# reportable, but not a crash or a wrong result: listings show these apart (the front end accepted what a pass
# refuses in a diagnostic written for it: docs/identity.md; right values from code that skips a wait the hardware
# needs: docs/emulate.md)
APART_VERDICTS = ("unsupported", "hazard")
FORMAT_OF_VERDICT = {"unsupported": 2, "hazard": 3}  # the first run.json format that can hold the verdict


@dataclass
class Execution:
    spec_hash: str
    target: str
    backend: str  # "compile" | "interpret" | "device" | "emulate"
    toolchain: str  # e.g. "triton-3.9.0"
    verdict: str
    stage: str = ""
    message: str = ""
    normalised: str = ""
    frames: list = field(default_factory=list)
    signature: str = ""
    duration_s: float = 0.0
    options_requested: dict = field(default_factory=dict)
    options_applied: dict = field(default_factory=dict)
    resources: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)  # extra oracles that ran, e.g. {"llc": "ok" | "unparsable" | ...}
    reason: str = ""  # for unresolved/user_error: why
    normaliser: int = 0  # signature normaliser version that produced `normalised` and `signature`
    time: str = ""
    format: int = 1

    def __post_init__(self):
        assert self.verdict in VERDICTS, self.verdict
        self.format = max(self.format, FORMAT_OF_VERDICT.get(self.verdict, 1))

    def to_json(self):
        return asdict(self)

    def dumps(self):
        return json.dumps(self.to_json(), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, data):
        if data.get("format", 0) > EXECUTION_FORMAT:
            raise ValueError(f"run.json format {data.get('format')} is newer than this gfxhound; upgrade gfxhound")
        return cls(**data)

    @property
    def signatures(self):
        """Every bug identity this run shows: its signature, and each memory-model defect's (oracle/judge.py)."""
        return [self.signature] + [s for s in (self.checks.get("defects") or {}).values() if s != self.signature]

    @property
    def is_bug(self):
        return self.verdict in BUG_VERDICTS
