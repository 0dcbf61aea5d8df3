"""`gfxhound triage`: record what the public trackers know of a finding (an issue or PR that covers it) or that a
search found nothing, in the corpus's triage.json (gfxhound/report/triage.py, docs/triage.md); `list` shows both
with the findings each covers. Reports and the nightly driver read the file so a known bug is not drafted as new.
Each action is a subcommand with only its own options."""
from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from .common import UserError, existing_corpus, parse_date
from .options import corpus_option, triage_option

FINDING_HELP = "the finding (its id or a unique prefix); or give --match"
MATCH_HELP = "a regex on normalised messages, instead of the finding's signature (covers every finding it matches)"


def add_triage(sub):
    tri = sub.add_parser("triage", help="what the public trackers know of each bug (deduplicates drafts)",
                         description="Known upstream issues and searches, in <corpus>/triage.json (docs/triage.md).")
    actions = tri.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_list(actions)
    _add_add(actions)
    _add_searched(actions)


def _common(p):
    corpus_option(p, "the corpus whose findings the entries cover (triage.json lives in it)")
    triage_option(p)


def _add_list(actions):
    p = actions.add_parser("list", help="each known issue and search, with the findings it covers")
    _common(p)
    p.set_defaults(func=cmd_list)


def _checked(p, what):
    p.add_argument("--checked", metavar="YYYY-MM-DD", help=f"the date {what} (default: today, UTC)")


def _add_add(actions):
    p = actions.add_parser("add", help="an upstream issue or pull request that covers a finding")
    p.add_argument("id", nargs="?", help=FINDING_HELP)
    p.add_argument("--issue", required=True, metavar="REF",
                   help="OWNER/REPO#NUMBER or the issue's or pull request's URL")
    p.add_argument("--kind", choices=["issue", "pr"], help="issue or pull request (default: from the URL, else "
                                                           "issue)")
    p.add_argument("--title", default="", help="the issue's title, as the tracker shows it")
    p.add_argument("--state", default="reported", choices=["reported", "invalid", "wontfix", "fixed"],
                   help="what upstream made of it")
    p.add_argument("--fixed-in", dest="fixed_in", metavar="TOOLCHAIN",
                   help="with --state fixed: a toolchain with the fix (triton-3.9.0, llvm-23.1.0)")
    p.add_argument("--url", help="the issue's address (default: https://github.com/OWNER/REPO/{issues|pull}/NUMBER)")
    p.add_argument("--match", help=MATCH_HELP)
    p.add_argument("--note", default="", help="why it matches (same assertion, pass, target)")
    _checked(p, "the tracker was read")
    _common(p)
    p.set_defaults(func=cmd_add)


def _add_searched(actions):
    p = actions.add_parser("searched", help="a search of the trackers that found no report of a finding")
    p.add_argument("id", nargs="?", help=FINDING_HELP)
    p.add_argument("--match", help=MATCH_HELP)
    p.add_argument("--query", action="append", default=[], help="a query used (repeat for each)")
    p.add_argument("--related", action="append", default=[], metavar="REF=WHY",
                   help="a thread read and judged not the same bug, and why (repeat for each)")
    p.add_argument("--note", default="", help="what the search covered")
    _checked(p, "of the search")
    _common(p)
    p.set_defaults(func=cmd_searched)


def open_triage(args):
    from gfxhound.report.triage import Triage, TriageError
    try:
        return Triage(Path(args.triage) if args.triage else Path(args.corpus) / "triage.json")
    except TriageError as exc:
        raise UserError(str(exc)) from None


def _recording(args, record):
    """add and searched: the finding (or --match) named, the date checked, TriageError as one line."""
    from gfxhound.report.triage import TriageError
    if not (args.id or args.match):
        raise UserError(f"triage {args.action} needs a finding ID or --match REGEX")
    if args.id or not args.triage:  # the corpus is read (the id), or triage.json is written in it
        existing_corpus(args.corpus)
    checked = _date(args.checked) if args.checked else _today()
    triage = open_triage(args)
    try:
        return record(args, triage, checked)
    except TriageError as exc:
        raise UserError(str(exc)) from None


def _date(text):
    """parse_date refuses 2026-13-45; the message names the flag and says it is not a date."""
    try:
        return parse_date(text, "--checked")
    except UserError:
        raise UserError(f"--checked {text!r} is not a date: give the day the tracker was read as YYYY-MM-DD") \
            from None


def _signature(args):
    return existing_corpus(args.corpus).get(args.id).signature if args.id else None


def _today():
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def cmd_add(args):
    return _recording(args, _add)


def cmd_searched(args):
    return _recording(args, _searched)


def _add(args, triage, checked):
    from gfxhound.report.triage import KnownIssue, parse_ref
    if args.fixed_in and args.state != "fixed":
        raise UserError(f"--fixed-in goes with --state fixed, not {args.state}")
    repo, number, kind = parse_ref(args.issue)
    if args.kind and kind and args.kind != kind:
        raise UserError(f"--kind {args.kind} disagrees with the URL, which names a {kind}")
    issue = KnownIssue(repo, number, args.title, args.state, _signature(args), args.match, args.note, args.fixed_in,
                       args.kind or kind or "issue", args.url, checked)
    triage.add(issue)
    fixed = f", fixed in {issue.fixed_in}" if issue.fixed_in else ""
    print(f"{issue.ref} [{issue.state}{fixed}] ({issue.kind}) recorded in {triage.path}")
    return 0


def _searched(args, triage, checked):
    from gfxhound.report.triage import SearchRecord, parse_ref
    related = []
    for text in args.related:
        ref, sep, why = text.partition("=")
        if not sep or not why.strip():
            raise UserError(f"--related {text!r}: give REF=WHY (why it is not the same bug)")
        repo, number, kind = parse_ref(ref)
        url = f"https://github.com/{repo}/{'pull' if kind == 'pr' else 'issues'}/{number}" if kind else None
        related.append({"ref": f"{repo}#{number}", "why": why.strip(), **({"url": url} if url else {})})
    record = SearchRecord(checked, args.query, _signature(args), args.match, related=related, note=args.note)
    triage.add_search(record)
    print(f"searched {record.checked} ({record.count()}): {record.result} -> recorded in {triage.path}")
    return 0


def cmd_list(args):
    findings = existing_corpus(args.corpus).findings()
    triage = open_triage(args)

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
