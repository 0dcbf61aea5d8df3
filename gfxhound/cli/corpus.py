"""gfxhound corpus: list, show, replay, merge, migrate and regroup findings."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from .common import UserError, default_lld


def add_corpus(sub):
    corpus = sub.add_parser("corpus", help="list, show or replay findings")
    corpus.add_argument("action", choices=["list", "show", "replay", "merge", "migrate", "regroup"])
    corpus.add_argument("--dry-run", action="store_true", help="migrate: say what would be re-keyed, change nothing")
    corpus.add_argument("id", nargs="?")
    corpus.add_argument("--corpus", default="corpus")
    corpus.add_argument("--json", action="store_true")
    corpus.add_argument("--markdown", action="store_true", help="list as a Markdown table")
    corpus.add_argument("--timeout", type=float, default=900)
    corpus.add_argument("--python", help="replay under this interpreter (e.g. a venv with another Triton)")
    corpus.set_defaults(func=cmd_corpus)


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


def cmd_corpus(args):
    from gfxhound.corpus_store import Corpus
    corpus = Corpus(args.corpus)
    if args.action == "merge":
        if not args.id:
            raise UserError("'gfxhound corpus merge SRC' needs the corpus to merge in (a directory)")
        source = Corpus(args.id)
        if not source.root.is_dir():
            raise UserError(f"corpus merge: {args.id} is not a directory")
        added, merged = corpus.merge_from(source)
        print(f"merged {args.id} into {corpus.root}: {added} new finding(s), {merged} merged")
        _migrate(corpus, dry_run=False)  # findings of an older normaliser join the bugs they are
        return 0
    if args.action == "migrate":
        _migrate(corpus, dry_run=args.dry_run)
        return 0
    if args.action == "regroup":  # wrong results whose reduced kernels have one shape are one bug
        from gfxhound.reduce.regroup import regroup_all
        for keep, folded in regroup_all(corpus):
            print(f"{', '.join(folded)} folded into {keep} (same reduced shape; the old ids are its aliases)")
        return 0
    if args.action == "list":
        from gfxhound.families import groups, headline
        rows = [{"id": f.signature, "verdict": f.verdict, "stage": f.stage, "count": f.count,
                 "targets": f.targets, "toolchains": f.toolchains, "status": f.status,
                 "normalised": f.normalised, "configuration": f.configuration, "aliases": f.aliases,
                 "message": (f.message.splitlines() or [""])[0][:120]} for f in corpus.findings()]
        rows = [dict(r, family=g["family"]) for g in groups(rows) for r in g["members"]]  # the listing order
        if args.json:
            print(json.dumps(rows, indent=1))
        elif args.markdown:
            print("| id | verdict | stage | targets | toolchains | count | first error line |")
            print("|---|---|---|---|---|---|---|")
            for r in rows:
                message = r["message"].replace("|", "\\|")
                print(f"| `{r['id']}` | {r['verdict']} | {r['stage'] or '-'} | {', '.join(r['targets'])} | "
                      f"{', '.join(r['toolchains'])} | {r['count']} | `{message}` |")
        else:
            sizes = {}
            for r in rows:
                sizes[r["family"]] = sizes.get(r["family"], 0) + 1
            for r in rows:
                label = ("[forced] " if r["configuration"] != "default" else "") + (
                    f"[family {r['family'][:8]}] " if sizes[r["family"]] > 1 else "")
                print(f"{r['id']}  {r['verdict']:<10} {r['stage'] or '-':<8} x{r['count']:<5} "
                      f"{','.join(r['targets'])}  {label}{r['message']}")
            print(f"{len(rows)} finding(s): {headline(rows)}")
        return 0
    if not args.id:
        raise UserError(f"'gfxhound corpus {args.action}' needs a finding id (see 'gfxhound corpus list')")
    finding = corpus.get(args.id)
    examples = corpus.example_dirs(finding.signature)
    if args.action == "show":
        print(json.dumps(finding.to_json(), indent=1))
        for ex in examples:
            print(f"example: {ex}")
        return 0
    if not examples:
        raise UserError(f"finding {finding.signature} has no stored example to replay")
    repro = corpus.examples(finding.signature)[0].repro
    env = dict(os.environ)
    if default_lld():
        env.setdefault("TRITON_HIP_LLD_PATH", default_lld())
    try:
        proc = subprocess.run([args.python or sys.executable, str(repro)], cwd=examples[0], env=env,
                              timeout=args.timeout, capture_output=True, text=True)
    except FileNotFoundError:
        raise UserError(f"--python {args.python}: no such interpreter") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"replay of {repro} did not finish in {args.timeout} s; raise --timeout") from None
    print((proc.stdout + proc.stderr).strip())
    from gfxhound.protocol import describe
    print(describe(proc.returncode))
    return proc.returncode
