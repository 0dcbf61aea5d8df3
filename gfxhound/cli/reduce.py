"""gfxhound reduce: a finding at the spec, TTIR/TTGIR or LLVM IR level, or a script of your own."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from pathlib import Path

from .common import FlagsValue, UserError, check_llc, check_python, default_lld, existing_corpus, need_triton, positive
from .jsonout import emit
from .options import corpus_option, json_option


def add_reduce(sub):
    reduce = sub.add_parser("reduce", help="reduce a finding to a minimal repro (spec level for compiler crashes, "
                                           "LLVM IR level for llc failures, --level ir for TTIR/TTGIR), or a "
                                           "script of your own (--script FILE --expect REGEX)")
    reduce.add_argument("id", nargs="?", help="the finding (a prefix of its signature)")
    reduce.add_argument("--ll", help="reduce this LLVM IR file instead of a finding (llvm-reduce on a copy, "
                                     "through the code generator --codegen names); the result goes to --output")
    reduce.add_argument("--codegen", choices=("llc", "triton"), default="llc",
                        help="with --ll: llc (--llc, --llc-args) or the AMD code generator of the Triton that "
                             "--python imports (3.9: compile_amdgpu, the pinned AMD code generator; older: "
                             "translate_to_asm), for --mcpu, called as its make_amdgcn calls it")
    reduce.add_argument("--llc-args", dest="llc_args", action=FlagsValue, metavar="FLAGS",
                        help="with --ll: llc's flags, as typed: --llc-args -mcpu=gfx90a or --llc-args "
                             "\"-mtriple=... -O3\" (default: -mtriple=amdgcn-amd-amdhsa -mcpu=MCPU -O3; "
                             "-mtriple=amdgcn-amd-amdhsa is added when no triple is given)")
    reduce.add_argument("--mcpu", default="gfx942", help="with --ll: the processor")
    reduce.add_argument("--memory-model", dest="memory_model", action="store_true",
                        help="with --ll: keep the first memory-model defect the checker finds in the code (a "
                             "missing wait, writeback or invalidate) instead of a crash")
    reduce.add_argument("--no-fp-fusion", dest="fp_fusion", action="store_false",
                        help="with --ll --codegen triton: compile as Triton does with fp fusion off")
    reduce.add_argument("-o", "--output", help="with --ll: where the reduced IR goes (default: NAME.reduced.ll "
                                               "in the current directory)")
    reduce.add_argument("--script", help="reduce this Python script instead of a finding (C-Vise on a copy; the "
                                         "result is written next to it as NAME.reduced.py)")
    reduce.add_argument("--expect", help="with --script: a regular expression the script's output must keep "
                                         "matching; with --ll: the code generator's diagnostics (or assembly) "
                                         "must (default: the same first crash line)")
    reduce.add_argument("--python", metavar="PY",
                        help="with --script: the Python that runs it; with --ll --codegen triton: the Python whose "
                             "Triton generates code (default: the one running gfxhound)")
    corpus_option(reduce, "the corpus that holds the finding (its reduction is written there)")
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
    reduce.add_argument("-j", "--jobs", type=positive(int), default=2, help="candidates tested at once")
    reduce.add_argument("--timeout", type=positive(float), default=1800, metavar="SECONDS",
                        help="stop reducing after this many seconds, keeping the best result")
    reduce.add_argument("--compile-timeout", dest="compile_timeout", type=positive(float), default=120,
                        metavar="SECONDS", help="seconds a candidate's compile (or run) may take")
    json_option(reduce, "reduce", "the reduction's record")
    reduce.set_defaults(func=cmd_reduce)


def cmd_reduce(args):
    with terminate_as_interrupt():
        return _cmd_reduce(args)


def _cmd_reduce(args):
    from gfxhound.reduce.llvm_ir import ReduceError
    from gfxhound.reduce.workflow import Settings, reduce_finding

    if args.script:
        return _reduce_script(args)
    if args.ll:
        return _reduce_ll(args)
    if not args.id:
        raise UserError("name a finding to reduce (gfxhound corpus list), or pass --ll FILE, or --script FILE "
                        "--expect REGEX")
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    llc = check_llc(args.llc) if args.llc else _default_llc()
    if _compiles_with_triton(finding, args.level):  # else a pool of workers fails, and the reduction says the
        need_triton()                               # finding "does not fail the same way"
    lld = default_lld()
    env = {"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"), "PYTHONWARNINGS": "ignore"}
    if lld:
        env["TRITON_HIP_LLD_PATH"] = lld
        os.environ.setdefault("TRITON_HIP_LLD_PATH", lld)  # TTIR/TTGIR candidates compile with this environment
    settings = Settings(
        env=env, jobs=args.jobs, timeout=args.timeout, compile_timeout=args.compile_timeout, plant=args.plant,
        llc=llc, llvm_reduce=args.llvm_reduce or _default_llvm_reduce(),
        cvise=args.cvise or shutil.which("cvise") or "cvise")
    try:
        outcome = reduce_finding(corpus, finding, args.level, settings)
    except ReduceError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        emit("reduce", outcome.summary)
    else:
        print("\n".join(outcome.lines))
    return 0 if outcome.ok else 1


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM (what `timeout` and a cancelled CI job send) ends a reduction as Ctrl-C does: the reducers keep
    their best result so far on KeyboardInterrupt. Without this a reduction under `timeout` lost all its progress
    (found reducing a device-campaign finding under `timeout 420`). Only the CLI handles signals."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _compiles_with_triton(finding, level: str) -> bool:
    """Every reduction but llc's own failures at the LLVM IR level compiles candidates with this Python's Triton
    (reduce/workflow.py's reduce_finding chooses the same way)."""
    return not (finding.stage == "llc-verify" and level != "spec")


def _reduce_script(args):
    """Source level: a user's script, reduced while its output matches --expect."""
    from gfxhound.reduce.llvm_ir import ReduceError
    from gfxhound.reduce.source import reduce_script

    script = Path(args.script)
    if not script.is_file():
        raise UserError(f"--script {script}: no such file")
    if not args.expect:
        raise UserError("--script needs --expect REGEX: what the script's output must keep showing")
    python = check_python(args.python) if args.python else sys.executable
    try:
        result = reduce_script(script, args.expect, python=python,
                               cvise=args.cvise or shutil.which("cvise") or "cvise", jobs=args.jobs,
                               timeout_s=args.timeout, test_timeout=args.compile_timeout,
                               log=lambda line: print(line, file=sys.stderr))
    except ReduceError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        emit("reduce", result.to_json())
    else:
        print(f"{script}: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s\n  "
              f"{result.output}")
    return 0


def _default_llc():
    return next((p for p in ("/usr/lib/llvm-22/bin/llc", shutil.which("llc")) if p and Path(p).exists()), None)


def _default_llvm_reduce():
    """Debian's llvm-22 llvm-reduce, also for an older llc: it reduces further than llvm-15's (a segfault of llc 15
    went 22 -> 9 lines with it, 22 -> 16 with llvm-15's), and a candidate an old llc cannot read is only "not
    interesting"."""
    return next((p for p in ("/usr/lib/llvm-22/bin/llvm-reduce", shutil.which("llvm-reduce"))
                 if p and Path(p).exists()), "llvm-reduce")


def _reduce_ll(args):
    """LLVM IR of the user's, reduced through the code generator named on the command line."""
    import re
    import shlex
    import tempfile

    from gfxhound.codegen import CodegenError, llc_codegen, triton_codegen
    from gfxhound.reduce.llvm_ir import ReduceError
    from gfxhound.reduce.through import reduce_file

    source = Path(args.ll)
    if not source.is_file():
        raise UserError(f"--ll {source}: no such file")
    if args.expect is not None:
        try:
            if re.search(args.expect, ""):
                raise UserError(f"--expect {args.expect!r} matches empty output: give what the failure prints")
        except re.error as exc:
            raise UserError(f"--expect {args.expect!r} is not a regular expression ({exc})") from None
    output = Path(args.output).absolute() if args.output else Path.cwd() / f"{source.stem}.reduced.ll"
    try:
        if args.codegen == "triton":
            if args.llc_args:
                raise UserError("--llc-args is for --codegen llc; the Triton code generator takes --mcpu")
            python = check_python(args.python) if args.python else sys.executable
            need_triton(python, "--python" if args.python else "")
            codegen = triton_codegen(python, args.mcpu, args.fp_fusion, timeout=args.compile_timeout)
        else:
            llc = check_llc(args.llc) if args.llc else _default_llc()
            if not llc:
                raise UserError("no llc found: install Debian's llvm-22 or pass --llc PATH")
            flags = shlex.split(args.llc_args) if args.llc_args else [f"-mcpu={args.mcpu}", "-O3"]
            codegen = llc_codegen(llc, flags)
        with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-ll-") as tmp:
            result = reduce_file(source, codegen, output, Path(tmp), expect=args.expect,
                                 memory_model=args.memory_model, timeout=args.compile_timeout,
                                 llvm_reduce=args.llvm_reduce or _default_llvm_reduce(),
                                 jobs=args.jobs, timeout_s=args.timeout, log=lambda line: print(line, file=sys.stderr))
    except (ReduceError, CodegenError) as exc:
        raise UserError(str(exc)) from None
    command = codegen.shell(output.name)
    if args.json:
        emit("reduce", dict(result.to_json(), output=str(output), reproduce=command))
        return 0
    kept = result.property.get("expect") or result.property.get("key") or "the first crash line"
    print(f"{source}: {result.lines_before} -> {result.lines_after} lines through {codegen.name} in "
          f"{result.seconds} s, keeping {kept}\n  wrote {output}\n  reproduce: (cd {output.parent} && {command})")
    return 0
