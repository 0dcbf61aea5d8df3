"""`gfxhound perf`: compile time and resources of a fixed kernel set (measure), two toolchains' figures compared
(compare), and the set itself (make-set). Each action is a subcommand with only its own options."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import UserError, check_python, default_lld, positive
from .jsonout import emit
from .options import json_option

SET_HELP = "the kernel set: a directory of specs/*.json and caps.json"


def add_perf(sub):
    perf = sub.add_parser("perf", help="compile time and resources of a fixed kernel set, on two toolchains",
                          description="Measure a kernel set on a toolchain, compare two toolchains' figures, or "
                                      "make a set.")
    actions = perf.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_measure(actions)
    _add_compare(actions)
    _add_make_set(actions)


def _add_measure(actions):
    p = actions.add_parser("measure", help="compile every kernel of the set and record its time and resources")
    p.add_argument("--set", default="corpus/perfset", metavar="DIR", help=SET_HELP)
    p.add_argument("--python", default=sys.executable, metavar="PY",
                   help="the interpreter whose Triton to measure")
    p.add_argument("--target", help="compile for this arch instead of the set's")
    p.add_argument("--repeat", type=positive(int), default=3, help="compiles of each kernel (the median counts)")
    p.add_argument("--out", metavar="FILE", help="also write the figures here (JSON, what compare reads)")
    json_option(p, "perf-measure", "the figures")
    p.set_defaults(func=cmd_measure)


def _add_compare(actions):
    p = actions.add_parser("compare", help="regressions of NEW against OLD; exit 1 when there is any")
    p.add_argument("old", metavar="OLD", help="the older toolchain's figures (a `perf measure --out` file)")
    p.add_argument("new", metavar="NEW", help="the newer toolchain's figures")
    json_option(p, "perf-compare", "the regressions")
    p.set_defaults(func=cmd_compare)


def _add_make_set(actions):
    p = actions.add_parser("make-set", help="generate a kernel set that every named interpreter compiles")
    p.add_argument("--caps", required=True, metavar="FILE",
                   help="the capabilities to render with (the oldest toolchain's caps.json)")
    p.add_argument("--set", default="corpus/perfset", metavar="DIR",
                   help=SET_HELP + "; replaced whole (its README.md is kept)")
    p.add_argument("--count", type=positive(int), default=16, help="kernels in the set")
    p.add_argument("--seed", type=int, default=0, help="the generator's seed (the same seed, the same set)")
    p.add_argument("--python", default=sys.executable, metavar="PY",
                   help="an interpreter that must compile each kernel")
    p.add_argument("--with-python", dest="with_python", action="append", default=[], metavar="PY",
                   help="keep only kernels this interpreter compiles too (repeat for each)")
    p.set_defaults(func=cmd_make_set)


def _env():
    return {"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {}


def _perf_errors():
    """What the perf module raises for a user's input, as one line."""
    from gfxhound.report import perf
    return perf.PerfError, FileNotFoundError, ValueError


def cmd_measure(args):
    from gfxhound.report import perf
    python = check_python(args.python)
    if not Path(args.set).is_dir():
        raise UserError(f"--set {args.set}: no such kernel set (a directory with specs/ and caps.json)")
    try:
        result = perf.measure(python, perf.render_set(Path(args.set), args.target), args.repeat, env=_env())
    except _perf_errors() as exc:
        raise UserError(str(exc).splitlines()[0]) from None
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        emit("perf-measure", result)
    else:
        print(perf.summary(result))
    return 0


def cmd_make_set(args):
    from gfxhound.report import perf
    pythons = [check_python(args.python)] + [check_python(p, "--with-python") for p in args.with_python]
    try:
        kept = perf.make_set(Path(args.caps), Path(args.set), args.count, args.seed, pythons,
                             log=lambda line: print(line, file=sys.stderr), env=_env())
    except _perf_errors() as exc:
        raise UserError(str(exc).splitlines()[0]) from None
    print(f"{len(kept)} kernels in {args.set}")
    return 0


def _figures(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UserError(f"perf compare: {path}: no such file") from None
    except ValueError as exc:
        raise UserError(f"perf compare: {path} is not JSON ({exc})") from None
    if not (isinstance(data, dict) and isinstance(data.get("kernels"), dict)):
        raise UserError(f"perf compare: {path} is not a `gfxhound perf measure --out` result")
    return data


def cmd_compare(args):
    from gfxhound.report import perf
    old, new = _figures(args.old), _figures(args.new)
    found = perf.compare(old, new)
    if args.json:
        emit("perf-compare", {"old": old.get("toolchain"), "new": new.get("toolchain"), "regressions": found,
                              "newly_failing": perf.newly_failing(old, new)})
    else:
        for r in found:
            print(f"{r['kernel']} {r['metric']}: {r['old']} -> {r['new']} (+{r['growth']:.0%})")
        print(f"{old.get('toolchain')} -> {new.get('toolchain')}: {len(found)} regressions")
    return 1 if found else 0
