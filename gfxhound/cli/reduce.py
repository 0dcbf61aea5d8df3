"""gfxhound reduce: a finding at the spec, TTIR/TTGIR or LLVM IR level, or a script of your own."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gfxhound.protocol import EXIT_PRESENT

from .common import UserError, default_lld


def add_reduce(sub):
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
    lld = default_lld()
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
    lld = default_lld()
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
        from gfxhound.oracle.memory_model import standalone_source
        checker = standalone_source()
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
