"""`gfxhound casts`: the conversion table (oracle/cast_table.py) on the targets named, findings into the corpus."""
from __future__ import annotations

import argparse
import sys

from .output import progress
from .common import KNOWN_ARCHS, UserError, check_python, need_module, need_triton, positive
from .jsonout import emit
from .options import corpus_option, json_option


def add_casts(sub):
    p = sub.add_parser("casts", help="check every float constant and fp8 conversion, code by code, against the "
                                     "exact format tables (compile only: no GPU needed)")
    p.add_argument("--target", default="gfx942", help="comma-separated AMD archs")
    p.add_argument("--python", default=sys.executable, metavar="PY",
                   help="the interpreter whose Triton is tested (a venv's)")
    corpus_option(p, "where findings go (created if it does not exist)")
    p.add_argument("--values", default="16", type=_values, metavar="N|all",
                   help="values per conversion, spread over the range, both signs (16: about 1,000 probes "
                        "a target); 'all': every code, midpoint and quarter point (about 22,000 a target)")
    p.add_argument("--sources", default="fp32,fp16,bf16", help="comma-separated source types of the conversions")
    p.add_argument("--formats", default="fp8e5,fp8e4nv,fp8e5b16,fp8e4b8", help="comma-separated fp8 formats")
    p.add_argument("--roundings", default="rtne,rtz", help="comma-separated rounding modes")
    p.add_argument("--no-constants", action="store_true", help="conversions only (no float constants)")
    p.add_argument("--jobs", type=positive(int), default=1, help="compile processes at once")
    json_option(p, "casts", "the summary")
    p.set_defaults(func=run_casts)


def _values(text: str):
    """'all', or a count of at least 2 (both ends of the range)."""
    if text == "all":
        return text
    try:
        return positive(int, least=2)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"--values takes a number of at least 2, or 'all' (got {text!r})") from None


def _names(text: str, allowed, what: str) -> tuple:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UserError(f"unknown {what} {', '.join(bad) or '(none given)'}; choose from {', '.join(allowed)}")
    return names


def _chosen(args):
    """The probes the options name (a typo is one line before anything compiles)."""
    from gfxhound.oracle.cast_table import FP8, ROUNDINGS, SOURCES, probes
    archs = _names(args.target, KNOWN_ARCHS, "target")
    chosen = probes(_names(args.sources, SOURCES, "source type"), _names(args.formats, FP8, "fp8 format"),
                    _names(args.roundings, ROUNDINGS, "rounding"), constants=not args.no_constants,
                    limit=None if args.values == "all" else args.values)
    return archs, chosen


def run_casts(args) -> int:
    python = check_python(args.python)
    need_module("torch", "gfxhound casts needs torch for the exact format tables and expected codes: "
                         "pip install torch==2.13.0 (a CPU build is enough)")
    archs, chosen = _chosen(args)
    need_triton(python, "--python")
    from gfxhound.corpus_store import Corpus
    from gfxhound.oracle.cast_findings import record, summary
    from gfxhound.oracle.cast_sweep import run_table
    corpus = Corpus(args.corpus)
    table = run_table(chosen, list(archs), python, jobs=args.jobs, progress=progress("probes"))
    if not table.version:
        raise UserError(f"{args.python} could not compile a probe (is Triton installed there?); see "
                        f"`{args.python} -c 'import triton'`")
    toolchain = f"triton-{table.version}"
    found = record(corpus, table, toolchain)
    info = summary(table)
    info["findings"] = [{"id": f.signature, "new": new, "what": f.normalised} for f, new in found]
    if args.json:
        emit("casts", dict(info, targets=list(archs), probes=len(table.results)))
        return 0
    _print(info, toolchain, archs, len(table.results))
    return 0


def _print(info, toolchain, archs, probes):
    counts = info["counts"]
    print(f"{toolchain} on {', '.join(archs)}: {probes} probes: " +
          ", ".join(f"{counts.get(k, 0)} {k}" for k in ("pass", "wrong", "unfolded", "unsupported", "crash")))
    print("  (unfolded: a hardware conversion, cannot test here; unsupported: refused with a diagnostic)")
    for what, row in sorted(info["conversions"].items()):
        if row["wrong"]:
            print(f"  WRONG {what}: {row['wrong']} of {sum(row[k] for k in ('pass', 'wrong'))} judged, on "
                  f"{', '.join(row['targets_wrong'])}; e.g. {row['first_wrong']}")
    for line, whats in info["crashes"].items():
        print(f"  crash ({len(whats)} conversions, e.g. {whats[0]}): {line}")
    for f in info["findings"]:
        print(f"  finding {f['id']} ({'new' if f['new'] else 'known'}): {f['what']}")
