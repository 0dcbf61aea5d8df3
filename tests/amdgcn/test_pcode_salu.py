"""Scalar ALU (SOP1/SOP2/SOPC/SOPK/SOPP) pseudocode on boundary operands.

Each case quotes the guide's pseudocode it checks; expected values are hand-computed.
"""
import pytest

from pcode_run import srun

M32 = 0xFFFFFFFF

CASES = [
    # mnemonic, inputs, expected outputs, the pseudocode checked
    ("s_add_u32", dict(S0=M32, S1=1), dict(D0=0, SCC=1), "SCC = tmp >= 0x100000000ULL ? 1'1U : 1'0U"),
    ("s_add_u32", dict(S0=0x7FFFFFFF, S1=1), dict(D0=0x80000000, SCC=0), "no unsigned carry on a signed overflow"),
    ("s_addc_u32", dict(S0=M32, S1=0, SCC=1), dict(D0=0, SCC=1), "64'U(S0.u32) + 64'U(S1.u32) + SCC.u64"),
    ("s_addc_u32", dict(S0=M32, S1=M32, SCC=1), dict(D0=M32, SCC=1), "the carry-in on all-ones"),
    ("s_sub_u32", dict(S0=0, S1=1), dict(D0=M32, SCC=1), "SCC = S1.u32 > S0.u32"),
    ("s_subb_u32", dict(S0=5, S1=5, SCC=1), dict(D0=M32, SCC=1), "64'U(S1.u32) + SCC.u64 > 64'U(S0.u32)"),
    ("s_subb_u32", dict(S0=0, S1=M32, SCC=1), dict(D0=0, SCC=1), "S0 - S1 - SCC wraps to 0, still a borrow"),
    ("s_add_i32", dict(S0=0x7FFFFFFF, S1=1), dict(D0=0x80000000, SCC=1), "signed overflow"),
    ("s_add_i32", dict(S0=0x80000000, S1=M32), dict(D0=0x7FFFFFFF, SCC=1), "negative overflow"),
    ("s_sub_i32", dict(S0=0x80000000, S1=1), dict(D0=0x7FFFFFFF, SCC=1), "S0.u32[31] != S1.u32[31] && ..."),
    ("s_min_i32", dict(S0=M32, S1=0), dict(D0=M32, SCC=1), "SCC = S0.i32 < S1.i32 (signed)"),
    ("s_min_u32", dict(S0=M32, S1=0), dict(D0=0, SCC=0), "SCC = S0.u32 < S1.u32 (unsigned)"),
    ("s_max_i32", dict(S0=0x80000000, S1=0x7FFFFFFF), dict(D0=0x7FFFFFFF, SCC=0), "S0.i32 >= S1.i32"),
    ("s_cselect_b32", dict(S0=1, S1=2, SCC=0), dict(D0=2), "D0.u32 = SCC ? S0.u32 : S1.u32"),
    ("s_cselect_b64", dict(S0=1 << 40, S1=2, SCC=1), dict(D0=1 << 40), "64-bit select"),
    ("s_lshl_b32", dict(S0=1, S1=31), dict(D0=0x80000000, SCC=1), "S0.u32 << S1[4 : 0].u32"),
    ("s_lshl_b32", dict(S0=1, S1=32), dict(D0=1, SCC=1), "a shift of 32 is S1[4 : 0] = 0"),
    ("s_lshl_b32", dict(S0=1, S1=33), dict(D0=2, SCC=1), "33 masks to 1"),
    ("s_lshl_b32", dict(S0=0x80000000, S1=1), dict(D0=0, SCC=0), "bits shifted out; SCC = D0 != 0"),
    ("s_lshr_b32", dict(S0=0x80000000, S1=31), dict(D0=1, SCC=1), "logical: zeros in"),
    ("s_ashr_i32", dict(S0=0x80000000, S1=31), dict(D0=M32, SCC=1), "signext(S0.i32) >> S1[4 : 0]"),
    ("s_ashr_i32", dict(S0=0x80000000, S1=32), dict(D0=0x80000000, SCC=1), "32 masks to a shift of 0"),
    ("s_lshl_b64", dict(S0=1, S1=63), dict(D0=1 << 63, SCC=1), "S1[5 : 0]"),
    ("s_lshl_b64", dict(S0=1, S1=64), dict(D0=1, SCC=1), "64 masks to 0"),
    ("s_ashr_i64", dict(S0=1 << 63, S1=63), dict(D0=2 ** 64 - 1, SCC=1), "signext(S0.i64) >> S1[5 : 0]"),
    ("s_bfe_u32", dict(S0=0xDEADBEEF, S1=(8 << 16) | 4), dict(D0=0xEE, SCC=1), "(S0 >> S1[4:0]) & ((1U << S1[22:16]) - 1U)"),
    ("s_bfe_u32", dict(S0=0xDEADBEEF, S1=(0 << 16) | 4), dict(D0=0, SCC=0), "width 0: mask (1 << 0) - 1 = 0"),
    ("s_bfe_u32", dict(S0=0xDEADBEEF, S1=(40 << 16) | 4), dict(D0=0x0DEADBEE, SCC=1),
     "width 40: 1U << 40 leaves no bit of 32, so the mask is all ones (decision: shifts past the width)"),
    ("s_bfe_i32", dict(S0=0xF0, S1=(4 << 16) | 4), dict(D0=M32, SCC=1), "signext_from_bit(tmp.i32, S1[22:16])"),
    ("s_bfe_i32", dict(S0=0x70, S1=(4 << 16) | 4), dict(D0=7, SCC=1), "sign bit clear: no extension"),
    ("s_bfe_u64", dict(S0=0xFF << 56, S1=(8 << 16) | 56), dict(D0=0xFF, SCC=1), "S1[5 : 0] offset, 64-bit"),
    ("s_bfm_b32", dict(S0=4, S1=28), dict(D0=0xF0000000), "((1U << S0[4:0]) - 1U) << S1[4:0]"),
    ("s_mul_hi_u32", dict(S0=M32, S1=M32), dict(D0=0xFFFFFFFE), "64'U(S0) * 64'U(S1) >> 32U"),
    ("s_mul_hi_i32", dict(S0=M32, S1=2), dict(D0=M32), "64'I: -1 * 2 = -2, high word all ones"),
    ("s_mul_i32", dict(S0=0x80000000, S1=M32), dict(D0=0x80000000), "low 32 bits of -2^31 * -1"),
    ("s_not_b32", dict(S0=M32), dict(D0=0, SCC=0), "D0.u32 = ~S0.u32; SCC = D0.u32 != 0U"),
    ("s_not_b64", dict(S0=0), dict(D0=2 ** 64 - 1, SCC=1), "64-bit complement"),
    ("s_andn2_b32", dict(S0=0xFF, S1=0x0F), dict(D0=0xF0, SCC=1), "S0.u32 & ~S1.u32"),
    ("s_xnor_b64", dict(S0=0, S1=0), dict(D0=2 ** 64 - 1, SCC=1), "~(S0.u64 ^ S1.u64)"),
    ("s_brev_b32", dict(S0=1), dict(D0=0x80000000), "D0.u32[31 : 0] = S0.u32[0 : 31] (reversed slice)"),
    ("s_brev_b64", dict(S0=3), dict(D0=0xC000000000000000), "S0.u64[0 : 63]"),
    ("s_bcnt1_i32_b64", dict(S0=0xFF000000000000FF), dict(D0=16, SCC=1), "count ones; D0.i32 then D0.u64 != 0"),
    ("s_bcnt0_i32_b32", dict(S0=M32), dict(D0=0, SCC=0), "no zero bits"),
    ("s_ff1_i32_b32", dict(S0=0x80), dict(D0=7), "search from LSB"),
    ("s_ff1_i32_b32", dict(S0=0), dict(D0=M32), "tmp = -1 if no ones are found"),
    ("s_ff0_i32_b64", dict(S0=2 ** 64 - 1), dict(D0=M32), "no zeros: -1"),
    ("s_flbit_i32_b32", dict(S0=1), dict(D0=31), "search from MSB"),
    ("s_flbit_i32", dict(S0=M32), dict(D0=M32), "all bits the same: -1"),
    ("s_flbit_i32", dict(S0=0xBFFFFFFF), dict(D0=1), "first bit differing from the sign"),
    ("s_sext_i32_i8", dict(S0=0x80), dict(D0=0xFFFFFF80), "32'I(signext(S0.i8))"),
    ("s_sext_i32_i16", dict(S0=0x17FFF), dict(D0=0x7FFF), "only S0.i16 counts"),
    ("s_abs_i32", dict(S0=0x80000000), dict(D0=0x80000000, SCC=1), "-S0.i32 of INT_MIN wraps"),
    ("s_absdiff_i32", dict(S0=0x80000000, S1=1), dict(D0=0x7FFFFFFF, SCC=1),
     "S0.i32 - S1.i32 wraps positive, so it is not negated"),
    ("s_bitset1_b32", dict(D0=0, S0=33), dict(D0=2), "D0.u32[S0.u32[4 : 0]] = 1'1U"),
    ("s_bitset0_b64", dict(D0=2 ** 64 - 1, S0=63), dict(D0=2 ** 63 - 1), "D0.u64[S0.u32[5 : 0]] = 1'0U"),
    ("s_wqm_b32", dict(S0=0x00100001), dict(D0=0x00F0000F, SCC=1), "tmp[i] = S0.u32[i & 6'60U +: 6'4U] != 0U"),
    ("s_quadmask_b32", dict(S0=0x00100001), dict(D0=0x21, SCC=1), "tmp[i] = S0.u32[i * 4 +: 4] != 0U"),
    ("s_bitreplicate_b64_b32", dict(S0=5), dict(D0=0x33), "D0.u64[i * 2] = D0.u64[i * 2 + 1] = tmp[i]"),
    ("s_pack_lh_b32_b16", dict(S0=0x11112222, S1=0x33334444), dict(D0=0x33332222), "{ S1[31 : 16], S0[15 : 0] }"),
    ("s_pack_hh_b32_b16", dict(S0=0x11112222, S1=0x33334444), dict(D0=0x33331111), "{ S1[31 : 16], S0[31 : 16] }"),
    ("s_lshl2_add_u32", dict(S0=0x40000000, S1=1), dict(D0=1, SCC=1), "(64'U(S0) << 2U) + 64'U(S1) carries out"),
    ("s_and_saveexec_b64", dict(S0=0xF0, EXEC=0xFF), dict(D0=0xFF, EXEC=0xF0, SCC=1), "saveexec = EXEC.u64; ..."),
    ("s_andn2_saveexec_b64", dict(S0=0xFF, EXEC=0xFF), dict(D0=0xFF, EXEC=0, SCC=0), "S0.u64 & ~EXEC.u64"),
    ("s_cmp_lt_i32", dict(S0=M32, S1=0), dict(SCC=1), "SCC = S0.i32 < S1.i32"),
    ("s_cmp_lt_u32", dict(S0=M32, S1=0), dict(SCC=0), "SCC = S0.u32 < S1.u32"),
    ("s_cmp_lg_u64", dict(S0=1 << 32, S1=0), dict(SCC=1), "S0.u64 <> S1.u64"),
    ("s_bitcmp1_b32", dict(S0=0x80000000, S1=63), dict(SCC=1), "S0.u32[S1.u32[4 : 0]] == 1'1U"),
    ("s_movk_i32", dict(S0=0x8000), dict(D0=0xFFFF8000), "32'I(signext(S0.i16))"),
    ("s_cmovk_i32", dict(S0=5, SCC=0), dict(), "if SCC then ...: nothing written"),
    ("s_addk_i32", dict(D0=0x7FFFFFFF, S0=1), dict(D0=0x80000000, SCC=1), "tmp[31] == S0.i16[15] && ..."),
    ("s_mulk_i32", dict(D0=3, S0=0xFFFF), dict(D0=M32 - 2), "D0.i32 * 32'I(signext(S0.i16))"),
    ("s_cmpk_lt_i32", dict(S0=M32, S1=0), dict(SCC=1), "S0.i32 < 32'I(signext(S1.i16))"),
    ("s_cmpk_gt_u32", dict(S0=0x10000, S1=0xFFFF), dict(SCC=1), "S0.u32 > 32'U(S1.u16): no sign extension"),
    ("s_getpc_b64", dict(PC=0x1000), dict(D0=0x1004), "D0.i64 = PC + 4LL"),
    ("s_setpc_b64", dict(S0=0x2000), dict(PC=0x2000), "PC = S0.i64"),
    ("s_call_b64", dict(PC=0x1000, SIMM16=0xFFFF), dict(D0=0x1004, PC=0x1000),
     "PC + signext(SIMM16.i16 * 16'4) + 4LL (-4 + 4)"),
    ("s_branch", dict(PC=0x1000, SIMM16=0x7FFF), dict(PC=0x1000 + 4 * 0x7FFF + 4), "SIMM16.i16 * 16'4 does not wrap"),
    ("s_cbranch_scc0", dict(PC=0x1000, SIMM16=2, SCC=1), dict(PC=0x1004), "else PC = PC + 4LL"),
    ("s_cbranch_vccnz", dict(PC=0x1000, SIMM16=2, VCCZ=0), dict(PC=0x100C), "VCCZ.u1 == 1'0U: taken"),
]


@pytest.mark.parametrize("mnemonic,inputs,expected,words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_scalar_alu(mnemonic, inputs, expected, words):
    assert srun(mnemonic, **inputs) == expected, words


def test_scalar_op_is_not_per_lane():
    """SOP encodings run once, not per lane: results are ints, and laneId is not theirs."""
    from gfxhound.executors.amdgcn.pcode import compile_op
    op = compile_op("s_add_u32")
    assert (op.lanes, op.inputs, op.outputs) == (False, {"S0", "S1"}, {"D0", "SCC"})
    assert op.widths == {"S0": 32, "S1": 32, "D0": 32, "SCC": 1}
