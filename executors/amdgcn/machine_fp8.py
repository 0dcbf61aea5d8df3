"""fp8 and bf8 on the machine: the conversions between them and f32 (`v_cvt_f32_fp8`, `v_cvt_pk_f32_bf8`,
`v_cvt_pk_fp8_f32`, gfx950's `v_cvt_scalef32_*` forms of them) and the element values MFMA reads
(machine_mfma.py), for the processor the kernel was built for.

Why by hand and not through pcode.py: the guide's texts call `fp8_to_f32`, `f32_to_bf8`, `fp8_to_f32_scale` ...
and never define them, and the formats behind them differ by generation (decision 42, docs/amdgcn-pcode.md):

- CDNA3 (gfx940, gfx941, gfx942) converts to and from the FNUZ formats: fp8 = E4M3 with bias 8, bf8 = E5M2 with
  bias 16; 0x80 (the pattern of a negative zero) is the only NaN; no infinity and no negative zero.
- CDNA4 (gfx950) uses the OCP formats: fp8 = E4M3 with bias 7, S.1111.111 the NaN, no infinity (max 448);
  bf8 = E5M2 with bias 15, IEEE-like (S.11111.00 infinity, S.11111.xx NaN).

Which generation has which is AMD's HIP documentation ("Low precision floating point types": FP8 E4M3/E5M2 in
their FNUZ variants on CDNA3, the OCP ones on CDNA4); the OCP formats are the OCP 8-bit Floating Point
Specification's. Everything here is computed from those field layouts with integer arithmetic on the bits (the
LLVM IR executor has its own conversions; the two share nothing).

What the texts leave open is refused where a lane needs it (NotModelled), never guessed:
- the result of an overflow, an infinity, or (OCP) a NaN converted to fp8: saturation depends on MODE's FP16_OVFL
  bit, which the guide documents for f16 only. With that, a result inside the range does not depend on the bit, so
  these steps run while it is set (machine_hwreg.guard_narrow_float lets them through: ``overflow_refused``);
- a scaled conversion whose scale is the E8M0 NaN (255), or whose f32 result is not exact.
Where the text reads `SDWA_SRC0_SEL` and the encoding has no SDWA field (e32, e64) the select is DWORD, the SDWA
default; in the VOP3 forms of gfx950's scaled conversions the texts read OPSEL, as written.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from gfxhound.executors.amdgcn.machine import NotModelled, _check_modifiers, _hazard, reader, writer
from gfxhound.executors.amdgcn.machine_modifiers import SEL

__all__ = ["FP8_STEPS", "Minifloat", "fmt", "to_f32_bits", "values", "from_f32"]


@dataclass(frozen=True)
class Minifloat:
    name: str
    exp_bits: int
    man_bits: int
    bias: int
    nan: str        # "neg_zero" (FNUZ: 0x80), "all_ones" (OCP E4M3: S.1111.111), "ieee" (OCP E5M2)

    @property
    def max_code(self) -> int:
        """The largest finite positive code."""
        return {"neg_zero": 0x7F, "all_ones": 0x7E, "ieee": (((1 << self.exp_bits) - 1) << self.man_bits) - 1}[self.nan]


_CDNA3 = {"fp8": Minifloat("e4m3 fnuz", 4, 3, 8, "neg_zero"), "bf8": Minifloat("e5m2 fnuz", 5, 2, 16, "neg_zero")}
_CDNA4 = {"fp8": Minifloat("e4m3 ocp", 4, 3, 7, "all_ones"), "bf8": Minifloat("e5m2 ocp", 5, 2, 15, "ieee")}
GENERATIONS = {"gfx940": _CDNA3, "gfx941": _CDNA3, "gfx942": _CDNA3, "gfx950": _CDNA4}


def fmt(kind: str, processor: str, mn: str) -> Minifloat:
    """The format `kind` ("fp8" / "bf8") names on `processor`."""
    table = GENERATIONS.get(processor)
    if table is None:
        raise NotModelled(mn, f"fp8/bf8 on processor {processor or '(unknown: the program names no target)'}")
    return table[kind]


def to_f32_bits(codes, f: Minifloat) -> np.ndarray:
    """f32 bit patterns (uint64) of fp8 codes (the low byte of each value). NaNs become the quiet NaN 0x7fc00000
    with the code's sign (OCP; FNUZ's NaN has none): the guide gives no payload, and NaN results compare as NaN."""
    c = np.asarray(codes, np.uint64) & np.uint64(0xFF)
    sign = (c >> np.uint64(7)) << np.uint64(31)
    e = ((c >> np.uint64(f.man_bits)) & np.uint64((1 << f.exp_bits) - 1)).astype(np.int64)
    m = (c & np.uint64((1 << f.man_bits) - 1)).astype(np.int64)
    # a subnormal m * 2^(1 - bias - man_bits): shift the leading one of m up to the hidden bit
    lead = np.where(m > 0, np.floor(np.log2(np.maximum(m, 1))).astype(np.int64), 0)
    sub_e = 1 - f.bias - (f.man_bits - lead) + 127
    sub_m = (m - (np.int64(1) << lead)) << (23 - lead)
    normal = e > 0
    exp = np.where(normal, e - f.bias + 127, np.where(m > 0, sub_e, 0))
    man = np.where(normal, m << (23 - f.man_bits), np.where(m > 0, sub_m, 0))
    bits = sign | (exp.astype(np.uint64) << np.uint64(23)) | man.astype(np.uint64)
    top = e == (1 << f.exp_bits) - 1
    qnan = sign | np.uint64(0x7FC00000)
    if f.nan == "neg_zero":
        bits = np.where(c == 0x80, np.uint64(0x7FC00000), bits)
    elif f.nan == "all_ones":
        bits = np.where(top & (m == (1 << f.man_bits) - 1), qnan, bits)
    else:
        bits = np.where(top & (m == 0), sign | np.uint64(0x7F800000), np.where(top & (m != 0), qnan, bits))
    return bits


@lru_cache(maxsize=None)
def values(f: Minifloat) -> np.ndarray:
    """float64 [256]: the value of every code."""
    return to_f32_bits(np.arange(256), f).astype(np.uint32).view(np.float32).astype(np.float64)


def from_f32(x: np.ndarray, f: Minifloat):
    """(codes uint64[...], refused bool[...]) of float64 values `x` (exact f32 values, or exact scaled ones),
    rounded to nearest even on the exact value. Refused: a value past the range after rounding, an infinity, a NaN
    of the OCP formats (each left open by the guide: FP16_OVFL's saturation is documented for f16 only)."""
    x = np.asarray(x, np.float64)
    table = values(f)[: f.max_code + 1]                 # positive finite codes, increasing with the code
    mag = np.abs(x)
    finite = np.isfinite(x)
    a = np.where(finite, mag, 0.0)
    hi = np.minimum(np.searchsorted(table, a, side="left"), f.max_code)    # the first code >= a (or the largest)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - table[lo], table[hi] - a
    code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
    # past the largest value: halfway to the next step (one more code) rounds to the even one of the two
    top = table[f.max_code]
    half = (top - table[f.max_code - 1]) / 2
    over = (a > top + half) | ((a == top + half) & (f.max_code % 2 == 1))
    negative = np.signbit(x)
    if f.nan == "neg_zero":
        signed = np.where(negative & (code != 0), code | 0x80, code)   # no negative zero: -0 rounds to 0x00
    else:
        signed = np.where(negative, code | 0x80, code)
    nan = np.isnan(x)
    refused = (over & finite) | np.isinf(x) | (nan & (f.nan != "neg_zero"))
    signed = np.where(nan, 0x80, signed)
    return signed.astype(np.uint64), refused


def _kinds(mn: str):
    """(source kind, result kind) from the mnemonic: v_cvt_pk_f32_bf8 -> ("bf8", "f32")."""
    parts = mn.replace("v_cvt_scalef32_", "").replace("v_cvt_", "").replace("pk_", "").split("_")
    return parts[1], parts[0]


def _scale_exp(get_scale):
    """2^(scale - 127) of the E8M0 scale `exponent(S.f32)` (the biased exponent field of the f32 operand)."""
    def k(w, lanes, mn):
        e = (np.broadcast_to(np.asarray(get_scale(w), np.uint64), (64,)) >> np.uint64(23)) & np.uint64(0xFF)
        if (e[lanes] == 255).any():
            raise NotModelled(mn, "a scale of 255 (the E8M0 NaN)")
        return e.astype(np.int64) - 127
    return k


def _to_f32(ins, processor):
    """v_cvt_f32_fp8/bf8 (a byte), v_cvt_pk_f32_fp8/bf8 (a word: two f32 in D[0:1]), and the scalef32 forms."""
    mn = ins.mnemonic
    src_kind, _ = _kinds(mn)
    f = fmt(src_kind, processor, mn)
    packed, scaled = "_pk_" in mn, mn.startswith("v_cvt_scalef32_")
    if scaled:
        _check_modifiers(ins, {"op_sel"})
        sel = tuple(int(b) for b in (ins.mod("op_sel") or ()))
        bit = lambda i: sel[i] if len(sel) > i else 0
        first = bit(0) * 16 if packed else (bit(0) | bit(1) << 1) * 8   # OPSEL[0] * 16, OPSEL[1 : 0] * 8
    elif ins.encoding == "sdwa":
        _check_modifiers(ins, {"src0_sel", "dst_sel", "dst_unused"})
        if ins.mod("dst_sel", "DWORD") != "DWORD":
            raise NotModelled(mn, "an SDWA destination select on a conversion to f32")
        code = list(SEL).index(ins.mod("src0_sel", "DWORD"))   # BYTE_0..3 = 0..3, WORD_0/1 = 4/5, DWORD = 6
        if packed:   # "SDWA_SRC0_SEL[1 : 0] == WORD1.b2 ? S0[31 : 16] : S0[15 : 0]"
            first = 16 if code & 3 == 1 else 0
        else:        # BYTE1..BYTE3 select that byte, anything else BYTE0 ("BYTE0 implied")
            first = 8 * code if code in (1, 2, 3) else 0
    else:
        _check_modifiers(ins, ())
        first = 0    # no SDWA field: SDWA_SRC0_SEL is DWORD
    ops = ins.operands
    if len(ops) != (3 if scaled else 2) or any(getattr(o, "neg", False) or getattr(o, "abs", False) for o in ops[1:2]):
        raise NotModelled(mn, f"operands {ops}")
    get = reader(ops[1], 32, mn, _hazard(ins.index))
    scale = _scale_exp(reader(ops[2], 32, mn, _hazard(ins.index))) if scaled else None
    put = writer(ops[0], 64 if packed else 32, mn)

    def step(w):
        lanes = w.lanes()
        src = np.broadcast_to(np.asarray(get(w), np.uint64), (64,)) >> np.uint64(first)
        codes = [src & np.uint64(0xFF)] + ([(src >> np.uint64(8)) & np.uint64(0xFF)] if packed else [])
        out = []
        for c in codes:
            bits = to_f32_bits(c, f)
            if scale is not None:      # fp8_to_f32_scale: the value times 2^(scale - 127), exact or refused
                v = np.ldexp(values(f)[c.astype(np.int64)], scale(w, lanes, mn))
                with np.errstate(over="ignore"):
                    v32 = v.astype(np.float32)
                if (lanes & ~np.isnan(v) & (v32.astype(np.float64) != v)).any():
                    raise NotModelled(mn, "a scaled result that f32 does not hold exactly")
                bits = np.where(np.isnan(v), bits, v32.view(np.uint32).astype(np.uint64))
            out.append(bits)
        value = out[0] if not packed else out[0] | (out[1] << np.uint64(32))
        put(w, value, lanes)
        w.pc += 1
    step.decisions = (42,)
    step.outputs = 1
    return step


def _from_f32(ins, processor):
    """v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32 ({f32_to_fp8(S1), f32_to_fp8(S0)} into the word OPSEL[3] selects, the
    other word preserved; round to nearest even) and gfx950's v_cvt_scalef32_pk_fp8_f32/bf8_f32 (each value
    divided by the scale 2^(exponent(S2) - 127) first)."""
    mn = ins.mnemonic
    _, dst_kind = _kinds(mn)
    f = fmt(dst_kind, processor, mn)
    scaled = mn.startswith("v_cvt_scalef32_")
    _check_modifiers(ins, {"op_sel"})
    ops = ins.operands
    if len(ops) != (4 if scaled else 3):
        raise NotModelled(mn, f"operands {ops}")
    sel = tuple(int(b) for b in (ins.mod("op_sel") or ()))
    if sel and (len(sel) != len(ops) or any(sel[:-1])):
        raise NotModelled(mn, f"op_sel {list(sel)} (only the destination word is selected)")
    high = bool(sel and sel[-1])     # llvm-mc puts the list's last bit in OPSEL[3]
    gets = [reader(o, 32, mn, _hazard(ins.index)) for o in ops[1:3]]
    scale = _scale_exp(reader(ops[3], 32, mn, _hazard(ins.index))) if scaled else None
    old, put = reader(ops[0], 32, mn), writer(ops[0], 32, mn)

    def step(w):
        lanes = w.lanes()
        words = []
        for get in gets:
            x = np.broadcast_to(np.asarray(get(w), np.uint64), (64,)).astype(np.uint32).view(np.float32)
            x = x.astype(np.float64)
            if scale is not None:
                x = np.ldexp(x, -scale(w, lanes, mn))
            code, refused = from_f32(x, f)
            if (refused & lanes).any():
                raise NotModelled(mn, "an f32 value out of the fp8 range, an infinity or a NaN (saturation is "
                                      "documented for f16 only)")
            words.append(code)
        word = words[0] | (words[1] << np.uint64(8))
        keep = np.broadcast_to(np.asarray(old(w), np.uint64), (64,))
        if high:
            value = (keep & np.uint64(0xFFFF)) | (word << np.uint64(16))
        else:
            value = (keep & np.uint64(0xFFFF0000)) | word
        put(w, value, lanes)
        w.pc += 1
    step.decisions = (42,)
    step.outputs = 1
    step.overflow_refused = True
    return step


FP8_STEPS = {}
for _k in ("fp8", "bf8"):
    for _m in (f"v_cvt_f32_{_k}", f"v_cvt_pk_f32_{_k}", f"v_cvt_scalef32_f32_{_k}", f"v_cvt_scalef32_pk_f32_{_k}"):
        FP8_STEPS[_m] = _to_f32
    for _m in (f"v_cvt_pk_{_k}_f32", f"v_cvt_scalef32_pk_{_k}_f32"):
        FP8_STEPS[_m] = _from_f32
