"""`gfxhound triage`: record what the public trackers know of a finding (an issue or PR that covers it) or that a
search found nothing, in the corpus's triage.json (gfxhound/report/triage.py, docs/triage.md); `list` shows both
with the findings each covers. Reports and the nightly driver read the file so a known bug is not drafted as new."""
from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from .common import UserError


def add_triage(sub):
    tri = sub.add_parser("triage", help="what the public trackers know of each bug (deduplicates drafts)")
    tri.add_argument("action", choices=["list", "add", "searched"],
                     help="add: an upstream issue or PR that covers a finding; searched: a search that found none")
    tri.add_argument("id", nargs="?", help="with add or searched: the finding (or give --match)")
    tri.add_argument("--issue", help="OWNER/REPO#NUMBER or the issue's or pull request's URL")
    tri.add_argument("--kind", choices=["issue", "pr"], help="default: from the URL, else issue")
    tri.add_argument("--title", default="")
    tri.add_argument("--state", default="reported", choices=["reported", "invalid", "wontfix", "fixed"])
    tri.add_argument("--match", help="a regex on normalised messages, instead of the finding's signature")
    tri.add_argument("--fixed-in", dest="fixed_in",
                     help="with --state fixed: a toolchain with the fix (triton-3.9.0, llvm-23.1.0)")
    tri.add_argument("--url", help="default: https://github.com/OWNER/REPO/{issues|pull}/NUMBER")
    tri.add_argument("--checked", help="the date the tracker was read (default: today, UTC)")
    tri.add_argument("--note", default="", help="why it matches (add), or what the search covered (searched)")
    tri.add_argument("--query", action="append", default=[], help="with searched: a query used (repeat)")
    tri.add_argument("--related", action="append", default=[], metavar="REF=WHY",
                     help="with searched: a thread read and judged not the same bug (repeat)")
    tri.add_argument("--corpus", default="corpus")
    tri.add_argument("--triage", help="default: <corpus>/triage.json")
    tri.set_defaults(func=cmd_triage)


def open_triage(args):
    from gfxhound.report.triage import Triage, TriageError
    try:
        return Triage(Path(args.triage) if args.triage else Path(args.corpus) / "triage.json")
    except TriageError as exc:
        raise UserError(str(exc)) from None


def cmd_triage(args):
    from gfxhound.report.triage import TriageError
    triage = open_triage(args)
    if args.action == "list":
        return _list(args, triage)
    if not (args.id or args.match):
        raise UserError(f"triage {args.action} needs a finding ID or --match REGEX")
    try:
        return (_add if args.action == "add" else _searched)(args, triage)
    except TriageError as exc:
        raise UserError(str(exc)) from None


def _signature(args):
    from gfxhound.corpus_store import Corpus
    return Corpus(args.corpus).get(args.id).signature if args.id else None


def _today():
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def _add(args, triage):
    from gfxhound.report.triage import KnownIssue, parse_ref
    if not args.issue:
        raise UserError("triage add needs --issue OWNER/REPO#N (or the issue's or pull request's URL)")
    if args.fixed_in and args.state != "fixed":
        raise UserError(f"--fixed-in goes with --state fixed, not {args.state}")
    repo, number, kind = parse_ref(args.issue)
    if args.kind and kind and args.kind != kind:
        raise UserError(f"--kind {args.kind} disagrees with the URL, which names a {kind}")
    issue = KnownIssue(repo, number, args.title, args.state, _signature(args), args.match, args.note, args.fixed_in,
                       args.kind or kind or "issue", args.url, args.checked or _today())
    triage.add(issue)
    fixed = f", fixed in {issue.fixed_in}" if issue.fixed_in else ""
    print(f"{issue.ref} [{issue.state}{fixed}] ({issue.kind}) recorded in {triage.path}")
    return 0


def _searched(args, triage):
    from gfxhound.report.triage import SearchRecord, parse_ref
    related = []
    for text in args.related:
        ref, sep, why = text.partition("=")
        if not sep or not why.strip():
            raise UserError(f"--related {text!r}: give REF=WHY (why it is not the same bug)")
        repo, number, kind = parse_ref(ref)
        url = f"https://github.com/{repo}/{'pull' if kind == 'pr' else 'issues'}/{number}" if kind else None
        related.append({"ref": f"{repo}#{number}", "why": why.strip(), **({"url": url} if url else {})})
    record = SearchRecord(args.checked or _today(), args.query, _signature(args), args.match, related=related,
                          note=args.note)
    triage.add_search(record)
    print(f"searched {record.checked} ({record.count()}): {record.result} -> recorded in {triage.path}")
    return 0


def _list(args, triage):
    from gfxhound.corpus_store import Corpus
    findings = Corpus(args.corpus).findings()

    def covered(entry):
        return ", ".join(f.signature[:8] for f in findings if entry.covers(f)) or "no finding here"
    for issue in triage.issues:
        fixed = f", fixed in {issue.fixed_in}" if issue.fixed_in else ""
        pr = ", pr" if issue.kind == "pr" else ""
        print(f"{issue.ref} [{issue.state}{pr}{fixed}] {issue.title} -> {covered(issue)}")
    for search in triage.searched:
        print(f"searched {search.checked} ({search.count()}): {search.result} -> {covered(search)}")
    if not triage.issues and not triage.searched:
        print(f"no known issues in {triage.path}", file=sys.stderr)
    return 0
