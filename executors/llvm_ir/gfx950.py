"""gfx950 (CDNA4) intrinsics that Triton's AMD backend emits and earlier targets lack: a table `GFX950` (name ->
compiler `(ins, args, kernel) -> fn(ex)`, the shape of intrinsics.AMDGPU), merged into AMDGPU by intrinsics.py.

Why a module of its own: these are the CDNA4 additions a gfx950 campaign met unresolved, each with its semantics
from AMD's CDNA4 ISA guide and its operand order from LLVM's intrinsic signature, kept apart from the
intrinsics every target shares. An intrinsic met on another target is NotModelled: the guide cited is CDNA4's.

Sources (cited below by tag):
  [CDNA4]  AMD Instinct CDNA4 Instruction Set Architecture reference guide (gfx950), the instruction's pseudocode
           (as extracted into tinygrad 0.14.0's tinygrad/runtime/autogen/amd/cdna/str_pcode.py):
           V_PERMLANE32_SWAP_B32: "for lane in 0 : 31 do / tmp = VGPR[lane][SRC0.u32]; /
           VGPR[lane][SRC0.u32] = VGPR[lane + 32][VDST.u32]; / VGPR[lane + 32][VDST.u32] = tmp / endfor".
           V_PERMLANE16_SWAP_B32: "for pass in 0 : 1 do / for lane in 0 : 15 do / tmp =
           VGPR[pass * 32 + lane][SRC0.u32]; / VGPR[pass * 32 + lane][SRC0.u32] =
           VGPR[pass * 32 + lane + 16][VDST.u32]; / VGPR[pass * 32 + lane + 16][VDST.u32] = tmp".
  [SIG]    The intrinsics' signature: llvm.amdgcn.permlane{16,32}.swap(i32 vdst_old, i32 src0_old, i1 fi,
           i1 bound_ctrl) -> {i32 vdst_new, i32 src0_new} ("The first element of the return corresponds to the
           swapped element of the first argument", Rust core::arch::amdgpu::permlane32_swap, which binds
           llvm.amdgcn.permlane32.swap; MLIR's rocdl.permlane16.swap `(i32, i32) -> <(i32, i32)>`).

  [TR]     The guide's section 11.4, "MFMA Transpose Load from LDS" (quoted in its words by its readers; the
           pseudocode table has no entry): DS_READ_B64_TR_B16 "Read N bits of data per lane from data share.
           Interpret the data as a matrix with 16 bit elements and transpose the matrix." "Two instructions load a
           complete matrix. The first loads K=0..3 and K=8..11 into two VGPRs, and the next loads K=4..7 and
           12..15. Each lane (one VGPR) holds 4 consecutive M or N values." "Prior to executing these
           instructions the EXEC mask must be set to all 1's."

ds.read.tr{4,6,8,16}.b64/.b96 follow decision 47 (docs/amdgcn-pcode.md): the data of 16 lanes, in lane order, is
the matrix, E elements to a lane (E = 64 or 96 bits / element bits) and 16 to a row; lane i receives its column i.
For B16 that gives each lane 4 K values of one M (or N), and lanes 0-15 of the 32x32 A operand K=0..3, as [TR]
says; for B8 it is two 8x8 byte transposes, interleaved over even and odd lanes. Which lane's load supplies which
element [TR] leaves open: the reading is the guide's words taken literally, and a gfx950 Triton dot checks it
(tests/oracle/test_emulate_gfx950.py: the lane-swapped reading disagrees with torch). A wave with EXEC not all ones
is NotModelled ([TR]: the result is not defined).

The fp8/bf8 forms of cvt.scalef32.pk.* (Triton's every fp8 cast on gfx950, scale 1.0) are convert.py's, wired by
cvt_calls.py (SCALEF32_CALLS): with the scale 2^0 scaling is the identity; another scale is NotModelled, because
the guide's pseudocode calls helpers (fp8_to_f32_scale(src, scale.u8), f32_to_fp8_scale, ...) whose definitions
(rounding, saturation, the scale's NaN/255 case) it does not give. The fp4/fp6 forms stay unresolved.
"""
from __future__ import annotations

import numpy as np

from . import lanes as L
from .errors import NotModelled
from .access import from_bytes
from .ir import sizeof
from .values import lanes_of

_I32_PAIR = ("s", (("i", 32), ("i", 32)))


def _waves(ex, value):
    """[n] lane array as [workgroups, wave size] (as intrinsics._waves; not imported: intrinsics imports this)."""
    return np.asarray(lanes_of(value, ex.n)).reshape(ex.n // ex.kernel.wave_size, ex.kernel.wave_size)


def _flag(operand, what):
    """An i1 immediate operand (fi, bound_ctrl are ImmArg in [SIG]) as a bool; a lane-varying one is NotModelled."""
    if operand[0] != "c":
        raise NotModelled(f"{what} that is not a constant")
    return bool(int(operand[2] or 0))


def _permlane_swap(fn, name):
    """A compiler for llvm.amdgcn.permlane{16,32}.swap: both old values moved into their waves ([W, 64]), swapped by
    `fn` (lanes.permlane16_swap / permlane32_swap, which follow [CDNA4]'s pseudocode: vdst_new[hi] = src0_old[lo],
    src0_new[lo] = vdst_old[hi] for each lane pair (lo, hi)), and returned as the struct {vdst_new, src0_new} [SIG]
    (a struct value is a tuple of lane arrays, as extractvalue reads it)."""
    def compile_(ins, args, kernel):
        if kernel.arch != "gfx950":
            raise NotModelled(f"{name} on {kernel.arch} (modelled from the CDNA4 guide, gfx950 only)")
        if ins.ty != _I32_PAIR:
            raise NotModelled(f"{name} returning {ins.ty}")
        fi = _flag(ins.ops[2], f"{name} with an fi")
        bound_ctrl = _flag(ins.ops[3], f"{name} with a bound_ctrl")

        def run(ex):
            vdst = _waves(ex, args[0](ex)).astype(np.uint32)
            src0 = _waves(ex, args[1](ex)).astype(np.uint32)
            new_vdst, new_src0 = fn(vdst, src0, fi, bound_ctrl, _waves(ex, ex.mask).astype(bool))
            return np.ascontiguousarray(new_vdst).reshape(ex.n), np.ascontiguousarray(new_src0).reshape(ex.n)
        return run
    return compile_


def transpose_read(raw: np.ndarray, element_bits: int) -> np.ndarray:
    """[TR] on the bytes the lanes of whole waves read ([lanes, nbytes], lanes a multiple of 16): each group of 16
    lanes' data, in lane order, as an E x 16 matrix of `element_bits`-bit elements; lane i gets column i."""
    lanes, nbytes = raw.shape
    per_lane = nbytes * 8 // element_bits
    bits = np.unpackbits(raw, axis=1, bitorder="little").reshape(lanes // 16, per_lane, 16, element_bits)
    moved = bits.transpose(0, 2, 1, 3).reshape(lanes, nbytes * 8)
    return np.packbits(moved, axis=1, bitorder="little")


def _read_tr(element_bits, nbytes, name):
    """A compiler for llvm.amdgcn.ds.read.tr*: the lanes' LDS loads (addresses checked as any load's), moved by
    `transpose_read` (decision 47), returned as the intrinsic's vector type."""
    def compile_(ins, args, kernel):
        if kernel.arch != "gfx950":
            raise NotModelled(f"{name} on {kernel.arch} (modelled from the CDNA4 guide, gfx950 only)")
        if ins.ty[0] != "v" or sizeof(ins.ty) != nbytes:
            raise NotModelled(f"{name} returning {ins.ty}")

        def run(ex):
            waves = _waves(ex, ex.mask).astype(bool)
            live = waves.any(axis=1)
            if not waves[live].all():
                raise NotModelled(f"{name} with EXEC not all ones (the CDNA4 guide requires all lanes)")
            lanes = np.flatnonzero(np.repeat(live, ex.kernel.wave_size))
            addr = lanes_of(args[0](ex), ex.n)[lanes]
            ex.memories.line = ins.line
            raw = ex.memories.load(3, addr, nbytes, lanes)
            return from_bytes(transpose_read(raw, element_bits), ex.n, lanes, ins.ty)
        return run
    return compile_


GFX950 = {
    "llvm.amdgcn.permlane32.swap": _permlane_swap(L.permlane32_swap, "permlane32.swap"),
    "llvm.amdgcn.permlane16.swap": _permlane_swap(L.permlane16_swap, "permlane16.swap"),
    "llvm.amdgcn.ds.read.tr16.b64": _read_tr(16, 8, "ds.read.tr16.b64"),
    "llvm.amdgcn.ds.read.tr8.b64": _read_tr(8, 8, "ds.read.tr8.b64"),
    "llvm.amdgcn.ds.read.tr4.b64": _read_tr(4, 8, "ds.read.tr4.b64"),
    "llvm.amdgcn.ds.read.tr6.b96": _read_tr(6, 12, "ds.read.tr6.b96"),
}
