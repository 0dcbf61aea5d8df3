"""A finding's reduction from start to corpus: pick the layer, run the reducer, write the result, check its repro.

Why here and not in the CLI: `gfxhound reduce`, the nightly and the tests all reduce findings, and a reduction's
record (reduce.json, the checked repro, the regrouping of a wrong result by its reduced shape) must be the same
whoever asks. The CLI builds the Settings from argv and the environment and prints the Outcome.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from gfxhound import procgroup
from gfxhound.corpus_store.layout import COMMAND_FILE, REDUCE_LOG, REDUCE_RECORD, REDUCED_LL, reduction_files
from gfxhound.protocol import EXIT_PRESENT
from gfxhound.signature import MEMORY_MODEL_STAGE

from .llvm_ir import ReduceError
from .mlir import INPUT_FOR_STAGE

SPEC_VERDICTS = ("ice", "unsupported", "timeout", "miscompile")  # what spec-level reduction handles (and any memory-model finding)
REDUCIBLE_FAMILIES = ("kernels",)  # a collective's repro.py is its standalone reproducer (docs/collectives.md)
# stages whose failure is in Triton's code generator: LLVM IR reduced through that code generator (--level ir)
CODEGEN_STAGES = ("amdgcn", MEMORY_MODEL_STAGE)


def _stderr(line):
    print(line, file=sys.stderr)


@dataclass
class Settings:
    """What a reduction may use: built once by the CLI from argv and the environment."""
    env: dict  # the environment of compile and run workers (fp fusion default, ld.lld, warnings off)
    jobs: int = 2
    timeout: float = 1800  # the whole reduction, keeping the best result so far
    compile_timeout: float = 120  # one candidate
    llc: str | None = None
    llvm_reduce: str = "llvm-reduce"
    cvise: str = "cvise"
    plant: str | None = None  # a planted bug applied to every candidate (tests the reducer)
    log: object = field(default=_stderr)


@dataclass
class Outcome:
    summary: dict  # what --json prints
    lines: list  # what a person reads
    ok: bool  # the reduced repro still shows the bug


def reduce_finding(corpus, finding, level: str, settings: Settings) -> Outcome:
    """`level`: auto (LLVM IR for llc failures, the spec otherwise), spec, or ir (the IR the failing stage read)."""
    if level == "ir" and finding.stage in INPUT_FOR_STAGE:
        return reduce_triton_ir(corpus, finding, settings)
    if level == "ir" and finding.stage in CODEGEN_STAGES:
        return reduce_through_codegen(corpus, finding, settings)
    if level == "ir" and finding.stage != "llc-verify":
        raise ReduceError(f"IR-level reduction handles failures in stages ttgir and llir (TTIR/TTGIR files), "
                          f"amdgcn, memory-model and llc-verify (LLVM IR) so far; {finding.signature} failed in "
                          f"stage {finding.stage}: use --level spec")
    if finding.stage == "llc-verify" and level != "spec":
        return reduce_llvm_ir(corpus, finding, settings)
    example = corpus.examples(finding.signature)[0]
    if example.spec.get("user") and finding.verdict == "ice":  # a kernel file: its source is what shrinks
        from .user_source import reduce_user_compile
        summary, lines = reduce_user_compile(corpus, finding, example, settings)
        return Outcome(summary, lines, True)
    return reduce_spec_finding(corpus, finding, settings)


def _example_with(corpus, finding, ir_name: str):
    example = next((e for e in corpus.examples(finding.signature) if e.ir(ir_name).exists()), None)
    if example is None:
        raise ReduceError(f"finding {finding.signature} has no example with ir/{ir_name} to reduce")
    return example


def _loaded(example):
    """The spec, capabilities and run record of one corpus example (what every reduction starts from)."""
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.spec import KernelSpec
    return KernelSpec.from_json(example.spec), Capabilities.from_json(example.caps), example.run


def reduce_llvm_ir(corpus, finding, settings: Settings) -> Outcome:
    """llc's failure: llvm-reduce on the example's kernel.llir, the test being the same signature from llc."""
    from .llvm_ir import reduce_ir, signature_property
    example = _example_with(corpus, finding, "kernel.llir")
    run = example.run
    if settings.llc is None:
        raise ReduceError("no llc found: install Debian's llvm-22 or pass --llc PATH")
    prop = signature_property(finding.signature, run["target"], settings.llc,
                              bool(run.get("options_applied", {}).get("enable_fp_fusion", True)))
    with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-") as tmp:
        result = reduce_ir(example.ir("kernel.llir"), prop, Path(tmp), llvm_reduce=settings.llvm_reduce,
                           jobs=settings.jobs, timeout_s=settings.timeout, log=settings.log)
        files = {name: (Path(tmp) / name).read_bytes() for name in (REDUCED_LL, REDUCE_RECORD, REDUCE_LOG)}
        files[COMMAND_FILE] = " ".join(result.command) + "\n"
        dest = corpus.write_reduced(finding.signature, "llvm-ir", files)
    return Outcome(dict(result.to_json(), output=str(dest)), [
        f"{finding.signature}: LLVM IR {result.lines_before} -> {result.lines_after} lines through "
        f"{result.codegen['name']}, signature kept, in {result.seconds} s", f"  {dest / REDUCED_LL}",
        f"  (cd {dest} && {' '.join(result.command)})"], True)


def reduce_through_codegen(corpus, finding, settings: Settings) -> Outcome:
    """A crash in Triton's code generator (stage amdgcn) or a memory-model defect in the code it made: llvm-reduce
    on the example's kernel.llir through that code generator (the finding's Triton, which must be this
    interpreter's: 3.9's pinned AMD code generator, or an older release's bundled LLVM), the identity kept."""
    import shlex

    from gfxhound.codegen import CodegenError, triton_codegen
    from .localise import LAYERS
    from .through import crash_property, memory_model_property, reduce_through
    example = _example_with(corpus, finding, "kernel.llir")
    run = example.run
    options = dict(run.get("options_requested", {}), **run.get("options_applied", {}))
    try:
        codegen = triton_codegen(sys.executable, run["target"], bool(options.get("enable_fp_fusion", True)),
                                 str(options.get("schedule_hint", "none")), timeout=settings.compile_timeout)
    except CodegenError as exc:
        raise ReduceError(str(exc)) from None
    if f"triton-{codegen.version}" != run["toolchain"]:
        raise ReduceError(f"{finding.signature} was found with {run['toolchain']} and this interpreter has "
                          f"triton {codegen.version}: reduce it with that release's code generator (e.g. "
                          f".venv-{run['toolchain']}/bin/gfxhound reduce {finding.signature[:8]} --level ir)")
    if finding.stage == MEMORY_MODEL_STAGE:
        prop = memory_model_property(codegen, finding.normalised, settings.compile_timeout)
    else:
        prop = crash_property(codegen, finding.verdict, finding.stage, finding.normalised,
                              timeout=settings.compile_timeout)
    with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-") as tmp:
        result = reduce_through(example.ir("kernel.llir"), prop, Path(tmp), llvm_reduce=settings.llvm_reduce,
                                jobs=settings.jobs, timeout_s=settings.timeout, log=settings.log)
        summary = dict(result.to_json(), signature=finding.signature, layer=codegen.layer,
                       layer_text=LAYERS[codegen.layer])
        files = {name: (Path(tmp) / name).read_bytes() for name in (REDUCED_LL, REDUCE_LOG)}
        files.update({REDUCE_RECORD: json.dumps(summary, indent=1), COMMAND_FILE: shlex.join(result.command) + "\n"})
        dest = corpus.write_reduced(finding.signature, "llvm-ir", files)
    summary["output"] = str(dest)
    kept = finding.normalised if finding.stage == MEMORY_MODEL_STAGE else "the first crash line"
    return Outcome(summary, [
        f"{finding.signature}: LLVM IR {result.lines_before} -> {result.lines_after} lines through {codegen.name}, "
        f"{kept} kept, in {result.seconds} s", f"  {dest / REDUCED_LL}", f"  (cd {dest} && sh {COMMAND_FILE})"]
        + ([f"  note: {result.note}"] if result.note else []), True)


def reduce_triton_ir(corpus, finding, settings: Settings) -> Outcome:
    """TTIR/TTGIR level: C-Vise on the IR the failing stage consumed, compiled by the installed Triton."""
    from gfxhound.fuzz.render import render

    from .localise import LAYERS, has_amd_codegen, localise
    from .mlir import failure_property, reduce_mlir
    name = INPUT_FOR_STAGE[finding.stage]
    example = _example_with(corpus, finding, name)
    spec, caps, run = _loaded(example)
    rendered = render(spec, caps)
    layer = localise(finding.stage, run.get("message", ""), has_amd_codegen())
    prop = failure_property(finding.signature, run["target"], rendered.options, rendered.env, run["toolchain"],
                            timeout=settings.compile_timeout)
    with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-") as tmp:
        result = reduce_mlir(example.ir(name), prop, Path(tmp), cvise=settings.cvise, jobs=settings.jobs,
                             timeout_s=settings.timeout, log=settings.log)
        ext = result.level
        summary = dict(result.to_json(), layer=layer, layer_text=LAYERS[layer], signature=finding.signature)
        files = {n: (Path(tmp) / n).read_bytes() for n in (f"reduced.{ext}", "command.py", REDUCE_LOG,
                                                           "passes.json")}
        files.update({REDUCE_RECORD: json.dumps(summary, indent=1), COMMAND_FILE: " ".join(result.command) + "\n"})
        dest = corpus.write_reduced(finding.signature, ext, files)
    summary["output"] = str(dest)
    return Outcome(summary, [
        f"{finding.signature}: {ext.upper()} {result.lines_before} -> {result.lines_after} lines, signature kept, "
        f"in {result.seconds} s; layer: {LAYERS[layer]}", f"  {dest}/reduced.{ext}",
        f"  (cd {dest} && sh {COMMAND_FILE})"], True)


class _SpecTest:
    """The predicate of a spec-level reduction, and the judged execution of every candidate it accepted."""

    def __init__(self, finding, caps, run, settings):
        from gfxhound.oracle.pool import CompilePool
        self.finding, self.caps, self.arch, self.toolchain = finding, caps, run["target"], run["toolchain"]
        self.backend = "compile"
        self.device_kind = ""
        self.kept = {}
        static = finding.stage == MEMORY_MODEL_STAGE  # found by compiling: reduced by compiling, like a crash
        if finding.verdict == "miscompile" and not static:
            self.backend = run.get("backend", "interpret")
            env = dict(settings.env)
            if self.backend == "interpret":
                env["TRITON_INTERPRET"] = "1"
            elif self.backend == "emulate":
                self.device_kind = "hip"  # the reference's tolerance table: the AMD hardware's
            else:
                self.device_kind = _device_kind()
            on_cpu = self.backend in ("interpret", "emulate")
            self.jobs = max(1, settings.jobs) if on_cpu else 1  # a GPU fault must be seen alone
            self.pool = CompilePool(self.jobs, settings.compile_timeout, env, warm=("gfxhound.oracle.run_task",),
                                    backend=self.backend)
            from .miscompile import ExecutionTest
            self._run = ExecutionTest(self.pool, caps.to_json(), self.arch, self.backend, self.toolchain,
                                      plant=settings.plant, device_kind=self.device_kind)
        else:
            self.jobs = max(1, settings.jobs)
            self.pool = CompilePool(self.jobs, settings.compile_timeout, settings.env)

    def __call__(self, candidate) -> bool:
        if self.backend != "compile":
            execution = self._run.judge(candidate)
            if execution.verdict == "miscompile":
                self.kept[candidate.spec_hash()] = execution
                return True
            return False
        from gfxhound.fuzz.render import launch_options
        from gfxhound.oracle.judge import defects, judge_compile
        task, future = self.pool.submit(candidate.to_json(), self.caps.to_json(), self.arch)
        execution = judge_compile(self.pool.outcome(task, future), candidate.spec_hash(), self.arch, self.toolchain,
                                  launch_options(candidate))
        self.pool.discard(task)
        if self.finding.signature in execution.signatures:  # a memory-model defect among the kernel's others
            self.kept[candidate.spec_hash()] = next(e for e in defects(execution)
                                                    if e.signature == self.finding.signature)
            return True
        return False


def _device_kind():
    try:
        import torch
    except ImportError:
        raise ReduceError("this wrong result was found on a GPU: reducing it needs torch and a GPU") from None
    if not torch.cuda.is_available():
        raise ReduceError("this wrong result was found on a GPU: run gfxhound reduce on a machine with one")
    return "hip" if getattr(torch.version, "hip", None) else "cuda"


def reduce_spec_finding(corpus, finding, settings: Settings) -> Outcome:
    """Spec level: shrink the first example's spec, each candidate compiled (a crash, a hang, a memory-model
    defect) or run and judged by the oracle (a wrong result) in the isolated worker pool, the signature kept."""
    from gfxhound.fuzz.render import render
    from gfxhound.oracle.planted import mutate_source
    from gfxhound.oracle.repro import write_repro

    from .regroup import regroup, shape_of
    from .spec_level import reduce_spec
    static = finding.stage == MEMORY_MODEL_STAGE
    spec, caps, run = _loaded(corpus.examples(finding.signature)[0])
    if spec.family not in REDUCIBLE_FAMILIES and not static:
        if spec.family == "user":
            raise ReduceError(f"finding {finding.signature} is a {finding.verdict} in a kernel file "
                              f"({spec.user['fn']}): gfxhound reduces a kernel file's compiler crashes only (its "
                              "source, with C-Vise); its repro.py replays the one launch (docs/user-kernels.md)")
        raise ReduceError(f"finding {finding.signature} is a collective's {finding.verdict}: collectives are not "
                          "reduced yet; its repro.py is the standalone reproducer (docs/collectives.md)")
    if finding.verdict not in SPEC_VERDICTS and not static:
        raise ReduceError(f"finding {finding.signature} is a {finding.verdict}: spec-level reduction handles "
                          "compiler crashes, hangs and wrong results so far")
    test = _SpecTest(finding, caps, run, settings)
    wrong_result = test.backend != "compile"
    try:
        if not test(spec):
            where = {"device": "machine", "emulate": "CPU executor"}.get(test.backend, "interpreter") \
                if wrong_result else "Triton"
            raise ReduceError(
                f"the example of {finding.signature} does not fail the same way with this {where}; run gfxhound "
                f"reduce where it was found ({run['toolchain']}, {run['target']})" + (
                    "; a finding recorded before gfxhound's input data changed (2026-11-23, oracle/inputs.data_key)"
                    " may need its own data: its repro.py embeds them" if wrong_result else ""))
        before = render(spec, caps).body_lines
        noun = "runs" if wrong_result else "tests"
        result = reduce_spec(spec, test, deadline_s=settings.timeout, caps=caps, jobs=test.jobs,
                             on_progress=lambda st: settings.log(f"  {st.tests} {noun}, {st.accepted} kept: "
                                                                 f"{render(st.spec, caps).body_lines} lines"))
    finally:
        test.pool.close()
    rendered = render(result.spec, caps)
    if settings.plant:
        rendered.source = mutate_source(settings.plant, rendered.source)
    execution = test.kept[result.spec.spec_hash()]
    repro = write_repro(execution, result.spec, rendered, caps, backend=test.backend, toolchain=run["toolchain"],
                        timeout_s=int(settings.compile_timeout * 2),
                        lld=settings.env.get("TRITON_HIP_LLD_PATH") or "/usr/lib/llvm-22/bin/ld.lld",
                        device_kind=test.device_kind)
    summary = {"level": "spec", "signature": finding.signature}
    if wrong_result:
        summary.update({"verdict": "miscompile", "backend": test.backend,
                        "regrouped_signature": execution.signature,  # the reduced kernel's own (provisional) id
                        "shape": shape_of(result.spec, caps, run["target"]),  # what regroups it with its bug's kin
                        "message": execution.message.splitlines()[0][:300] if execution.message else ""})
    summary.update({"body_lines_before": before, "body_lines_after": rendered.body_lines, "tests": result.tests,
                    "accepted": result.accepted, "seconds": result.seconds, "interrupted": result.interrupted,
                    "toolchain": run["toolchain"], "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    files = reduction_files(summary, "\n".join(result.log) + "\n", spec=result.spec.dumps(), repro=repro,
                            kernel=rendered.source)
    reduction = corpus.reduction(finding.signature, "spec")
    dest = corpus.write_reduced(finding.signature, "spec", files)
    check = procgroup.run([sys.executable, str(reduction.repro)] + (  # the repro's --child dies with it
        ["--interpret"] if test.backend == "interpret" else []), capture_output=True, text=True,
        timeout=settings.compile_timeout * 3 + 60)
    summary["repro_exit"] = check.returncode  # 1: the reduced repro still shows the bug
    summary["output"] = str(dest)
    lines = [f"{finding.signature}: kernel body {before} -> {rendered.body_lines} lines in {result.seconds} s "
             f"({result.tests} {'runs' if wrong_result else 'compiles'}); "
             + (f"shape {summary['shape']}; " if wrong_result else "") + f"repro exit {check.returncode}"]
    if wrong_result and check.returncode == EXIT_PRESENT:  # findings whose reduced kernels have this shape are one
        summary["finding"], summary["folded"] = regroup(corpus, finding.signature, summary["shape"])
        if summary["folded"]:
            moved = corpus.reduction(summary["finding"], "spec") if summary["finding"] == finding.signature else \
                corpus.alias_reduction(summary["finding"], finding.signature, "spec")
            summary["output"] = str(moved.dir)
    lines.append(f"  {Path(summary['output']) / reduction.repro.name}")
    if summary.get("folded"):
        lines.append(f"  one bug: {', '.join(summary['folded'])} folded into {summary['finding']} (same reduced "
                     "shape; the old ids are its aliases)")
    return Outcome(summary, lines, check.returncode == EXIT_PRESENT)
