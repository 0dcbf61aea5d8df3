"""Vector ALU integer pseudocode (VOP1/VOP2/VOP3/VOP3SD/VOPC/VOP3P) on boundary operands, lane by lane.

Each case quotes the guide's pseudocode it checks; expected lane values are hand-computed or plain Python ints.
"""
import pytest

from pcode_run import lanes, vrun

M32, M64 = 0xFFFFFFFF, 2 ** 64 - 1

CASES = [
    # mnemonic, active lanes, inputs, expected outputs, the pseudocode checked
    ("v_add_co_u32", 3, dict(S0=[M32, 1, 0x80000000], S1=[1, 2, 0x80000000], VCC=0),
     dict(D0=[0, 3, 0], VCC=0b101), "VCC.u64[laneId] = tmp >= 0x100000000ULL ? 1'1U : 1'0U"),
    ("v_addc_co_u32", 3, dict(S0=[M32, M32, 5], S1=[0, 1, 6], VCC=0b011),
     dict(D0=[0, 1, 11], VCC=0b011), "64'U(S0.u32) + 64'U(S1.u32) + VCC.u64[laneId].u64"),
    ("v_sub_co_u32", 2, dict(S0=[0, 5], S1=[1, 5], VCC=0), dict(D0=[M32, 0], VCC=0b01), "VCC = S1.u32 > S0.u32"),
    ("v_subb_co_u32", 2, dict(S0=[0, 5], S1=[0, 5], VCC=0b11), dict(D0=[M32, M32], VCC=0b11),
     "64'U(S1.u32) + VCC.u64[laneId].u64 > 64'U(S0.u32)"),
    ("v_subrev_co_u32", 1, dict(S0=[1], S1=[0], VCC=0), dict(D0=[M32], VCC=1), "tmp = S1.u32 - S0.u32"),
    ("v_add_u32", 2, dict(S0=[M32, 0x80000000], S1=[1, 0x80000000]), dict(D0=[0, 0]), "u32 wraps, no carry out"),
    ("v_sub_u32", 1, dict(S0=[0], S1=[1]), dict(D0=[M32]), "D0.u32 = S0.u32 - S1.u32"),
    ("v_lshlrev_b32", 4, dict(S0=[1, 31, 32, 33], S1=[1, 1, 1, 1]), dict(D0=[2, 0x80000000, 1, 2]),
     "D0.u32 = (S1.u32 << S0[4 : 0].u32): shift amount is S0, masked to 5 bits"),
    ("v_lshrrev_b32", 4, dict(S0=[1, 31, 32, 33], S1=[0x80000000] * 4), dict(D0=[0x40000000, 1, 0x80000000, 0x40000000]),
     "D0.u32 = (S1.u32 >> S0[4 : 0].u32)"),
    ("v_ashrrev_i32", 4, dict(S0=[1, 31, 32, 33], S1=[0x80000000] * 4),
     dict(D0=[0xC0000000, M32, 0x80000000, 0xC0000000]), "D0.i32 = (S1.i32 >> S0[4 : 0].u32): sign fill"),
    ("v_ashrrev_i32", 1, dict(S0=[4], S1=[0x7FFFFFFF]), dict(D0=[0x07FFFFFF]), "positive: zeros in"),
    ("v_lshlrev_b64", 4, dict(S0=[1, 63, 64, 65], S1=[1] * 4), dict(D0=[2, 1 << 63, 1, 2]), "S0[5 : 0]"),
    ("v_lshrrev_b64", 1, dict(S0=[63], S1=[1 << 63]), dict(D0=[1]), "64-bit logical"),
    ("v_ashrrev_i64", 2, dict(S0=[63, 64], S1=[1 << 63] * 2), dict(D0=[M64, 1 << 63]), "S1.i64 >> S0[5 : 0]"),
    ("v_lshlrev_b16", 2, dict(S0=[17, 15], S1=[1, 3], D0=[0xABCD0000] * 2), dict(D0=[0xABCD0002, 0xABCD8000]),
     "D0.u16 = (S1.u16 << S0[3 : 0].u32); bits 31:16 of D0 are not written"),
    ("v_ashrrev_i16", 1, dict(S0=[15], S1=[0x8000], D0=[0]), dict(D0=[0xFFFF]), "D0.i16 = (S1.i16 >> S0[3 : 0])"),
    ("v_add_u16", 1, dict(S0=[0xAAAAFFFF], S1=[0x55550001], D0=[0xDEAD0000]), dict(D0=[0xDEAD0000]),
     "D0.u16 = S0.u16 + S1.u16: wraps at 16 bits, high half of the old D0 kept"),
    ("v_mad_u16", 1, dict(S0=[0xFFFF], S1=[0xFFFF], S2=[1], D0=[0]), dict(D0=[2]), "S0.u16 * S1.u16 + S2.u16 mod 2^16"),
    ("v_mul_lo_u16", 1, dict(S0=[0x1FF], S1=[0x100], D0=[0]), dict(D0=[0xFF00]), "D0.u16 = S0.u16 * S1.u16"),
    ("v_max_i16", 1, dict(S0=[0x8000], S1=[0x7FFF], D0=[0]), dict(D0=[0x7FFF]), "S0.i16 >= S1.i16 (signed)"),
    ("v_min_u16", 1, dict(S0=[0x8000], S1=[0x7FFF], D0=[0]), dict(D0=[0x7FFF]), "S0.u16 < S1.u16 (unsigned)"),
    ("v_mad_u64_u32", 2, dict(S0=[M32, 2], S1=[M32, 3], S2=[M64, 4], D1=0),
     dict(D0=[(M32 * M32 + M64) % 2 ** 64, 10], D1=0b01),
     "{ D1.u1, D0.u64 } = 65'B(65'U(S0.u32) * 65'U(S1.u32) + 65'U(S2.u64)): D1 is the carry"),
    ("v_mad_i64_i32", 2, dict(S0=[M32, 2], S1=[1, 0xFFFFFFFD], S2=[0, 0], D1=0), dict(D0=[M64, 2 ** 64 - 6], D1=0b11),
     "65'I(S0.i32) * 65'I(S1.i32) + 65'I(S2.i64): D1 is bit 64 of the 65-bit result"),
    ("v_mul_hi_u32", 1, dict(S0=[M32], S1=[M32]), dict(D0=[(M32 * M32) >> 32]), "64'U(S0) * 64'U(S1) >> 32U"),
    ("v_mul_hi_i32", 2, dict(S0=[M32, 0x80000000], S1=[M32, 0x80000000]), dict(D0=[0, 0x40000000]), "64'I products"),
    ("v_mul_lo_u32", 1, dict(S0=[0x10001], S1=[0x10001]), dict(D0=[0x20001]), "low 32 bits of 0x100020001"),
    ("v_mul_i32_i24", 2, dict(S0=[0x00800000, 0xFF000001], S1=[2, 3]), dict(D0=[0xFF000000, 3]),
     "32'I(S0.i24) * 32'I(S1.i24): bits 31:24 ignored, bit 23 the sign"),
    ("v_mul_u32_u24", 1, dict(S0=[0xFF800000], S1=[2]), dict(D0=[0x1000000]), "32'U(S0.u24)"),
    ("v_mul_hi_u32_u24", 1, dict(S0=[0xFFFFFF], S1=[0xFFFFFF]), dict(D0=[(0xFFFFFF ** 2) >> 32]), "64'U(S0.u24) * ..."),
    ("v_mad_u32_u24", 1, dict(S0=[0xFFFFFF], S1=[0xFFFFFF], S2=[0x2000000]), dict(D0=[(0xFFFFFF ** 2 + 0x2000000) % 2 ** 32]),
     "32'U(S0.u24) * 32'U(S1.u24) + S2.u32 wraps"),
    ("v_bfe_u32", 3, dict(S0=[0xDEADBEEF] * 3, S1=[4, 4, 36], S2=[8, 32, 8]), dict(D0=[0xEE, 0, 0xEE]),
     "((S0.u32 >> S1[4 : 0].u32) & ((1U << S2[4 : 0].u32) - 1U)): width 32 masks to 0"),
    ("v_bfe_i32", 3, dict(S0=[0xDEADBEEF] * 3, S1=[4, 28, 0], S2=[8, 4, 0]), dict(D0=[0xFFFFFFEE, 0xFFFFFFFD, 0]),
     "signext_from_bit(tmp.i32, S2[4 : 0].u32); width 0 gives 0"),
    ("v_bfi_b32", 1, dict(S0=[0xFF00FF00], S1=[0x12345678], S2=[0xABCDEF01]), dict(D0=[0x12CD5601]),
     "(S0.u32 & S1.u32) | (~S0.u32 & S2.u32)"),
    ("v_bfm_b32", 2, dict(S0=[8, 32], S1=[4, 4]), dict(D0=[0xFF0, 0]), "((1U << S0[4:0]) - 1U) << S1[4:0]"),
    ("v_alignbit_b32", 2, dict(S0=[0x12345678] * 2, S1=[0x9ABCDEF0] * 2, S2=[8, 40]), dict(D0=[0x789ABCDE] * 2),
     "({ S0.u32, S1.u32 } >> S2.u32[4 : 0]) & 0xffffffffLL"),
    ("v_alignbyte_b32", 1, dict(S0=[0x12345678], S1=[0x9ABCDEF0], S2=[5]), dict(D0=[0x789ABCDE]),
     "S2.u32[1 : 0] * 8U: only two bits of S2"),
    ("v_perm_b32", 4, dict(S0=[0x11223344] * 4, S1=[0x55667788] * 4, S2=[0x07060504, 0x0C0D0800, 0x0B0A0908, 0x03020100]),
     dict(D0=[0x11223344, 0x00FF0088, 0, 0x55667788]),
     "BYTE_PERMUTE({ S0.u32, S1.u32 }, sel): 12 -> 0x00, 13+ -> 0xff, 8..11 -> sign of byte 1/3/5/7"),
    ("v_perm_b32", 1, dict(S0=[0x80000000], S1=[0x00008000], S2=[0x0B0A0908]), dict(D0=[0xFF0000FF]),
     "in[7][7].b8 * 8'0xff replicates the sign bit of byte 7 (and byte 1)"),
    ("v_cndmask_b32", 2, dict(S0=[1, 1], S1=[2, 2], VCC=0b10), dict(D0=[1, 2]), "VCC.u64[laneId] ? S1.u32 : S0.u32"),
    ("v_lshl_add_u32", 2, dict(S0=[M32, 1], S1=[4, 33], S2=[1, 1]), dict(D0=[0xFFFFFFF1, 3]),
     "(S0.u32 << S1.u32[4 : 0].u32) + S2.u32"),
    ("v_add_lshl_u32", 1, dict(S0=[M32], S1=[1], S2=[4]), dict(D0=[0]), "((S0.u32 + S1.u32) << S2): the sum wraps first"),
    ("v_lshl_or_b32", 1, dict(S0=[1], S1=[31], S2=[1]), dict(D0=[0x80000001]), "(S0 << S1[4:0]) | S2"),
    ("v_lshl_add_u64", 1, dict(S0=[M64], S1=[1], S2=[2]), dict(D0=[0]), "(S0.u64 << S1.u32[2 : 0]) + S2.u64 wraps"),
    ("v_xad_u32", 1, dict(S0=[0xF0F0F0F0], S1=[M32], S2=[1]), dict(D0=[0x0F0F0F10]), "(S0.u32 ^ S1.u32) + S2.u32"),
    ("v_add3_u32", 1, dict(S0=[M32], S1=[1], S2=[1]), dict(D0=[1]), "S0.u32 + S1.u32 + S2.u32 wraps"),
    ("v_or3_b32", 1, dict(S0=[1], S1=[2], S2=[4]), dict(D0=[7]), "S0.u32 | S1.u32 | S2.u32"),
    ("v_xnor_b32", 1, dict(S0=[0], S1=[0]), dict(D0=[M32]), "~(S0.u32 ^ S1.u32)"),
    ("v_not_b32", 1, dict(S0=[0x0F0F0F0F]), dict(D0=[0xF0F0F0F0]), "D0.u32 = ~S0.u32"),
    ("v_bfrev_b32", 1, dict(S0=[1]), dict(D0=[0x80000000]), "S0.u32[0 : 31]"),
    ("v_bcnt_u32_b32", 1, dict(S0=[0xFF], S1=[1]), dict(D0=[9]), "tmp = S1.u32; tmp += S0[i].u32"),
    ("v_mbcnt_lo_u32_b32", 3, dict(S0=[M32] * 3, S1=[0, 0, 10]), dict(D0=[0, 1, 12]),
     "MaskedValue = S0.u32 & ThreadMask[31 : 0]: the bits below this lane"),
    ("v_ffbh_u32", 3, dict(S0=[0, 1, 0x80000000]), dict(D0=[M32, 31, 0]), "search from MSB; -1 if no ones"),
    ("v_ffbh_i32", 4, dict(S0=[0, M32, 0x40000000, 0xBFFFFFFF]), dict(D0=[M32, M32, 1, 1]), "bits different from the sign"),
    ("v_ffbl_b32", 2, dict(S0=[0, 0x80000000]), dict(D0=[M32, 31]), "search from LSB"),
    ("v_min_i32", 1, dict(S0=[M32], S1=[0]), dict(D0=[M32]), "S0.i32 < S1.i32: -1 < 0"),
    ("v_max_u32", 1, dict(S0=[M32], S1=[0]), dict(D0=[M32]), "S0.u32 >= S1.u32"),
    ("v_med3_i32", 2, dict(S0=[5, M32], S1=[1, 3], S2=[3, 0]), dict(D0=[3, 0]), "v_max3_i32(...) == S0 ... (signed)"),
    ("v_med3_u32", 1, dict(S0=[M32], S1=[3], S2=[0]), dict(D0=[3]), "unsigned median"),
    ("v_min3_i32", 1, dict(S0=[1], S1=[0x80000000], S2=[0]), dict(D0=[0x80000000]), "v_min_i32(v_min_i32(S0, S1), S2)"),
    ("v_sad_u8", 1, dict(S0=[0x00FF0010], S1=[0xFF000020], S2=[1]), dict(D0=[255 + 255 + 0 + 16 + 1]),
     "ABSDIFF of each byte, unsigned, plus S2"),
    ("v_msad_u8", 1, dict(S0=[0x00FF0010], S1=[0xFF000020], S2=[1]), dict(D0=[255 + 16 + 1]),
     "S1.u32[k] == 8'0U ? 0U : ABSDIFF(...): masked where the reference byte is 0"),
    ("v_sad_u32", 1, dict(S0=[0], S1=[M32], S2=[1]), dict(D0=[0]), "ABSDIFF(S0.u32, S1.u32) + S2.u32 wraps"),
    ("v_lerp_u8", 1, dict(S0=[0x00FF0001], S1=[0x00FF0000], S2=[0x00000001]), dict(D0=[0x00FF0001]),
     "(S0 byte + S1 byte + rounding bit) >> 1 in 9 bits"),
    ("v_pk_add_u16", 1, dict(S0=[0xFFFF0001], S1=[0x00010002]), dict(D0=[0x00000003]), "each half wraps alone"),
    ("v_pk_sub_i16", 1, dict(S0=[0x80000000], S1=[0x00010001]), dict(D0=[0x7FFFFFFF]), "tmp[31:16].i16 = ... - ..."),
    ("v_pk_lshlrev_b16", 1, dict(S0=[0x00110001], S1=[0x00010001]), dict(D0=[0x00020002]), "S0.u32[19 : 16] amount"),
    ("v_pk_ashrrev_i16", 1, dict(S0=[0x000F000F], S1=[0x80007FFF]), dict(D0=[0xFFFF0000]), "S1[31 : 16].i16 >> ..."),
    ("v_pk_max_i16", 1, dict(S0=[0x8000FFFF], S1=[0x00000001]), dict(D0=[0x00000001]), "per half, signed"),
    ("v_pk_mad_u16", 1, dict(S0=[0xFFFF0002], S1=[0xFFFF0003], S2=[0x00010001]), dict(D0=[0x00020007]), "per half"),
    ("v_dot4_i32_i8", 1, dict(S0=[0xFF02FF02], S1=[0x03030303], S2=[10]), dict(D0=[6 - 3 + 6 - 3 + 10]),
     "i8_to_i32(S0[7 : 0].i8) * i8_to_i32(S1[7 : 0].i8) ..."),
    ("v_dot4_u32_u8", 1, dict(S0=[M32], S1=[M32], S2=[1]), dict(D0=[(4 * 255 * 255 + 1) % 2 ** 32]), "u8 products"),
    ("v_dot8_i32_i4", 1, dict(S0=[0xFFFFFFFF], S1=[0x11111111], S2=[0]), dict(D0=[M32 - 7]), "i4 lanes: 8 * (-1 * 1)"),
    ("v_dot2c_i32_i16", 1, dict(S0=[0xFFFF0002], S1=[0x00030003], D0=[10]), dict(D0=[10 + 6 - 3]), "tmp = D0.i32; ..."),
    ("v_sat_pk_u8_i16", 1, dict(S0=[0x80000100], D0=[0xFFFFFFFF]), dict(D0=[0xFFFF00FF]),
     "SAT8: n <= 16'0 -> 0, n >= 16'255 -> 255; D0.b16 = tmp.b16"),
    ("v_ashr_pk_i8_i32", 1, dict(S0=[0x100], S1=[0xFFFFFF00], S2=[0], D0=[0]), dict(D0=[0x807F]),
     "SAT8: n <= -128 -> 8'0x80, n >= 127 -> 8'0x7f"),
    ("v_prng_b32", 1, dict(S0=[0x80000001]), dict(D0=[(0x80000001 << 1 & M32) ^ 197]), "(in << 1U) ^ (in[31] ? 197U : 0U)"),
    ("v_swap_b32", 1, dict(S0=[1], D0=[2]), dict(D0=[1], S0=[2]), "tmp = D0.b32; D0.b32 = S0.b32; S0.b32 = tmp"),
    ("v_mov_b64", 1, dict(S0=[M64]), dict(D0=[M64]), "D0.b64 = S0.b64"),
    ("v_pk_mov_b32", 1, dict(S0=[0x1111111122222222], S1=[0x3333333344444444], OPSEL=0b11), dict(D0=[0x3333333311111111]),
     "S0.u32[OPSEL[0].i32 * 32 + 31 : OPSEL[0].i32 * 32]"),
]


@pytest.mark.parametrize("mnemonic,n,inputs,expected,words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_vector_alu_int(mnemonic, n, inputs, expected, words):
    assert vrun(mnemonic, n, **inputs) == expected, words


CMP = [  # mnemonic, S0 lanes, S1 lanes, expected VCC bits
    ("v_cmp_lt_i32", [M32, 1, 5], [0, 0, 5], 0b001),
    ("v_cmp_lt_u32", [M32, 1, 5], [0, 2, 5], 0b010),
    ("v_cmp_ge_i32", [0x80000000, 0x7FFFFFFF, 3], [0, 0x80000000, 3], 0b110),
    ("v_cmp_ne_u32", [1, 2, 3], [1, 0, 3], 0b010),
    ("v_cmp_eq_u64", [1 << 40, 1, 0], [1 << 40, 1 << 32 | 1, 0], 0b101),
    ("v_cmp_gt_i64", [1 << 63, 1, 5], [0, 1 << 63, 4], 0b110),
    ("v_cmp_lt_i16", [0xFFFF, 0x10000, 7], [0, 1, 7], 0b011),
    ("v_cmp_f_u32", [1, 2, 3], [0, 0, 0], 0),
    ("v_cmp_t_i32", [1, 2, 3], [0, 0, 0], 0b111),
]


@pytest.mark.parametrize("mnemonic,s0,s1,bits", CMP)
def test_vector_compare_writes_a_lane_mask(mnemonic, s0, s1, bits):
    """D0.u64[laneId] = S0 <op> S1 -- D0 is VCC (VOPC) or an SGPR pair (VOP3): one bit per active lane.
    Lanes 3..63 are inactive, so the old D0 must be supplied for their bits (here 0)."""
    assert vrun(mnemonic, 3, S0=s0, S1=s1, D0=0) == {"D0": bits}


def test_cmpx_writes_exec_and_the_mask():
    """V_CMPX: EXEC.u64[laneId] = D0.u64[laneId] = S0.u32 > S1.u32 -- inactive lanes stay off in EXEC."""
    assert vrun("v_cmpx_gt_u32", 3, S0=[3, 1, 9], S1=[2, 2, 2], D0=0) == {"D0": 0b101, "EXEC": 0b101}


def test_inactive_lanes_keep_their_carry_bit_and_register():
    """Lanes off in EXEC run no pseudocode: their D0 lanes and VCC bits are the old values supplied."""
    from gfxhound.executors.amdgcn.pcode import compile_op
    out = compile_op("v_add_co_u32").run(
        {"S0": lanes(*[0xFFFFFFFF] * 4), "S1": lanes(1, 1, 1, 1), "VCC": 0b1010, "D0": lanes(7, 7, 7, 7)},
        exec_mask=0b0101)
    assert [int(x) for x in out["D0"][:4]] == [0, 7, 0, 7]
    assert out["VCC"] == 0b1111   # lanes 0 and 2 carry; lanes 1 and 3 keep the old 1


# v_bitop3_b32 (CDNA4): "TTBL = { INST.OMOD[1 : 0], INST.ABS[2 : 0], INST.NEG[2 : 0] }; ... tmp = (tmp |
# (32'I(TTBL.b32 & 0x80) != 0 ? 32'U(S0.b32 & S1.b32 & S2.b32) : 0U)); ... D.b32 = tmp.b32": table bit k is the
# result where (S0, S1, S2) are the bits of k, S0 the most significant; its D is read as D0 (docs/amdgcn-pcode.md)
@pytest.mark.parametrize("table", [0x80, 0xFE, 0x96, 0xF0, 0xCC, 0xAA, 0x01, 0xE8, 0x00, 0xFF])
def test_v_bitop3_b32_truth_table_and_operand_order(table):
    s0, s1, s2 = 0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA  # every (S0, S1, S2) bit combination, 4 times per byte
    extra = (0x12345678, 0xFFFFFFFF, 0x80000001)
    got = vrun("v_bitop3_b32", 2, S0=[s0, extra[0]], S1=[s1, extra[1]], S2=[s2, extra[2]],
               INST__NEG=table & 7, INST__ABS=(table >> 3) & 7, INST__OMOD=(table >> 6) & 3, D0=[0, 0])
    for lane, (a, b, c) in enumerate([(s0, s1, s2), extra]):
        want = 0
        for bit in range(32):
            k = ((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((c >> bit) & 1)
            want |= ((table >> k) & 1) << bit
        assert got["D0"][lane] == want, (hex(table), lane)
