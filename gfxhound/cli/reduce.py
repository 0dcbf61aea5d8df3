"""gfxhound reduce: a finding at the spec, TTIR/TTGIR or LLVM IR level, or a script of your own."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

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
    from gfxhound.corpus_store import Corpus
    from gfxhound.reduce.llvm_ir import ReduceError
    from gfxhound.reduce.workflow import Settings, reduce_finding

    if args.script:
        return _reduce_script(args)
    if not args.id:
        raise UserError("name a finding to reduce (gfxhound corpus list), or pass --script FILE --expect REGEX")
    corpus = Corpus(args.corpus)
    finding = corpus.get(args.id)
    lld = default_lld()
    env = {"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"), "PYTHONWARNINGS": "ignore"}
    if lld:
        env["TRITON_HIP_LLD_PATH"] = lld
        os.environ.setdefault("TRITON_HIP_LLD_PATH", lld)  # TTIR/TTGIR candidates compile with this environment
    settings = Settings(
        env=env, jobs=args.jobs, timeout=args.timeout, compile_timeout=args.compile_timeout, plant=args.plant,
        llc=args.llc or next((p for p in ("/usr/lib/llvm-22/bin/llc", shutil.which("llc")) if p and Path(p).exists()),
                             None),
        llvm_reduce=args.llvm_reduce or next((p for p in ("/usr/lib/llvm-22/bin/llvm-reduce",
                                                          shutil.which("llvm-reduce")) if p and Path(p).exists()),
                                             "llvm-reduce"),
        cvise=args.cvise or shutil.which("cvise") or "cvise")
    try:
        outcome = reduce_finding(corpus, finding, args.level, settings)
    except ReduceError as exc:
        raise UserError(str(exc)) from None
    print(json.dumps(outcome.summary, indent=1) if args.json else "\n".join(outcome.lines))
    return 0 if outcome.ok else 1


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
