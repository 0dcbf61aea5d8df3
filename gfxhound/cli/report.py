"""`gfxhound report` (issue drafts, unless the public trackers already know the bug), `verify`, `perf` and
`nightly`."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def add_report(sub):
    rep = sub.add_parser("report", help="write an issue draft for a finding (never filed automatically)")
    rep.add_argument("id", help="the finding (a prefix of its signature)")
    rep.add_argument("--upstream", choices=["triton", "llvm"], help="default: llvm when a reduced .ll shows the bug in LLVM code generation (an llc "
                     "crash, or a memory-model defect through Triton's code generator)")
    rep.add_argument("--out", help="where the draft goes (default: corpus/<signature>/draft)")
    rep.add_argument("--corpus", default="corpus")
    rep.add_argument("--triage", help="known upstream issues (default: <corpus>/triage.json)")
    rep.add_argument("--force", action="store_true", help="draft even when a known issue covers the finding")
    rep.add_argument("--timeout", type=float, default=600, help="seconds the reproduction check may take")
    rep.add_argument("--python", default=sys.executable,
                     help="check the reproducer under this interpreter (a venv with the Triton that has the bug)")
    rep.add_argument("--json", action="store_true")
    rep.set_defaults(func=cmd_report)


def cmd_report(args):
    from gfxhound.cli.triage import open_triage
    from gfxhound.report import drafts
    from gfxhound.cli.common import UserError, default_lld, newest_llc
    from gfxhound.corpus_store import Corpus
    corpus = Corpus(args.corpus)
    finding = corpus.get(args.id)
    triage = open_triage(args)
    known = triage.known(finding)
    if known and not args.force:
        if known.state == "fixed":  # not a new bug: the trackers have it, fixed (a regression is not `known`)
            raise UserError(f"{finding.signature[:8]} is known and fixed upstream: {known.ref} ({known.kind}, fixed "
                            f"in {known.fixed_in or 'a release not recorded'}, {known.url}); not drafted as new "
                            f"(--force drafts it)")
        print(f"{finding.signature}: known upstream as {known.url} ({known.state}): no draft (--force writes one)")
        return 0
    if finding.verdict not in ("ice", "timeout", "miscompile", "runtime_fault", "nondeterministic"):
        raise UserError(f"{finding.signature} is {finding.verdict}: only compiler bugs get drafts")
    upstream = {"triton": drafts.TRITON, "llvm": drafts.LLVM}.get(args.upstream)
    if upstream == drafts.LLVM and not corpus.reduction(finding.signature, "llvm-ir").ll.exists():
        raise UserError(f"{finding.signature} has no reduced LLVM IR: run `gfxhound reduce {finding.signature[:8]} "
                        f"--level llvm-ir` first, or draft for Triton")
    env = {"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {}
    draft = drafts.build(corpus, finding, upstream, python=os.path.abspath(args.python), timeout=args.timeout, env=env,
                         llc=newest_llc(),
                         known_upstream=triage.draft_lines(finding), newest=sys.executable)
    if draft.newest and draft.newest["reproduced"] is False and draft.reproduced and not args.force:
        raise UserError(f"{finding.signature[:8]} fails with {finding.toolchains[-1]} but not with "
                        f"{draft.newest['toolchain']} (this gfxhound's): fixed since, not a bug to file as new; "
                        f"`gfxhound bisect {finding.signature[:8]} --fix` names the release that fixed it (--force "
                        "drafts it anyway)")
    path = drafts.write(draft, Path(args.out) if args.out else corpus.draft_dir(finding.signature))
    if args.json:
        print(json.dumps({"signature": finding.signature, "upstream": draft.upstream, "title": draft.title,
                          "reproduced": draft.reproduced, "check": draft.check, "draft": str(path),
                          "attachments": sorted(draft.attachments)}, indent=1))
    else:
        state = {True: "reproduced", False: "DID NOT REPRODUCE", None: "not checked here"}[draft.reproduced]
        print(f"{draft.upstream}: {draft.title}\n  {state}: {draft.check[:160]}\n  {path}")
    if draft.leaks:
        print(f"gfxhound: the draft still names {', '.join(draft.leaks)}: edit it before filing", file=sys.stderr)
    return 0 if draft.reproduced is not False and not draft.leaks else 1


def add_verify(sub):
    ver = sub.add_parser("verify", help="replay open findings on a toolchain: fixed / still failing / cannot test")
    ver.add_argument("ids", nargs="*", help="findings (signature prefixes; default: every open one)")
    ver.add_argument("--triton", help="a published release to verify on (its venv comes from the bisect cache)")
    ver.add_argument("--python", help="or an interpreter with the Triton to verify (a local build)")
    ver.add_argument("--no-bisect", dest="bisect", action="store_false",
                     help="do not bisect the releases to name where a fixed finding was fixed")
    ver.add_argument("--cache", help="the venv cache (default: $GFXHOUND_CACHE/venvs)")
    ver.add_argument("--only-cached", dest="only_cached", action="store_true",
                     help="bisect only over releases whose venvs are cached (no downloads)")
    ver.add_argument("--timeout", type=float, default=600, help="seconds one repro run may take")
    ver.add_argument("--corpus", default="corpus")
    ver.add_argument("--json", action="store_true")
    ver.set_defaults(func=cmd_verify)


def cmd_verify(args):
    from gfxhound.report import verify
    from gfxhound.bisect.core import BisectError
    from gfxhound.bisect.releases import ReleaseError, VenvCache, available_versions, version_key
    from gfxhound.cli.common import UserError, cache_dir, default_lld
    from gfxhound.corpus_store import Corpus
    if bool(args.triton) == bool(args.python):
        raise UserError("verify on one toolchain: --triton X.Y.Z (a release) or --python PATH (e.g. a local build)")
    corpus = Corpus(args.corpus)
    findings = [corpus.get(i) for i in args.ids] if args.ids else verify.open_findings(corpus)
    cache = VenvCache(Path(os.path.abspath(Path(args.cache).expanduser())) if args.cache
                      else Path(cache_dir()) / "venvs")
    env = {"PYTHONWARNINGS": "ignore"}
    if default_lld():
        env["TRITON_HIP_LLD_PATH"] = default_lld()
    log = (lambda line: print(f"  {line}", file=sys.stderr))
    versions = []
    if args.triton:
        try:
            versions = [v for v in available_versions() if re.fullmatch(r"\d+(\.\d+)*", v)]
        except ReleaseError as exc:
            if not args.only_cached:
                raise UserError(str(exc)) from None
        if args.only_cached:
            versions = sorted({p.name[len("triton-"):] for p in cache.root.glob("triton-*") if
                               cache.ready(p.name[len("triton-"):])}, key=version_key)
        if args.triton not in versions:
            raise UserError(f"--triton {args.triton}: not a published release"
                            + (" in the cache (--only-cached)" if args.only_cached else ""))
        try:
            python = cache.ensure(args.triton, log=log)
        except ReleaseError as exc:
            raise UserError(str(exc)) from None
        toolchain = f"triton-{args.triton}"
    else:
        python = Path(os.path.abspath(Path(args.python).expanduser()))
        if not python.exists():
            raise UserError(f"--python {args.python}: no such interpreter")
        from gfxhound.protocol import run_probe
        outcome, version = run_probe([python, "-c", "import triton; print(triton.__version__)"], 120)
        toolchain = f"triton-{version}" if outcome == "absent" else f"python {args.python}"
    results = []
    for finding in findings:
        result = verify.check(corpus, finding, python, toolchain, args.timeout, env)
        if result.outcome == verify.FIXED and args.triton and args.bisect:
            try:
                result.bisect = verify.name_the_fix(
                    corpus, finding, args.triton, versions, lambda v: cache.ensure(v, log=log), args.timeout, env)
                result.fixed_in = result.bisect["first_new"]
                corpus.write_bisect(finding.signature, result.bisect)
            except (BisectError, ReleaseError) as exc:
                log(f"{finding.signature}: fixed, but the fix cannot be bisected: {exc}")
        status = {verify.FIXED: "fixed", verify.STILL: "open"}.get(result.outcome)
        corpus.write_verify(finding.signature, result.entry(), status)
        results.append(result)
        if not args.json:
            print(f"{finding.signature} {finding.verdict:<10} {result.outcome:<14}"
                  + (f" fixed in triton {result.fixed_in}" if result.fixed_in else "")
                  + f"  {finding.message[:70]}")
    if args.json:
        print(json.dumps([dict(r.entry(), signature=r.signature) for r in results], indent=1))
    else:
        counts = {o: sum(r.outcome == o for r in results) for o in (verify.FIXED, verify.STILL, verify.CANNOT)}
        print(f"{toolchain}: " + ", ".join(f"{n} {o}" for o, n in counts.items()))
    return 0


def add_perf(sub):
    perf = sub.add_parser("perf", help="compile time and resources of a fixed kernel set, on two toolchains")
    perf.add_argument("action", choices=["measure", "compare", "make-set"])
    perf.add_argument("files", nargs="*", help="compare: OLD.json NEW.json")
    perf.add_argument("--set", default="corpus/perfset", help="the kernel set (spec.json files and caps.json)")
    perf.add_argument("--python", default=sys.executable, help="measure: the interpreter whose Triton to measure")
    perf.add_argument("--target", help="measure: compile for this arch instead of the set's")
    perf.add_argument("--repeat", type=int, default=3, help="measure: compiles a kernel (the median counts)")
    perf.add_argument("--out", help="measure: write the figures here (JSON)")
    perf.add_argument("--caps", help="make-set: the capabilities to render with (the oldest toolchain's)")
    perf.add_argument("--count", type=int, default=16)
    perf.add_argument("--seed", type=int, default=0)
    perf.add_argument("--with-python", dest="with_python", action="append", default=[],
                      help="make-set: keep kernels this interpreter compiles too (repeatable)")
    perf.add_argument("--json", action="store_true")
    perf.set_defaults(func=cmd_perf)


def cmd_perf(args):
    from gfxhound.report import perf
    from gfxhound.cli.common import UserError, default_lld
    env = {"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {}
    try:
        if args.action == "measure":
            result = perf.measure(os.path.abspath(args.python), perf.render_set(Path(args.set), args.target),
                                  args.repeat, env=env)
            if args.out:
                Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
            print(json.dumps(result, indent=1) if args.json else perf.summary(result))
            return 0
        if args.action == "make-set":
            if not args.caps:
                raise UserError("make-set needs --caps CAPS.json (the oldest toolchain's capabilities)")
            kept = perf.make_set(Path(args.caps), Path(args.set), args.count, args.seed,
                                 [os.path.abspath(p) for p in [args.python] + args.with_python], log=lambda line: print(line, file=sys.stderr),
                                 env=env)
            print(f"{len(kept)} kernels in {args.set}")
            return 0
        if len(args.files) != 2:
            raise UserError("perf compare OLD.json NEW.json")
        old, new = (json.loads(Path(f).read_text()) for f in args.files)
    except (perf.PerfError, FileNotFoundError, ValueError) as exc:
        raise UserError(str(exc).splitlines()[0]) from None
    if not all(isinstance(d, dict) and isinstance(d.get("kernels"), dict) for d in (old, new)):
        raise UserError("perf compare: both files must be `gfxhound perf measure --out` results")
    found = perf.compare(old, new)
    if args.json:
        print(json.dumps({"regressions": found, "newly_failing": perf.newly_failing(old, new)}, indent=1))
    else:
        for r in found:
            print(f"{r['kernel']} {r['metric']}: {r['old']} -> {r['new']} (+{r['growth']:.0%})")
        print(f"{old['toolchain']} -> {new['toolchain']}: {len(found)} regressions")
    return 1 if found else 0


def add_nightly(sub):
    n = sub.add_parser("nightly", help="the nightly run: shards, triage, drafts, fixes, perf, JUnit and HTML")
    n.add_argument("--targets", default="gfx942", help="comma-separated AMD archs")
    n.add_argument("--budget", default="10m", help="each shard's campaign budget (duration or kernel count)")
    n.add_argument("--shards", type=int, default=1, help="campaign shards run in parallel (disjoint seeds)")
    n.add_argument("--workers", type=int, default=None, help="compile workers in all (default: the cores)")
    n.add_argument("--seed", type=int, help="default: the date (a new part of the space every night)")
    n.add_argument("--backend", default="compile", choices=["compile", "interpret", "device"])
    n.add_argument("--out", default="nightly", help="<out>/<date>/ gets night.json, junit.xml, summary.html, "
                   "drafts/; <out>/history.json the trend")
    n.add_argument("--corpus", default="corpus", help="the long-lived corpus the shards merge into")
    n.add_argument("--triage", help="known upstream issues (default: <corpus>/triage.json)")
    n.add_argument("--reproductions", type=int, default=3, help="k: a new finding is reported after k of k")
    n.add_argument("--previous-triton", dest="previous_triton",
                   help="the previous release: bisect new findings over PREVIOUS..CURRENT")
    n.add_argument("--previous-python", dest="previous_python",
                   help="the previous toolchain's interpreter: the perf baseline")
    n.add_argument("--perf-set", dest="perf_set", help="the kernel set for compile time and resources "
                   "(e.g. corpus/perfset)")
    n.add_argument("--reduce-seconds", dest="reduce_s", type=float, default=600)
    n.add_argument("--no-bisect", dest="bisect", action="store_false")
    n.add_argument("--stage-timeout", dest="stage_timeout", type=float, default=3600)
    n.add_argument("--date", help="the night's name (default: today, UTC)")
    n.add_argument("--from-shards", dest="from_shards", nargs="+", default=[],
                   help="shard corpora made by CI matrix jobs (each with summary.json): merge and triage them "
                        "instead of running a campaign")
    n.add_argument("--json", action="store_true")
    n.set_defaults(func=cmd_nightly)


def cmd_nightly(args):
    import os

    from gfxhound.cli.common import UserError, default_lld
    from gfxhound.report.nightly import Night, NightConfig
    if args.shards < 1 or args.reproductions < 1:
        raise UserError("--shards and --reproductions must be 1 or more")
    if args.previous_python and not Path(args.previous_python).exists():
        raise UserError(f"--previous-python {args.previous_python}: no such interpreter")
    config = NightConfig(out=Path(args.out), corpus=Path(args.corpus), targets=args.targets.split(","),
                         budget=args.budget, shards=args.shards, workers=args.workers or os.cpu_count() or 1,
                         seed=args.seed, backend=args.backend, reproductions=args.reproductions,
                         previous_python=args.previous_python, previous_triton=args.previous_triton,
                         reduce_s=args.reduce_s, bisect=args.bisect,
                         perf_set=Path(args.perf_set) if args.perf_set else None,
                         triage=Path(args.triage) if args.triage else None, stage_timeout=args.stage_timeout,
                         from_shards=args.from_shards,
                         env={"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {})
    if args.date:
        config.date = args.date
    night = Night(config, log=lambda line: print(f"nightly: {line}", file=sys.stderr)).run()
    if args.json:
        print(json.dumps(night, indent=1))
    else:
        states = [f["state"] for f in night["findings"]]
        print(f"{night['date']}: {night['campaign']['kernels']} kernels; {states.count('new')} new, "
              f"{states.count('known')} known, {states.count('flaky')} flaky, {len(night['fixed'])} fixed, "
              f"{len(night['perf'])} perf regressions, {len(night['errors'])} harness errors\n"
              f"  {Path(args.out) / night['date']}/summary.html")
    return 0
