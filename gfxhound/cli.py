"""The gfxhound command line. Only this module reads argv and the environment (STYLE.md, 9)."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gfxhound.protocol import EXIT_PRESENT

KNOWN_ARCHS = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1150", "gfx1151", "gfx1200",
               "gfx1201", "gfx1250")


class UserError(Exception):
    pass


def _default_lld():
    for path in (os.environ.get("TRITON_HIP_LLD_PATH"), "/usr/lib/llvm-22/bin/ld.lld", shutil.which("ld.lld")):
        if path and Path(path).exists():
            return path
    return ""


def _cache_dir():
    return os.environ.get("GFXHOUND_CACHE") or str(Path.home() / ".cache" / "gfxhound")


def _need_module(name, hint):
    import importlib.util
    if importlib.util.find_spec(name) is None:
        raise UserError(hint)


def _device_target():
    """The local GPU's own arch becomes the compile target of a device campaign."""
    _need_module("torch", "--backend device needs torch with GPU support")
    import torch
    if not torch.cuda.is_available():
        raise UserError("--backend device found no GPU (torch.cuda.is_available() is False); "
                        "use --backend interpret on a CPU-only machine")
    props = torch.cuda.get_device_properties(0)
    if getattr(torch.version, "hip", None):
        return props.gcnArchName.split(":")[0]
    major, minor = torch.cuda.get_device_capability(0)
    return f"cuda:{major * 10 + minor}"


def cmd_fuzz(args):
    from rich.console import Console

    from gfxhound.campaign import Campaign, CampaignConfig, parse_budget, summary_json

    targets = [t.strip() for t in args.target.split(",") if t.strip()]
    for t in targets:
        if t not in KNOWN_ARCHS:
            raise UserError(f"unknown target {t!r}; choose from {', '.join(KNOWN_ARCHS)}")
    if args.backend != "compile" and args.llc != "off":
        raise UserError("--llc checks compiled code: use it with --backend compile")
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.timeout <= 0:
        raise UserError("--timeout must be a positive number of seconds")
    if args.max_ops < 1:
        raise UserError("--max-ops must be at least 1")
    seconds, kernels = parse_budget(args.budget)
    lld = _default_lld()
    env = {"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"),
           "PYTHONWARNINGS": "ignore"}
    if lld:
        env["TRITON_HIP_LLD_PATH"] = lld
    llc = None
    if args.llc == "auto":
        llc = next((p for p in ("/usr/lib/llvm-22/bin/llc", shutil.which("llc")) if p and Path(p).exists()), None)
        if llc is None:
            raise UserError("--llc auto found no llc; install Debian's llvm-22 or give --llc PATH")
    elif args.llc != "off":
        if not Path(args.llc).exists():
            raise UserError(f"--llc {args.llc}: no such file")
        llc = args.llc
    if args.backend == "interpret":
        _need_module("numpy", "the interpreter needs numpy: pip install numpy")
        _need_module("torch", "the interpreter needs torch: pip install torch==2.13.0 (a CPU build)")
    elif args.backend == "device":
        targets = [_device_target()]
    collective = {}
    if args.family == "collectives":
        _need_module("numpy", "--family collectives needs numpy (its patterns compute expected values with it): "
                     "pip install numpy")
        from gfxhound.fuzz.collective import PATTERNS
        if args.patterns:
            names = [p.strip() for p in args.patterns.split(",") if p.strip()]
            unknown = [p for p in names if p not in PATTERNS]
            if unknown:
                raise UserError(f"unknown pattern {unknown[0]!r}; choose from {', '.join(sorted(PATTERNS))}")
            collective["patterns"] = names
        if not 0 <= args.controls <= 1:
            raise UserError("--controls is a share of kernels: a number from 0 to 1")
        collective["controls"] = args.controls
        if args.plant:
            raise UserError("--plant brings its own kernels (the collective ones too): leave out --family")
    elif args.patterns or args.controls:
        raise UserError("--patterns and --controls need --family collectives")
    if args.plant and args.backend == "compile":
        raise UserError("--plant needs a backend that runs kernels: --backend interpret or device")
    if args.plant and args.backend == "interpret":
        from gfxhound.oracle.planted import PLANTS
        if PLANTS[args.plant].family == "collective":
            raise UserError(f"planted bug {args.plant} needs a GPU (--backend device): its pattern waits on other "
                            "programs, which the sequential interpreter cannot run")
        if not PLANTS[args.plant].pattern:
            raise UserError(f"planted bug {args.plant} needs a GPU (--backend device): the interpreter runs each "
                            "program as one thread, so it has no barrier to miss")
    config = CampaignConfig(plant=args.plant, backend=args.backend, llc=llc, targets=targets, corpus=args.corpus,
                            seconds=seconds, kernels=kernels, workers=args.workers,
                            seed=_shard_seed(args.seed, args.shard), timeout=args.timeout, max_ops=args.max_ops,
                            worker_env=env, caps_cache=_cache_dir(), lld=lld or "/usr/lib/llvm-22/bin/ld.lld",
                            family=args.family, collective=collective)
    console = Console(stderr=True)
    campaign = Campaign(config, on_progress=_progress_printer(console, config) if not args.quiet else None)
    stats = campaign.run()
    summary = summary_json(stats, config, campaign.toolchain)
    summary["toolchain_detail"] = campaign.toolchain_detail
    if config.backend == "compile":  # how many pointers got tt.pointer_range, how many kernels took buffer ops
        from gfxhound.oracle.specialisation_stats import specialisation_shares
        summary["specialisation"] = specialisation_shares(summary["coverage"],
                                                          campaign.toolchain_detail.get("specialisation"))
        for notice in summary["specialisation"]["notices"]:  # once per campaign, --json too
            print(f"gfxhound: notice: {notice}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        _print_summary(console, summary)
    return 0


def _progress_printer(console, config):
    import time
    state = {"last": 0.0}

    def show(stats):
        now = time.time()
        if now - state["last"] < 2.0:
            return
        state["last"] = now
        verdicts = " ".join(f"{k}={v}" for k, v in sorted(stats.verdicts.items()))
        console.print(f"[dim]{now - stats.started:6.0f}s[/] kernels={stats.kernels} "
                      f"({stats.rate():.1f}/s) {verdicts} new_signatures={stats.new_signatures}", highlight=False)
    return show


def _print_summary(console, summary):
    from rich.table import Table
    console.print(f"[bold]gfxhound fuzz[/]: {summary['kernels']} kernels in {summary['duration_s']} s "
                  f"({summary['kernels_per_s']}/s) with {summary['toolchain']} on {', '.join(summary['targets'])}"
                  + ("  [yellow](interrupted)[/]" if summary["interrupted"] else "")
                  + (f"  [yellow]({summary['unfinished']} kernels still running when the budget's drain ended; "
                     "not judged)[/]" if summary.get("unfinished") else ""), highlight=False)
    table = Table()
    table.add_column("verdict")
    table.add_column("kernels", justify="right")
    for verdict, count in sorted(summary["verdicts"].items()):
        table.add_row(verdict, str(count))
    console.print(table)
    spec = summary.get("specialisation") or {}
    if spec.get("pointer_args"):  # compile backend only
        from gfxhound.oracle.specialisation_stats import summary_line
        console.print(summary_line(spec), highlight=False)
    if summary["findings"]:
        from gfxhound.families import groups, headline
        found = Table(title=f"findings: {headline(summary['findings'])}")
        for col in ("id", "verdict", "stage", "target", "new", "first error line"):
            found.add_column(col)
        for group in groups(summary["findings"]):
            many = len(group["members"]) > 1
            for f in group["members"]:
                label = ("forced: " if group["forced"] else "") + (f"family {group['family'][:8]}: " if many else "")
                found.add_row(f["id"], f["verdict"], f["stage"], f["target"], "yes" if f["new"] else "",
                              label + f["first_error_line"][:100])
        console.print(found)
    for miss in summary.get("coverage_floors", {}).get("missed", []):
        console.print(f"[yellow]coverage below its floor[/]: {miss['floor']} in {miss['share']:.1%} of kernels "
                      f"(floor {miss['least']})", highlight=False)
    if summary["user_errors"]:
        console.print("[bold]user errors[/] (legitimate rejections; the generator should avoid them):")
        for message, count in summary["user_errors"].items():
            console.print(f"  {count} x {message}", highlight=False)


def _migrate(corpus, dry_run):
    """Re-key findings recorded under an older signature normaliser (gfxhound/corpus_migrate.py)."""
    from gfxhound.corpus_migrate import migrate
    from gfxhound.fuzz.forced import forced
    from gfxhound.oracle.memory_model import TABLES
    report = migrate(corpus, TABLES.get, forced, corpus.root / "triage.json", dry_run=dry_run)
    for old, new in sorted(report["moved"].items()):
        print(f"{'would re-key' if dry_run else 're-keyed'} {old} -> {', '.join(new)} (normaliser "
              f"{report['normaliser']}; {old} kept as an alias)")
    print(f"{len(report['moved'])} finding(s) re-keyed, {report['unchanged']} unchanged")


def _shard_seed(seed: int, shard: str) -> int:
    """Shard I of N runs seed * N + I: the N shards of one seed never share a generator stream."""
    try:
        index, count = (int(x) for x in shard.split("/"))
        assert 0 <= index < count
    except (ValueError, AssertionError):
        raise UserError(f"--shard {shard!r}: give I/N with 0 <= I < N, e.g. 0/4") from None
    return seed * count + index


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
    repro = examples[0] / "repro.py"
    env = dict(os.environ)
    if _default_lld():
        env.setdefault("TRITON_HIP_LLD_PATH", _default_lld())
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


def cmd_reduce(args):
    import tempfile

    from gfxhound.corpus_store import Corpus
    from gfxhound.reduce.llvm_ir import ReduceError, reduce_ir, signature_property
    from gfxhound.reduce.mlir import INPUT_FOR_STAGE

    if args.script:
        return _reduce_script(args)
    if not args.id:
        raise UserError("name a finding to reduce (gfxhound corpus list), or pass --script FILE --expect REGEX")
    corpus = Corpus(args.corpus)
    finding = corpus.get(args.id)
    if args.level == "ir" and finding.stage in INPUT_FOR_STAGE:
        return _reduce_mlir(args, corpus, finding)
    if args.level == "ir" and finding.stage != "llc-verify":
        raise UserError(f"IR-level reduction handles failures in stages ttgir and llir (TTIR/TTGIR files) and "
                        f"llc-verify (LLVM IR) so far; {finding.signature} failed in stage {finding.stage}: use "
                        "--level spec")
    if finding.stage != "llc-verify" or args.level == "spec":
        return _reduce_spec(args, corpus, finding)
    examples = corpus.example_dirs(finding.signature)
    example = next((e for e in examples if (e / "ir" / "kernel.llir").exists()), None)
    if example is None:
        raise UserError(f"finding {finding.signature} has no example with ir/kernel.llir to reduce")
    run = json.loads((example / "run.json").read_text())
    llc = args.llc or next((p for p in ("/usr/lib/llvm-22/bin/llc", shutil.which("llc")) if p and Path(p).exists()),
                           None)
    if llc is None:
        raise UserError("no llc found: install Debian's llvm-22 or pass --llc PATH")
    tool = args.llvm_reduce or next((p for p in ("/usr/lib/llvm-22/bin/llvm-reduce", shutil.which("llvm-reduce"))
                                     if p and Path(p).exists()), "llvm-reduce")
    prop = signature_property(finding.signature, run["target"], llc,
                              bool(run.get("options_applied", {}).get("enable_fp_fusion", True)))
    with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-") as tmp:
        try:
            result = reduce_ir(example / "ir" / "kernel.llir", prop, Path(tmp), llvm_reduce=tool, jobs=args.jobs,
                               timeout_s=args.timeout, log=lambda line: print(line, file=sys.stderr))
        except ReduceError as exc:
            raise UserError(str(exc)) from None
        files = {name: (Path(tmp) / name).read_bytes() for name in ("reduced.ll", "reduce.json", "reduce.log")}
        files["command.txt"] = " ".join(result.command) + "\n"
        dest = corpus.write_reduced(finding.signature, "llvm-ir", files)
    summary = dict(result.to_json(), output=str(dest))
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{finding.signature}: LLVM IR {result.lines_before} -> {result.lines_after} lines, signature kept, "
              f"in {result.seconds} s\n  {dest}/reduced.ll\n  (cd {dest} && {' '.join(result.command)})")
    return 0


def _load_example(example):
    """The spec, capabilities and run record of one corpus example (what every reduction starts from)."""
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.spec import KernelSpec
    return (KernelSpec.loads((example / "spec.json").read_text()),
            Capabilities.from_json(json.loads((example / "caps.json").read_text())),
            json.loads((example / "run.json").read_text()))


def _reduce_script(args):
    """Source level: a user's script, reduced while its output matches --expect."""
    from gfxhound.reduce.llvm_ir import ReduceError
    from gfxhound.reduce.source import reduce_script

    script = Path(args.script)
    if not script.is_file():
        raise UserError(f"{script}: no such file")
    if not args.expect:
        raise UserError("--script needs --expect REGEX: what the script's output must keep showing")
    try:
        result = reduce_script(script, args.expect, python=args.python or sys.executable,
                               cvise=args.cvise or shutil.which("cvise") or "cvise", jobs=args.jobs,
                               timeout_s=args.timeout, test_timeout=args.compile_timeout,
                               log=lambda line: print(line, file=sys.stderr))
    except ReduceError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(f"{script}: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s\n  "
              f"{result.output}")
    return 0


def _reduce_mlir(args, corpus, finding):
    """TTIR/TTGIR level: C-Vise on the IR the failing stage consumed, compiled by the installed Triton."""
    import tempfile

    from gfxhound.fuzz.render import render
    from gfxhound.reduce.llvm_ir import ReduceError
    from gfxhound.reduce.localise import LAYERS, has_amd_codegen, localise
    from gfxhound.reduce.mlir import INPUT_FOR_STAGE, failure_property, reduce_mlir

    name = INPUT_FOR_STAGE[finding.stage]
    example = next((e for e in corpus.example_dirs(finding.signature) if (e / "ir" / name).exists()), None)
    if example is None:
        raise UserError(f"finding {finding.signature} has no example with ir/{name} to reduce")
    spec, caps, run = _load_example(example)
    rendered = render(spec, caps)
    layer = localise(finding.stage, run.get("message", ""), has_amd_codegen())
    lld = _default_lld()
    if lld:
        os.environ.setdefault("TRITON_HIP_LLD_PATH", lld)
    prop = failure_property(finding.signature, run["target"], rendered.options, rendered.env, run["toolchain"],
                            timeout=args.compile_timeout)
    cvise = args.cvise or shutil.which("cvise") or "cvise"
    with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-") as tmp:
        try:
            result = reduce_mlir(example / "ir" / name, prop, Path(tmp), cvise=cvise, jobs=args.jobs,
                                 timeout_s=args.timeout, log=lambda line: print(line, file=sys.stderr))
        except ReduceError as exc:
            raise UserError(str(exc)) from None
        ext = result.level
        summary = dict(result.to_json(), layer=layer, layer_text=LAYERS[layer], signature=finding.signature)
        (Path(tmp) / "reduce.json").write_text(json.dumps(summary, indent=1))
        files = {n: (Path(tmp) / n).read_bytes() for n in (f"reduced.{ext}", "command.py", "reduce.json",
                                                           "reduce.log", "passes.json")}
        files["command.txt"] = " ".join(result.command) + "\n"
        dest = corpus.write_reduced(finding.signature, ext, files)
    summary["output"] = str(dest)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{finding.signature}: {ext.upper()} {result.lines_before} -> {result.lines_after} lines, signature "
              f"kept, in {result.seconds} s; layer: {LAYERS[layer]}\n  {dest}/reduced.{ext}\n  "
              f"(cd {dest} && sh command.txt)")
    return 0


def _reduce_miscompile(args, corpus, finding):
    """A wrong result: spec-level reduction with the finding's backend and the oracle as the test."""
    import time

    from gfxhound.fuzz.render import render
    from gfxhound.oracle.exec_repro import render_exec_repro
    from gfxhound.oracle.inputs import make_inputs
    from gfxhound.oracle.planted import mutate_source
    from gfxhound.oracle.pool import CompilePool
    from gfxhound.oracle.run_task import reference
    from gfxhound.reduce.miscompile import ExecutionTest
    from gfxhound.reduce.spec_level import reduce_spec

    example = corpus.example_dirs(finding.signature)[0]
    spec, caps, run = _load_example(example)
    arch, toolchain, backend = run["target"], run["toolchain"], run.get("backend", "interpret")
    env = {"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"), "PYTHONWARNINGS": "ignore"}
    kind = ""
    if backend == "interpret":
        env["TRITON_INTERPRET"] = "1"
    else:
        try:
            import torch
        except ImportError:
            raise UserError("this wrong result was found on a GPU: reducing it needs torch and a GPU") from None
        if not torch.cuda.is_available():
            raise UserError("this wrong result was found on a GPU: run gfxhound reduce on a machine with one")
        kind = "hip" if getattr(torch.version, "hip", None) else "cuda"
    jobs = max(1, args.jobs) if backend == "interpret" else 1  # one GPU worker: a fault must be seen alone
    pool = CompilePool(jobs, args.compile_timeout, env)
    test = ExecutionTest(pool, caps.to_json(), arch, backend, toolchain, plant=args.plant, device_kind=kind)
    last = {}

    def interesting(candidate):
        execution = test.judge(candidate)
        if execution.verdict == "miscompile":
            last[candidate.spec_hash()] = execution
            return True
        return False

    try:
        if not interesting(spec):
            raise UserError(f"the example of {finding.signature} is not a wrong result with this Triton on this "
                            f"{'machine' if backend == 'device' else 'interpreter'}; run gfxhound reduce where it "
                            f"was found ({toolchain}, {arch}); a finding recorded before gfxhound's input data "
                            "changed (2026-11-23, oracle/inputs.data_key) may need its own data: its repro.py "
                            "embeds them")
        before = render(spec, caps).body_lines
        result = reduce_spec(spec, interesting, deadline_s=args.timeout, caps=caps, jobs=jobs,
                             on_progress=lambda st: print(f"  {st.tests} runs, {st.accepted} kept: "
                                                          f"{render(st.spec, caps).body_lines} lines",
                                                          file=sys.stderr))
    finally:
        pool.close()
    rendered = render(result.spec, caps)
    if args.plant:
        rendered.source = mutate_source(args.plant, rendered.source)
    execution = last[result.spec.spec_hash()]
    expected = reference(result.spec, caps, backend, kind)
    repro = render_exec_repro(rendered, result.spec, make_inputs(result.spec), expected, execution.to_json(),
                              timeout_s=int(args.compile_timeout * 2))
    from gfxhound.reduce.regroup import regroup, shape_of
    summary = {"level": "spec", "signature": finding.signature, "verdict": "miscompile", "backend": backend,
               "regrouped_signature": execution.signature,  # the reduced kernel's own (provisional) signature
               "shape": shape_of(result.spec, caps, arch),  # what regroups it with the same bug's other findings
               "message": execution.message.splitlines()[0][:300] if execution.message else "",
               "body_lines_before": before, "body_lines_after": rendered.body_lines, "tests": result.tests,
               "accepted": result.accepted, "seconds": result.seconds, "interrupted": result.interrupted,
               "toolchain": toolchain, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    files = {"spec.json": result.spec.dumps(), "repro.py": repro, "kernel.py": rendered.source,
             "reduce.json": json.dumps(summary, indent=1), "reduce.log": "\n".join(result.log) + "\n"}
    dest = corpus.write_reduced(finding.signature, "spec", files)
    check = subprocess.run([sys.executable, str(dest / "repro.py")] + (["--interpret"] if backend == "interpret"
                                                                        else []),
                           capture_output=True, text=True, timeout=args.compile_timeout * 3 + 60)
    summary["repro_exit"] = check.returncode  # 1: the reduced repro is still wrong
    summary["output"] = str(dest)
    if check.returncode == EXIT_PRESENT:  # findings whose reduced kernels have this shape are this bug
        summary["finding"], summary["folded"] = regroup(corpus, finding.signature, summary["shape"])
        if summary["folded"]:
            dest = corpus.path(summary["finding"]) / ("reduced" if summary["finding"] == finding.signature else
                                                      f"aliases/{finding.signature}/reduced") / "spec"
            summary["output"] = str(dest)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{finding.signature}: kernel body {before} -> {rendered.body_lines} lines in {result.seconds} s "
              f"({result.tests} runs); shape {summary['shape']}; repro exit {check.returncode}\n"
              f"  {summary['output']}/repro.py")
        if summary.get("folded"):
            print(f"  one bug: {', '.join(summary['folded'])} folded into {summary['finding']} (same reduced shape; "
                  "the old ids are its aliases)")
    return 0 if check.returncode == EXIT_PRESENT else 1


def _reduce_spec(args, corpus, finding):
    """Spec level: shrink the first example's spec, compiling every candidate in the isolated worker pool."""
    import time

    from gfxhound.fuzz.render import launch_options, render
    from gfxhound.fuzz.repro import render_repro
    from gfxhound.oracle.judge import defects, judge_compile
    from gfxhound.oracle.pool import CompilePool
    from gfxhound.reduce.spec_level import reduce_spec

    from gfxhound.signature import MEMORY_MODEL_STAGE
    static = finding.stage == MEMORY_MODEL_STAGE  # found by compiling: reduced by compiling, like a crash
    example = corpus.example_dirs(finding.signature)[0]
    spec, caps, run = _load_example(example)
    if spec.collective and not static:
        raise UserError(f"finding {finding.signature} is a collective's {finding.verdict}: collectives are not "
                        "reduced yet; its repro.py is the standalone reproducer (docs/collectives.md)")
    if finding.verdict == "miscompile" and not static:
        return _reduce_miscompile(args, corpus, finding)
    if finding.verdict not in ("ice", "timeout") and not static:
        raise UserError(f"finding {finding.signature} is a {finding.verdict}: spec-level reduction handles compiler "
                        "crashes, hangs and wrong results so far")
    arch, toolchain = run["target"], run["toolchain"]
    lld = _default_lld()
    env = {"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"), "PYTHONWARNINGS": "ignore"}
    if lld:
        env["TRITON_HIP_LLD_PATH"] = lld
    pool = CompilePool(max(1, args.jobs), args.compile_timeout, env)
    last = {}

    def interesting(candidate):
        task, future = pool.submit(candidate.to_json(), caps.to_json(), arch)
        execution = judge_compile(pool.outcome(task, future), candidate.spec_hash(), arch, toolchain,
                                  launch_options(candidate))
        pool.discard(task)
        if finding.signature in execution.signatures:  # a memory-model defect among the kernel's others
            last[candidate.spec_hash()] = next(e for e in defects(execution) if e.signature == finding.signature)
            return True
        return False

    try:
        if not interesting(spec):
            raise UserError(f"the example of {finding.signature} does not fail the same way with this Triton; "
                            f"run gfxhound reduce under the release that found it ({toolchain})")
        before = render(spec, caps).body_lines
        result = reduce_spec(spec, interesting, deadline_s=args.timeout, caps=caps, jobs=max(1, args.jobs),
                             on_progress=lambda st: print(f"  {st.tests} tests, {st.accepted} kept: "
                                                          f"{render(st.spec, caps).body_lines} lines",
                                                          file=sys.stderr))
    finally:
        pool.close()
    rendered = render(result.spec, caps)
    execution = last[result.spec.spec_hash()]
    checker = None
    if static:  # the repro runs the memory-model check on what it compiles
        import inspect

        from gfxhound.oracle import memory_model
        checker = inspect.getsource(memory_model)
    repro = render_repro(rendered, arch, execution.to_json(), toolchain, result.spec.spec_hash(),
                         timeout_s=int(args.compile_timeout * 2), lld=lld or "/usr/lib/llvm-22/bin/ld.lld",
                         memory_model_src=checker)
    summary = {"level": "spec", "signature": finding.signature, "body_lines_before": before,
               "body_lines_after": rendered.body_lines, "tests": result.tests, "accepted": result.accepted,
               "seconds": result.seconds, "interrupted": result.interrupted, "toolchain": toolchain,
               "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    files = {"spec.json": result.spec.dumps(), "repro.py": repro, "kernel.py": rendered.source,
             "reduce.json": json.dumps(summary, indent=1), "reduce.log": "\n".join(result.log) + "\n"}
    dest = corpus.write_reduced(finding.signature, "spec", files)
    check = subprocess.run([sys.executable, str(dest / "repro.py")], capture_output=True, text=True,
                           timeout=args.compile_timeout * 3 + 60)
    summary["repro_exit"] = check.returncode  # 1: the reduced repro shows the same signature
    summary["output"] = str(dest)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{finding.signature}: kernel body {before} -> {rendered.body_lines} lines in {result.seconds} s "
              f"({result.tests} compiles); repro exit {check.returncode}\n  {dest}/repro.py")
    return 0 if check.returncode == EXIT_PRESENT else 1


def build_parser():
    parser = argparse.ArgumentParser(prog="gfxhound", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    fuzz = sub.add_parser("fuzz", help="run a fuzz campaign")
    fuzz.add_argument("--target", default="gfx942", help="comma-separated AMD archs, e.g. gfx942,gfx950")
    fuzz.add_argument("--backend", default="compile", choices=["compile", "interpret", "device"])
    from gfxhound.oracle.planted import PLANTS
    fuzz.add_argument("--plant", choices=sorted(PLANTS), default=None,
                      help="run a planted bug's kernel family instead of the generator (mutation testing of the "
                           "oracle); nothing is recorded in the corpus")
    fuzz.add_argument("--family", default="kernels", choices=["kernels", "collectives"],
                      help="what to generate: single-rank kernels, or multi-rank communication patterns")
    fuzz.add_argument("--patterns", default="", help="collectives: comma-separated pattern names (default: all)")
    fuzz.add_argument("--controls", type=float, default=0.0,
                      help="collectives: share of negative controls (barrier or ordering removed: sensitivity "
                           "checks of the oracle, counted apart, never findings)")
    fuzz.add_argument("--budget", default="2m", help="duration (10m, 90s) or kernel count (5000)")
    fuzz.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    fuzz.add_argument("--seed", type=int, default=0)
    fuzz.add_argument("--shard", default="0/1", help="I/N: this machine's share of a campaign over N machines "
                      "(disjoint seeds; merge the corpora afterwards with 'gfxhound corpus merge')")
    fuzz.add_argument("--corpus", default="corpus")
    fuzz.add_argument("--timeout", type=float, default=60.0, help="seconds per compile before it is a timeout")
    fuzz.add_argument("--max-ops", type=int, default=24)
    fuzz.add_argument("--llc", default="off",
                      help="also run `llc -verify-machineinstrs` on every kernel's LLVM IR: off, auto (Debian's "
                           "llc-22), or a path; an llc that cannot parse the IR is skipped, never a finding")
    fuzz.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    fuzz.add_argument("--quiet", action="store_true")
    fuzz.set_defaults(func=cmd_fuzz)
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
    reduce = sub.add_parser("reduce", help="reduce a finding to a minimal repro (spec level for compiler crashes, "
                                           "LLVM IR level for llc failures, --level ir for TTIR/TTGIR), or a "
                                           "script of your own (--script FILE --expect REGEX)")
    reduce.add_argument("id", nargs="?", help="the finding (a prefix of its signature)")
    reduce.add_argument("--script", help="reduce this Python script instead of a finding (C-Vise on a copy; the "
                                         "result is written next to it as NAME.reduced.py)")
    reduce.add_argument("--expect", help="with --script: a regular expression the script's output must keep "
                                         "matching")
    reduce.add_argument("--python", help="with --script: the Python that runs it (default: this one)")
    reduce.add_argument("--corpus", default="corpus")
    reduce.add_argument("--llc", help="the llc that shows the failure (default: Debian's llvm-22)")
    reduce.add_argument("--llvm-reduce", dest="llvm_reduce", help="llvm-reduce to use (default: Debian's llvm-22)")
    reduce.add_argument("--level", choices=("auto", "spec", "ir"), default="auto",
                        help="spec: shrink the kernel; ir: the IR the failing stage consumed (TTIR/TTGIR through "
                             "triton.compile and C-Vise, LLVM IR through llvm-reduce); auto: LLVM IR for llc "
                             "failures, spec otherwise")
    reduce.add_argument("--cvise", help="C-Vise to use for TTIR/TTGIR (default: the one on PATH)")
    from gfxhound.oracle.planted import PLANTS as _PLANTS
    reduce.add_argument("--plant", choices=sorted(_PLANTS), default=None,
                        help="a wrong result: apply this planted bug to every candidate (tests the reducer)")
    reduce.add_argument("-j", "--jobs", type=int, default=2)
    reduce.add_argument("--timeout", type=float, default=1800, help="stop reducing after this many seconds, "
                        "keeping the best result")
    reduce.add_argument("--compile-timeout", dest="compile_timeout", type=float, default=120,
                        help="spec level: seconds a candidate's compile may take")
    reduce.add_argument("--json", action="store_true")
    reduce.set_defaults(func=cmd_reduce)
    bis = sub.add_parser("bisect", help="since when does a finding (or your repro) fail: Triton releases, llc "
                                        "versions, or commits built from source")
    from gfxhound.bisect_cli import add_arguments, cmd_bisect
    add_arguments(bis)
    bis.set_defaults(func=cmd_bisect)
    from gfxhound.report_cli import add_nightly, add_perf, add_report, add_verify
    add_report(sub)
    add_verify(sub)
    add_perf(sub)
    add_nightly(sub)
    return parser


def main(argv=None):
    from gfxhound.campaign import CampaignError
    from gfxhound.corpus_store import CorpusError
    from gfxhound.spec import SpecError
    args = build_parser().parse_args(argv)
    from gfxhound.stacks import dump_stacks_on_sigusr1
    dump_stacks_on_sigusr1()
    try:
        return args.func(args)
    except (UserError, CampaignError, CorpusError, SpecError) as exc:
        print(f"gfxhound: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gfxhound: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`gfxhound corpus list | head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
