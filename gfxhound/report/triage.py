"""Triage state: what the public trackers already know of each bug, so drafts are written only for what is new.

The file is `<corpus>/triage.json` (docs/triage.md documents it), checked in with the corpus and edited by people
or by `gfxhound triage add` / `gfxhound triage searched`:

    {"format": 2,
     "issues": [{"repo": "triton-lang/triton", "number": 11019, "kind": "pr", "title": "...", "state": "fixed",
                 "signature": "eaa292644627f3a9", "match": null, "note": "why it matches", "fixed_in": "triton-3.9.0",
                 "url": "https://github.com/triton-lang/triton/pull/11019", "checked": "2026-11-24"}],
     "searched": [{"signature": "0b24f87e8b82386a", "match": null, "checked": "2026-11-24",
                   "trackers": ["triton-lang/triton", "llvm/llvm-project"], "queries": ["..."],
                   "result": "no match", "related": [{"ref": "owner/repo#N", "url": "...", "why": "..."}],
                   "note": ""}]}

An issue entry names its bugs by signature (exact: the finding's signature hash, or a prefix of at least 8 digits) or
by `match`, a regular expression searched in the finding's normalised message (one upstream issue often covers
several signatures). States: `reported` (open upstream), `invalid` and `wontfix` (do not report again), `fixed`
(upstream says fixed: a finding seen on a toolchain of the same product at or after `fixed_in` is a regression and
worth a draft that says so). A `searched` entry records a search that found nothing, so a draft can say "searched,
not found" and when. Format 1 (no kind, url, checked or searched) is read with defaults; the writer writes format 2.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from types import SimpleNamespace

from gfxhound.atomic import write_atomic

TRIAGE_FORMAT = 2
STATES = ("reported", "invalid", "wontfix", "fixed")
KINDS = ("issue", "pr")
RESULTS = ("no match",)
TRACKERS = ["triton-lang/triton", "llvm/llvm-project"]
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_REF = re.compile(r"(?:https://github\.com/)?([\w.-]+/[\w.-]+)(?:#|/(issues|pull)/)(\d+)/?")


class TriageError(Exception):
    """A one-line problem with the triage file."""


def _check_ident(who: str, signature, match):
    if not signature and not match:
        raise TriageError(f"{who}: give a signature or a match regex")
    if signature and (len(signature) < 8 or not re.fullmatch(r"[0-9a-f]+", signature)):
        raise TriageError(f"{who}: signature {signature!r} must be 8 or more hex digits")
    if match:
        try:
            re.compile(match)
        except re.error as exc:
            raise TriageError(f"{who}: match is not a regex ({exc})") from None


def _check_date(who: str, checked):
    if checked is not None and not _DATE.fullmatch(str(checked)):
        raise TriageError(f"{who}: checked {checked!r} is not a date (YYYY-MM-DD)")


def _covers(signature, match, finding) -> bool:
    ids = [finding.signature, *getattr(finding, "aliases", [])]  # an entry written before a re-keying
    if signature and any(i.startswith(signature) for i in ids):
        return True
    return bool(match and any(re.search(match, text) for text in (finding.normalised or "", finding.message or "")))


@dataclass
class KnownIssue:
    repo: str  # "triton-lang/triton" | "llvm/llvm-project"
    number: int
    title: str
    state: str
    signature: str | None = None
    match: str | None = None
    note: str = ""  # why it matches: same assertion, pass, target; what was checked
    fixed_in: str | None = None  # with state "fixed": a toolchain with the fix ("triton-3.9.0", "llvm-23.1.0")
    kind: str = "issue"  # format 1 entries were issues
    url: str | None = None  # default: https://github.com/<repo>/{issues|pull}/<number>
    checked: str | None = None  # the date the tracker was last read for this entry (format 1: not recorded)

    def __post_init__(self):
        who = f"issue {self.repo}#{self.number}"
        if self.state not in STATES:
            raise TriageError(f"{who}: state {self.state!r} is not one of {', '.join(STATES)}")
        if self.kind not in KINDS:
            raise TriageError(f"{who}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        _check_ident(who, self.signature, self.match)
        _check_date(who, self.checked)
        if self.url is None:
            self.url = f"https://github.com/{self.repo}/{'pull' if self.kind == 'pr' else 'issues'}/{self.number}"
        elif not str(self.url).startswith("https://"):
            raise TriageError(f"{who}: url {self.url!r} must be an https:// address")

    @property
    def ref(self) -> str:
        return f"{self.repo}#{self.number}"

    def covers(self, finding) -> bool:
        return _covers(self.signature, self.match, finding)

    def regressed(self, finding) -> list:
        """The toolchains the finding was seen on that are at or after `fixed_in` (same product): [] when none."""
        if self.state != "fixed" or not self.fixed_in:
            return []
        fixed = toolchain_version(self.fixed_in)
        if fixed is None:
            return []
        return [t for t in finding.toolchains if (v := toolchain_version(t)) is not None and v[0] == fixed[0]
                and v[1] >= fixed[1]]


@dataclass
class SearchRecord:
    """A search of the public trackers that found no matching report."""
    checked: str
    queries: list
    signature: str | None = None
    match: str | None = None
    trackers: list = field(default_factory=lambda: list(TRACKERS))
    result: str = "no match"
    related: list = field(default_factory=list)  # [{"ref", "url", "why"}]: read and judged not the same bug
    note: str = ""

    def __post_init__(self):
        who = f"search for {self.signature or self.match!r}"
        _check_ident(who, self.signature, self.match)
        _check_date(who, self.checked)
        if self.checked is None:
            raise TriageError(f"{who}: give the date it was checked")
        if not self.queries or not all(isinstance(q, str) and q.strip() for q in self.queries):
            raise TriageError(f"{who}: list the queries used")
        if self.result not in RESULTS:
            raise TriageError(f"{who}: result {self.result!r} is not one of {', '.join(RESULTS)} (a match is an "
                              "issues entry)")
        for rel in self.related:
            if not isinstance(rel, dict) or set(rel) - {"ref", "url", "why"} or not rel.get("ref") \
                    or not rel.get("why"):
                raise TriageError(f"{who}: each related entry needs ref and why (and may have url)")

    def covers(self, finding) -> bool:
        return _covers(self.signature, self.match, finding)

    def count(self) -> str:
        return f"{len(self.queries)} {'query' if len(self.queries) == 1 else 'queries'}"


def toolchain_version(text: str):
    """'triton-3.9.0' -> ('triton', key); 'pytorch-triton-rocm-3.4.0+gitabc' -> ('triton', ...); 'llvm-22.1.8' ->
    ('llvm', ...); a commit ('llvm@6bc4aaf6') or anything else -> None: it has no order."""
    from gfxhound.bisect.releases import version_key
    found = re.fullmatch(r"([a-z][a-z-]*?)-(\d+\.\d+\.\d+\S*)", text.strip())
    if not found:
        return None
    name = found.group(1)
    product = "triton" if "triton" in name else "llvm" if name in ("llvm", "llc") else name
    return product, version_key(found.group(2))


class Triage:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.issues, self.searched = self._load()

    def _load(self):
        if not self.path.exists():
            return [], []
        try:
            data = json.loads(self.path.read_text())
        except ValueError as exc:
            raise TriageError(f"{self.path}: not JSON ({exc}); fix it or move it aside") from None
        if not isinstance(data, dict) or not isinstance(data.get("issues"), list) \
                or not isinstance(data.get("searched", []), list):
            raise TriageError(f"{self.path}: expected {{\"format\": {TRIAGE_FORMAT}, \"issues\": [...], "
                              f"\"searched\": [...]}}")
        version = data.get("format", 1)
        if not isinstance(version, int) or version < 1:
            raise TriageError(f"{self.path}: format {version!r} is not a format number")
        if version > TRIAGE_FORMAT:
            raise TriageError(f"{self.path}: format {version} is newer than this gfxhound; upgrade it")
        extra = set(data) - {"format", "issues", "searched"}
        if extra:
            raise TriageError(f"{self.path}: unknown top-level field(s) {', '.join(sorted(extra))}")
        return (self._entries(data["issues"], KnownIssue, "an issue entry"),
                self._entries(data.get("searched", []), SearchRecord, "a searched entry"))

    def _entries(self, raw: list, cls, what: str) -> list:
        names = {f.name for f in fields(cls)}
        out = []
        for entry in raw:
            if not isinstance(entry, dict):
                raise TriageError(f"{self.path}: {what} is not an object")
            unknown = set(entry) - names
            if unknown:
                raise TriageError(f"{self.path}: unknown field(s) {', '.join(sorted(unknown))} in {what}")
            try:
                out.append(cls(**entry))
            except TypeError as exc:
                raise TriageError(f"{self.path}: {what} lacks a field ({exc})") from None
        return out

    def known(self, finding) -> KnownIssue | None:
        """The issue that covers this finding (the first listed), or None: it is new. An issue fixed upstream does
        not cover a finding seen on a toolchain that has the fix: that is a regression, worth a new draft."""
        return next((i for i in self.issues if i.covers(finding) and not i.regressed(finding)), None)

    def regression(self, finding) -> KnownIssue | None:
        """A fixed issue that covers the finding although it was seen on a toolchain with the fix."""
        return next((i for i in self.issues if i.covers(finding) and i.regressed(finding)), None)

    def search_for(self, finding) -> SearchRecord | None:
        """The latest search that covers the finding (by its date)."""
        found = [s for s in self.searched if s.covers(finding)]
        return max(found, key=lambda s: s.checked) if found else None

    def draft_lines(self, finding) -> list:
        """What a draft says under "Known upstream": the issue that tracks it (a draft forced anyway), a regression
        of a fixed issue, the search that found nothing. [] when nothing about the trackers is recorded."""
        lines = []
        known = self.known(finding)
        if known:  # drafted anyway (--force)
            fixed = f", fixed in {known.fixed_in}" if known.fixed_in else ""
            lines.append(f"Already tracked upstream: {known.ref} ({known.kind}, {known.state}{fixed}, {known.url}).")
        issue = self.regression(finding)
        if issue:
            lines.append(f"Regression: {issue.ref} ({issue.kind}, {issue.url}) was fixed in {issue.fixed_in}, but "
                         f"this bug was seen on {', '.join(issue.regressed(finding))}, which is at or after the fix.")
        search = self.search_for(finding)
        if search:
            lines.append(f"Searched {' and '.join(search.trackers)} on {search.checked}: no matching report found.")
            lines += [f"Related but not the same bug: {r['ref']}: {r['why']}" for r in search.related]
        return lines

    def add(self, issue: KnownIssue):
        self.issues = [i for i in self.issues if (i.repo, i.number) != (issue.repo, issue.number)] + [issue]
        self.save()

    def add_search(self, record: SearchRecord):
        key = (record.signature, record.match)
        self.searched = [s for s in self.searched if (s.signature, s.match) != key] + [record]
        self.save()

    def save(self):
        data = {"format": TRIAGE_FORMAT, "issues": [asdict(i) for i in self.issues],
                "searched": [asdict(s) for s in self.searched]}
        write_atomic(self.path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


# A finding's status at a glance, most settled first: what the campaign summary, `corpus list/show` and the nightly
# say of it. "new" only when nothing is recorded of it: no tracker entry, no search, no draft, no verification.
STANDINGS = ("fixed", "known upstream", "regression", "drafted", "searched", "new")


def standing(finding, triage: "Triage | None", drafted: bool) -> dict:
    """{"state": one of STANDINGS, "text": what a person reads, "link": the upstream issue or None} of a finding,
    from its record (a verification's status), the corpus's triage file and whether a draft was written."""
    issue = triage.known(finding) if triage is not None else None
    if issue is not None and issue.state == "fixed":
        return {"state": "fixed", "text": f"fixed in {issue.fixed_in}" if issue.fixed_in else
                f"fixed upstream ({issue.ref})", "link": issue.url}
    if issue is not None:
        return {"state": "known upstream", "text": f"known upstream: {issue.ref} ({issue.kind}, {issue.state})",
                "link": issue.url}
    if getattr(finding, "status", "new") in ("fixed", "invalid", "wontfix"):  # a verification closed it
        return {"state": "fixed" if finding.status == "fixed" else "known upstream",
                "text": f"{finding.status} (verified)", "link": None}
    again = triage.regression(finding) if triage is not None else None
    if again is not None:
        return {"state": "regression", "text": f"regression: {again.ref} was fixed in {again.fixed_in}",
                "link": again.url}
    if drafted:
        return {"state": "drafted", "text": "drafted, not yet reported", "link": None}
    search = triage.search_for(finding) if triage is not None else None
    if search is not None:
        return {"state": "searched", "text": f"not upstream (searched {search.checked})", "link": None}
    return {"state": "new", "text": "new", "link": None}


def corpus_triage(corpus) -> "Triage | None":
    """The corpus's triage file, or None when it cannot be read (a status is then judged from the corpus alone;
    `gfxhound triage list` says what is wrong with the file)."""
    try:
        return Triage(Path(corpus.root) / "triage.json")
    except TriageError:
        return None


class Reference:
    """A reference corpus (`--known DIR`): another corpus whose records count for a finding's status, so a campaign
    into a fresh corpus does not call "new" a bug the project's checked-in corpus already tracks upstream or has
    drafted. Read once (its triage file, alias table and findings) and only read: nothing is written to it."""

    def __init__(self, root):
        from gfxhound.corpus_store import Corpus, CorpusError
        self.root = Path(root)
        self.corpus = Corpus(self.root)
        self.triage = corpus_triage(self.corpus)  # unreadable: judged by its drafts and records alone
        self.aliases = self.corpus.aliases()  # {old id: new id}: its triage may name a bug by an id it had before
        try:
            records = self.corpus.findings()
        except CorpusError:  # a corrupt record there is its owner's to fix; its triage and drafts still count
            records = []
        self.records = {}
        for f in records:
            for ident in (f.signature, *f.aliases):
                self.records.setdefault(ident, f)

    def __repr__(self):
        return f"Reference({str(self.root)!r})"

    def ids(self, finding) -> list:
        """Every id the finding's bug may have here: its own and its aliases, what this corpus's alias table maps
        them to (the fresh finding has an old id) or from (this corpus's triage names the id it had before a
        re-keying), and the aliases of this corpus's record of it."""
        ids = {finding.signature, *getattr(finding, "aliases", [])}
        ids |= {self.aliases[i] for i in ids if i in self.aliases}
        ids |= {old for old, new in self.aliases.items() if new in ids}
        for i in list(ids):
            record = self.records.get(i)
            if record is not None:
                ids |= {record.signature, *record.aliases}
        return sorted(ids)

    def standing(self, finding) -> dict:
        """`standing` of the finding as this corpus knows it, with "from": this corpus's directory. Its triage
        entries match by the ids above; a regression is judged over the toolchains both corpora saw the bug on;
        a verification counts from this corpus's own record of the bug."""
        ids = self.ids(finding)
        records = [self.records[i] for i in ids if i in self.records]
        toolchains = sorted({*finding.toolchains, *(t for r in records for t in r.toolchains)})
        verified = next((r.status for r in records if r.status in ("fixed", "invalid", "wontfix")), "new")
        view = SimpleNamespace(signature=finding.signature, aliases=[i for i in ids if i != finding.signature],
                               normalised=finding.normalised, message=finding.message, toolchains=toolchains,
                               status=verified)
        drafted = any(self.corpus.drafted(i) for i in ids)
        found = standing(view, self.triage, drafted)
        if found["state"] == "drafted":
            found["text"] = f"drafted (in {self.root})"
        return dict(found, **{"from": str(self.root)})


def references(dirs) -> list:
    """The reference corpora of `dirs` (paths the CLI resolved: `--known`, by default the clone's corpus/)."""
    return [Reference(d) for d in dirs]


def standing_in(corpus, finding, triage: "Triage | None", known=()) -> dict:
    """`standing` of a finding of `corpus` (a draft kept under an alias counts: a re-keyed finding's draft).

    `known`: reference corpora (`Reference`s, in the order given). The finding's own corpus speaks first; only
    where it says "new" or "searched" does a reference corpus's record count (the first that knows more than a
    search; a search of theirs where the own corpus has nothing), the status then carrying "from": that corpus's
    directory. So "new" means new to every corpus consulted."""
    own = standing(finding, triage, corpus.drafted(finding.signature))
    best = own
    for ref in known if own["state"] in ("new", "searched") else ():
        theirs = ref.standing(finding)
        if theirs["state"] not in ("new", "searched"):
            return theirs
        if best["state"] == "new" and theirs["state"] == "searched":
            best = theirs
    return best


def parse_ref(text: str) -> tuple:
    """'triton-lang/triton#1234', an issue URL or a pull-request URL -> (repo, number, kind or None: not said)."""
    found = _REF.fullmatch(text.strip())
    if not found:
        raise TriageError(f"--issue {text!r}: give OWNER/REPO#NUMBER or the issue's or pull request's GitHub URL")
    return found.group(1), int(found.group(3)), {"issues": "issue", "pull": "pr"}.get(found.group(2))


def parse_issue_ref(text: str) -> tuple:
    """'triton-lang/triton#1234' or a GitHub issue URL -> (repo, number)."""
    return parse_ref(text)[:2]
