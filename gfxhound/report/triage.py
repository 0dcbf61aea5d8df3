"""Triage state: the upstream issues a team already knows, so drafts are written only for what is new.

The file is `<corpus>/triage.json` (docs/triage.md documents it), checked in with the corpus and edited by people
or by `gfxhound triage add`:

    {"format": 1, "issues": [
      {"repo": "triton-lang/triton", "number": 1234, "title": "...", "state": "reported",
       "signature": "eaa292644627f3a9", "match": null, "note": ""}]}

An entry names its bugs by signature (exact: the finding's signature hash, or a prefix of at least 8 digits) or by
`match`, a regular expression searched in the finding's normalised message (one upstream issue often covers
several signatures: the same LLVM assertion reached from different kernels). States: `reported` (filed, open),
`invalid` and `wontfix` (do not report again), `fixed` (upstream says fixed: a finding that still reproduces on a
toolchain newer than the fix is worth a new draft, as a regression).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from gfxhound.atomic import write_atomic

TRIAGE_FORMAT = 1
STATES = ("reported", "invalid", "wontfix", "fixed")


class TriageError(Exception):
    """A one-line problem with the triage file."""


@dataclass
class KnownIssue:
    repo: str  # "triton-lang/triton" | "llvm/llvm-project"
    number: int
    title: str
    state: str
    signature: str | None = None
    match: str | None = None
    note: str = ""
    fixed_in: str | None = None  # with state "fixed": the toolchain upstream says has the fix

    def __post_init__(self):
        if self.state not in STATES:
            raise TriageError(f"issue {self.repo}#{self.number}: state {self.state!r} is not one of "
                              f"{', '.join(STATES)}")
        if not self.signature and not self.match:
            raise TriageError(f"issue {self.repo}#{self.number}: give a signature or a match regex")
        if self.signature and (len(self.signature) < 8 or not re.fullmatch(r"[0-9a-f]+", self.signature)):
            raise TriageError(f"issue {self.repo}#{self.number}: signature {self.signature!r} must be 8 or more "
                              f"hex digits")
        if self.match:
            try:
                re.compile(self.match)
            except re.error as exc:
                raise TriageError(f"issue {self.repo}#{self.number}: match is not a regex ({exc})") from None

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/issues/{self.number}"

    def covers(self, finding) -> bool:
        ids = [finding.signature, *getattr(finding, "aliases", [])]  # an entry written before a re-keying
        if self.signature and any(i.startswith(self.signature) for i in ids):
            return True
        return bool(self.match and any(re.search(self.match, text) for text in (finding.normalised or "",
                                                                                  finding.message or "")))


class Triage:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.issues = self._load()

    def _load(self) -> list:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text())
        except ValueError as exc:
            raise TriageError(f"{self.path}: not JSON ({exc}); fix it or move it aside") from None
        if not isinstance(data, dict) or not isinstance(data.get("issues"), list):
            raise TriageError(f"{self.path}: expected {{\"format\": 1, \"issues\": [...]}}")
        if data.get("format", 1) > TRIAGE_FORMAT:
            raise TriageError(f"{self.path}: format {data['format']} is newer than this gfxhound; upgrade it")
        names = {f.name for f in fields(KnownIssue)}
        out = []
        for entry in data["issues"]:
            unknown = set(entry) - names
            if unknown:
                raise TriageError(f"{self.path}: unknown field(s) {', '.join(sorted(unknown))} in an issue entry")
            try:
                out.append(KnownIssue(**entry))
            except TypeError as exc:
                raise TriageError(f"{self.path}: an issue entry lacks a field ({exc})") from None
        return out

    def known(self, finding) -> KnownIssue | None:
        """The issue that covers this finding (the first listed), or None: it is new. An issue fixed upstream does
        not cover a finding seen on a toolchain that has the fix: that is a regression, worth a new draft."""
        return next((i for i in self.issues if i.covers(finding) and not _regressed(i, finding)), None)

    def add(self, issue: KnownIssue):
        self.issues = [i for i in self.issues if (i.repo, i.number) != (issue.repo, issue.number)] + [issue]
        self.save()

    def save(self):
        write_atomic(self.path, json.dumps({"format": TRIAGE_FORMAT, "issues": [asdict(i) for i in self.issues]},
                                           indent=1) + "\n")


def _regressed(issue: KnownIssue, finding) -> bool:
    if issue.state != "fixed" or not issue.fixed_in:
        return False
    from gfxhound.bisect.releases import version_key

    def version(toolchain):
        found = re.match(r"[a-z-]*?-?(\d+\.\d+\.\d+\S*)$", toolchain)
        return version_key(found.group(1)) if found else None
    fixed = version(issue.fixed_in)
    return fixed is not None and any(version(t) is not None and version(t) >= fixed for t in finding.toolchains)


def parse_issue_ref(text: str) -> tuple:
    """'triton-lang/triton#1234' or a GitHub issue URL -> (repo, number)."""
    found = re.fullmatch(r"(?:https://github\.com/)?([\w.-]+/[\w.-]+)(?:#|/issues/|/pull/)(\d+)/?", text.strip())
    if not found:
        raise TriageError(f"--issue {text!r}: give OWNER/REPO#NUMBER or the issue's GitHub URL")
    return found.group(1), int(found.group(2))
