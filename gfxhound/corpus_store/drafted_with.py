"""The pointer a finding keeps when its bug is reported in another finding's draft (drafted_with.json).

Why a record: two findings can be one root cause seen twice (an assertion and a silent wrong code from the same
missing guard), and upstream wants one issue per root cause. The finding that is not drafted on its own stays a
finding (its examples, its verdict, its counts are its own; folding would merge them into one signature), but
`gfxhound report` and the finding's status must know that its bug is already in a draft, and which one, and why.
Versioned like every record that crosses stages: a reader refuses a format newer than it knows.
"""
from __future__ import annotations

from dataclasses import dataclass

from .finding import CorpusError

DRAFTED_WITH_FORMAT = 1


@dataclass(frozen=True)
class DraftedWith:
    """`draft`: the full id of the finding whose draft reports this one's bug; `why`: one line, a person's."""
    draft: str
    why: str

    def to_json(self) -> dict:
        return {"format": DRAFTED_WITH_FORMAT, "draft": self.draft, "why": self.why}

    @classmethod
    def from_json(cls, data, where: str = "drafted_with.json") -> "DraftedWith":
        if not isinstance(data, dict):
            raise CorpusError(f"{where} is not a JSON object")
        fmt = data.get("format")
        if isinstance(fmt, int) and fmt > DRAFTED_WITH_FORMAT:
            raise CorpusError(f"{where} has format {fmt}, this gfxhound reads up to {DRAFTED_WITH_FORMAT}; "
                              "upgrade gfxhound")
        if fmt != DRAFTED_WITH_FORMAT or not all(isinstance(data.get(k), str) and data[k].strip()
                                                 for k in ("draft", "why")):
            raise CorpusError(f"{where} needs format {DRAFTED_WITH_FORMAT} and non-empty strings draft and why")
        return cls(draft=data["draft"], why=" ".join(data["why"].split()))
