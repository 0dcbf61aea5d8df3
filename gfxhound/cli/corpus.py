"""`gfxhound corpus`: list, show, replay, merge, migrate and regroup findings. Each action is a subcommand with
only its own options (`gfxhound corpus replay --help`)."""
from __future__ import annotations

import os
import subprocess
import sys

from .output import table
from .common import UserError, check_python, default_lld, existing_corpus, need_triton
from .jsonout import emit
from .options import corpus_option, json_option, known_corpora, known_option, timeout_option

ID_HELP = "the finding: its id or any unique prefix of it (see 'gfxhound corpus list')"


def add_corpus(sub):
    corpus = sub.add_parser("corpus", help="list, show, replay, merge, migrate or regroup findings",
                            description="The findings a campaign kept: one directory per bug signature.")
    actions = corpus.add_subparsers(dest="action", required=True, metavar="ACTION")
    for add in (_add_list, _add_show, _add_replay, _add_merge, _add_migrate, _add_regroup):
        add(actions)


def _add_list(actions):
    p = actions.add_parser("list", help="one line per finding, grouped by family, forced configurations last")
    corpus_option(p)
    known_option(p)
    json_option(p, "corpus-list", "the findings")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table (for an issue or a wiki)")
    p.set_defaults(func=cmd_list)


def _add_show(actions):
    p = actions.add_parser("show", help="what the corpus records of one finding, and its examples")
    p.add_argument("id", help=ID_HELP)
    corpus_option(p)
    known_option(p)
    json_option(p, "corpus-show", "the finding and its example folders")
    p.set_defaults(func=cmd_show)


def _add_replay(actions):
    p = actions.add_parser("replay", help="run the first example's repro.py; exit 0 absent, 1 present, 125 "
                                          "cannot test here")
    p.add_argument("id", help=ID_HELP)
    corpus_option(p)
    p.add_argument("--python", metavar="PY", help="run the repro under this interpreter (e.g. a venv with another "
                                                  "Triton; default: the one running gfxhound)")
    timeout_option(p, 900, "seconds the repro may run")
    p.set_defaults(func=cmd_replay)


def _add_merge(actions):
    p = actions.add_parser("merge", help="merge another corpus into this one (counts add up, examples are "
                                         "unioned), then migrate what came in")
    p.add_argument("source", metavar="SRC", help="the corpus to merge in (a directory; it is not changed)")
    corpus_option(p, "the corpus to merge into (created if it does not exist)")
    p.set_defaults(func=cmd_merge)


def _add_migrate(actions):
    p = actions.add_parser("migrate", help="re-key findings recorded under an older signature normaliser")
    corpus_option(p, "the corpus to migrate")
    p.add_argument("--dry-run", action="store_true", help="say what would be re-keyed, change nothing")
    p.set_defaults(func=cmd_migrate)


def _add_regroup(actions):
    p = actions.add_parser("regroup", help="fold wrong results whose reduced kernels have one shape into one "
                                           "finding")
    corpus_option(p, "the corpus to regroup")
    p.set_defaults(func=cmd_regroup)


def _migrate(corpus, dry_run):
    """Re-key findings recorded under an older signature normaliser (gfxhound/corpus_store/migrate.py)."""
    from gfxhound.corpus_store.migrate import migrate
    from gfxhound.fuzz.forced import forced
    from gfxhound.oracle.memory_model_tables import TABLES
    report = migrate(corpus, TABLES.get, forced, corpus.root / "triage.json", dry_run=dry_run,
                     culprit_of=_culprit_of)
    for old, new in sorted(report["moved"].items()):
        print(f"{'would re-key' if dry_run else 're-keyed'} {old} -> {', '.join(new)} (normaliser "
              f"{report['normaliser']}; {old} kept as an alias)")
    print(f"{len(report['moved'])} finding(s) re-keyed, {report['unchanged']} unchanged")


def _culprit_of(spec: dict, caps: dict, run: dict) -> str:
    """The op behind a stored wrong result's first wrong output (oracle/culprit.py), or '' when the example cannot
    say (a user's kernel, a spec or capabilities this gfxhound cannot read)."""
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.oracle.judge import culprit
    from gfxhound.spec import KernelSpec
    try:
        return culprit(KernelSpec.from_json(spec), Capabilities.from_json(caps), run.get("message", ""))
    except (KeyError, TypeError, ValueError):
        return ""


def cmd_merge(args):
    from gfxhound.corpus_store import Corpus
    if not os.path.isdir(args.source):
        raise UserError(f"corpus merge: {args.source} is not a directory (give the corpus to merge in)")
    corpus = Corpus(args.corpus)  # the destination may be new
    added, merged = corpus.merge_from(Corpus(args.source))
    print(f"merged {args.source} into {corpus.root}: {added} new finding(s), {merged} merged")
    _migrate(corpus, dry_run=False)  # findings of an older normaliser join the bugs they are
    return 0


def cmd_migrate(args):
    _migrate(existing_corpus(args.corpus), dry_run=args.dry_run)
    return 0


def cmd_regroup(args):
    """Wrong results whose reduced kernels have one shape are one bug."""
    from gfxhound.reduce.regroup import regroup_all
    for keep, folded in regroup_all(existing_corpus(args.corpus)):
        print(f"{', '.join(folded)} folded into {keep} (same reduced shape; the old ids are its aliases)")
    return 0


def first_line(message: str) -> str:
    """The whole first line of a message, never cut (the headline shortens paths, this keeps them)."""
    lines = (message or "").strip().splitlines()
    return lines[0] if lines else ""


def listing(corpus, known=()) -> list:
    """The findings as rows, in the listing order (families together, forced configurations last, `unsupported`
    apart), each with its status at a glance (report/triage.py `standing`: `status` its state, `status_text` and
    `status_link` what a person reads and follows, `status_from` the reference corpus among `known` (directories)
    that knew it, or null: the corpus's own records or nothing; `recorded_status` what finding.json holds)."""
    from gfxhound.families import groups
    from gfxhound.report.triage import corpus_triage, references, standing_in
    from gfxhound.signature import headline
    triage = corpus_triage(corpus)
    refs = references(known)
    rows = []
    for f in corpus.findings():
        glance = standing_in(corpus, f, triage, refs)
        rows.append({"id": f.signature, "verdict": f.verdict, "stage": f.stage, "count": f.count,
                     "targets": f.targets, "toolchains": f.toolchains, "status": glance["state"],
                     "status_text": glance["text"], "status_link": glance["link"],
                     "status_from": glance.get("from"), "recorded_status": f.status,
                     "normalised": f.normalised, "configuration": f.configuration, "aliases": f.aliases,
                     "message": first_line(f.message), "headline": headline(f.message)})
    return [dict(r, family=g["family"], apart=g["apart"]) for g in groups(rows) for r in g["members"]]


def cmd_list(args):
    from gfxhound.families import headline as families_line
    rows = listing(existing_corpus(args.corpus), known_corpora(args.known, args.corpus))
    if args.json:
        emit("corpus-list", {"corpus": args.corpus, "summary": families_line(rows), "findings": rows})
    elif args.markdown:
        _markdown(rows)
    else:
        _table(rows)
        print(f"{len(rows)} finding(s): {families_line(rows)}")
    return 0


def _status(r) -> str:
    return r["status_text"] + (f" {r['status_link']}" if r.get("status_link") else "")


def _markdown(rows):
    print("| id | verdict | stage | targets | toolchains | count | status | first error line |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        message = r["headline"].replace("|", "\\|")
        status = f"[{r['status_text']}]({r['status_link']})" if r.get("status_link") else r["status_text"]
        print(f"| `{r['id']}` | {r['verdict']} | {r['stage'] or '-'} | {', '.join(r['targets'])} | "
              f"{', '.join(r['toolchains'])} | {r['count']} | {status} | `{message}` |")


def _table(rows):
    """Ids whole (they are typed back into `corpus show`), first error lines whole (the cause is at their end)."""
    sizes = {}
    for r in rows:
        sizes[r["family"]] = sizes.get(r["family"], 0) + 1
    bugs, apart = [], []
    for r in rows:
        notes = (["forced"] if r["configuration"] != "default" else []) + (
            [f"family {r['family'][:8]}"] if sizes[r["family"]] > 1 else [])
        (apart if r.get("apart") else bugs).append([r["id"], r["verdict"], r["stage"] or "-", str(r["count"]),
                                                    ",".join(r["targets"]), _status(r), ", ".join(notes) or "-",
                                                    r["headline"]])
    columns = ["id", "verdict", "stage", "count", "targets", "status", "notes", "first error line"]
    table(columns, bugs, keep=("id", "verdict", "stage", "count"))
    if apart:  # a pass's clean refusal: reportable, counted apart from crashes and wrong results
        table(columns, apart, title="unsupported (a pass refused the kernel with a diagnostic of its own)",
              keep=("id", "verdict", "stage", "count"))


def cmd_show(args):
    from gfxhound.report.triage import corpus_triage, references, standing_in
    from gfxhound.signature import headline
    corpus = existing_corpus(args.corpus)
    known = known_corpora(args.known, args.corpus)
    finding = corpus.get(args.id)
    examples = [str(p) for p in corpus.example_dirs(finding.signature)]
    glance = standing_in(corpus, finding, corpus_triage(corpus), references(known))
    if args.json:
        emit("corpus-show", {"finding": finding.to_json(), "headline": headline(finding.message),
                             "status": glance, "examples": examples})
        return 0
    f = finding
    link = f" ({glance['link']})" if glance["link"] else ""
    print(f"{f.signature}: {f.verdict} in stage {f.stage or '-'}, seen {f.count} time(s), {glance['text']}{link}")
    print(f"  first error line: {headline(f.message)}")
    if glance.get("from"):  # a reference corpus (--known) knew it; this corpus records nothing settled of it
        print(f"  status from: {glance['from']} (a reference corpus; --known)")
    for label, value in (("message", first_line(f.message)), ("normalised", f.normalised),
                         ("targets", ", ".join(f.targets)), ("toolchains", ", ".join(f.toolchains)),
                         ("seen", f"{f.first_seen} to {f.last_seen}"), ("configuration", f.configuration),
                         ("aliases", ", ".join(f.aliases))):
        if value:
            print(f"  {label}: {value}")
    for ex in examples:
        print(f"  example: {ex}")
    return 0


def cmd_replay(args):
    """The repro runs in its example's folder; its path is made absolute first (a relative --corpus named from
    the user's directory would otherwise be looked up again under the example's)."""
    python = check_python(args.python) if args.python else sys.executable
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    examples = corpus.examples(finding.signature)
    if not examples:
        raise UserError(f"finding {finding.signature} has no stored example to replay")
    need_triton(python, "--python" if args.python else "")
    folder = examples[0].dir.resolve()
    repro = examples[0].repro.resolve()
    env = dict(os.environ)
    if default_lld():
        env.setdefault("TRITON_HIP_LLD_PATH", default_lld())
    try:
        proc = subprocess.run([python, str(repro)], cwd=folder, env=env, timeout=args.timeout,
                              capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        raise UserError(f"replay of {repro} did not finish in {args.timeout:g} s; raise --timeout") from None
    print((proc.stdout + proc.stderr).strip())
    from gfxhound.protocol import describe
    print(describe(proc.returncode))
    return proc.returncode
