"""Cross-lane operations of an AMDGPU wave over numpy arrays [W, S] (W independent waves of S lanes).

Each function gives the semantics the ISA documents, so that a Triton lowering which moves data between lanes
wrongly shows up as a wrong value; anything the documents leave open raises NotModelled instead of guessing.
Values are bit patterns (any unsigned dtype: the operations only move lanes, so i64 works as well as i32);
`active` is the EXEC mask, bool [W, S]. Lanes a result does not write (EXEC off) keep `old` where the
intrinsic has one and are otherwise whatever the table says; the executor must not read them.

Sources (cited below by tag):
  [CDNA4]  AMD Instinct CDNA4 ISA reference: 12.12 DS_PERMUTE_B32 / DS_BPERMUTE_B32 pseudocode; 12.11
           V_READLANE_B32, V_READFIRSTLANE_B32, V_MBCNT_LO/HI_U32_B32, V_PERMLANE16/32_SWAP_B32; 13.3.9 DPP
           fields (Table 93: BC, BANK_MASK, ROW_MASK) and Table 94 (DPP_CTRL enumeration). CDNA3 is the same.
  [RDNA3]  AMD RDNA3 ISA reference: V_PERMLANE16_B32 / V_PERMLANEX16_B32 pseudocode (OPSEL[0] = FI,
           OPSEL[1] = BOUND_CTRL), DS_BPERMUTE_B32 ("destination lane is MOD 32 regardless of wave size").
  [LLVM]   llvm/lib/Target/AMDGPU/SIDefines.h (namespace DPP, enum DppCtrl); AMDGPUInstPrinter::printDPPCtrl
           (wave_* and row_bcast exist on GFX8/9 only, row_newbcast on GFX90A-class, row_share/row_xmask on
           GFX10+); IntrinsicsAMDGPU.td (update.dpp = v_mov old; v_mov_dpp src; permlane16.swap returns
           {vdst_new, src0_new}, llvm/test/CodeGen/AMDGPU/llvm.amdgcn.permlane16.swap.ll).
  [BC]     bound_ctrl: "BC: 0 = do not write when source is out of range, 1 = write" [CDNA4 Table 93];
           "bound_ctrl:1 ... Accessing data from an invalid lane will return zero" (llvm/docs/
           AMDGPUModifierSyntax.rst); an EXEC-disabled source lane counts as invalid
           (GPUOpen-Drivers/llpc#1782, J. Foad: "if a write to an active lane depends on the value of an
           inactive lane, a zero value will be written, instead of leaving the active lane unchanged").
  [Triton] triton-lang/triton third_party/amd/lib/TritonAMDGPUToLLVM/TargetInfo.cpp emitDppWarpReduce: row_shr
           1..8, row_bcast:15 (row_mask 0xa), row_bcast:31 (row_mask 0xf!), all with bound_ctrl; permlanex16
           (sel -1,-1, fi=1) on GFX10+; permlane32/16.swap on gfx950; AtomicRMWOpsEmitter: row_shl/shr:1..8.
"""
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import NotModelled

ROW = 16  # a DPP row: 16 lanes [CDNA4 Table 93]; a bank: 4 lanes of a row


def arch_major(arch: str) -> int:
    """The GFX generation of an LLVM processor name: gfx942 -> 9, gfx90a -> 9, gfx1100 -> 11."""
    m = re.fullmatch(r"gfx(\d+)([0-9a-f])([0-9a-f])", str(arch).strip().lower())
    if not m:
        raise NotModelled(f"unknown AMDGPU architecture {arch!r}")
    return int(m.group(1))


# GFX9 targets with the GFX90A instructions, which give 0x150-0x15F the meaning row_newbcast [LLVM isGFX90A]
_ROW_NEWBCAST = frozenset({"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"})


def _dpp_family(arch: str) -> str:
    major = arch_major(arch)
    if major == 9:
        return "gfx90a" if str(arch).lower() in _ROW_NEWBCAST else "gfx9"
    if major >= 10:
        return "gfx10+"
    raise NotModelled(f"DPP on {arch} (before GFX9)")


# --- DPP source-lane functions: (lane ids n [S], control parameter k, wave size S) -> (source lane, in range)
def _quad_perm(n, k, s):
    return (n & ~3) | ((k >> (2 * (n & 3))) & 3), np.ones_like(n, bool)


def _row_shl(n, k, s):     # "if ((n&0xf) < (16-cntl)) pix[n] = pix[n+cntl] else use bound_cntl"
    return n + k, (n & 15) + k < ROW


def _row_shr(n, k, s):     # "if ((n&0xf) >= cntl) pix[n] = pix[n-cntl] else use bound_cntl"
    return n - k, (n & 15) >= k


def _row_ror(n, k, s):     # rotate right within the row; never out of range
    return (n & ~15) | (((n & 15) - k) & 15), np.ones_like(n, bool)


def _wave_shl(n, k, s):    # "if (n<63) pix[n] = pix[n+1] else use bound_cntl"
    return n + 1, n < s - 1


def _wave_rol(n, k, s):    # "if (n<63) pix[n] = pix[n+1] else pix[n] = pix[0]"
    return (n + 1) % s, np.ones_like(n, bool)


def _wave_shr(n, k, s):    # "if (n>0) pix[n] = pix[n-1] else use bound_cntl"
    return n - 1, n > 0


def _wave_ror(n, k, s):    # "if (n>0) pix[n] = pix[n-1] else pix[n] = pix[63]"
    return (n - 1) % s, np.ones_like(n, bool)


def _row_mirror(n, k, s):  # "pix[n] = pix[15-(n&f)]" within the row
    return (n & ~15) | (15 - (n & 15)), np.ones_like(n, bool)


def _row_half_mirror(n, k, s):  # "pix[n] = pix[7-(n&7)]" within the half row
    return (n & ~7) | (7 - (n & 7)), np.ones_like(n, bool)


def _row_bcast15(n, k, s):  # "if (n>15) pix[n] = pix[(n & 0x30) - 1]": lane 15 of each row to the next row
    return (n & 0x30) - 1, n > 15


def _row_bcast31(n, k, s):  # "if (n>31) pix[n] = pix[(n & 0x20) - 1]": lane 31 to rows 2 and 3
    return (n & 0x20) - 1, n > 31


def _row_share(n, k, s):   # row_share:k (GFX10+) / row_newbcast:k (GFX90A): "pix[(n & ~0xf) + k]"
    return (n & ~15) | k, np.ones_like(n, bool)


def _row_xmask(n, k, s):   # row_xmask:k (GFX10+): the lane of the row whose index is (n&15) ^ k
    return (n & ~15) | ((n & 15) ^ k), np.ones_like(n, bool)


@dataclass(frozen=True)
class DppControl:
    """One DPP_CTRL encoding range: [first, last] with parameter k = value - base."""
    name: str
    first: int
    last: int
    base: int
    source: Callable
    families: frozenset
    unspecified: bool = False  # lanes out of range here are not defined by the ISA (row_bcast, see below)


_GFX9 = frozenset({"gfx9", "gfx90a"})
_ALL = frozenset({"gfx9", "gfx90a", "gfx10+"})

# [LLVM SIDefines.h DppCtrl] with [CDNA4 Table 94] semantics. row_bcast lanes below the broadcast rows (n <= 15,
# n <= 31) have no documented source: the Table only says "if (n>15)"; they are treated as out of range (the
# reading of gem5's Vega model, src/arch/amdgpu/vega/insts/inst_util.hh dppInstImpl) and reported by
# dpp_unspecified_lanes so an executor that tracks poison can poison them (Triton's row_bcast:31 uses
# row_mask 0xf, so rows 0-1 are written with such values; it reads only lane 63).
DPP_CONTROLS = (
    DppControl("quad_perm", 0x000, 0x0FF, 0x000, _quad_perm, _ALL),
    DppControl("row_shl", 0x101, 0x10F, 0x100, _row_shl, _ALL),
    DppControl("row_shr", 0x111, 0x11F, 0x110, _row_shr, _ALL),
    DppControl("row_ror", 0x121, 0x12F, 0x120, _row_ror, _ALL),
    DppControl("wave_shl:1", 0x130, 0x130, 0x130, _wave_shl, _GFX9),
    DppControl("wave_rol:1", 0x134, 0x134, 0x134, _wave_rol, _GFX9),
    DppControl("wave_shr:1", 0x138, 0x138, 0x138, _wave_shr, _GFX9),
    DppControl("wave_ror:1", 0x13C, 0x13C, 0x13C, _wave_ror, _GFX9),
    DppControl("row_mirror", 0x140, 0x140, 0x140, _row_mirror, _ALL),
    DppControl("row_half_mirror", 0x141, 0x141, 0x141, _row_half_mirror, _ALL),
    DppControl("row_bcast:15", 0x142, 0x142, 0x142, _row_bcast15, _GFX9, unspecified=True),
    DppControl("row_bcast:31", 0x143, 0x143, 0x143, _row_bcast31, _GFX9, unspecified=True),
    DppControl("row_share/row_newbcast", 0x150, 0x15F, 0x150, _row_share, frozenset({"gfx90a", "gfx10+"})),
    DppControl("row_xmask", 0x160, 0x16F, 0x160, _row_xmask, frozenset({"gfx10+"})),
)


def dpp_control(dpp_ctrl: int, arch: str, wave_size: int) -> tuple[DppControl, int]:
    """The table entry for `dpp_ctrl` on `arch` and its parameter; NotModelled for reserved or foreign ones."""
    family = _dpp_family(arch)
    if family in _GFX9 and wave_size != 64:
        raise NotModelled(f"DPP with wave size {wave_size} on {arch} (GFX9 is wave64)")
    if wave_size not in (32, 64):
        raise NotModelled(f"DPP with wave size {wave_size}")
    ctrl = int(dpp_ctrl)
    for entry in DPP_CONTROLS:
        if entry.first <= ctrl <= entry.last:
            if family not in entry.families:
                raise NotModelled(f"DPP control {entry.name} ({ctrl:#x}) does not exist on {arch}")
            return entry, ctrl - entry.base
    raise NotModelled(f"reserved DPP control {ctrl:#x}")


def _written(row_mask: int, bank_mask: int, wave_size: int) -> np.ndarray:
    """Lanes whose destination write the masks enable: row_mask bit r for lanes 16r..16r+15, bank_mask bit b
    for lanes 4b..4b+3 of every row. Both apply to the write only, not to the source read [CDNA4 Table 93]."""
    n = np.arange(wave_size)
    row_ok = (int(row_mask) >> (n // ROW)) & 1
    bank_ok = (int(bank_mask) >> ((n % ROW) // 4)) & 1
    return (row_ok & bank_ok).astype(bool)


def _gather(values: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    """values[w, lanes[w, i]] (lanes [S] or [W, S])."""
    lanes = np.broadcast_to(lanes, values.shape)
    return np.take_along_axis(values, lanes, axis=1)


def update_dpp(old, src, dpp_ctrl, row_mask, bank_mask, bound_ctrl, active, arch):
    """llvm.amdgcn.update.dpp: v_mov dst, old; v_mov_dpp dst, src [LLVM IntrinsicsAMDGPU.td].

    A lane whose row or bank is masked off keeps `old`; otherwise it reads src of its source lane when that
    lane is in range and active, else writes 0 (bound_ctrl) or keeps `old` (no bound_ctrl) [BC]."""
    old, src, active = np.asarray(old), np.asarray(src), np.asarray(active, bool)
    _, s = src.shape
    entry, k = dpp_control(dpp_ctrl, arch, s)
    lane, in_range = entry.source(np.arange(s), k, s)
    lane = np.where(in_range, lane, 0)
    valid = in_range[None, :] & _gather(active, lane)
    fallback = np.zeros_like(src) if bound_ctrl else old.astype(src.dtype, copy=False)
    moved = np.where(valid, _gather(src, lane), fallback)
    written = _written(row_mask, bank_mask, s)[None, :] & active
    return np.where(written, moved, old.astype(src.dtype, copy=False))


def mov_dpp(src, dpp_ctrl, row_mask, bank_mask, bound_ctrl, active, arch):
    """llvm.amdgcn.mov.dpp: update.dpp with an undefined old value, which this emulation takes as 0."""
    return update_dpp(np.zeros_like(np.asarray(src)), src, dpp_ctrl, row_mask, bank_mask, bound_ctrl, active, arch)


def dpp_unspecified_lanes(dpp_ctrl, row_mask, bank_mask, active, arch) -> np.ndarray:
    """bool [W, S]: the lanes update_dpp writes with a value the ISA does not define (row_bcast lanes below the
    broadcast rows); an executor with a poison value should poison them."""
    active = np.asarray(active, bool)
    _, s = active.shape
    entry, k = dpp_control(dpp_ctrl, arch, s)
    _, in_range = entry.source(np.arange(s), k, s)
    undefined = ~in_range if entry.unspecified else np.zeros(s, bool)
    return (undefined & _written(row_mask, bank_mask, s))[None, :] & active


def _lane_bits(addr, s):
    """The lane an LDS permute address names: "ADDR needs to be divided by 4. High-order bits are ignored."
    [CDNA4] — (addr mod 2^32) / 4 mod S, i.e. bits [7:2] (wave64) or [6:2] (wave32) of the address."""
    return ((np.asarray(addr).astype(np.int64) & 0xFFFFFFFF) >> 2) % s


def _check_permute_wave(s, arch):
    if s not in (32, 64):
        raise NotModelled(f"ds permute with wave size {s}")
    if s == 64 and arch is not None and arch_major(arch) >= 10:
        # [RDNA3]: "destination lane is MOD 32 regardless of wave size"; how wave64 halves pair is not stated
        raise NotModelled(f"ds_(b)permute in wave64 on {arch}")


def ds_bpermute(addr, data, active, arch=None):
    """llvm.amdgcn.ds.bpermute: lane i reads data of lane (addr[i] / 4) mod S; a disabled source lane reads
    0 ("If src_lane selects a disabled thread then zero is returned" [CDNA4]). Disabled lanes get their
    gathered value too; the instruction does not write them."""
    data, active = np.asarray(data), np.asarray(active, bool)
    _, s = data.shape
    _check_permute_wave(s, arch)
    lane = _lane_bits(addr, s)
    return np.where(_gather(active, lane), _gather(data, lane), np.zeros_like(data))


def ds_permute(addr, data, active, arch=None):
    """llvm.amdgcn.ds.permute: each active lane i sends data[i] to lane (addr[i] / 4) mod S; lanes nobody
    sends to read 0; "If multiple sources select the same destination thread, the highest-numbered source
    thread wins" [CDNA4 pseudocode]. Disabled lanes send nothing (and are not written)."""
    data, active = np.asarray(data), np.asarray(active, bool)
    w, s = data.shape
    _check_permute_wave(s, arch)
    lane = np.broadcast_to(_lane_bits(addr, s), data.shape)
    out = np.zeros_like(data)
    for i in range(s):  # ascending, so the highest-numbered sender is written last
        rows = np.nonzero(active[:, i])[0]
        out[rows, lane[rows, i]] = data[rows, i]
    return out


def _per_wave(x, w):
    """A wave-uniform operand as [W, 1]: a scalar, a [W] vector or a [W, 1]/[W, S] array uniform per wave."""
    x = np.asarray(x)
    if x.ndim == 0:
        return np.broadcast_to(x, (w, 1))
    if x.ndim == 1:
        if x.shape[0] != w:
            raise ValueError(f"per-wave operand of length {x.shape[0]} for {w} waves")
        return x[:, None]
    return x


def readlane(src, lane, active=None, inactive_ok=False):
    """llvm.amdgcn.readlane: every lane gets src of lane `lane` ("lane = S1.u32[5:0]" [CDNA4]: the lane
    number mod S). `lane` must be wave-uniform (IntrinsicsAMDGPU.td: otherwise undefined); with `active`, a
    non-uniform lane among active lanes, or reading a lane that did not compute its value, is NotModelled, unless
    `inactive_ok` (an executor that tracks poison makes that read poison, and the value read is whatever it holds)."""
    src = np.asarray(src)
    w, s = src.shape
    lane = _per_wave(lane, w)
    if active is not None:
        active = np.asarray(active, bool)
        lanes = np.broadcast_to(lane, (w, s))
        first = lanes[np.arange(w), np.argmax(active, axis=1)][:, None]
        if np.any(active & (lanes != first)):
            raise NotModelled("readlane with a lane number that is not uniform across the wave")
        lane = first
    idx = ((lane.astype(np.int64) & 0xFFFFFFFF) % s)[:, :1]
    if active is not None and not inactive_ok:
        read_inactive = ~np.take_along_axis(active, idx, axis=1)[:, 0] & active.any(axis=1)
        if np.any(read_inactive):
            raise NotModelled("readlane of a lane that is not active (its value is undefined in the IR)")
    return np.broadcast_to(np.take_along_axis(src, idx, axis=1), src.shape).copy()


def readfirstlane(src, active):
    """llvm.amdgcn.readfirstlane: the value of the lowest active lane, broadcast; "if EXEC == 0 then lane = 0"
    [CDNA4 V_READFIRSTLANE_B32], so a wave with no active lane gets lane 0's value. Any dtype (i64 too)."""
    src, active = np.asarray(src), np.asarray(active, bool)
    first = np.argmax(active, axis=1)  # 0 when no lane is active
    return np.broadcast_to(src[np.arange(src.shape[0]), first][:, None], src.shape).copy()


def ballot(cond, active):
    """llvm.amdgcn.ballot: uint64 [W], bit i set when lane i is active and cond is true."""
    bits = np.asarray(cond, bool) & np.asarray(active, bool)
    weights = np.left_shift(np.uint64(1), np.arange(bits.shape[1], dtype=np.uint64))
    return (bits.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)


def _mbcnt(mask, acc, lane_ids, low_bit):
    """acc + popcount(mask & ThreadMask[low_bit+31 : low_bit]), ThreadMask = (1 << lane) - 1 [CDNA4]."""
    lane = np.asarray(lane_ids).astype(np.int64)
    below = np.clip(lane - low_bit, 0, 32).astype(np.uint64)
    thread_mask = (np.uint64(1) << below) - np.uint64(1)
    mask = np.asarray(mask).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    if mask.ndim == 1 and lane.ndim == 2 and mask.shape[0] == lane.shape[0]:
        mask = mask[:, None]
    acc = np.asarray(acc).astype(np.uint64)
    if acc.ndim == 1 and lane.ndim == 2 and acc.shape[0] == lane.shape[0]:
        acc = acc[:, None]
    return ((acc + np.bitwise_count(mask & thread_mask).astype(np.uint64)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def mbcnt_lo(mask, acc, lane_ids):
    """llvm.amdgcn.mbcnt.lo: acc + the set bits of mask (32 bits) below the lane (all 32 for lanes >= 32)."""
    return _mbcnt(mask, acc, lane_ids, 0)


def mbcnt_hi(mask, acc, lane_ids):
    """llvm.amdgcn.mbcnt.hi: acc + the set bits of mask (lanes 32-63) below the lane (none for lanes < 32)."""
    return _mbcnt(mask, acc, lane_ids, 32)


def _permlane(old, src, sel1, sel2, fi, bound_ctrl, active, cross):
    """V_PERMLANE16/X16_B32 [RDNA3]: lane i of row r reads tmp[row' * 16 + lanesel[4i+3:4i]], lanesel =
    {sel2, sel1}, row' = r (permlane16) or r with bit 0 flipped (permlanex16: rows 0<->1, 2<->3). A disabled
    source lane is invalid unless FI (then bound_ctrl: 0 or keep old, as DPP [BC]); with FI it is read, but an
    IR executor does not know what a disabled lane's register holds, so that case is NotModelled."""
    old, src, active = np.asarray(old), np.asarray(src), np.asarray(active, bool)
    w, s = src.shape
    if s not in (32, 64):
        raise NotModelled(f"permlane with wave size {s}")
    sel = (_per_wave(sel2, w).astype(np.uint64) & 0xFFFFFFFF) << np.uint64(32)
    sel = sel | (_per_wave(sel1, w).astype(np.uint64) & np.uint64(0xFFFFFFFF))
    n = np.arange(s)
    nibble = ((sel >> (4 * (n % ROW)).astype(np.uint64)) & np.uint64(15)).astype(np.int64)
    row = n // ROW
    lane = ((row ^ 1) if cross else row) * ROW + nibble
    src_active = _gather(active, lane)
    if fi and np.any(active & ~src_active):
        raise NotModelled("permlane with fetch-inactive reading a disabled lane")
    fallback = np.zeros_like(src) if bound_ctrl else old.astype(src.dtype, copy=False)
    moved = np.where(src_active, _gather(src, lane), fallback)
    return np.where(active, moved, old.astype(src.dtype, copy=False))


def permlane16(old, src, sel1, sel2, fi, bound_ctrl, active):
    """llvm.amdgcn.permlane16(old, src0, src1, src2, fi, bound_ctrl) (GFX10+): gather within each row."""
    return _permlane(old, src, sel1, sel2, fi, bound_ctrl, active, cross=False)


def permlanex16(old, src, sel1, sel2, fi, bound_ctrl, active):
    """llvm.amdgcn.permlanex16 (GFX10+): gather from the other row of each pair of rows."""
    return _permlane(old, src, sel1, sel2, fi, bound_ctrl, active, cross=True)


def _swap(a, b, active, pairs):
    """Swap a[hi] <-> b[lo] for the lane pairs (lo, hi): new_a[hi] = b[lo], new_b[lo] = a[hi] [CDNA4]."""
    a, b, active = np.asarray(a), np.asarray(b), np.asarray(active, bool)
    lo, hi = pairs
    if np.any(active[:, lo] != active[:, hi]):
        raise NotModelled("permlane swap with one lane of a pair disabled (FI/bound_ctrl effect undocumented)")
    new_a, new_b = a.copy(), b.copy()
    both = active[:, lo]
    new_a[:, hi] = np.where(both, b[:, lo], a[:, hi])
    new_b[:, lo] = np.where(both, a[:, hi], b[:, lo])
    return new_a, new_b


def permlane32_swap(a, b, fi, bound_ctrl, active):
    """llvm.amdgcn.permlane32.swap(vdst_old=a, src0_old=b, fi, bound_ctrl) (gfx950) -> (vdst_new, src0_new):
    rows 2-3 of a are swapped with rows 0-1 of b ("for lane in 0:31: swap(SRC0[lane], VDST[lane+32])")."""
    if np.asarray(a).shape[1] != 64:
        raise NotModelled("permlane32.swap needs wave64")
    lo = np.arange(32)
    return _swap(a, b, active, (lo, lo + 32))


def permlane16_swap(a, b, fi, bound_ctrl, active):
    """llvm.amdgcn.permlane16.swap(vdst_old=a, src0_old=b, fi, bound_ctrl) -> (vdst_new, src0_new): odd rows
    of a are swapped with even rows of b ("swap(SRC0[pass*32+lane], VDST[pass*32+lane+16])")."""
    s = np.asarray(a).shape[1]
    if s not in (32, 64):
        raise NotModelled(f"permlane16.swap with wave size {s}")
    lo = np.concatenate([np.arange(p, p + ROW) for p in range(0, s, 2 * ROW)])
    return _swap(a, b, active, (lo, lo + ROW))


def ds_swizzle(src, offset, active):
    """llvm.amdgcn.ds.swizzle (GFX9 ds_swizzle_b32): offset[15] set is quad-permute mode (lane (n & ~3) + the 2-bit
    selector offset[2k+1:2k] for k = n % 4); clear is bit-mask mode within each group of 32 lanes, the source lane
    ((n & and_mask) | or_mask) ^ xor_mask with and/or/xor masks in offset[4:0], [9:5], [14:10] [CDNA3 ISA,
    DS_SWIZZLE_B32]. A disabled source lane reads 0, as for ds_bpermute."""
    src, active = np.asarray(src), np.asarray(active, bool)
    lanes = np.arange(src.shape[1])
    if offset & 0x8000:
        source = (lanes & ~3) + ((offset >> (2 * (lanes % 4))) & 3)
    else:
        and_mask, or_mask, xor_mask = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
        source = (lanes & ~0x1F) | ((((lanes & 0x1F) & and_mask) | or_mask) ^ xor_mask)
    out = src[:, source]
    return np.where(active[:, source], out, np.zeros((), src.dtype))
