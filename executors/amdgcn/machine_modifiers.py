"""The encoding modifiers of VALU instructions that sit outside AMD's per-instruction pseudocode: DPP (lanes read
from other lanes, row and bank write masks, BOUND_CTRL), SDWA (source byte/word selects with sign extension,
destination select and what happens to the unused bits), op_sel / op_sel_hi / neg_lo / neg_hi (16-bit halves of
VOP3 sources, the halves of packed VOP3P sources) and OMOD (mul:2, mul:4, div:2 on a float result).

Why a module of its own: the pseudocode (pcode.py) sees S0, S1, S2 and D0 as plain registers; the guide describes
these modifiers in its encoding chapters (CDNA3/CDNA4 ISA, "Data Parallel Processing (DPP)", "Sub-Dword
Addressing (SDWA)", the VOP3/VOP3P field tables), so the machine applies them around `Op.run`: a source's reader
fetches, selects and then applies neg/abs; a destination's writer places the result and masks the lanes. Where
the guide's words leave a choice, it is tabled in docs/amdgcn-pcode.md (decisions 26-31) and cited here.

Encoding facts taken from the assembler (llvm-mc decodes and encodes, nothing more): `bound_ctrl:0` and
`bound_ctrl:1` both set the BOUND_CTRL bit; absent, it is clear. `row_mask`/`bank_mask` default to 0xf; SDWA's
selects default to DWORD and `dst_unused` to UNUSED_PRESERVE.
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm, Src
from gfxhound.executors.amdgcn.machine import M32, M64, NotModelled, _const, negabs, reader

__all__ = ["dpp_lanes", "dpp_source", "dpp_write_lanes", "omod", "op_sel_source", "packed_source",
           "sdwa_destination", "sdwa_source"]

LANE = np.arange(64)
ROW, IN_ROW = LANE // 16, LANE % 16
SEL = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8), "WORD_0": (0, 16),
       "WORD_1": (16, 16), "DWORD": (0, 32)}


def _unwrap(op, mn: str, float_op: bool, allow_sext: bool = False):
    if not isinstance(op, Src):
        return op, False, False, False
    if op.sext and not allow_sext:
        raise NotModelled(mn, "sext() outside an SDWA source")
    if (op.neg or op.abs) and not float_op:
        raise NotModelled(mn, "neg/abs on an operand of an integer instruction")
    return op.base, op.neg, op.abs, op.sext


# ---- DPP ------------------------------------------------------------------------------------------------------
def dpp_lanes(ins) -> tuple:
    """(source lane per lane, whether that lane is in range) for the DPP_CTRL `ins` carries (the guide's DPP_CTRL
    table). Decision 26: row_bcast15 feeds rows 1-3 from the last lane of the row before (row 0 has no source);
    row_bcast31 feeds rows 2 and 3 from lane 31 (rows 0 and 1 have none); row_newbcast:n (gfx90a+) feeds each row
    from its own lane n."""
    mn, mod = ins.name, ins.mod
    if mod("quad_perm") is not None:
        sel = np.array(mod("quad_perm"), np.int64)
        if len(sel) != 4 or ((sel < 0) | (sel > 3)).any():
            raise NotModelled(mn, f"quad_perm {mod('quad_perm')}")
        return (LANE & ~3) | sel[LANE & 3], np.ones(64, bool)
    for name, shift in (("row_shl", 1), ("row_shr", -1)):
        n = mod(name)
        if n is not None:
            j = IN_ROW + shift * int(n)
            return ROW * 16 + np.clip(j, 0, 15), (j >= 0) & (j < 16)
    if mod("row_ror") is not None:
        return ROW * 16 + (IN_ROW - int(mod("row_ror"))) % 16, np.ones(64, bool)
    for name, step, wrap in (("wave_shl", 1, False), ("wave_shr", -1, False), ("wave_rol", 1, True),
                             ("wave_ror", -1, True)):
        if mod(name) is not None:
            if int(mod(name)) != 1:
                raise NotModelled(mn, f"{name}:{mod(name)} (the guide has shifts by one lane only)")
            src = LANE + step
            return (src % 64, np.ones(64, bool)) if wrap else (np.clip(src, 0, 63), (src >= 0) & (src < 64))
    if mod("row_mirror") is not None:
        return ROW * 16 + 15 - IN_ROW, np.ones(64, bool)
    if mod("row_half_mirror") is not None:
        return ROW * 16 + (IN_ROW & 8) + 7 - (IN_ROW & 7), np.ones(64, bool)
    if mod("row_bcast") is not None:
        n = int(mod("row_bcast"))
        if n == 15:
            return np.maximum(ROW * 16 - 1, 0), ROW >= 1
        if n == 31:
            return np.full(64, 31), ROW >= 2
        raise NotModelled(mn, f"row_bcast:{n}")
    if mod("row_newbcast") is not None:
        return ROW * 16 + int(mod("row_newbcast")) % 16, np.ones(64, bool)
    raise NotModelled(mn, "a DPP control this machine does not know (" +
                      " ".join(str(m) for m in ins.modifiers) + ")")


def dpp_write_lanes(ins):
    """wave -> bool[64]: the lanes a DPP instruction writes. ROW_MASK bit r clears row r; BANK_MASK bit b clears
    lanes 4b..4b+3 of every row; a lane whose source is out of range or disabled (EXEC = 0 there) is not written
    unless BOUND_CTRL is set, when it reads zero (decision 27: an inactive source lane counts as disabled)."""
    row_mask, bank_mask = int(ins.mod("row_mask", 0xF)), int(ins.mod("bank_mask", 0xF))
    if ins.mod("fi") is not None:
        raise NotModelled(ins.name, "DPP fi (fetch inactive) is not a gfx9 field")
    allowed = ((row_mask >> ROW) & 1).astype(bool) & ((bank_mask >> (IN_ROW // 4)) & 1).astype(bool)
    src, in_range = dpp_lanes(ins)
    bound = ins.mod("bound_ctrl") is not None

    def lanes(w):
        active = w.lanes()
        valid = in_range & active[src]
        return active & allowed & (valid | bound)
    return lanes, src, in_range


def dpp_source(ins, op_, width: int, mn: str, float_op: bool, hazard=None, typed: int = 0):
    """The reader of a DPP instruction's src0: every lane takes its source lane's raw bits (zero where the source
    is invalid: such a lane is written only under BOUND_CTRL), then neg/abs on the sign bit of the operand's type
    (`typed` bits; default `width`)."""
    base, neg, ab, _ = _unwrap(op_, mn, float_op)
    if getattr(base, "file", None) != "v":
        raise NotModelled(mn, f"DPP src0 {base} (must be a VGPR)")
    raw = reader(base, width, mn, hazard)
    _, src, in_range = dpp_write_lanes(ins)

    def get(w):
        value = np.broadcast_to(np.asarray(raw(w), np.uint64), (64,))
        valid = in_range & w.lanes()[src]
        return negabs(np.where(valid, value[src], np.uint64(0)), typed or width, neg, ab)
    return get


# ---- SDWA -----------------------------------------------------------------------------------------------------
def sdwa_source(ins, field: str, op_, width: int, mn: str, float_op: bool, hazard=None, typed: int = 0):
    """The reader of an SDWA source: the selected byte or word of the 32-bit register, zero-extended, or
    sign-extended under sext(); then neg/abs (float ops) on the sign bit of the operand's type (`typed` bits: 16 for
    a source the pseudocode reads as S0.f16; default `width`)."""
    base, neg, ab, sext = _unwrap(op_, mn, float_op, allow_sext=True)
    shift, bits = SEL[ins.mod(field, "DWORD")]
    raw = reader(base, 32 if width <= 32 else width, mn, hazard)
    if bits == 32 and width <= 32:
        return lambda w: negabs(raw(w), typed or width, neg, ab)
    if width > 32:
        raise NotModelled(mn, f"an SDWA select on a {width}-bit operand")
    keep, sign = (1 << width) - 1, 1 << (bits - 1)

    def get(w):
        v = raw(w)
        scalar = not isinstance(v, np.ndarray)
        v = (np.asarray(v, np.uint64) >> np.uint64(shift)) & np.uint64((1 << bits) - 1)
        if sext:
            v = np.where(v & np.uint64(sign), v | np.uint64(~((1 << bits) - 1) & M32), v)
        v = negabs(v & np.uint64(keep), typed or width, neg, ab)
        return int(v) if scalar else v
    return get


def sdwa_destination(ins, result_bits: int, mn: str):
    """fn(result, old) -> the 32-bit value an SDWA op writes: the result's low bits placed at DST_SEL; the other
    bits zero (UNUSED_PAD), the field's sign bit copied up (UNUSED_SEXT), or the old bits (UNUSED_PRESERVE).
    A DWORD select of a 16-bit result: bits 31:16 zero (decision 29)."""
    shift, bits = SEL[ins.mod("dst_sel", "DWORD")]
    unused = ins.mod("dst_unused", "UNUSED_PRESERVE")
    if bits == 32:   # a 16-bit result in a whole dword: bits 31:16 zero, as without SDWA (decision 29)
        return None if result_bits >= 32 else (lambda result, old: np.asarray(result, np.uint64) & np.uint64(0xFFFF))
    if bits > result_bits:
        raise NotModelled(mn, f"dst_sel {ins.mod('dst_sel', 'DWORD')} of a {result_bits}-bit result")
    field = np.uint64(((1 << bits) - 1) << shift)
    above = np.uint64(M32 & ~((1 << (shift + bits)) - 1))

    def place(result, old):
        v = (np.asarray(result, np.uint64) & np.uint64((1 << bits) - 1)) << np.uint64(shift)
        if unused == "UNUSED_PRESERVE":
            return v | (np.asarray(old, np.uint64) & ~field & np.uint64(M32))
        if unused == "UNUSED_SEXT":
            negative = (v >> np.uint64(shift + bits - 1)) & np.uint64(1)
            return v | np.where(negative == 1, above, np.uint64(0))
        return v
    return place


# ---- op_sel and packed sources ---------------------------------------------------------------------------------
def op_sel_source(op_, k: int, sel, width: int, mn: str, float_op: bool, hazard=None):
    """VOP3 op_sel[k] on a 16-bit source: bits 31:16 of the register instead of 15:0; then neg/abs."""
    base, neg, ab, _ = _unwrap(op_, mn, float_op)
    raw = reader(base, 32, mn, hazard)
    high = bool(sel[k]) if k < len(sel) else False
    if width != 16 and high:
        raise NotModelled(mn, f"op_sel on a {width}-bit source")

    def get(w):
        v = raw(w)
        if not isinstance(v, np.ndarray):
            return negabs(((int(v) >> 16) if high else int(v)) & ((1 << width) - 1), width, neg, ab)
        v = (v.astype(np.uint64) >> np.uint64(16)) if high else v.astype(np.uint64)
        return negabs(v & np.uint64((1 << width) - 1), width, neg, ab)
    return get


def packed_source(ins, op_, k: int, element: int, mn: str, float_op: bool, hazard=None):
    """A VOP3P source: the low result half reads the source half op_sel[k] picks, the high result half the half
    op_sel_hi[k] picks (default 1: the high half); neg_lo[k]/neg_hi[k] flip the sign of each half (float ops)."""
    if isinstance(op_, Src):
        raise NotModelled(mn, f"source modifiers {op_} on a packed operand (neg_lo/neg_hi are the packed forms)")
    width = 2 * element
    raw = reader(op_, width, mn, hazard)
    lo_sel, hi_sel = ins.mod("op_sel", ()), ins.mod("op_sel_hi", ())
    if isinstance(op_, Imm) and (element == 32 or op_.kind == "float" and float_op):
        # decision 38: a constant on a packed-f32 operand (inline or literal) is a 32-bit value in the low dword,
        # the high dword zero, and a float inline constant on a packed-f16 op is the f16 value in the low half,
        # the high half zero; llc selects the low element for both halves (op_sel_hi 0) wherever it packs one.
        # An integer inline constant on a 16-bit packed op stays the 32-bit sign-extended value (so -1 is -1 in
        # both halves), and a float one on an integer packed op its f32 bits: `reader` at 32 bits gives both
        value = _const(op_, element, mn, False)
        raw = lambda w: value
    lo = int(lo_sel[k]) if k < len(lo_sel) else 0
    hi = int(hi_sel[k]) if k < len(hi_sel) else 1
    neg_lo = int((ins.mod("neg_lo", ()) + (0,) * 3)[k])
    neg_hi = int((ins.mod("neg_hi", ()) + (0,) * 3)[k])
    if (neg_lo or neg_hi) and not float_op:
        raise NotModelled(mn, "neg_lo/neg_hi on an integer packed op")
    e = np.uint64(element)
    mask = np.uint64((1 << element) - 1) if element < 64 else np.uint64(M64)
    half = lambda v, h: (v >> e) & mask if h else v & mask

    def get(w):
        v = raw(w)
        if not isinstance(v, np.ndarray):
            v = np.full(64, int(v), np.uint64)
        v = v.astype(np.uint64)
        a = negabs(half(v, lo), element, bool(neg_lo), False)
        b = negabs(half(v, hi), element, bool(neg_hi), False)
        return a | (b << e)
    return get


def omod(ins, width: int, mn: str):
    """fn(bits) -> bits: OMOD's mul:2, mul:4 or div:2 on an f32/f64 result (decision 28: before clamp, in the
    result's precision, so overflow goes to infinity and a halved denormal rounds to nearest even)."""
    factor = {("mul", 2): 2.0, ("mul", 4): 4.0, ("div", 2): 0.5}.get(
        ("mul", int(ins.mod("mul"))) if ins.mod("mul") is not None else ("div", int(ins.mod("div", 1))))
    if ins.mod("mul") is None and ins.mod("div") is None:
        return None
    if factor is None or width not in (32, 64):
        raise NotModelled(mn, f"omod on a {width}-bit result")
    ft, ut = (np.float32, np.uint32) if width == 32 else (np.float64, np.uint64)

    def apply(bits):
        x = np.asarray(bits, np.uint64).astype(ut).view(ft)
        with np.errstate(over="ignore", under="ignore"):
            return (x * ft(factor)).view(ut).astype(np.uint64)
    return apply
