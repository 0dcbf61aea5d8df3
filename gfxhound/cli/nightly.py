"""`gfxhound nightly`: the nightly run (gfxhound/report/nightly.py): campaign shards (or CI matrix jobs' shard
corpora), triage, drafts, fixes, perf, JUnit and HTML. This module only reads argv and checks it."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .common import UserError, check_python, default_lld, parse_date, positive
from .jsonout import emit
from .options import json_option, known_corpora, known_option, triage_option


def add_nightly(sub):
    n = sub.add_parser("nightly", help="the nightly run: shards, triage, drafts, fixes, perf, JUnit and HTML")
    n.add_argument("--targets", default="gfx942", help="comma-separated AMD archs")
    n.add_argument("--budget", default="10m", help="each shard's campaign budget (duration or kernel count)")
    n.add_argument("--shards", type=positive(int), default=1, help="campaign shards run in parallel (disjoint seeds)")
    n.add_argument("--workers", type=positive(int), default=None, help="compile workers in all (default: the cores)")
    n.add_argument("--seed", type=int, help="the campaign's seed (default: the date: a new part of the space every "
                                            "night)")
    n.add_argument("--backend", default="compile", choices=["compile", "interpret", "device"],
                   help="what the campaign judges: compiled code, results under the interpreter, or on a GPU")
    n.add_argument("--out", default="nightly", metavar="DIR",
                   help="<out>/<date>/ gets night.json, junit.xml, summary.html, drafts/; <out>/history.json the "
                        "trend")
    n.add_argument("--corpus", default="corpus", metavar="DIR", help="the long-lived corpus the shards merge into")
    triage_option(n)
    known_option(n)
    n.add_argument("--reproductions", type=positive(int), default=3, metavar="K",
                   help="a new finding is reported after K reproductions of K")
    n.add_argument("--previous-triton", dest="previous_triton", metavar="X.Y.Z",
                   help="the previous release: bisect new findings over PREVIOUS..CURRENT")
    n.add_argument("--previous-python", dest="previous_python", metavar="PY",
                   help="the previous toolchain's interpreter: the perf baseline")
    n.add_argument("--perf-set", dest="perf_set", metavar="DIR",
                   help="the kernel set for compile time and resources (e.g. corpus/perfset)")
    n.add_argument("--reduce-seconds", dest="reduce_s", type=positive(float, least=0), default=600,
                   metavar="SECONDS", help="seconds to reduce each new finding (0: no reduction)")
    n.add_argument("--no-bisect", dest="bisect", action="store_false",
                   help="do not bisect new findings over the releases")
    n.add_argument("--stage-timeout", dest="stage_timeout", type=positive(float), default=3600, metavar="SECONDS",
                   help="seconds any one stage (a reduction, a bisection, a draft) may take")
    n.add_argument("--date", metavar="YYYY-MM-DD", help="the night's date, its folder's name (default: today, UTC)")
    n.add_argument("--from-shards", dest="from_shards", nargs="+", default=[], metavar="DIR",
                   help="shard corpora made by CI matrix jobs (each with summary.json): merge and triage them "
                        "instead of running a campaign")
    json_option(n, "nightly", "the night's record (night.json)")
    n.set_defaults(func=cmd_nightly)


def _checked(args):
    """What would fail hours into the night, refused before it starts."""
    if args.previous_python:
        args.previous_python = check_python(args.previous_python, "--previous-python")
    if args.date:
        args.date = parse_date(args.date, "--date")
    for shard in args.from_shards:
        if not Path(shard).is_dir():
            raise UserError(f"--from-shards {shard}: no such directory (a shard corpus a CI job made)")
    if args.perf_set and not Path(args.perf_set).is_dir():
        raise UserError(f"--perf-set {args.perf_set}: no such kernel set (a directory with specs/ and caps.json)")


def cmd_nightly(args):
    from gfxhound.report.nightly import Night, NightConfig
    _checked(args)
    known = known_corpora(args.known, args.corpus)
    config = NightConfig(out=Path(args.out), corpus=Path(args.corpus), targets=args.targets.split(","),
                         budget=args.budget, shards=args.shards, workers=args.workers or os.cpu_count() or 1,
                         seed=args.seed, backend=args.backend, reproductions=args.reproductions,
                         previous_python=args.previous_python, previous_triton=args.previous_triton,
                         reduce_s=args.reduce_s, bisect=args.bisect,
                         perf_set=Path(args.perf_set) if args.perf_set else None,
                         triage=Path(args.triage) if args.triage else None, known=known,
                         stage_timeout=args.stage_timeout,
                         from_shards=args.from_shards,
                         env={"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {})
    if args.date:
        config.date = args.date
    night = Night(config, log=lambda line: print(f"nightly: {line}", file=sys.stderr)).run()
    if args.json:
        emit("nightly", night)
    else:
        states = [f["state"] for f in night["findings"]]
        print(f"{night['date']}: {night['campaign']['kernels']} kernels; {states.count('new')} new, "
              f"{states.count('known')} known, {states.count('flaky')} flaky, {len(night['fixed'])} fixed, "
              f"{len(night['perf'])} perf regressions, {len(night['errors'])} harness errors\n"
              f"  {Path(args.out) / night['date']}/summary.html")
    return 0
