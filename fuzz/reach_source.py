"""The reach matrix's refusals read from a Triton source tree (issue #38): each cell fuzz/reach_cells.py does not
call `lowered`, and each op's lowering, rests on a fact of Triton's source; this script finds every fact in a
checkout and prints where it stands (file:line), so a release's matrix is derived from that release's source, and
a fact a release no longer has turns its cells back into supported ones.

    python -m gfxhound.fuzz.reach_source TRITON_SRC [--json]

Why regular expressions over the C++ rather than a build: the facts are a function's few lines (which encodings
ScanLoweringHelper::isSupported takes, which ops isLayoutAnchor pins, which patterns the AMD backend registers),
their names are stable across releases while line numbers move, and a checkout is all a user needs. A fact the
expression does not find is reported as missing, never assumed: the derived matrix then lists the cell as
supported (`lowered`), the safe side for a coverage goal (an unreachable supported cell shows as unreached).

Exit status: 0 when every fact behind reach_cells.py was found, 1 when some are missing (the matrix is stale for
that source), 2 when TRITON_SRC is not a Triton source tree.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .reach_cells import CELLS, VERSION

__all__ = ["FACTS", "REASONS", "REGISTERED", "derive", "find", "main"]

AMD_TO_LLVM = "third_party/amd/lib/TritonAMDGPUToLLVM/TritonGPUToLLVM.cpp"
TTG = "lib/Dialect/TritonGPU/Transforms/"


@dataclass(frozen=True)
class Fact:
    path: str        # relative to the source root
    pattern: str     # a regular expression over the file's text; the fact's line is where its match ends
    says: str        # what it shows, in words


FACTS = {
    "scan-blocked-only": Fact("lib/Analysis/Utility.cpp",
                              r"ScanLoweringHelper::isSupported\(\)\s*\{[^}]*?isa<[\w:]*BlockedEncodingAttr>",
                              "ScanLoweringHelper::isSupported takes blocked encodings only"),
    "memory-ops-coalesced": Fact(TTG + "Utility.cpp",
                                 r"Value getMemAccessPtr\(Operation \*op\)\s*\{(?=[^}]*LoadOp)(?=[^}]*StoreOp)"
                                 r"[^}]*AtomicRMWOp",
                                 "getMemAccessPtr names loads, stores and atomics (the ops Coalesce.cpp gives a "
                                 "blocked layout)"),
    "coalesce-uses-it": Fact(TTG + "Coalesce.cpp", r"getMemAccessPtr\(",
                             "the coalescing pass sets a blocked layout on each op getMemAccessPtr names"),
    "atomic-anchored": Fact(TTG + "RemoveLayoutConversions.cpp",
                            r"bool isLayoutAnchor\(Operation \*op\)\s*\{[\s\S]{0,600}?AtomicRMWOp",
                            "isLayoutAnchor pins atomics to their layout"),
    "store-moved-to-mma-only": Fact("third_party/amd/lib/TritonAMDGPUTransforms/OptimizeEpilogue.cpp",
                                    r"class BypassEpilogueSMEM",
                                    "the AMD epilogue pass moves a store onto the MMA layout a conversion came from"),
    "gather-anchored": Fact(TTG + "RemoveLayoutConversions.cpp",
                            r"dyn_cast<GatherOp>\(op\)[\s\S]{0,120}?getEfficientLayout",
                            "isLayoutAnchor pins a gather with an efficient layout (its own blocked one)"),
    "split-in-thread": Fact("lib/Dialect/TritonGPU/IR/Dialect.cpp", r"inferSplitOpEncoding",
                            "a split's source layout holds its size-2 last dimension in one thread"),
}

# (op, layout in reach_cells' spelling) -> the facts its refusal rests on; a refusal not listed rests on a rank
# argument (an MMA layout is rank >= 2), which no source line changes
REASONS = {("scan", layout): ("scan-blocked-only",) for layout in ("slice(blocked)", "linear", "MMA", "slice(MMA)")}
REASONS.update({("atomic", layout): ("memory-ops-coalesced", "coalesce-uses-it", "atomic-anchored")
                for layout in ("slice(blocked)", "linear", "MMA", "slice(MMA)")})
REASONS.update({("store", layout): ("memory-ops-coalesced", "coalesce-uses-it", "store-moved-to-mma-only")
                for layout in ("slice(blocked)", "slice(MMA)")})
REASONS.update({("gather", layout): ("gather-anchored",) for layout in ("linear", "MMA")})
REASONS[("split", "MMA")] = ("split-in-thread",)

# op -> the pattern group the AMD backend's conversion registers for it (AMD_TO_LLVM); ops converted before it
# (scf.for, scf.if: the TTGIR type converter) have none
REGISTERED = {"reduce": "ReduceOp", "scan": "ScanOp", "expand_dims": "ViewOp", "broadcast": "ViewOp",
              "reshape": "ViewOp", "trans": "ViewOp", "join": "ViewOp", "split": "ViewOp",
              "histogram": "HistogramOp", "gather": "GatherOp", "atomic": "LoadStoreOp", "load": "LoadStoreOp",
              "store": "LoadStoreOp", "elementwise": "ElementwiseOp", "math": "ElementwiseOp", "dot": "DotOp",
              "local_alloc": "MemoryOp", "local_load": "MemoryOp"}


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def find(root: Path) -> dict:
    """key -> {path, line, says} or None (not found), for every fact and for each pattern group
    ("registered:NAME") the AMD backend's conversion registers."""
    out = {}
    for key, fact in FACTS.items():
        path = root / fact.path
        text = path.read_text(errors="replace") if path.is_file() else ""
        m = re.search(fact.pattern, text)
        out[key] = {"path": fact.path, "line": _line(text, m.end()), "says": fact.says} if m else None
    path = root / AMD_TO_LLVM
    text = path.read_text(errors="replace") if path.is_file() else ""
    for group in sorted(set(REGISTERED.values())):
        # called (populateScanOpToLLVMPatterns(...)) or passed (populatePatterns7(mlir::triton::populateScanOp...,))
        m = re.search(rf"\bpopulate{group}(?:ToLLVM)?Patterns?\b", text)
        out[f"registered:{group}"] = {"path": AMD_TO_LLVM, "line": _line(text, m.start()),
                                      "says": f"the AMD conversion registers the {group} patterns"} if m else None
    return out


def derive(found: dict) -> list:
    """[{op, layout, status, reason, facts, stale}] for every cell of reach_cells.CELLS, its status as this source
    has it: a refusal whose facts are all found stands (cited file:line); one with a missing fact is `lowered`
    and `stale` (reach_cells.py says otherwise); a lowered cell of an op whose pattern group is not registered is
    `unsupported` and stale."""
    rows = []
    for op, layouts in CELLS.items():
        group = REGISTERED.get(op)
        registered = group is None or found.get(f"registered:{group}") is not None
        for layout, entry in layouts.items():
            if layout == "where":
                continue
            status = entry if isinstance(entry, str) else entry[0]
            keys = REASONS.get((op, layout), ())
            missing = [k for k in keys if found.get(k) is None]
            cites = [f"{found[k]['path']}:{found[k]['line']}" for k in keys if found.get(k)]
            row = {"op": op, "layout": layout, "facts": list(keys), "cites": cites, "stale": False,
                   "status": status}
            if status != "lowered" and missing:
                row.update(status="lowered", stale=True, reason=f"missing here: {', '.join(missing)}")
            elif status == "lowered" and not registered:
                row.update(status="unsupported", stale=True,
                           reason=f"no populate{group}ToLLVMPatterns in {AMD_TO_LLVM}")
            else:
                row["reason"] = "; ".join(FACTS[k].says for k in keys) if keys else (
                    "" if status == "lowered" else "by construction (rank)")
            rows.append(row)
    return rows


def text(found: dict, rows: list, root) -> str:
    lines = [f"reach matrix facts in {root} (reach_cells.py was read from Triton {VERSION})"]
    for key, where in found.items():
        lines.append(f"  {'found  ' if where else 'MISSING'} {key:28s} " +
                     (f"{where['path']}:{where['line']}" if where else ""))
    stale = [r for r in rows if r["stale"]]
    lines.append(f"{len(rows) - len(stale)} of {len(rows)} cells as reach_cells.py has them; stale here:"
                 if stale else f"all {len(rows)} cells as reach_cells.py has them")
    lines += [f"  {r['op']:12s} @ {r['layout']:16s} -> {r['status']}: {r['reason']}" for r in stale]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gfxhound.fuzz.reach_source", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a Triton source tree (a checkout of the release to read)")
    parser.add_argument("--json", action="store_true", help="print the facts and the derived cells as JSON")
    args = parser.parse_args(argv)
    root = Path(args.source)
    if not (root / "lib").is_dir() or not (root / "third_party" / "amd").is_dir():
        print(f"gfxhound: {root} is not a Triton source tree (no lib/ and third_party/amd/): give a checkout",
              file=sys.stderr)
        return 2
    found = find(root)
    rows = derive(found)
    print(json.dumps({"facts": found, "cells": rows}, indent=1) if args.json else text(found, rows, root))
    return 1 if any(v is None for v in found.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
