"""The Finding record: the mutable summary of one bug signature (finding.json), with its versioned JSON form."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

# The newest finding.json format this gfxhound reads. 2: aliases, configuration, normaliser, split_from,
# absorbed_into (format 1 reads as defaults); 3: the verdict `unsupported`; 4: the verdict `hazard`. A finding is
# written in the oldest format that holds it (2, 3 for `unsupported`, 4 for `hazard`), so an older gfxhound
# refuses only what it cannot read.
FINDING_FORMAT = 4
_FORMAT_OF_VERDICT = {"unsupported": 3, "hazard": 4}
_OPTIONAL = {"aliases": list, "configuration": lambda: "default", "normaliser": lambda: 0, "split_from": list,
             "absorbed_into": lambda: ""}


class CorpusError(Exception):
    """A problem the user has to act on; str() is a one-line message naming the path involved."""


@dataclass
class Finding:
    """The mutable summary of one signature; examples lists spec hashes in the order they were first kept."""
    signature: str
    verdict: str
    stage: str
    message: str
    normalised: str
    first_seen: str
    last_seen: str
    count: int
    targets: list
    toolchains: list
    status: str = "new"
    examples: list = field(default_factory=list)
    aliases: list = field(default_factory=list)  # earlier ids of this bug (re-keyed or merged findings)
    configuration: str = "default"  # or "forced: <knob> on <arch> ..." when seen only with a forcing knob
    normaliser: int = 0  # signature normaliser version its id was computed with
    split_from: list = field(default_factory=list)  # ids it was split from (their history went elsewhere)
    absorbed_into: str = ""  # set while this finding is being folded into another (Corpus.absorb): a tombstone
    format: int = FINDING_FORMAT

    def to_json(self):
        return dict(asdict(self), format=_FORMAT_OF_VERDICT.get(self.verdict, 2))

    @property
    def forced(self):
        return self.configuration != "default"

    @classmethod
    def from_json(cls, data):
        """Refuse what this version cannot faithfully round-trip rather than silently dropping fields on rewrite."""
        if not isinstance(data, dict):
            raise CorpusError("finding.json is not a JSON object")
        fmt = data.get("format")
        if isinstance(fmt, int) and fmt > FINDING_FORMAT:
            raise CorpusError(f"finding.json has format {fmt}, this gfxhound reads up to {FINDING_FORMAT}; "
                              "upgrade gfxhound")
        names = [f.name for f in fields(cls)]
        data = {**{k: make() for k, make in _OPTIONAL.items()}, **data, "format": FINDING_FORMAT}
        missing = [n for n in names if n not in data]
        if missing:
            raise CorpusError(f"finding.json is missing fields: {', '.join(missing)}")
        if not isinstance(data["count"], int) or not all(isinstance(data[k], list)
                                                          for k in ("targets", "toolchains", "examples")):
            raise CorpusError("finding.json has fields of the wrong type")
        return cls(**{n: data[n] for n in names})
