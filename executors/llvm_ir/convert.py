"""AMD conversion intrinsics: FP8/BF8 packing and unpacking, v_cvt_pkrtz_f16_f32 and v_perm_b32.

These carry Triton's fp8 casts, so a wrong code here would read as a Triton bug: each conversion rounds exactly
(round-to-nearest-even on the exact binary value), and every case whose hardware result the documents leave
open raises NotModelled rather than pick one.

Formats: gfx940/941/942 (CDNA3) convert to the FNUZ formats (e4m3fnuz: bias 8, e5m2fnuz: bias 16; 0x80 is the
only NaN, no infinity, no negative zero); gfx950 (CDNA4) and gfx12 (RDNA4) to the OCP ones (e4m3fn: bias 7,
S.1111.111 NaN, no infinity, max 448; e5m2: IEEE-like, bias 15). Out-of-range values follow MODE.FP16_OVFL,
hwreg(HW_REG_MODE, 23, 1), which Triton sets with llvm.amdgcn.s.setreg(i32 1473, i32 1) in every function that
casts to fp8 (1473 = id 1 | offset 23 << 6 | (size-1) << 11): "When the bit is 0/1, the conversion from
fp32/fp16/bf16 to fp8/bf8 is in non-saturation/saturation mode" (triton third_party/amd/lib/
TritonAMDGPUToLLVM/ElementwiseOpToLLVM.cpp adjustModeRegister). The `clamp` parameters below are that bit.

Sources: [CDNA4] ISA reference 12.11: V_CVT_PK_FP8_F32 / V_CVT_PK_BF8_F32 ({f32_to_fp8(S1), f32_to_fp8(S0)}
into the word OPSEL[3] selects, the other word preserved, round to nearest even), V_CVT_F32_FP8 / V_CVT_PK_F32_*
(byte / word select), V_CVT_SR_*, V_CVT_SCALEF32_*, V_CVT_PKRTZ_F16_F32, V_PERM_B32; MODE register: "FP16_OVFL
(23): If set, an overflowed FP16 result is clamped to +/- MAX_FP16 ... while still preserving true INF values".
[ONNX] onnx.ai/onnx/technical/float8.html cast table (saturate: Inf -> +/-max for e4m3fn/e5m2, NaN for the FNUZ
types; finite overflow -> +/-max; no saturation: NaN, or Inf for e5m2) — the policy Triton's software fp8 path
follows (ConvertFpCastOpToLLVM.cpp downcastToFp8rtneOneValue: "For Fp8 UZ types, conversion with saturation
converts infinity to NaN"). [Triton-test] python/test/unit/language/test_conversions.py
test_typeconvert_downcast_clamping: on gfx950 (v_cvt_scalef32_pk_*, scale 1.0, MODE bit set) max+100 and +/-inf
give +/-max, NaN gives NaN. [LLVM] IntrinsicsAMDGPU.td operand orders (cvt.pk.fp8.f32(a, b, old, word_sel),
cvt.sr.fp8.f32(a, rnd, old, byte_sel), cvt.pk.f32.fp8(src, word_sel), cvt.scalef32.*).
"""
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .errors import NotModelled
from .lanes import arch_major


@dataclass(frozen=True)
class Fp8Format:
    name: str
    exp_bits: int
    man_bits: int
    bias: int
    fnuz: bool      # 0x80 is the NaN; no infinity, no negative zero
    max_code: int   # the largest finite magnitude code


FORMATS = {f.name: f for f in (
    Fp8Format("e4m3fnuz", 4, 3, 8, True, 0x7F),    # max 240
    Fp8Format("e5m2fnuz", 5, 2, 16, True, 0x7F),   # max 57344
    Fp8Format("e4m3fn", 4, 3, 7, False, 0x7E),     # max 448; 0x7F / 0xFF NaN
    Fp8Format("e5m2", 5, 2, 15, False, 0x7B),      # max 57344; 0x7C inf, 0x7D-0x7F NaN
)}

# [ONNX] what a finite value beyond the range and an infinity become, by (format, saturate)
OVERFLOW = {
    ("e4m3fnuz", True): ("max", "nan"), ("e4m3fnuz", False): ("nan", "nan"),
    ("e5m2fnuz", True): ("max", "nan"), ("e5m2fnuz", False): ("nan", "nan"),
    ("e4m3fn", True): ("max", "max"), ("e4m3fn", False): ("nan", "nan"),
    ("e5m2", True): ("max", "max"), ("e5m2", False): ("inf", "inf"),
}

# The hardware: (instruction family, format flavour, MODE.FP16_OVFL) -> (saturate, inputs left undocumented).
# FNUZ: the ONNX policy (Triton's own emulation of the instruction). OCP v_cvt_pk_*: saturating for finite values,
# but an infinite input with the bit set is open ([CDNA4] says true INF values are preserved, e4m3fn has none,
# and Triton's test skips inf clamping on GFX12). v_cvt_scalef32_*: only the bit-set behaviour is tested.
HW_POLICY = {
    ("cvt_pk", "fnuz", False): (False, ()),
    ("cvt_pk", "fnuz", True): (True, ()),
    ("cvt_pk", "ocp", False): (False, ()),
    ("cvt_pk", "ocp", True): (True, ("inf",)),
    ("scalef32", "ocp", True): (True, ()),
    ("scalef32", "ocp", False): (False, ("overflow", "inf")),
}

_QNAN_F32 = np.uint32(0x7FC00000)


@lru_cache(maxsize=None)
def _decode_table(name: str) -> np.ndarray:
    """float32 [256]: the value of every code. NaN codes give a quiet NaN (0x7FC00000, with the code's sign for
    the OCP formats: the hardware's NaN payload is not documented)."""
    f = FORMATS[name]
    code = np.arange(256)
    sign = np.where(code & 0x80, -1.0, 1.0)
    exp = (code >> f.man_bits) & ((1 << f.exp_bits) - 1)
    man = code & ((1 << f.man_bits) - 1)
    frac = man / (1 << f.man_bits)
    value = sign * np.where(exp == 0, frac * 2.0 ** (1 - f.bias), (1 + frac) * 2.0 ** (exp - f.bias))
    table = value.astype(np.float32)
    bits = table.view(np.uint32)
    top = (1 << f.exp_bits) - 1
    if f.fnuz:
        bits[0x80] = _QNAN_F32
    elif f.name == "e4m3fn":
        nan = (exp == top) & (man == (1 << f.man_bits) - 1)
        bits[nan] = _QNAN_F32 | (np.uint32(0x80000000) * (code[nan] >> 7).astype(np.uint32))
    else:
        inf = (exp == top) & (man == 0)
        bits[inf] = np.uint32(0x7F800000) | (np.uint32(0x80000000) * (code[inf] >> 7).astype(np.uint32))
        nan = (exp == top) & (man != 0)
        bits[nan] = _QNAN_F32 | (np.uint32(0x80000000) * (code[nan] >> 7).astype(np.uint32))
    return table


def fp8_decode(codes_u8, fmt: str) -> np.ndarray:
    """float32 values of fp8 codes (uint8, or any integer array whose low byte is the code)."""
    return _decode_table(fmt)[np.asarray(codes_u8).astype(np.int64) & 0xFF]


def _as_f32(x) -> np.ndarray:
    """A float input as float32: float32 values, or their uint32 bit patterns. Wider floats are refused, so
    a caller cannot round twice by accident."""
    x = np.asarray(x)
    if x.dtype == np.uint32:
        return x.view(np.float32)
    if x.dtype == np.float32:
        return x
    if x.dtype.kind in "fiu":
        y = x.astype(np.float32)
        if not np.array_equal(y.astype(x.dtype), x, equal_nan=x.dtype.kind == "f"):
            raise TypeError(f"{x.dtype} input is not exactly a float32")
        return y
    raise TypeError(f"cannot read {x.dtype} as float32")


def _round_magnitude(a: np.ndarray, f: Fp8Format, rounding: str):
    """(magnitude code, overflow) of non-negative finite float64 `a`. The grid of finite magnitudes is extended
    by one step past the maximum (a code of the other parity), so round-to-nearest-even decides exactly whether a
    value overflows: 248 ties between 240 (code 0x7F, odd) and 256 in e4m3fnuz and overflows, 464 ties between
    448 (0x7E, even) and 480 in e4m3fn and does not."""
    mags = _decode_table(f.name)[: f.max_code + 1].astype(np.float64)
    grid = np.append(mags, 2 * mags[-1] - mags[-2])
    top = len(grid) - 1  # the step past the maximum: overflow
    lo = np.clip(np.searchsorted(grid, a, side="right") - 1, 0, top)
    if rounding == "rtz":
        return np.minimum(lo, f.max_code), np.zeros(a.shape, bool)
    if rounding != "rne":
        raise ValueError(f"unknown rounding {rounding!r}")
    hi = np.minimum(lo + 1, top)
    twice, mid = 2 * a, grid[lo] + grid[hi]          # exact in float64
    up = (twice > mid) | ((twice == mid) & (lo % 2 == 1))
    code = np.where(up & (lo < top), hi, lo)
    return code, code >= top


def fp8_encode(x_f32, fmt: str, rounding: str = "rne", saturate: bool = False) -> np.ndarray:
    """uint8 fp8 codes of float32 values, rounded exactly; out-of-range values and infinities as OVERFLOW says.
    NaN gives 0x80 (FNUZ), 0x7F|sign (e4m3fn) or 0x7E|sign (e5m2). FNUZ has no -0: values that round to zero
    give 0x00 whatever their sign."""
    f = FORMATS[fmt]
    x = _as_f32(x_f32)
    nan, inf = np.isnan(x), np.isinf(x)
    a = np.where(nan | inf, 0.0, np.abs(x.astype(np.float64)))
    code, overflow = _round_magnitude(a, f, rounding)
    special = {"max": f.max_code, "nan": 0x7F, "inf": 0x7C}
    on_overflow, on_inf = OVERFLOW[(fmt, bool(saturate))]
    code = np.where(overflow, special[on_overflow], code)
    code = np.where(inf, special[on_inf], code)
    nan_out = nan | (overflow & (on_overflow == "nan")) | (inf & (on_inf == "nan"))
    negative = np.signbit(x)
    if f.fnuz:
        out = np.where(code == 0, 0, code | np.where(negative, 0x80, 0))
        out = np.where(nan_out, 0x80, out)
    else:
        out = code | np.where(negative, 0x80, 0)
        out = np.where(nan_out, (0x7F if f.man_bits == 3 else 0x7E) | np.where(negative, 0x80, 0), out)
    return out.astype(np.uint8)


def fp8_format(kind: str, arch: str) -> str:
    """The format `kind` ("fp8" or "bf8") means on `arch` for the conversion instructions."""
    arch_major(arch)  # validates the name
    name = str(arch).lower()
    if name in ("gfx940", "gfx941", "gfx942"):
        return {"fp8": "e4m3fnuz", "bf8": "e5m2fnuz"}[kind]
    if name in ("gfx950", "gfx1200", "gfx1201"):  # gfx1250's conversions differ (a UE5M3 clamp mode): not here
        return {"fp8": "e4m3fn", "bf8": "e5m2"}[kind]
    raise NotModelled(f"fp8 conversion instructions on {arch}")


def _hw_encode(x, fmt: str, family: str, clamp: bool) -> np.ndarray:
    """fp8_encode with the saturation the hardware applies, NotModelled where its result is undocumented."""
    f = FORMATS[fmt]
    x = _as_f32(x)
    saturate, open_cases = HW_POLICY[(family, "fnuz" if f.fnuz else "ocp", bool(clamp))]
    if "inf" in open_cases and np.any(np.isinf(x)):
        raise NotModelled(f"{family} to {fmt} of an infinity with MODE.FP16_OVFL={int(clamp)}")
    if "overflow" in open_cases:
        finite = np.isfinite(x)
        _, overflow = _round_magnitude(np.abs(np.where(finite, x, 0).astype(np.float64)), f, "rne")
        if np.any(overflow & finite):
            raise NotModelled(f"{family} to {fmt} of an out-of-range value with MODE.FP16_OVFL={int(clamp)}")
    return fp8_encode(x, fmt, "rne", saturate)


def _pack_word(old, lo_byte, hi_byte, word_sel) -> np.ndarray:
    """{hi, lo} into bits [15:0] (word_sel 0) or [31:16] (1) of old; the other word is preserved."""
    shift = np.uint32(16 if word_sel else 0)
    word = (lo_byte.astype(np.uint32) | (hi_byte.astype(np.uint32) << np.uint32(8))) << shift
    keep = np.uint32(0xFFFF) << np.uint32(0 if word_sel else 16)
    return (np.asarray(old).astype(np.uint32) & keep) | word


def cvt_pk_fp8_f32(a, b, old, word_sel, arch, clamp=False):
    """llvm.amdgcn.cvt.pk.fp8.f32(float a, float b, i32 old, i1 word_sel) -> i32: {fp8(b), fp8(a)} into the
    low (word_sel=0) or high word of old, round to nearest even [CDNA4 V_CVT_PK_FP8_F32]."""
    fmt = fp8_format("fp8", arch)
    return _pack_word(old, _hw_encode(a, fmt, "cvt_pk", clamp), _hw_encode(b, fmt, "cvt_pk", clamp), word_sel)


def cvt_pk_bf8_f32(a, b, old, word_sel, arch, clamp=False):
    """llvm.amdgcn.cvt.pk.bf8.f32: as cvt_pk_fp8_f32 with e5m2 (FNUZ on gfx942, OCP on gfx950/gfx12)."""
    fmt = fp8_format("bf8", arch)
    return _pack_word(old, _hw_encode(a, fmt, "cvt_pk", clamp), _hw_encode(b, fmt, "cvt_pk", clamp), word_sel)


def _byte(src, index) -> np.ndarray:
    return (np.asarray(src).astype(np.int64) >> (8 * int(index))) & 0xFF


def cvt_f32_fp8(src_i32, byte_sel, arch):
    """llvm.amdgcn.cvt.f32.fp8(i32 src, i32 byte_sel): float32 value of byte byte_sel (0-3) of src."""
    return fp8_decode(_byte(src_i32, byte_sel), fp8_format("fp8", arch))


def cvt_f32_bf8(src_i32, byte_sel, arch):
    """llvm.amdgcn.cvt.f32.bf8: as cvt_f32_fp8 for e5m2."""
    return fp8_decode(_byte(src_i32, byte_sel), fp8_format("bf8", arch))


def _unpack_pair(src, word_sel, fmt) -> np.ndarray:
    base = 2 * (1 if word_sel else 0)
    return np.stack([fp8_decode(_byte(src, base), fmt), fp8_decode(_byte(src, base + 1), fmt)], axis=-1)


def cvt_pk_f32_fp8(src_i32, word_sel, arch):
    """llvm.amdgcn.cvt.pk.f32.fp8(i32 src, i1 word_sel) -> <2 x float> as [..., 2]: the bytes of the low
    (word_sel=0) or high word, lower byte first."""
    return _unpack_pair(src_i32, word_sel, fp8_format("fp8", arch))


def cvt_pk_f32_bf8(src_i32, word_sel, arch):
    """llvm.amdgcn.cvt.pk.f32.bf8: as cvt_pk_f32_fp8 for e5m2."""
    return _unpack_pair(src_i32, word_sel, fp8_format("bf8", arch))


def cvt_sr_fp8_f32(a, rnd, old, byte_sel, arch, clamp=False):
    """llvm.amdgcn.cvt.sr.fp8.f32 (stochastic rounding): NotModelled. [CDNA4]'s pseudocode adds S1[31:12] to the
    23-bit mantissa "wrap[ping] around on overflow" and then rounds to nearest even, which is not a stochastic
    rounding; the hardware's actual rule is not documented."""
    raise NotModelled("llvm.amdgcn.cvt.sr.fp8.f32 (stochastic rounding is not documented exactly)")


def cvt_sr_bf8_f32(a, rnd, old, byte_sel, arch, clamp=False):
    """llvm.amdgcn.cvt.sr.bf8.f32: NotModelled, as cvt_sr_fp8_f32."""
    raise NotModelled("llvm.amdgcn.cvt.sr.bf8.f32 (stochastic rounding is not documented exactly)")


def cvt_pkrtz(a, b) -> np.ndarray:
    """llvm.amdgcn.cvt.pkrtz(float a, float b) -> <2 x half> as uint32 (a in bits [15:0]): f32 -> f16 rounding
    toward zero whatever the mode [CDNA4 V_CVT_PKRTZ_F16_F32]; a finite value beyond the range gives +/-65504
    (IEEE round-toward-zero overflow), NaN a quiet NaN with its sign and top payload bits (payload not documented)."""
    def rtz(x):
        x = _as_f32(x)
        with np.errstate(over="ignore"):
            h = x.astype(np.float16)
        bits = h.view(np.uint16).astype(np.uint32)
        away = np.isfinite(x) & (np.abs(h.astype(np.float64)) > np.abs(x.astype(np.float64)))
        bits = np.where(away, bits - 1, bits)   # one code toward zero (inf -> 0x7BFF = 65504)
        return np.where(np.isnan(x), bits | 0x0200, bits).astype(np.uint32)
    return rtz(a) | (rtz(b) << np.uint32(16))


def cvt_pknorm_i16(a, b):
    """llvm.amdgcn.cvt.pknorm.i16: NotModelled — [CDNA4] defines it with f32_to_snorm, whose rounding is not given."""
    raise NotModelled("llvm.amdgcn.cvt.pknorm.i16 (f32_to_snorm rounding not documented)")


def cvt_pknorm_u16(a, b):
    """llvm.amdgcn.cvt.pknorm.u16: NotModelled — f32_to_unorm's rounding is not given."""
    raise NotModelled("llvm.amdgcn.cvt.pknorm.u16 (f32_to_unorm rounding not documented)")


def _scale_one(scale, arch):
    """The scaled conversions only with a scale of exponent 127 (2^0, what Triton passes: scalePk4DowncastToFp8,
    scalePk4UpcastFromFp8 use f32 1.0), for which scaling up or down is the identity; [CDNA4] does not define
    f32_to_fp8_scale and friends, so other scales are NotModelled."""
    if str(arch).lower() != "gfx950":
        raise NotModelled(f"v_cvt_scalef32_* on {arch}")
    if np.any(((_as_f32(scale).view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF)) != 127):
        raise NotModelled("v_cvt_scalef32_* with a scale other than 2^0")


def _halves_f32(src, kind):
    """The two 16-bit floats of a packed uint32 (element 0 in bits [15:0]) as float32, exactly."""
    src = np.asarray(src).astype(np.uint32)
    halves = [(src >> np.uint32(sh)) & np.uint32(0xFFFF) for sh in (0, 16)]
    if kind == "f16":
        return [h.astype(np.uint16).view(np.float16).astype(np.float32) for h in halves]
    return [(h << np.uint32(16)).view(np.float32) for h in halves]


def _scaled_down(kind, src_kind):
    """llvm.amdgcn.cvt.scalef32.pk.{fp8,bf8}.{f32,f16,bf16} on gfx950 with scale 2^0: f32 sources are
    (old, a, b, scale, word_sel), 16-bit sources (old, src packed as uint32, scale, word_sel); -> uint32."""
    def encode(old, lo, hi, scale, word_sel, arch, clamp):
        _scale_one(scale, arch)
        fmt = fp8_format(kind, arch)
        return _pack_word(old, _hw_encode(lo, fmt, "scalef32", clamp), _hw_encode(hi, fmt, "scalef32", clamp),
                          word_sel)

    if src_kind == "f32":
        def convert(old, a, b, scale, word_sel, arch, clamp=False):
            return encode(old, a, b, scale, word_sel, arch, clamp)
    else:
        def convert(old, src, scale, word_sel, arch, clamp=False):
            return encode(old, *_halves_f32(src, src_kind), scale, word_sel, arch, clamp)
    convert.__name__ = f"cvt_scalef32_pk_{kind}_{src_kind}"
    return convert


def _scaled_up(kind, dst_kind):
    """llvm.amdgcn.cvt.scalef32.pk.{f32,f16,bf16}.{fp8,bf8}(i32 src, float scale, i1 word_sel) on gfx950 with
    scale 2^0: f32 gives [..., 2] float32; f16/bf16 give the packed uint32 (every fp8 value is exact in both)."""
    def convert(src, scale, word_sel, arch):
        _scale_one(scale, arch)
        pair = _unpack_pair(src, word_sel, fp8_format(kind, arch))
        if dst_kind == "f32":
            return pair
        if dst_kind == "f16":
            bits = pair.astype(np.float16).view(np.uint16).astype(np.uint32)
        else:
            bits = pair.view(np.uint32) >> np.uint32(16)
        return bits[..., 0] | (bits[..., 1] << np.uint32(16))
    convert.__name__ = f"cvt_scalef32_pk_{dst_kind}_{kind}"
    return convert


cvt_scalef32_pk_fp8_f32 = _scaled_down("fp8", "f32")
cvt_scalef32_pk_bf8_f32 = _scaled_down("bf8", "f32")
cvt_scalef32_pk_fp8_f16 = _scaled_down("fp8", "f16")
cvt_scalef32_pk_bf8_f16 = _scaled_down("bf8", "f16")
cvt_scalef32_pk_fp8_bf16 = _scaled_down("fp8", "bf16")
cvt_scalef32_pk_bf8_bf16 = _scaled_down("bf8", "bf16")
cvt_scalef32_pk_f32_fp8 = _scaled_up("fp8", "f32")
cvt_scalef32_pk_f32_bf8 = _scaled_up("bf8", "f32")
cvt_scalef32_pk_f16_fp8 = _scaled_up("fp8", "f16")
cvt_scalef32_pk_f16_bf8 = _scaled_up("bf8", "f16")
cvt_scalef32_pk_bf16_fp8 = _scaled_up("fp8", "bf16")
cvt_scalef32_pk_bf16_bf8 = _scaled_up("bf8", "bf16")


def perm_b32(src0, src1, sel) -> np.ndarray:
    """llvm.amdgcn.perm / V_PERM_B32: byte k of the result is BYTE_PERMUTE({src0, src1}, sel byte k) [CDNA4]:
    selector 0-7 picks byte s of the 64-bit value whose low word is src1; 8, 9, 10, 11 replicate the sign bit of
    byte 1, 3, 5, 7; 12 gives 0x00; 13 and above (the whole byte, up to 0xff) give 0xff."""
    src0, src1, sel = (np.asarray(v).astype(np.uint64) & np.uint64(0xFFFFFFFF) for v in (src0, src1, sel))
    data = (src0 << np.uint64(32)) | src1
    out = np.zeros(np.broadcast(data, sel).shape, np.uint64)
    for k in range(4):
        s = (sel >> np.uint64(8 * k)) & np.uint64(0xFF)
        picked = (data >> (np.uint64(8) * np.minimum(s, np.uint64(7)))) & np.uint64(0xFF)
        sign_byte = np.uint64(2) * (np.clip(s, 8, 11) - np.uint64(8)) + np.uint64(1)  # 8 -> byte 1 .. 11 -> 7
        sign = (data >> (np.uint64(8) * sign_byte + np.uint64(7))) & np.uint64(1)
        byte = np.where(s <= 7, picked,
                        np.where(s <= 11, sign * np.uint64(0xFF), np.where(s == 12, np.uint64(0), np.uint64(0xFF))))
        out |= byte << np.uint64(8 * k)
    return out.astype(np.uint32)
