"""A campaign's reach: the share of the reach matrix's supported cells (fuzz/reach_cells.py: which op on which
layout the AMD backend lowers, per target) that its kernels reached, and each unreached cell with the floor that
guards it or the reason nothing can reach it.

Why from the coverage table: a compile campaign already counts what the compiler made of each kernel
(`detail:ttgir:OP@LAYOUT`, oracle/ttgir_features.py, also per target as `detail:ttgir:gfx942:OP@LAYOUT`), so the
matrix costs nothing at run time and can be read from any summary a campaign wrote (`gfxhound fuzz --json`):

    python -m gfxhound.fuzz.reach SUMMARY.json [--json]

A summary from before the per-target keys reports cells as reached on every target that reached them on any
(`per_target: false`).
"""
from __future__ import annotations

import argparse
import json
import sys

from .floors import FLOORS
from .reach_cells import MATRIX_CORE, OPS, VERSION, cells

__all__ = ["MATRIX_CORE", "report", "text"]

PREFIX = "detail:ttgir:"


def _floors_by_key():
    out = {}
    for name, (features, *_rest) in FLOORS.items():
        for f in features:
            if f.startswith(PREFIX):
                op, _, layout = f[len(PREFIX):].partition("@")
                out.setdefault((op.split(":")[0], layout), name)
    return out


def targets_of(coverage: dict) -> list:
    return sorted(k.split(":", 1)[1] for k in coverage if k.startswith("target:")
                  and k.split(":", 1)[1] in MATRIX_CORE)


def report(coverage: dict, targets=None) -> dict:
    """{version, per_target, supported, reached, share, unreached: [...], refused: [...]} from a summary's coverage
    table ({feature: {"kernels": n, ...}} or {feature: n}); `targets`: those the campaign compiled for (default:
    the table's `target:` features)."""
    kernels_of = lambda k: (coverage.get(k) or {}).get("kernels", 0) if isinstance(coverage.get(k), dict) \
        else coverage.get(k, 0)  # noqa: E731
    targets = list(targets or targets_of(coverage))
    per_target = any(k.startswith(f"{PREFIX}{t}:") for t in targets for k in coverage)
    floors = _floors_by_key()
    supported, reached, unreached, refused, seen = 0, 0, [], [], {}
    for target in targets:
        for op, layout, status, why in cells(target):
            names = OPS[op]
            keys = [f"{PREFIX}{target}:{n}@{layout}" if per_target else f"{PREFIX}{n}@{layout}" for n in names]
            hits = sum(kernels_of(k) for k in keys)
            cell = {"target": target, "op": op, "layout": layout, "ttgir": [f"{n}@{layout}" for n in names]}
            if status != "lowered":
                refused.append(dict(cell, status=status, why=why, kernels=hits))
                continue
            supported += 1
            if hits:
                reached += 1
                seen.setdefault((op, layout), []).append(target)
                continue
            floor = next((floors[(n, layout)] for n in names if (n, layout) in floors), None)
            unreached.append(dict(cell, floor=floor, why=why or ("no floor guards it" if not floor else "")))
    for cell in unreached:   # the compiler picks the layout per target: say where this campaign did reach it
        elsewhere = seen.get((cell["op"], cell["layout"]))
        if elsewhere and not cell["floor"]:
            cell["why"] = (f"reached on {', '.join(elsewhere)} in this campaign, not on {cell['target']}: the compiler "
                           "chose this layout there; no generator feature asks for it directly")
    return {"version": VERSION, "targets": targets, "per_target": per_target, "supported": supported,
            "reached": reached, "share": round(reached / supported, 4) if supported else 0.0,
            "unreached": unreached, "refused": refused}


def text(rep: dict, refused: bool = True) -> str:
    """The report as lines a person reads: the share, then each unreached and (`refused`) each refused cell, the
    targets that share it on one line."""
    lines = [f"reach matrix (Triton {rep['version']} lowering, {', '.join(rep['targets']) or 'no AMD target'}): "
             f"{rep['reached']} of {rep['supported']} supported cells reached ({rep['share']:.1%})"
             + ("" if rep["per_target"] else " [summary without per-target keys: any target counts]")]
    for title, rows in (("unreached", rep["unreached"]), ("not lowered", rep["refused"] if refused else [])):
        grouped = {}
        for cell in rows:
            grouped.setdefault((cell["op"], cell["layout"]), []).append(cell)
        for (op, layout), group in grouped.items():
            cell = group[0]
            why = (f"floor: {cell['floor']}" if cell.get("floor") else cell["why"]) if title == "unreached" else \
                f"{cell['status']}: {cell['why']}" + (" (yet kernels show it!)" if any(c["kernels"] for c in group)
                                                     else "")
            lines.append(f"  {title:11s} {op:12s} @ {layout:16s} {','.join(c['target'] for c in group):15s} {why}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gfxhound.fuzz.reach", description=__doc__.split("\n\n")[0])
    parser.add_argument("summary", help="a campaign's JSON summary (gfxhound fuzz --json > FILE)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        with open(args.summary) as fh:
            summary = json.load(fh)
        coverage = summary["coverage"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"gfxhound: cannot read a campaign summary from {args.summary}: {exc}", file=sys.stderr)
        return 2
    rep = report(coverage, [t for t in summary.get("targets", []) if t in MATRIX_CORE] or None)
    print(json.dumps(rep, indent=1) if args.json else text(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
