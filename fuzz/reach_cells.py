"""The reach matrix as data (issue #38): which (op, layout, target) cells Triton's AMD backend lowers, and for each
cell it does not, why, with the source that says so. Policy as data, like fuzz/floors.py: fuzz/reach.py reads it to
report how much of it a campaign reached; a Triton release that lowers more (or less) is an edit here.

How it was derived (Triton 3.9.0, the release gfxhound's .venv holds; paths are in triton-lang/triton):
- what lowers: third_party/amd/lib/TritonAMDGPUToLLVM/TritonGPUToLLVM.cpp registers the shared patterns of
  lib/Conversion/TritonGPUToLLVM (populateReduceOpToLLVMPatterns, populateScanOpToLLVMPatterns,
  populateViewOpToLLVMPatterns: expand_dims/broadcast/reshape/trans/join/split, populateHistogramOpToLLVMPatterns,
  populateGatherOpToLLVMPatterns, populateConvertLayoutOpToLLVMPatterns, elementwise) next to the AMD ones
  (LoadStoreOpToLLVM.cpp: loads, stores, atomics and buffer ops; DotOpToLLVM/MFMA.cpp, WMMA.cpp, FMA.cpp;
  MemoryOpToLLVM.cpp: local_alloc/local_load). The shared patterns go through linear layouts, so they take every
  distributed encoding (blocked, slice, linear, the MMA layouts, dot operands) unless they check for one: a cell
  is listed where the op can carry that layout in TTGIR at all (ranks and producers below), and lowered unless a
  pattern refuses it.
- what is refused: `tt.scan` on anything but a blocked layout. lib/Analysis/Utility.cpp,
  ScanLoweringHelper::isSupported ("TODO: Support ... Scan on non-blocking encodings": `isa<BlockedEncodingAttr>`);
  lib/Conversion/TritonGPUToLLVM/ScanOpToLLVM.cpp, emitFastScan, fails with "TODO: unsupported scan layout".
  Checked on 3.9.0: TTGIR with a scan on #amd_mfma fails in ConvertTritonAMDGPUToLLVM with that message
  (tests/fuzz/test_reach.py), and a scan of a dot result is compiled as convert_layout mfma->blocked + scan@blocked.
  Line numbers move between releases; the function names and messages above are what to search for.
- never produced: layouts an op cannot carry by construction (MMA layouts are rank >= 2, so a 1-D op such as
  tt.histogram never has one; a split's source needs its size-2 last dimension inside one thread, which an MMA
  result never has), or that the TritonGPU passes never give it (a tl.gather stays on its own blocked layout; the
  coalescing pass puts every atomic, and every store but those the AMD epilogue pass moves onto an MMA layout, on
  a blocked one).

`MMA` in a layout stands for the target's matrix-core layout (MATRIX_CORE): CDNA's MFMA, RDNA's WMMA. The CDNA
cells were checked against 3.9.0 campaigns on gfx942/gfx950; the RDNA ones are the same reading, not yet measured.
"""
from __future__ import annotations

VERSION = "3.9.0"
MATRIX_CORE = {"gfx90a": "mfma", "gfx942": "mfma", "gfx950": "mfma",
               "gfx1100": "wmma", "gfx1200": "wmma", "gfx1201": "wmma", "gfx1250": "wmma"}

SHARED = "lib/Conversion/TritonGPUToLLVM/"
AMD = "third_party/amd/lib/TritonAMDGPUToLLVM/"
SCAN_REFUSED = ("unsupported", "ScanLoweringHelper::isSupported takes blocked encodings only (lib/Analysis/Utility.cpp); "
                f"ScanOpToLLVM.cpp emitFastScan: 'TODO: unsupported scan layout' ({SHARED}ScanOpToLLVM.cpp, "
                f"Triton {VERSION}; tests/fuzz/test_reach.py compiles it); a scan of such a value is compiled as "
                "convert_layout to blocked + scan@blocked")
GATHER_ANCHORED = ("never", "tl.gather compiles to a tt.gather on a blocked layout of its own: TritonGPU's layout "
                   "passes (lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp, OptimizeThreadLocality.cpp;"
                   " GatherOp has EfficientLayoutOpInterface) keep it there, and an MMA operand (a dot result, or a "
                   f"gather feeding a dot's accumulator) is converted to blocked first (Triton {VERSION}, measured: "
                   "tests/fuzz/test_reach_index.py); only TTGIR or Gluon written by hand puts it on another layout")

COALESCED = ("lib/Dialect/TritonGPU/Transforms/Coalesce.cpp gives every load, store and atomic whose pointer is a "
             "tensor a blocked layout (getMemAccessPtr in lib/Dialect/TritonGPU/Transforms/Utility.cpp names "
             "LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp)")
ATOMIC_ANCHORED = ("never", COALESCED + "; RemoveLayoutConversions.cpp's isLayoutAnchor returns true for AtomicRMWOp "
                   "and AtomicCASOp, so no later pass moves an atomic off it: a dot result or its slice is converted "
                   f"to blocked first (Triton {VERSION}, measured: tests/fuzz/test_reach.py)")
STORE_ON_SLICE = ("never", COALESCED + "; of the passes after it only the AMD epilogue pass moves a store "
                  "(third_party/amd/lib/TritonAMDGPUTransforms/OptimizeEpilogue.cpp, BypassEpilogueSMEM: onto the "
                  "layout a convert_layout came from, an MMA one), and a store has no result for "
                  "RemoveLayoutConversions to rematerialise: a reduction's slice is converted to blocked before "
                  f"it is stored (Triton {VERSION}, measured: tests/fuzz/test_reach.py)")

# op (the TTGIR op names that count for it: a pointer load may become amdg.buffer_load) -> where it lowers
OPS = {
    "reduce": ("tt.reduce",),
    "scan": ("tt.scan",),
    "expand_dims": ("tt.expand_dims",),
    "broadcast": ("tt.broadcast",),
    "reshape": ("tt.reshape",),
    "trans": ("tt.trans",),
    "join": ("tt.join",),
    "split": ("tt.split",),
    "histogram": ("tt.histogram",),
    "gather": ("tt.gather",),
    "atomic": ("tt.atomic_rmw", "amdg.buffer_atomic_rmw"),
    "load": ("tt.load", "amdg.buffer_load"),
    "store": ("tt.store", "amdg.buffer_store"),
    "elementwise": ("arith",),
    "math": ("math",),
    "dot": ("tt.dot",),
    "local_alloc": ("ttg.local_alloc",),
    "local_load": ("ttg.local_load",),
    "for_carried": ("scf.for",),
    "if_yield": ("scf.if",),
}

# op -> {layout: "lowered" | (status, why)}; status: "unsupported" (a pattern refuses it) or "never" (the op cannot
# carry the layout); where: the pattern that lowers it, for review
CELLS = {
    "reduce": {"where": SHARED + "ReduceOpToLLVM.cpp",
               "blocked": "lowered", "slice(blocked)": "lowered", "linear": "lowered", "MMA": "lowered",
               "slice(MMA)": "lowered"},
    "scan": {"where": SHARED + "ScanOpToLLVM.cpp",
             "blocked": "lowered", "slice(blocked)": SCAN_REFUSED, "linear": SCAN_REFUSED, "MMA": SCAN_REFUSED,
             "slice(MMA)": SCAN_REFUSED},
    "expand_dims": {"where": SHARED + "ViewOpToLLVM.cpp (ExpandDimsOpConversion)",
                    "blocked": "lowered", "slice(blocked)": "lowered", "linear": "lowered",
                    "slice(linear)": "lowered", "MMA": "lowered", "slice(MMA)": "lowered"},
    "broadcast": {"where": SHARED + "ViewOpToLLVM.cpp (BroadcastOpConversion)",
                  "blocked": "lowered", "linear": "lowered", "MMA": "lowered"},
    "reshape": {"where": SHARED + "ViewOpToLLVM.cpp (ReshapeOpConversion)",
                "blocked": "lowered", "linear": "lowered", "MMA": "lowered", "dot_op(MMA)": "lowered",
                "slice(blocked)": "lowered", "slice(MMA)": "lowered"},
    "trans": {"where": SHARED + "ViewOpToLLVM.cpp (TransOpConversion)",
              "blocked": "lowered", "linear": "lowered", "MMA": "lowered", "dot_op(MMA)": "lowered"},
    "join": {"where": SHARED + "ViewOpToLLVM.cpp (JoinOpConversion)",
             "blocked": "lowered", "linear": "lowered", "MMA": "lowered"},
    "split": {"where": SHARED + "ViewOpToLLVM.cpp (SplitOpConversion)",
              "blocked": "lowered", "linear": "lowered",
              "MMA": ("never", "a split's source holds its size-2 last dimension in one thread; an MMA result's last "
                      "dimension spans the instruction's N lanes (SplitOp verifier, lib/Dialect/Triton/IR/Ops.cpp)")},
    # slice(MMA): a histogram of a dot result's reduction (an argmax along one axis) is lowered on the slice itself
    "histogram": {"where": SHARED + "HistogramOpToLLVM.cpp",
                  "blocked": "lowered", "slice(blocked)": "lowered", "slice(MMA)": "lowered",
                  "MMA": ("never", "tt.histogram takes a 1-D tensor; MMA layouts are rank >= 2")},
    "gather": {"where": SHARED + "GatherOpToLLVM.cpp",
               "blocked": "lowered", "linear": GATHER_ANCHORED, "MMA": GATHER_ANCHORED},
    "atomic": {"where": AMD + "LoadStoreOpToLLVM.cpp (AtomicRMWOpConversion, BufferAtomicRMWOpConversion)",
               "blocked": "lowered", "slice(blocked)": ATOMIC_ANCHORED, "linear": ATOMIC_ANCHORED,
               "MMA": ATOMIC_ANCHORED, "slice(MMA)": ATOMIC_ANCHORED},
    "load": {"where": AMD + "LoadStoreOpToLLVM.cpp (LoadOpConversion, BufferLoadOpConversion)",
             "blocked": "lowered", "slice(blocked)": "lowered", "linear": "lowered", "MMA": "lowered",
             "slice(MMA)": "lowered"},
    "store": {"where": AMD + "LoadStoreOpToLLVM.cpp (StoreOpConversion, BufferStoreOpConversion)",
              "blocked": "lowered", "slice(blocked)": STORE_ON_SLICE, "linear": "lowered", "MMA": "lowered",
              "slice(MMA)": STORE_ON_SLICE},
    "elementwise": {"where": AMD + "ElementwiseOpToLLVM.cpp, " + SHARED + "ElementwiseOpToLLVM.cpp",
                    "blocked": "lowered", "slice(blocked)": "lowered", "linear": "lowered", "slice(linear)": "lowered",
                    "MMA": "lowered", "slice(MMA)": "lowered", "dot_op(MMA)": "lowered"},
    "math": {"where": AMD + "ElementwiseOpToLLVM.cpp",
             "blocked": "lowered", "slice(blocked)": "lowered", "MMA": "lowered", "slice(MMA)": "lowered"},
    "dot": {"where": AMD + "DotOpToLLVM/MFMA.cpp, WMMA.cpp, FMA.cpp",
            "MMA": "lowered", "dot_op(MMA)": "lowered", "blocked": "lowered", "dot_op(blocked)": "lowered"},
    "local_alloc": {"where": AMD + "MemoryOpToLLVM.cpp, " + SHARED + "MemoryOpToLLVM.cpp",
                    "blocked": "lowered", "linear": "lowered", "MMA": "lowered", "shared": "lowered"},
    "local_load": {"where": AMD + "MemoryOpToLLVM.cpp, " + SHARED + "MemoryOpToLLVM.cpp",
                   "dot_op(MMA)": "lowered", "blocked": "lowered", "linear": "lowered", "shared": "lowered"},
    "for_carried": {"where": "scf.for results: converted with the TTGIR type converter (every encoding)",
                    "blocked": "lowered", "slice(blocked)": "lowered", "MMA": "lowered", "slice(MMA)": "lowered",
                    "shared": "lowered"},
    "if_yield": {"where": "scf.if results: converted with the TTGIR type converter (every encoding)",
                 "blocked": "lowered", "slice(blocked)": "lowered", "MMA": "lowered", "slice(MMA)": "lowered"},
}


def cells(target: str):
    """[(op, layout, status, why)] for one target; layout with its matrix-core kind filled in, status "lowered"
    (a supported cell: the matrix's share counts these), "unsupported" or "never"."""
    core = MATRIX_CORE.get(target)
    out = []
    for op, layouts in CELLS.items():
        for layout, entry in layouts.items():
            if layout == "where" or ("MMA" in layout and core is None):
                continue
            status, why = (entry, "") if isinstance(entry, str) else entry
            out.append((op, layout.replace("MMA", core or "?"), status, why))
    return out
