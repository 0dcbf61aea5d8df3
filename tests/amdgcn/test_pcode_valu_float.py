"""Vector ALU float pseudocode: NaN and signed-zero cases, rounding, conversions, 16-bit results, fma.

Each case quotes the guide's pseudocode it checks; expected bits are written with ``struct`` from Python floats,
choosing operands whose exact result is representable so no second rounding hides in the expectation.
"""
import math
from fractions import Fraction

import pytest

from gfxhound.executors.amdgcn.pcode import NotModelled, compile_op
from pcode_run import INF32, NINF32, QNAN32, SNAN32, f16, f32, f64, vrun

M32 = 0xFFFFFFFF
IEEE = {"WAVE_MODE__IEEE": 1}
NOT_IEEE = {"WAVE_MODE__IEEE": 0}

CASES = [
    # mnemonic, active lanes, inputs, expected outputs, the pseudocode checked
    ("v_max_f32", 5, dict(S0=[QNAN32, f32(1), SNAN32, f32(-0.0), f32(0.0)],
                          S1=[f32(1), QNAN32, f32(1), f32(0.0), f32(-0.0)], **IEEE),
     dict(D0=[f32(1), f32(1), 0x7FE00000, f32(0.0), f32(0.0)]),
     "isNAN(S0) -> S1; IEEE && isSignalNAN(S0) -> cvtToQuietNAN(S0); +0 is larger than -0"),
    ("v_max_f32", 2, dict(S0=[SNAN32, f32(-2.0)], S1=[f32(1), f32(-3.0)], **NOT_IEEE), dict(D0=[f32(1), f32(-2.0)]),
     "without WAVE_MODE.IEEE a signalling NaN is just a NaN: the other operand"),
    ("v_min_f32", 4, dict(S0=[f32(-0.0), f32(0.0), f32(2), QNAN32], S1=[f32(0.0), f32(-0.0), f32(1), QNAN32], **IEEE),
     dict(D0=[f32(-0.0), f32(-0.0), f32(1), QNAN32]), "(S0 == -0.0) && (S1 == +0.0) -> S0: -0 is smaller"),
    ("v_max_f64", 2, dict(S0=[f64(-0.0), f64(math.nan)], S1=[f64(0.0), f64(2.0)], **IEEE), dict(D0=[f64(0.0), f64(2.0)]),
     "64-bit max: signed zeros, NaN"),
    ("v_max_f16", 1, dict(S0=[0x7E00], S1=[f16(1.0)], D0=[0xFFFF0000], **IEEE), dict(D0=[0xFFFF0000 | f16(1.0)]),
     "D0.f16 = S1.f16 for a NaN S0; D0[31:16] not written, so the old bits stay"),
    ("v_med3_f32", 2, dict(S0=[f32(1), QNAN32], S1=[f32(3), f32(1)], S2=[f32(2), f32(2)], **IEEE),
     dict(D0=[f32(2), f32(1)]), "a NaN input: v_min3_f32(S0, S1, S2)"),
    ("v_max3_f32", 1, dict(S0=[f32(1)], S1=[f32(3)], S2=[f32(2)], **IEEE), dict(D0=[f32(3)]), "v_max_f32(v_max_f32(..))"),
    ("v_add_f32", 1, dict(S0=[f32(1.0)], S1=[f32(2 ** -24)]), dict(D0=[f32(1.0)]), "a tie rounds to even"),
    ("v_add_f32", 1, dict(S0=[f32(1.0 + 2 ** -23)], S1=[f32(2 ** -24)]), dict(D0=[f32(1.0 + 2 ** -22)]), "tie up to even"),
    ("v_mul_f32", 1, dict(S0=[f32(1 + 2 ** -23)], S1=[f32(1 + 2 ** -23)]), dict(D0=[f32(1 + 2 ** -22)]),
     "1 + 2^-22 + 2^-46 rounds down"),
    ("v_sub_f32", 1, dict(S0=[f32(1.0)], S1=[f32(1.0)]), dict(D0=[f32(0.0)]), "x - x is +0 in round-to-nearest"),
    ("v_mul_f32", 1, dict(S0=[f32(2.0 ** -100)], S1=[f32(2.0 ** -40)]), dict(D0=[f32(2.0 ** -140)]), "a denormal result"),
    ("v_fma_f32", 2, dict(S0=[f32(1 + 2 ** -23), f32(0.1)], S1=[f32(1 - 2 ** -23), f32(10.0)], S2=[f32(-1.0), f32(-1.0)]),
     dict(D0=[f32(-2.0 ** -46), f32(float(Fraction(float.fromhex("0x1.99999ap-4")) * 10 - 1))]),
     "fma(S0.f32, S1.f32, S2.f32): one rounding (a separate multiply would give 0 in lane 0)"),
    ("v_fma_f64", 1, dict(S0=[f64(1 + 2 ** -52)], S1=[f64(1 - 2 ** -52)], S2=[f64(-1.0)]), dict(D0=[f64(-2.0 ** -104)]),
     "fma(S0.f64, ...): exact product"),
    ("v_fma_f16", 1, dict(S0=[f16(1 + 2 ** -10)], S1=[f16(1 - 2 ** -11)], S2=[f16(-1.0)], D0=[0]),
     dict(D0=[f16(2 ** -11 - 2 ** -21)]), "fma on halves: 2^-11 - 2^-21 is exact in f16"),
    ("v_fmac_f32", 1, dict(S0=[f32(2.0)], S1=[f32(3.0)], D0=[f32(1.0)]), dict(D0=[f32(7.0)]), "fma(S0, S1, D0.f32)"),
    ("v_add_f16", 2, dict(S0=[f16(1.0), f16(65504.0)], S1=[f16(2 ** -11), f16(32.0)], D0=[0xABCD0000] * 2),
     dict(D0=[0xABCD0000 | f16(1.0), 0xABCD0000 | 0x7C00]), "D0.f16 = S0.f16 + S1.f16: tie to even; overflow to inf"),
    ("v_mad_f16", 1, dict(S0=[f16(1 + 2 ** -10)], S1=[f16(1 + 2 ** -10)], S2=[f16(-1.0)], D0=[0]),
     dict(D0=[f16(2 ** -9)]), "S0.f16 * S1.f16 + S2.f16: the product rounds first (1 + 2^-9)"),
    ("v_ldexp_f32", 3, dict(S0=[f32(1.0), 1, f32(2.0 ** -126)], S1=[128, 200, M32]),
     dict(D0=[INF32, f32(2.0 ** 51), f32(2.0 ** -127)]),
     "S0.f32 * 2.0F ** S1.i32: an exact scaling (the denormal 2^-149 * 2^200 is finite; decision)"),
    ("v_ldexp_f16", 1, dict(S0=[f16(2.0 ** -14)], S1=[20], D0=[0]), dict(D0=[f16(64.0)]),
     "S0.f16 * 16'F(2.0F ** 32'I(S1.i16)): 2^20 overflows f16 but the product does not"),
    ("v_div_fmas_f32", 2, dict(S0=[f32(1.0)] * 2, S1=[f32(1.0)] * 2, S2=[f32(1.0)] * 2, VCC=0b10),
     dict(D0=[f32(2.0), f32(2.0 ** 33)]), "VCC.u64[laneId] ? 2.0F ** 32 * fma(...) : fma(...)"),
    ("v_div_fixup_f32", 4, dict(S0=[f32(2.0)] * 4, S1=[f32(0.0), f32(4.0), f32(0.0), f32(-4.0)],
                                S2=[f32(1.0), f32(8.0), f32(0.0), f32(0.0)]),
     dict(D0=[INF32, f32(2.0), 0xFFC00000, f32(-0.0)]),
     "x/0 -> +-INF; 0/0 -> 32'F(0xffc00000); 0/y -> sign_out ? -0.0F : 0.0F; else +-abs(S0)"),
    ("v_rndne_f32", 4, dict(S0=[f32(2.5), f32(3.5), f32(-2.5), f32(0.5)]), dict(D0=[f32(2.0), f32(4.0), f32(-2.0), f32(0.0)]),
     "floor(S0 + 0.5F), minus 1 when floor(S0) is even and fract(S0) == 0.5F"),
    ("v_floor_f32", 2, dict(S0=[f32(-0.5), f32(1.5)]), dict(D0=[f32(-1.0), f32(1.0)]), "trunc, then += -1.0F if negative"),
    ("v_ceil_f32", 2, dict(S0=[f32(-0.5), f32(1.5)]), dict(D0=[f32(-0.0), f32(2.0)]), "trunc(-0.5) is -0.0"),
    ("v_fract_f32", 2, dict(S0=[f32(-0.25), f32(1.75)]), dict(D0=[f32(0.75), f32(0.75)]), "S0.f32 + -floor(S0.f32)"),
    ("v_cvt_f32_i32", 4, dict(S0=[M32, 0x7FFFFFFF, 16777217, 0x80000000]),
     dict(D0=[f32(-1.0), f32(2.0 ** 31), f32(16777216.0), f32(-2.0 ** 31)]), "i32_to_f32: nearest even"),
    ("v_cvt_f32_u32", 1, dict(S0=[M32]), dict(D0=[f32(2.0 ** 32)]), "u32_to_f32 rounds up to 2^32"),
    ("v_cvt_i32_f32", 4, dict(S0=[f32(-1.5), f32(3e9), QNAN32, f32(-3e9)]), dict(D0=[M32, 0x7FFFFFFF, 0, 0x80000000]),
     "f32_to_i32: toward zero, saturating, NaN -> 0 (decision)"),
    ("v_cvt_u32_f32", 4, dict(S0=[f32(-1.5), f32(5e9), QNAN32, f32(4294967040.0)]), dict(D0=[0, M32, 0, 0xFFFFFF00]),
     "f32_to_u32: negative -> 0"),
    ("v_cvt_i32_f64", 1, dict(S0=[f64(-2147483648.9)]), dict(D0=[0x80000000]), "f64_to_i32 truncates"),
    ("v_cvt_rpi_i32_f32", 2, dict(S0=[f32(2.5), f32(-2.5)]), dict(D0=[3, 0xFFFFFFFE]), "f32_to_i32(floor(S0 + 0.5F))"),
    ("v_cvt_flr_i32_f32", 2, dict(S0=[f32(2.5), f32(-2.5)]), dict(D0=[2, 0xFFFFFFFD]), "f32_to_i32(floor(S0))"),
    ("v_cvt_f16_f32", 4, dict(S0=[f32(1 + 2 ** -11), f32(1 + 3 * 2 ** -11), f32(70000.0), SNAN32], D0=[0] * 4),
     dict(D0=[f16(1.0), f16(1 + 2 ** -9), 0x7C00, 0x7F00]),
     "f32_to_f16: ties to even, overflow to inf, a signalling NaN comes out quiet"),
    ("v_cvt_f32_f16", 3, dict(S0=[f16(1.5), 0x7D00, 0x0001]), dict(D0=[f32(1.5), 0x7FE00000, f32(2.0 ** -24)]),
     "f16_to_f32: exact; quiets a NaN; the f16 denormal is a normal f32"),
    ("v_cvt_f32_f64", 1, dict(S0=[f64(1 + 2 ** -24 + 2 ** -50)]), dict(D0=[f32(1 + 2 ** -23)]), "above the tie: up"),
    ("v_cvt_f64_i32", 1, dict(S0=[0x80000000]), dict(D0=[f64(-2.0 ** 31)]), "i32_to_f64 exact"),
    ("v_cvt_f32_ubyte1", 1, dict(S0=[0xFF00]), dict(D0=[f32(255.0)]), "u32_to_f32(S0[15 : 8].u32)"),
    ("v_cvt_f32_bf16", 1, dict(S0=[0x3FC0]), dict(D0=[f32(1.5)]), "32'F({ S0.b16, 16'0U })"),
    ("v_cvt_pkrtz_f16_f32", 2, dict(S0=[f32(1 + 3 * 2 ** -11), f32(70000.0)], S1=[f32(-1 - 3 * 2 ** -11), f32(-70000.0)]),
     dict(D0=[0xBC013C01, 0xFBFF7BFF]), "ROUND_MODE = ROUND_TOWARD_ZERO: down in magnitude, 65504 not inf"),
    ("v_cvt_pk_f16_f32", 1, dict(S0=[f32(1 + 3 * 2 ** -11)], S1=[f32(70000.0)]), dict(D0=[0x7C003C02]),
     "ROUND_NEAREST_EVEN: the same inputs round to even and overflow"),
    ("v_cvt_pk_bf16_f32", 2, dict(S0=[0x3F808000, 0x3F818000], S1=[SNAN32, 0x3F800001]), dict(D0=[0x7FE03F80, 0x3F803F82]),
     "f32_to_bf16 under ROUND_NEAREST_EVEN: ties to even; a NaN is kept quiet"),
    ("v_pack_b32_f16", 1, dict(S0=[0x1111], S1=[0x2222]), dict(D0=[0x22221111]), "D0[31 : 16].f16 = S1.f16"),
    ("v_frexp_mant_f32", 3, dict(S0=[f32(12.0), f32(-0.75), INF32]), dict(D0=[f32(0.75), f32(-0.75), INF32]),
     "mantissa(S0.f32) in [0.5, 1); +-INF passes through"),
    ("v_frexp_exp_i32_f32", 3, dict(S0=[f32(12.0), f32(0.75), INF32]), dict(D0=[4, 0, 0]), "exponent(S0.f32) - 127 + 1"),
    ("v_mul_legacy_f32", 2, dict(S0=[f32(0.0), f32(2.0)], S1=[INF32, f32(3.0)]), dict(D0=[f32(0.0), f32(6.0)]),
     "DX9 rules, 0.0 * x = 0.0"),
    ("v_exp_f32", 1, dict(S0=[f32(3.0)]), dict(D0=[f32(8.0)]), "pow(2.0F, S0.f32)"),
    ("v_sqrt_f32", 1, dict(S0=[f32(4.0)]), dict(D0=[f32(2.0)]), "sqrt(S0.f32)"),
    ("v_sin_f32", 1, dict(S0=[f32(0.25)]), dict(D0=[f32(1.0)]), "sin(S0.f32 * 32'F(PI * 2.0)): input in turns"),
    ("v_pk_fma_f32", 1, dict(S0=[f32(2.0) | f32(3.0) << 32], S1=[f32(4.0) | f32(5.0) << 32], S2=[f32(1.0) | f32(1.0) << 32]),
     dict(D0=[f32(9.0) | f32(16.0) << 32]), "tmp[63 : 32].f32 = fma(S0[63 : 32].f32, ...)"),
    ("v_pk_add_f16", 1, dict(S0=[f16(1.0) | f16(-2.0) << 16], S1=[f16(0.5) | f16(2.0) << 16]),
     dict(D0=[f16(1.5) | f16(0.0) << 16]), "per half"),
    ("v_dot2_f32_f16", 1, dict(S0=[f16(1.0) | f16(2.0) << 16], S1=[f16(3.0) | f16(4.0) << 16], S2=[f32(0.5)]),
     dict(D0=[f32(11.5)]), "tmp = S2.f32; tmp += f16_to_f32(...) * f16_to_f32(...)"),
    ("v_mad_mix_f32", 1, dict(S0=[f16(2.0) << 16], S1=[f32(3.0)], S2=[f16(1.0)], OPSEL=0b001, OPSEL_HI=0b101),
     dict(D0=[f32(7.0)]), "OPSEL_HI.u3[i] chooses f16 sources, OPSEL.u3[i] their high half"),
]


@pytest.mark.parametrize("mnemonic,n,inputs,expected,words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_vector_alu_float(mnemonic, n, inputs, expected, words):
    assert vrun(mnemonic, n, **inputs) == expected, words


CMP = [  # mnemonic, S0, S1 (three lanes), expected mask: the NaN rules of the guide's comparisons
    ("v_cmp_lt_f32", [f32(1), QNAN32, f32(-0.0)], [f32(2), f32(1), f32(0.0)], 0b001),
    ("v_cmp_eq_f32", [f32(-0.0), QNAN32, f32(1)], [f32(0.0), QNAN32, f32(1)], 0b101),
    ("v_cmp_lg_f32", [f32(1), QNAN32, f32(1)], [f32(2), f32(1), f32(1)], 0b001),    # <>: ordered, not equal
    ("v_cmp_neq_f32", [f32(1), QNAN32, f32(1)], [f32(2), f32(1), f32(1)], 0b011),   # !(==): true on NaN
    ("v_cmp_nge_f32", [f32(1), QNAN32, f32(3)], [f32(2), f32(1), f32(1)], 0b011),   # !(>=), not the same as <
    ("v_cmp_o_f32", [f32(1), QNAN32, INF32], [f32(2), f32(1), NINF32], 0b101),
    ("v_cmp_u_f32", [f32(1), QNAN32, INF32], [f32(2), f32(1), QNAN32], 0b110),
    ("v_cmp_tru_f32", [QNAN32] * 3, [QNAN32] * 3, 0b111),
    ("v_cmp_gt_f64", [f64(1.5), f64(math.nan), f64(-1.0)], [f64(1.0), f64(0.0), f64(-2.0)], 0b101),
    ("v_cmp_le_f16", [f16(1.0), 0x7E00, f16(-0.0)], [f16(1.0), f16(1.0), f16(0.0)], 0b101),
]


@pytest.mark.parametrize("mnemonic,s0,s1,bits", CMP)
def test_float_compare(mnemonic, s0, s1, bits):
    assert vrun(mnemonic, 3, S0=s0, S1=s1, D0=0) == {"D0": bits}


def test_cmp_class_covers_all_ten_classes():
    """V_CMP_CLASS_F32: result = S1.u32[k] for the class k of S0 (sNaN, qNaN, -inf, -normal, -denormal, -0,
    +0, +denormal, +normal, +inf): each lane asks for exactly its own class, so all ten bits come back set."""
    s0 = [SNAN32, QNAN32, NINF32, f32(-1.0), 0x80000001, 0x80000000, 0, 1, f32(1.0), INF32]
    assert vrun("v_cmp_class_f32", 10, S0=s0, S1=[1 << k for k in range(10)], D0=0) == {"D0": 0x3FF}
    assert vrun("v_cmp_class_f32", 10, S0=s0, S1=[0x3FF ^ (1 << k) for k in range(10)], D0=0) == {"D0": 0}


def test_transcendentals_are_flagged_approximate():
    """The guide bounds v_sqrt/v_exp/v_rcp errors in ulps; the Op says so, so a checker can allow the bound."""
    assert compile_op("v_sqrt_f32").approximate and compile_op("v_rcp_f32").approximate
    assert compile_op("v_exp_f32").approximate and compile_op("v_sin_f32").approximate
    assert not compile_op("v_add_f32").approximate and not compile_op("v_fma_f32").approximate


def test_frexp_exp_of_a_denormal_is_unresolved():
    """exponent(S0.f32) - 127 + 1 is not frexp's exponent for 0 or a denormal: reported, never computed."""
    with pytest.raises(NotModelled, match="denormal"):
        vrun("v_frexp_exp_i32_f32", 1, S0=[1])


def test_div_fixup_underflow_is_unresolved():
    """'D0.f32 = sign_out ? -UNDERFLOW_F32 : UNDERFLOW_F32': the guide does not give UNDERFLOW_F32's value."""
    assert vrun("v_div_fixup_f32", 1, S0=[f32(1.0)], S1=[f32(2.0 ** 100)], S2=[f32(2.0 ** -20)]) == {"D0": [f32(1.0)]}
    with pytest.raises(NotModelled, match="UNDERFLOW_F32"):
        vrun("v_div_fixup_f32", 1, S0=[f32(1.0)], S1=[f32(2.0 ** 100)], S2=[f32(2.0 ** -60)])
