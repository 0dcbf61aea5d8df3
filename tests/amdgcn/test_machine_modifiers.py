"""DPP, SDWA, op_sel/op_sel_hi, OMOD and 16-bit results on the machine (executors/amdgcn/machine_modifiers.py,
machine_valu.py). Each test quotes the guide's words it checks; expected values are plain integer arithmetic by
hand, never from the IR executor.

The kernels: llc-22's code for tests/amdgcn/data/dpp.ll and add_i32.ll, and add_i32's -O2 code with its
`v_add_u32_e32 v2, v6, v7` replaced by the instruction under test (v6 = a[i], v7 = b[i], v2 is stored to c[i]).
"""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import parse_program
from gfxhound.executors.amdgcn.machine_modifiers import dpp_lanes
from gfxhound.executors.amdgcn.run import NotModelled, launch

pytestmark = pytest.mark.skipif(shutil.which("llc-22") is None and not Path(codegen.DEFAULT_LLC).exists(),
                                reason="needs Debian's llc-22")
DATA = Path(__file__).parent / "data"
N = 64
A = np.array([0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0, 0x12F4A5B6, 0x00018000, 0x3C003C00, 0xC0004400] * 8, np.uint32)
B = np.array([1, 0x80000000, 0x80FF7F01, 0xFFFFFFFF, 0x0000FFFF, 0x7FFF8001, 0x40003800, 0xBC00C000] * 8, np.uint32)


def _add_with(*lines: str, mcpu: str = "gfx942") -> np.ndarray:
    text = codegen.from_ll(DATA / "add_i32.ll", mcpu, 2).text
    assert "\tv_add_u32_e32 v2, v6, v7\n" in text
    text = text.replace("\tv_add_u32_e32 v2, v6, v7\n", "".join(f"\t{line}\n" for line in lines))
    c = np.zeros(N, np.uint32)
    return launch(text, None, {"a": A, "b": B, "c": c, "n": N}).outputs["c"]


def _ints(x) -> np.ndarray:
    return np.asarray(x, np.int64)


# ---- DPP -------------------------------------------------------------------------------------------------------
def test_dpp_controls_follow_the_guide_table():
    """DPP_CTRL: "Row shift left by 1-15 threads", "Row shift right", "Row rotate right", "Wavefront left shift by
    1 thread", "Mirror threads within row", "Mirror threads within half row (8 threads)", "Broadcast 15th thread of
    each row to next row", "Broadcast thread 31 to rows 2 and 3"."""
    def lanes(mods):
        ins = parse_program(f".text\n.type f,@function\nf:\n\tv_mov_b32_dpp v0, v1 {mods}\n.size f, 4\n") \
            .function("f").instructions[0]
        src, ok = dpp_lanes(ins)
        return src.tolist(), ok.tolist()
    src, ok = lanes("row_shl:1")
    assert src[0] == 1 and src[14] == 15 and not ok[15] and ok[14] and src[16] == 17
    src, ok = lanes("row_shr:3")
    assert src[3] == 0 and not ok[2] and src[19] == 16 and not ok[18]
    src, ok = lanes("row_ror:1")
    assert src[0] == 15 and src[17] == 16 and all(ok)
    src, ok = lanes("wave_shr:1")
    assert src[16] == 15 and not ok[0] and all(ok[1:])
    src, ok = lanes("wave_rol:1")
    assert src[63] == 0 and src[0] == 1 and all(ok)
    src, _ = lanes("row_mirror")
    assert src[0] == 15 and src[20] == 27
    src, _ = lanes("row_half_mirror")
    assert src[0] == 7 and src[8] == 15 and src[21] == 18
    src, ok = lanes("row_bcast:15")
    assert src[16:32] == [15] * 16 and src[48] == 47 and not any(ok[:16]) and all(ok[16:])
    src, ok = lanes("row_bcast:31")
    assert src[32:] == [31] * 32 and not any(ok[:32])
    src, _ = lanes("quad_perm:[3,2,1,0]")
    assert src[:8] == [3, 2, 1, 0, 7, 6, 5, 4]


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_dpp_kernel_runs_as_the_guide_says(mcpu, opt):
    """dpp.ll: y = update.dpp(0, x, row_shl:1, bound_ctrl) ("BOUND_CTRL: write 0 when the source is out of range"),
    g = update.dpp(1.0, f, quad_perm:[1,0,3,2], row_mask 0xa, bank_mask 0x5) ("ROW_MASK ... disabled (not
    written)", "BANK_MASK: 24==0: lanes[0:3, 16:19, ...] are disabled"); out = y + fptosi(g)."""
    x = (np.arange(N) + 0.5).astype(np.float32)
    bits = x.view(np.uint32).astype(np.int64)
    out = launch(codegen.from_ll(DATA / "dpp.ll", mcpu, opt), None,
                 {"in": x.view(np.uint32), "out": np.zeros(N, np.uint32)}).outputs["out"]
    for t in range(N):
        row, j = divmod(t, 16)
        y = int(bits[t + 1]) if j < 15 else 0
        written = row in (1, 3) and (j // 4) in (0, 2)
        g = int(x[t ^ 1]) if written else 1
        assert int(out[t]) == (y + g) % 2 ** 32, t


# ---- SDWA ------------------------------------------------------------------------------------------------------
def test_sdwa_selects_sign_extension_and_unused_bits():
    """SDWA: "SRC0_SEL: BYTE_0..3, WORD_0/1, DWORD", "SRC0_SEXT: sign extend", "DST_SEL", "DST_UNUSED: UNUSED_PAD
    (pad with zeros), UNUSED_SEXT (sign extend upper bits), UNUSED_PRESERVE (keep the old bits)"."""
    a, b = _ints(A), _ints(B)
    byte1, byte3 = (a >> 8) & 0xFF, (b >> 24) & 0xFF
    sbyte3 = np.where(byte3 & 0x80, byte3 - 256, byte3)
    total = (byte1 + sbyte3) & 0xFFFF
    got = _add_with("v_add_u32_sdwa v2, v6, sext(v7) dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 "
                    "src1_sel:BYTE_3")
    assert got.tolist() == ((total << 16) & 0xFFFFFFFF).tolist()   # WORD_1 is the top: nothing above to extend
    got = _add_with("v_add_u32_sdwa v2, v6, v7 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:WORD_0 "
                    "src1_sel:WORD_1")
    field = ((a & 0xFFFF) + (b >> 16)) & 0xFF
    expect = (field << 8) | np.where(field & 0x80, 0xFFFF0000, 0)
    assert got.tolist() == expect.tolist()
    got = _add_with("v_mov_b32_e32 v2, 0x12345678",
                    "v_add_u32_sdwa v2, v6, v7 dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE src0_sel:DWORD "
                    "src1_sel:DWORD")
    assert got.tolist() == ((0x12005678) | (((a + b) & 0xFF) << 16)).tolist()
    got = _add_with("v_add_u32_sdwa v2, v6, v7 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:BYTE_0 "
                    "src1_sel:BYTE_0")
    assert got.tolist() == (((a & 0xFF) + (b & 0xFF)) & 0xFFFF).tolist()


# ---- op_sel, packed halves, 16-bit results ---------------------------------------------------------------------
def test_packed_op_sel_and_op_sel_hi_pick_source_halves():
    """VOP3P: "OP_SEL: select the low or high half of each source for the low result", "OP_SEL_HI: ... for the
    high result" (default 1, the high half)."""
    a, b = _ints(A), _ints(B)
    lo, hi = lambda v: v & 0xFFFF, lambda v: v >> 16
    got = _add_with("v_pk_add_u16 v2, v6, v7 op_sel:[1,0] op_sel_hi:[0,1]")
    expect = ((hi(a) + lo(b)) & 0xFFFF) | (((lo(a) + hi(b)) & 0xFFFF) << 16)
    assert got.tolist() == expect.tolist()
    got = _add_with("v_pk_add_u16 v2, v6, v7")
    assert got.tolist() == (((lo(a) + lo(b)) & 0xFFFF) | (((hi(a) + hi(b)) & 0xFFFF) << 16)).tolist()


def test_vop3_op_sel_reads_the_high_half_and_16_bit_results_zero_the_rest():
    """VOP3 OPSEL[k]: the high 16 bits of source k; a 16-bit result's bits 31:16 are zero (decision 29), except
    for V_MAD_U16 and its kind, whose description keeps the other half (op_sel[3] writes the high half)."""
    a, b = _ints(A), _ints(B)
    got = _add_with("v_add_u16_e64 v2, v6, v7 op_sel:[1,0,0]")
    assert got.tolist() == (((a >> 16) + (b & 0xFFFF)) & 0xFFFF).tolist()
    got = _add_with("v_mov_b32_e32 v2, 0xabcd1234", "v_mad_u16 v2, v6, v7, v2 op_sel:[0,1,0,1]")
    expect = ((((a & 0xFFFF) * (b >> 16) + 0x1234) & 0xFFFF) << 16) | 0x1234
    assert got.tolist() == expect.tolist()


def test_omod_scales_a_float_result_before_clamp():
    """OMOD: "output modifier: 0 = none, 1 = *2, 2 = *4, 3 = /2"; then CLAMP to [0, 1]."""
    fa, fb = A.view(np.float32).astype(np.float64), B.view(np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        got = _add_with("v_add_f32_e64 v2, v6, v7 div:2")
        expect = ((fa + fb).astype(np.float32) * np.float32(0.5)).astype(np.float32)
    same = (got == expect.view(np.uint32)) | (np.isnan(expect) & np.isnan(got.view(np.float32)))
    assert same.all()


def test_kernel_lists_the_decisions_it_rests_on():
    from gfxhound.executors.amdgcn.machine_kernel import Kernel
    program = parse_program(codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text)
    assert Kernel(program.function("add_i32")).decisions == []
    text = codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text.replace(
        "v_add_u32_e32 v2, v6, v7", "v_add_u16_e32 v2, v6, v7")
    assert Kernel(parse_program(text).function("add_i32")).decisions == [29]


def test_mixed_modifiers_agree_with_the_ir_executor():
    """mixed.ll (packed f16 with op_sel, abs/neg, clamp, an fma literal, an MFMA on AGPRs, a readlane, an f64
    constant): the machine's run of llc's code at -O0 and -O2 and the IR executor's run of the IR, two models
    that share no semantics, give the same bytes (random inputs, boundary patterns mixed in)."""
    from gfxhound.oracle.crosscheck import compare
    result = compare(DATA / "mixed.ll", "gfx942", [0, 2], "in: fp32[64]; h: fp16[128]; out: fp32[64] out; "
                     "grid: 1; block: 64")
    assert result.exit_code == 0, result.to_json()


# ---- MUBUF -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_raw_buffer_loads_out_of_range_read_zero(mcpu, opt):
    """buffer.ll: out[t] = in[t + shift] + 1 through a raw buffer of NUM_RECORDS = nbytes. The guide's range
    checking: an out-of-range load returns zero (a negative shift wraps the 32-bit offset far past the end)."""
    x = (np.arange(40, dtype=np.uint32) * 2654435761).astype(np.uint32)
    code = codegen.from_ll(DATA / "buffer.ll", mcpu, opt)
    for shift in (3, 0xFFFFFFFE):
        out = launch(code, None, {"in": x, "out": np.zeros(N, np.uint32), "nbytes": 160, "shift": shift}).outputs["out"]
        for t in range(N):
            j = (t + shift) % 2 ** 32
            assert int(out[t]) == ((int(x[j]) if j < 40 else 0) + 1) % 2 ** 32, (shift, t)


def test_a_buffer_access_straddling_the_end_is_not_modelled():
    """An access that starts before NUM_RECORDS and ends past it: the guide does not say which bytes load."""
    with pytest.raises(NotModelled, match="ends past NUM_RECORDS"):
        launch(codegen.from_ll(DATA / "buffer.ll", "gfx942", 2), None,
               {"in": np.zeros(40, np.uint32), "out": np.zeros(N, np.uint32), "nbytes": 150, "shift": 3})


# ---- waitcnt and out-of-order scalar loads ------------------------------------------------------------------
def test_scalar_loads_are_waited_for_only_at_lgkmcnt_zero():
    """LGKM_CNT: scalar memory reads "can return out of order", so lgkmcnt(1) after two s_load does not retire
    either of them: a read of the first one's SGPRs is a hazard; with lgkmcnt(0) it is not."""
    text = codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text
    first = "\ts_load_dwordx4 s[0:3], s[4:5], 0x0\n\ts_load_dwordx2 s[6:7], s[4:5], 0x10\n"
    assert first in text
    a, b = A.copy(), B.copy()
    for count, hazard in (("lgkmcnt(1)", True), ("lgkmcnt(0)", False)):
        edited = text.replace(first + "\tv_ashrrev_i32_e32 v1, 31, v0\n\tv_lshlrev_b64 v[0:1], 2, v[0:1]\n"
                              "\ts_waitcnt lgkmcnt(0)\n",
                              first + "\tv_ashrrev_i32_e32 v1, 31, v0\n\tv_lshlrev_b64 v[0:1], 2, v[0:1]\n"
                              f"\ts_waitcnt {count}\n")
        assert edited != text or count == "lgkmcnt(0)"
        r = launch(edited, None, {"a": a, "b": b, "c": np.zeros(N, np.uint32), "n": N})
        assert bool(r.hazards) == hazard, (count, r.hazards)


# ---- wait-state hazards ----------------------------------------------------------------------------------------
def _wait_hazards(*lines):
    text = codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text
    text = text.replace("\tv_add_u32_e32 v2, v6, v7\n", "".join(f"\t{line}\n" for line in lines))
    r = launch(text, None, {"a": A, "b": B, "c": np.zeros(N, np.uint32), "n": N})
    return sorted({h[4] for h in r.wait_hazards}), r.outputs["c"]


def test_a_dpp_read_too_soon_after_a_valu_write_is_a_hazard():
    """"VALU writes VGPR -> VALU DPP reads that VGPR: 2 wait states" (Manually Inserted Wait States)."""
    dpp = "v_add_u32_dpp v2, v7, v6 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf"
    assert _wait_hazards("v_mov_b32_e32 v7, v6", dpp)[0] == [1]
    assert _wait_hazards("v_mov_b32_e32 v7, v6", "s_nop 0", dpp)[0] == [1]      # one wait state of two
    rules, out = _wait_hazards("v_mov_b32_e32 v7, v6", "s_nop 1", dpp)
    assert rules == [] and out.tolist() == ((_ints(A) * 2) % 2 ** 32).tolist()
    assert _wait_hazards("v_mov_b32_e32 v5, v6", dpp)[0] == []                  # another VGPR: no pair


def test_a_lane_select_written_by_valu_needs_four_wait_states():
    """"VALU writes SGPR -> V_{READ,WRITE}LANE using that SGPR as the lane select: 4 wait states"."""
    read = ["v_readfirstlane_b32 s2, v6", "v_readlane_b32 s3, v7, s2", "v_mov_b32_e32 v2, s3"]
    assert _wait_hazards(*read)[0] == [3]
    assert _wait_hazards(read[0], "s_nop 3", *read[1:])[0] == []


# ---- scratch ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_scratch_is_private_to_each_lane(mcpu, opt):
    """scratch.ll: each lane stores a[t] * i to its own arr[i] for i < 8 and reads back arr[k & 7]."""
    code = codegen.from_ll(DATA / "scratch.ll", mcpu, opt)
    assert "scratch_store_dword" in code.text
    for k in (5, 0, 15):
        out = launch(code, None, {"a": A, "c": np.zeros(N, np.uint32), "k": k}).outputs["c"]
        assert out.tolist() == ((_ints(A) * (k & 7)) % 2 ** 32).tolist()


def test_scratch_use_beyond_the_private_segment_faults():
    """The descriptor declares the frame (private_segment_fixed_size); an access past it is the code generator's
    bug, flagged as a fault naming the instruction."""
    from gfxhound.executors.amdgcn.run import MachineFault
    text = codegen.from_ll(DATA / "scratch.ll", "gfx942", 2).text
    load = next(line for line in text.splitlines() if "scratch_load_dword" in line)
    with pytest.raises(MachineFault, match="beyond the private segment"):
        launch(text.replace(load, load + " offset:64"), None, {"a": A, "c": np.zeros(N, np.uint32), "k": 1})


def test_registers_past_the_descriptors_allocation_fault():
    """The wave gets the registers its descriptor asks for (.amdhsa_next_free_vgpr/sgpr, accum_offset): a use of
    one past them is the code generator's bug."""
    from gfxhound.executors.amdgcn.run import MachineFault
    with pytest.raises(MachineFault, match=r"register s\[10:11\] beyond the descriptor's allocation \(s0..s8\)"):
        _add_with("v_add_u32_e32 v2, v6, v7", "s_mov_b64 s[10:11], 0")
    with pytest.raises(MachineFault, match=r"register v8 beyond"):
        _add_with("v_add_u32_e32 v8, v6, v7", "v_mov_b32_e32 v2, v8")


# ---- calls -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_a_call_to_a_function_of_the_module_returns_its_value(mcpu, opt):
    """calls.ll: the kernel calls f(x, t) = x * t + 3 through s_getpc/s_add/s_addc (f@rel32@lo+4, f@rel32@hi+12)
    and s_swappc_b64; f returns with s_setpc_b64 (S_SWAPPC: "D0 = PC + 4; PC = S0")."""
    code = codegen.from_ll(DATA / "calls.ll", mcpu, opt)
    assert "s_swappc_b64" in code.text
    out = launch(code, None, {"a": A, "c": np.zeros(N, np.uint32)}).outputs["c"]
    assert out.tolist() == ((_ints(A) * np.arange(N) + 3) % 2 ** 32).tolist()


def test_a_jump_outside_the_code_faults():
    from gfxhound.executors.amdgcn.run import MachineFault
    text = codegen.from_ll(DATA / "calls.ll", "gfx942", 2).text.replace("s_setpc_b64 s[30:31]", "s_setpc_b64 s[16:17]")
    text = text.replace("s_swappc_b64 s[30:31], s[16:17]", "s_swappc_b64 s[30:31], s[16:17]\n\ts_endpgm")
    with pytest.raises(MachineFault, match="not an instruction of the code image"):
        launch(text.replace("f@rel32@lo+4", "f@rel32@lo+6"), None, {"a": A, "c": np.zeros(N, np.uint32)})


def test_a_pointer_used_before_its_scalar_load_is_waited_for_is_a_hazard():
    """An s_load of a kernel argument and a global access whose SADDR is that pointer, with the covering
    s_waitcnt lgkmcnt(0) deleted: the SADDR read is a hazard (it used to be read without the check)."""
    text = codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text
    wait = "\ts_load_dwordx2 s[6:7], s[4:5], 0x10\n\tv_ashrrev_i32_e32 v1, 31, v0\n\tv_lshlrev_b64 v[0:1], 2, v[0:1]\n" \
           "\ts_waitcnt lgkmcnt(0)\n"
    assert wait in text
    edited = text.replace(wait, wait.replace("\ts_waitcnt lgkmcnt(0)\n", ""))
    r = launch(edited, None, {"a": A, "b": B, "c": np.zeros(N, np.uint32), "n": N})
    assert {h[5] for h in r.hazards} >= {("s", 0), ("s", 1)}


def test_integer_clamp_saturates_add_and_sub():
    """VOP3 CLAMP on an integer add/sub saturates instead of wrapping (decision 32): u32 sub floors at 0, u32 add
    tops at 0xffffffff, i32 add at INT_MAX/INT_MIN."""
    a, b = _ints(A), _ints(B)
    assert _add_with("v_sub_u32_e64 v2, v6, v7 clamp").tolist() == np.maximum(a - b, 0).tolist()
    assert _add_with("v_add_u32_e64 v2, v6, v7 clamp").tolist() == np.minimum(a + b, 0xFFFFFFFF).tolist()
    sa, sb = np.where(a >= 2 ** 31, a - 2 ** 32, a), np.where(b >= 2 ** 31, b - 2 ** 32, b)
    got = _add_with("v_add_i32 v2, v6, v7 clamp")
    assert got.tolist() == (np.clip(sa + sb, -2 ** 31, 2 ** 31 - 1) % 2 ** 32).tolist()


@pytest.mark.parametrize("opt", [0, 2])
def test_sixteen_bit_lds_stores_add_their_offset(opt):
    """lds16.ll: each of 256 threads stores a half at smem[t ^ 37] and smem[(t ^ 37) + 256] (llc: one
    ds_write_b16 with offset:512), then reads 4 halves at smem[4 * (t & 127)]. The tabled DS_WRITE_B16 text
    omits the offset (decision 35): without it the second store landed on the first."""
    a = (np.arange(256) * 0.25 - 20).astype(np.float16)
    smem = np.zeros(512, np.float16)
    for t in range(256):
        smem[t ^ 37] = a[t]
        smem[(t ^ 37) + 256] = a[t]
    want = np.concatenate([smem[(t & 127) * 4:(t & 127) * 4 + 4] for t in range(256)])
    code = codegen.from_ll(DATA / "lds16.ll", "gfx942", opt)
    for schedule in ("forward", "reverse"):
        out = launch(code, None, [a, np.zeros(1024, np.float16)], block=(256, 1, 1), schedule=schedule).outputs[1]
        assert (np.asarray(out).view(np.float16) == want).all()


def test_a_32_bit_literal_on_a_64_bit_operand_is_zero_extended():
    """Decision 36: `s_mov_b64 s[2:3], 0xffffffff` gives 0x00000000ffffffff (an untyped integer: zero-extended);
    the high half, moved to v2 and stored, is 0."""
    got = _add_with("s_mov_b64 s[2:3], 0xffffffff", "v_mov_b32_e32 v2, s3", "v_add_u32_e32 v2, s2, v2")
    assert (got == 0xFFFFFFFF).all()


def test_bitop3_b16_and_a_wide_mad_with_scalar_operands():
    """V_BITOP3_B16 writes a 16-bit result (decision 29: bits 31:16 zero); V_MAD_U64_U32 with two scalar sources
    forms its 65-bit sum exactly (it used to overflow numpy's C long)."""
    a, b = _ints(A), _ints(B)
    got = _add_with("v_bitop3_b16 v2, v6, v7, v6 bitop3:0x96", mcpu="gfx950")   # 0x96: S0 ^ S1 ^ S2
    assert got.tolist() == ((a ^ b ^ a) & 0xFFFF).tolist()
    got = _add_with("s_mov_b32 s2, 0xfffffff0", "v_mad_u64_u32 v[2:3], s[0:1], s2, -1, v[6:7]", "v_mov_b32_e32 v2, v3")
    assert got.tolist() == [((0xFFFFFFF0 * 0xFFFFFFFF + (int(x) | int(y) << 32)) >> 32) & 0xFFFFFFFF
                            for x, y in zip(A, B)]


def test_a_dpp_ops_second_source_counts_for_the_vgpr_row():
    """The row is "VALU writes VGPR -> VALU DPP reads that VGPR": llc puts s_nop 1 before v_add_u32_dpp whose
    src1 (not the DPP'd src0) was just written; without it the pair is a hazard."""
    dpp = "v_add_u32_dpp v2, v6, v7 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf"
    assert _wait_hazards("v_mov_b32_e32 v7, v6", dpp)[0] == [1]
    assert _wait_hazards("v_mov_b32_e32 v7, v6", "s_nop 1", dpp)[0] == []
