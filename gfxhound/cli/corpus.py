"""`gfxhound corpus`: list, show, replay, merge, migrate and regroup findings. Each action is a subcommand with
only its own options (`gfxhound corpus replay --help`)."""
from __future__ import annotations

import os
import subprocess
import sys

from .output import table
from .common import UserError, check_python, default_lld, existing_corpus, need_triton
from .jsonout import emit
from .options import corpus_option, json_option, timeout_option

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
    json_option(p, "corpus-list", "the findings")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table (for an issue or a wiki)")
    p.set_defaults(func=cmd_list)


def _add_show(actions):
    p = actions.add_parser("show", help="what the corpus records of one finding, and its examples")
    p.add_argument("id", help=ID_HELP)
    corpus_option(p)
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
    report = migrate(corpus, TABLES.get, forced, corpus.root / "triage.json", dry_run=dry_run)
    for old, new in sorted(report["moved"].items()):
        print(f"{'would re-key' if dry_run else 're-keyed'} {old} -> {', '.join(new)} (normaliser "
              f"{report['normaliser']}; {old} kept as an alias)")
    print(f"{len(report['moved'])} finding(s) re-keyed, {report['unchanged']} unchanged")


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


def listing(corpus) -> list:
    """The findings as rows, in the listing order (families together, forced configurations last)."""
    from gfxhound.families import groups
    from gfxhound.signature import headline
    rows = [{"id": f.signature, "verdict": f.verdict, "stage": f.stage, "count": f.count,
             "targets": f.targets, "toolchains": f.toolchains, "status": f.status,
             "normalised": f.normalised, "configuration": f.configuration, "aliases": f.aliases,
             "message": first_line(f.message), "headline": headline(f.message)} for f in corpus.findings()]
    return [dict(r, family=g["family"]) for g in groups(rows) for r in g["members"]]


def cmd_list(args):
    from gfxhound.families import headline as families_line
    rows = listing(existing_corpus(args.corpus))
    if args.json:
        emit("corpus-list", {"corpus": args.corpus, "summary": families_line(rows), "findings": rows})
    elif args.markdown:
        _markdown(rows)
    else:
        _table(rows)
        print(f"{len(rows)} finding(s): {families_line(rows)}")
    return 0


def _markdown(rows):
    print("| id | verdict | stage | targets | toolchains | count | first error line |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        message = r["headline"].replace("|", "\\|")
        print(f"| `{r['id']}` | {r['verdict']} | {r['stage'] or '-'} | {', '.join(r['targets'])} | "
              f"{', '.join(r['toolchains'])} | {r['count']} | `{message}` |")


def _table(rows):
    """Ids whole (they are typed back into `corpus show`), first error lines whole (the cause is at their end)."""
    sizes = {}
    for r in rows:
        sizes[r["family"]] = sizes.get(r["family"], 0) + 1
    lines = []
    for r in rows:
        notes = (["forced"] if r["configuration"] != "default" else []) + (
            [f"family {r['family'][:8]}"] if sizes[r["family"]] > 1 else [])
        lines.append([r["id"], r["verdict"], r["stage"] or "-", str(r["count"]), ",".join(r["targets"]),
                      ", ".join(notes) or "-", r["headline"]])
    table(["id", "verdict", "stage", "count", "targets", "notes", "first error line"], lines,
          keep=("id", "verdict", "stage", "count"))


def cmd_show(args):
    from gfxhound.signature import headline
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    examples = [str(p) for p in corpus.example_dirs(finding.signature)]
    if args.json:
        emit("corpus-show", {"finding": finding.to_json(), "headline": headline(finding.message),
                             "examples": examples})
        return 0
    f = finding
    print(f"{f.signature}: {f.verdict} in stage {f.stage or '-'}, seen {f.count} time(s), status {f.status}")
    print(f"  first error line: {headline(f.message)}")
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
