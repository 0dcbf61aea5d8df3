"""fp8/bf8 on the machine (machine_fp8.py, decision 42), the mixed-precision fma (decision 43) and gfx950's
permlane swaps (decision 44).

Formats: AMD's HIP documentation ("Low precision floating point types") gives CDNA3 the FNUZ variants of E4M3 and
E5M2 and CDNA4 the OCP ones. The expected values of the whole code tables are torch's float8 dtypes (an
implementation of the same four formats that shares nothing with the machine); single values are worked by hand
from the field layouts. The instruction texts quoted are the CDNA4 guide's (pcode_data.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from gfxhound.executors.amdgcn.asm import Function, parse_statement
from gfxhound.executors.amdgcn.machine import NotModelled, Wave
from gfxhound.executors.amdgcn.machine_fp8 import fmt, from_f32, values
from gfxhound.executors.amdgcn.machine_kernel import Kernel

TORCH = {("gfx942", "fp8"): torch.float8_e4m3fnuz, ("gfx942", "bf8"): torch.float8_e5m2fnuz,
         ("gfx950", "fp8"): torch.float8_e4m3fn, ("gfx950", "bf8"): torch.float8_e5m2}


def run(lines, processor="gfx942", setup=None):
    ins = tuple(parse_statement(t, i + 1, i) for i, t in enumerate(list(lines) + ["s_endpgm"]))
    w = Wave()
    if setup:
        setup(w)
    Kernel(Function("t", ins), processor=processor).run(w, 0)
    return w


def f32(reg):
    return reg.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("processor,kind", sorted(TORCH))
def test_every_code_has_its_formats_value(processor, kind):
    want = torch.arange(256, dtype=torch.uint8).view(TORCH[(processor, kind)]).double().numpy()
    got = values(fmt(kind, processor, "t"))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


def test_hand_worked_codes():
    e4fnuz, e4ocp = values(fmt("fp8", "gfx942", "t")), values(fmt("fp8", "gfx950", "t"))
    e5fnuz, e5ocp = values(fmt("bf8", "gfx942", "t")), values(fmt("bf8", "gfx950", "t"))
    assert e4fnuz[0x7F] == 240 and e4fnuz[0x01] == 2.0 ** -10 and np.isnan(e4fnuz[0x80])   # bias 8, 0x80 the NaN
    assert e4ocp[0x7E] == 448 and np.isnan(e4ocp[0x7F]) and e4ocp[0x01] == 2.0 ** -9 and e4ocp[0x80] == 0
    assert e5fnuz[0x7F] == 57344 and e5fnuz[0x01] == 2.0 ** -17
    assert e5ocp[0x7B] == 57344 and e5ocp[0x7C] == np.inf and np.isnan(e5ocp[0x7D])
    assert e4fnuz[0x40] * 2 == e4ocp[0x40] == 2.0     # one code, two generations: a factor of two apart


@pytest.mark.parametrize("processor,kind", sorted(TORCH))
def test_rounding_to_nearest_even_matches_the_formats(processor, kind):
    f = fmt(kind, processor, "t")
    table = values(f)
    finite = np.sort(np.abs(table[np.isfinite(table)]))
    mids = (finite[1:] + finite[:-1]) / 2                       # exact ties: to the even code
    rng = np.random.default_rng(0)
    x = np.concatenate([mids, -mids, finite, rng.uniform(-finite[-1], finite[-1], 2000)]).astype(np.float32)
    codes, refused = from_f32(x.astype(np.float64), f)
    assert not refused.any()
    want = torch.tensor(x).to(TORCH[(processor, kind)]).view(torch.uint8).numpy()
    assert np.array_equal(codes.astype(np.uint8), want)


@pytest.mark.parametrize("processor", ["gfx942", "gfx950"])
def test_out_of_range_infinity_and_nan_are_refused_or_forced(processor):
    f = fmt("fp8", processor, "t")
    big = values(f)[f.max_code] * 2
    codes, refused = from_f32(np.array([big, -np.inf, np.nan, -0.0, -1e-30]), f)
    assert refused[:2].all()                       # saturation is documented for f16 only
    if processor == "gfx942":
        assert not refused[2] and codes[2] == 0x80          # FNUZ: 0x80 is the only NaN
        assert codes[3] == codes[4] == 0                    # no negative zero
    else:
        assert refused[2] and codes[3] == codes[4] == 0x80  # OCP: a NaN's sign is not given; -0 exists


def _bytes(w, value):
    w.v[0] = np.full(64, value, np.uint32)


@pytest.mark.parametrize("line,word", [("v_cvt_pk_f32_fp8_e32 v[2:3], v0", 0),
                                       ("v_cvt_pk_f32_fp8_sdwa v[2:3], v0 src0_sel:WORD_1", 1),
                                       ("v_cvt_pk_f32_fp8_sdwa v[2:3], v0 src0_sel:WORD_0", 0)])
def test_packed_conversion_reads_the_word_sdwa_selects(line, word):
    """`tmp = SDWA_SRC0_SEL[1 : 0] == WORD1.b2 ? S0[31 : 16] : S0[15 : 0]; D0[31 : 0].f32 = fp8_to_f32(tmp[7 : 0]);
    D0[63 : 32].f32 = fp8_to_f32(tmp[15 : 8])`; an e32 encoding has no SDWA field: DWORD, the low word."""
    w = run([line], setup=lambda w: _bytes(w, 0x40_38_48_44))        # fnuz: 0x44 1.5, 0x48 2, 0x38 0.5, 0x40 1
    assert (f32(w.v[2]) == (1.5, 0.5)[word]).all() and (f32(w.v[3]) == (2.0, 1.0)[word]).all()


@pytest.mark.parametrize("sel,want", [("BYTE_0", 1.5), ("BYTE_1", 2.0), ("BYTE_2", 0.5), ("BYTE_3", 1.0),
                                      ("WORD_1", 1.5)])
def test_byte_conversion_reads_the_byte_sdwa_selects(sel, want):
    """BYTE1..BYTE3 select that byte; anything else is the "BYTE0 implied" branch (WORD_1 included)."""
    w = run([f"v_cvt_f32_fp8_sdwa v2, v0 src0_sel:{sel}"], setup=lambda w: _bytes(w, 0x40_38_48_44))
    assert (f32(w.v[2]) == want).all()


def test_pack_writes_the_word_opsel3_selects_and_keeps_the_other():
    """`if OPSEL[3].u32 == 0U then VGPR[laneId][VDST.u32][15 : 0].b16 = { f32_to_fp8(S1.f32), f32_to_fp8(S0.f32) }
    // D0[31:16] are preserved else [31 : 16] ...`; llvm-mc puts op_sel's last bit in OPSEL[3]."""
    def setup(w):
        w.v[1], w.v[2] = np.full(64, 0x40400000, np.uint32), np.full(64, 0x3F800000, np.uint32)   # 3.0, 1.0
        w.v[5] = np.full(64, 0xAAAA5555, np.uint32)
    w = run(["v_cvt_pk_fp8_f32 v5, v1, v2", "v_mov_b32 v6, 0xAAAA5555", "v_cvt_pk_fp8_f32 v6, v2, v1 op_sel:[0,0,1]",
             "v_cvt_pk_fp8_f32 v7, -v1, |v2|"], setup=setup)
    assert (w.v[5] == 0xAAAA_40_4C).all() and (w.v[6] == 0x4C_40_5555).all()   # 3.0 is 0x4C, 1.0 0x40
    assert (w.v[7] & 0xFFFF == 0x40_CC).all()                  # neg on an f32 source: -3.0 is 0xCC


def test_a_value_past_the_range_is_refused_where_it_runs():
    def setup(w):
        w.v[1] = np.full(64, 0x3F800000, np.uint32)
        w.v[1][7] = 0x43FA0000                                  # 500.0 > 240, the e4m3fnuz maximum
    with pytest.raises(NotModelled, match="out of the fp8 range"):
        run(["v_cvt_pk_fp8_f32 v5, v1, v1"], setup=setup)
    w = run(["v_mov_b32 v1, 0x43fa0000", "s_mov_b64 exec, 1", "v_mov_b32 v1, 1.0", "v_cvt_pk_fp8_f32 v5, v1, v1"])
    assert w.v[5][0] & 0xFFFF == 0x4040                         # inactive lanes hold 500.0: not converted


def test_mode_bit_23_does_not_stop_a_conversion_in_range():
    w = run(["s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1", "v_mov_b32 v1, 1.0", "v_cvt_pk_fp8_f32 v5, v1, v1"])
    assert (w.v[5] & 0xFFFF == 0x4040).all()


def test_gfx950_scaled_conversions_multiply_by_the_e8m0_scale():
    """`scale = 32'U(exponent(S1.f32)); srcword = OPSEL[0].i32 * 16; ... fp8_to_f32_scale(src[7 : 0].fp8, scale.u8)`:
    the value times 2^(scale - 127), so S1 = 4.0 (exponent 129) multiplies by 4; the pack divides by its S2's."""
    w = run(["v_mov_b32 v0, 0x40384844", "v_cvt_scalef32_pk_f32_fp8 v[2:3], v0, 4.0 op_sel:[1,0,0]",
             "v_cvt_scalef32_f32_fp8 v4, v0, 1.0 op_sel:[1,0,0]",
             "v_cvt_scalef32_pk_fp8_f32 v5, v2, v3, 4.0", "v_cvt_scalef32_pk_fp8_f32 v5, v2, v3, 1.0 op_sel:[0,0,0,1]"],
            processor="gfx950")
    ocp = values(fmt("fp8", "gfx950", "t"))
    assert (f32(w.v[2]) == 4 * ocp[0x38]).all() and (f32(w.v[3]) == 4 * ocp[0x40]).all()
    assert (f32(w.v[4]) == ocp[0x48]).all()                     # OPSEL[1 : 0] = 1: byte 1
    assert (w.v[5] & 0xFFFF == 0x4038).all()                    # 4 * x / 4 is x again
    assert (w.v[5] >> 16 == 0x5048).all()                       # 4 * 1.0 = 4 (0x48), 4 * 2.0 = 8 (0x50)


def test_without_a_processor_fp8_is_refused():
    with pytest.raises(NotModelled, match="fp8/bf8 on processor"):
        run(["v_cvt_pk_f32_fp8_e32 v[2:3], v0"], processor="")


@pytest.mark.parametrize("processor,scale", [("gfx942", 1.0), ("gfx950", 4.0)])
def test_fp8_mfma_reads_the_processors_format(processor, scale):
    """D = A * B + C over K = 32: with every element of A the code 0x44 and of B 0x40, each D element is
    32 * a * b whatever the layout (fnuz: 1.5 * 1 * 32 = 48; ocp: 3 * 2 * 32 = 192)."""
    def setup(w):
        for r in range(4):
            w.v[r] = np.full(64, 0x44444444 if r < 2 else 0x40404040, np.uint32)
    w = run(["v_mfma_f32_16x16x32_fp8_fp8 v[4:7], v[0:1], v[2:3], 0"], processor, setup)
    for r in range(4, 8):
        assert (f32(w.v[r]) == 48.0 * scale).all()


def test_fma_mix_with_f16_multiplicands_runs_the_cdna_text():
    """V_MAD_MIX_F32 (the opcode llvm-mc encodes v_fma_mix_f32 as): `in[i] = f16_to_f32(S[i][15 : 0].f16)` where
    OPSEL_HI[i] is set, else `S[i].f32`; `D0 = in[0] * in[1] + in[2]`."""
    w = run(["v_mov_b32 v1, 0x3e00", "v_mov_b32 v2, 0x4500", "v_mov_b32 v3, 0.5",
             "v_fma_mix_f32 v4, v1, v2, v3 op_sel_hi:[1,1,0]",
             "v_mov_b32 v5, 0x12345678", "v_fma_mixlo_f16 v5, v1, v2, v3 op_sel_hi:[1,1,0]",
             "v_mov_b32 v6, 0x12345678", "v_fma_mixhi_f16 v6, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[1,1,0]"])
    assert (f32(w.v[4]) == 1.5 * 5.0 + 0.5).all()
    assert (w.v[5] == 0x1234_4800).all()                        # 8.0 in f16; the high half kept
    assert (w.v[6] == 0x3800_5678).all()       # op_sel[0]: S0's high half (0): 0 * 5 + 0.5 = 0.5; the low half kept


def test_fma_mix_with_an_f32_multiplicand_runs_both_texts_and_refuses_where_they_differ():
    """With S0 read as f32 the product may not be exact in f32: the CDNA text rounds it, RDNA3's V_FMA_MIX text
    fuses it. Both run: 1.5 (f32) * (1 + 2^-10) (f16) - 1 is exact either way and runs; (1 + 2^-12)^2 - 1 is
    2^-11 + 2^-24 fused, but the rounded product 1 + 2^-11 (a tie to even) gives 2^-11: refused."""
    def setup(w):
        w.v[2] = np.full(64, 0x3C01, np.uint32)                     # 1 + 2^-10 (f16)
        w.v[3] = np.full(64, 0xBF800000, np.uint32)                 # -1.0 (f32)
        w.v[5] = np.full(64, 0x3FC00000, np.uint32)                 # 1.5 (f32)
    w = run(["v_fma_mix_f32 v4, v5, v2, v3 op_sel_hi:[0,1,0]"], setup=setup)
    assert (f32(w.v[4]) == np.float32(1.5 * (1 + 2.0 ** -10) - 1)).all()
    def setup2(w):
        w.v[1] = np.full(64, 0x3F800800, np.uint32)                 # 1 + 2^-12 (f32)
        w.v[3] = np.full(64, 0xBF800000, np.uint32)
    with pytest.raises(NotModelled, match="rounded product and RDNA3's fused"):
        run(["v_fma_mix_f32 v4, v1, v1, v3 op_sel_hi:[0,0,0]"], setup=setup2)


@pytest.mark.parametrize("mn,pairs", [("v_permlane32_swap_b32", [(k, k + 32) for k in range(32)]),
                                      ("v_permlane16_swap_b32", [(p * 32 + k, p * 32 + k + 16)
                                                                 for p in (0, 1) for k in range(16)])])
def test_permlane_swap_exchanges_vdst_upper_with_src0_lower(mn, pairs):
    """`tmp = VGPR[lane][SRC0.u32]; VGPR[lane][SRC0.u32] = VGPR[lane + 32][VDST.u32]; VGPR[lane + 32][VDST.u32] = tmp`
    (the 16 form: `pass * 32 + lane` and `+ 16`); the other lanes keep their values."""
    def setup(w):
        w.v[0], w.v[1] = np.arange(64, dtype=np.uint32), np.arange(64, dtype=np.uint32) + 1000
    w = run([f"{mn} v0, v1"], "gfx950", setup)
    d, s = list(range(64)), [k + 1000 for k in range(64)]
    for lo, up in pairs:
        s[lo], d[up] = up, lo + 1000
    assert list(w.v[0]) == d and list(w.v[1]) == s
    with pytest.raises(NotModelled, match="EXEC"):
        run(["s_mov_b64 exec, 3", f"{mn} v0, v1"], "gfx950")
