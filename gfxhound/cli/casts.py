"""`gfxhound casts`: the conversion table (oracle/cast_table.py) on the targets named, findings into the corpus."""
from __future__ import annotations

import json
import sys

from .common import KNOWN_ARCHS, UserError, need_module


def add_casts(sub):
    p = sub.add_parser("casts", help="check every float constant and fp8 conversion, code by code, against the "
                                     "exact format tables (compile only: no GPU needed)")
    p.add_argument("--target", default="gfx942", help="comma-separated AMD archs")
    p.add_argument("--python", default=sys.executable, help="the interpreter whose Triton is tested (a venv's)")
    p.add_argument("--corpus", default="corpus")
    p.add_argument("--values", default="16", metavar="N|all",
                   help="values per conversion, spread over the range, both signs (default 16: about 1,000 probes "
                        "a target); 'all': every code, midpoint and quarter point (about 22,000 a target)")
    p.add_argument("--sources", default="fp32,fp16,bf16")
    p.add_argument("--formats", default="fp8e5,fp8e4nv,fp8e5b16,fp8e4b8")
    p.add_argument("--roundings", default="rtne,rtz")
    p.add_argument("--no-constants", action="store_true", help="conversions only")
    p.add_argument("--jobs", type=int, default=1, help="compile processes at once")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run_casts)


def _names(text: str, allowed, what: str) -> tuple:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UserError(f"unknown {what} {', '.join(bad) or '(none given)'}; choose from {', '.join(allowed)}")
    return names


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 2:
        raise UserError(f"--values takes a number of at least 2, or 'all' (got {text!r})")
    return int(text)


def run_casts(args) -> int:
    need_module("torch", "gfxhound casts needs torch for the exact format tables and expected codes: "
                         "pip install torch==2.13.0 (a CPU build is enough)")
    from gfxhound.corpus_store import Corpus
    from gfxhound.oracle.cast_findings import record, summary
    from gfxhound.oracle.cast_sweep import run_table
    from gfxhound.oracle.cast_table import FP8, ROUNDINGS, SOURCES, probes
    archs = _names(args.target, KNOWN_ARCHS, "target")
    limit = None if args.values == "all" else _count(args.values)
    chosen = probes(_names(args.sources, SOURCES, "source type"), _names(args.formats, FP8, "fp8 format"),
                    _names(args.roundings, ROUNDINGS, "rounding"), constants=not args.no_constants,
                    limit=limit)
    corpus = Corpus(args.corpus)

    def progress(done, total):
        print(f"\r{done}/{total} probes", end="", file=sys.stderr, flush=True)

    table = run_table(chosen, list(archs), args.python, jobs=args.jobs, progress=progress)
    print(file=sys.stderr)
    if not table.version:
        raise UserError(f"{args.python} could not compile a probe (is Triton installed there?); see "
                        f"`{args.python} -c 'import triton'`")
    toolchain = f"triton-{table.version}"
    found = record(corpus, table, toolchain)
    info = summary(table)
    info["findings"] = [{"id": f.signature, "new": new, "what": f.normalised} for f, new in found]
    if args.json:
        print(json.dumps(info, indent=1, default=sorted))
        return 0
    counts = info["counts"]
    print(f"{toolchain} on {', '.join(archs)}: {len(table.results)} probes: " +
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
    return 0
