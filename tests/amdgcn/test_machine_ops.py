"""The machine's own decisions around the pseudocode, on hand-written instruction sequences: operand mapping,
constants at each width, modifiers, lane-mask policy for inactive lanes, cross-lane moves, load tracking, and
NotModelled at decode. Expected values by hand (struct / Python ints)."""
import struct

import numpy as np
import pytest

from gfxhound.executors.amdgcn.asm import Function, parse_statement
from gfxhound.executors.amdgcn.asm_operands import INV2PI_BITS, parse_operand
from gfxhound.executors.amdgcn.machine import NotModelled, Wave, reader
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.run import GlobalMemory, MachineFault


def run(*lines, exec_mask=(1 << 64) - 1, setup=None, mem=None):
    ins = tuple(parse_statement(t, i + 1, i) for i, t in enumerate(lines + ("s_endpgm",)))
    w = Wave()
    w.exec, w.mem = exec_mask, mem
    if setup:
        setup(w)
    Kernel(Function("t", ins)).run(w, 0)
    return w


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_compare_writes_zero_for_inactive_lanes():
    def setup(w):
        w.v[0] = np.arange(64)
        w.v[1] = np.arange(64) % 2 * np.arange(64)   # equal on odd lanes
        w.s[0] = w.s[1] = 0xFFFFFFFF
    w = run("v_cmp_eq_u32_e64 s[0:1], v0, v1", exec_mask=0x0000_0001_FFFF_FFF0, setup=setup)
    mask = 0x0000_0001_FFFF_FFF0
    want = sum(1 << i for i in range(64) if (i % 2 == 1 or i == 0) and mask >> i & 1)
    assert w.s[0] | w.s[1] << 32 == want
    w = run("v_cmp_gt_i32_e32 vcc, s0, v0", setup=lambda w: (w.v.__setitem__(0, np.arange(64)),
                                                             w.s.__setitem__(0, 10)))
    assert w.vcc == (1 << 10) - 1


def test_carry_chain_through_vcc_and_cndmask():
    """A 64-bit add lane by lane: v_add_co_u32 carries into VCC, v_addc_co_u32 takes it; then a select on VCC."""
    def setup(w):
        w.v[0], w.v[1] = 0xFFFFFFFF, 0x7FFFFFFF
        w.v[2] = np.arange(64)
        w.v[3] = 0
    w = run("v_add_co_u32_e32 v4, vcc, v0, v2", "v_addc_co_u32_e32 v5, vcc, v1, v3, vcc",
            "v_cndmask_b32_e64 v6, 0, -1, vcc", setup=setup)
    total = [(0x7FFFFFFF_FFFFFFFF + i) for i in range(64)]
    assert [int(x) for x in w.v[4]] == [t & 0xFFFFFFFF for t in total]
    assert [int(x) for x in w.v[5]] == [t >> 32 for t in total]
    assert [int(x) for x in w.v[6]] == [0] * 64 and w.vcc == 0     # no carry out of bit 63
    w = run("v_sub_co_u32_e64 v4, s[2:3], v2, 1", "v_cndmask_b32_e64 v6, 7, 9, s[2:3]", setup=setup)
    assert int(w.v[4][0]) == 0xFFFFFFFF and int(w.v[6][0]) == 9 and int(w.v[6][1]) == 7


def test_constants_at_each_width():
    w = Wave()
    half = parse_operand("0.5")
    assert reader(half, 32, "v_add_f32")(w) == 0x3F000000
    assert reader(half, 64, "v_add_f64")(w) == 0x3FE0000000000000
    assert reader(half, 16, "v_add_f16")(w) == 0x3800
    inv = parse_operand("0.15915494")
    assert reader(inv, 32, "v_mul_f32")(w) == INV2PI_BITS[32] and reader(inv, 64, "v_mul_f64")(w) == INV2PI_BITS[64]
    assert reader(parse_operand("-1"), 64, "s_mov_b64")(w) == 2 ** 64 - 1
    assert reader(parse_operand("-16"), 32, "s_mov_b32")(w) == 2 ** 32 - 16
    assert reader(parse_operand("0x12345"), 64, "s_mov_b64")(w) == 0x12345
    # decision 36: a 32-bit literal on a 64-bit operand: zero-extended (untyped/unsigned), sign-extended (i64),
    # the high half of an f64 (0x40080000 -> 3.0)
    assert reader(parse_operand("0x80000000"), 64, "s_mov_b64")(w) == 0x80000000
    assert reader(parse_operand("0x80000000"), 64, "v_mad_i64_i32")(w) == 0xFFFFFFFF80000000
    assert reader(parse_operand("0x40080000"), 64, "v_add_f64")(w) == 0x4008000000000000


def test_neg_abs_and_clamp():
    def setup(w):
        w.v[0], w.v[1] = f32(1.0), f32(-2.0)
    w = run("v_add_f32_e64 v2, -v0, |v1|", "v_add_f32_e64 v3, v0, v1 clamp", "v_add_f32_e64 v4, v0, |v1| clamp",
            setup=setup)
    assert int(w.v[2][0]) == f32(1.0) and int(w.v[3][0]) == f32(0.0) and int(w.v[4][0]) == f32(1.0)
    with pytest.raises(NotModelled, match="integer instruction"):
        run("v_add_u32_e64 v2, -v0, v1")


def test_inactive_lanes_keep_their_vgprs():
    w = run("v_mov_b32_e32 v0, 5", exec_mask=0b1010, setup=lambda w: w.v.__setitem__(0, 9))
    assert [int(x) for x in w.v[0][:4]] == [9, 5, 9, 5]


def test_cross_lane_moves_and_agprs():
    def setup(w):
        w.v[0] = np.arange(64) * 3
        w.s[5] = 7
    w = run("v_readlane_b32 s0, v0, 5", "v_readlane_b32 s1, v0, s5", "v_readfirstlane_b32 s2, v0",
            "v_writelane_b32 v1, s5, 63", "v_accvgpr_write_b32 a0, v0", "v_accvgpr_read_b32 v2, a0",
            exec_mask=0b1100, setup=setup)
    assert w.s[:3] == [15, 21, 6]
    assert int(w.v[1][63]) == 7                     # writelane ignores EXEC
    assert [int(x) for x in w.v[2][:4]] == [0xDEADBEEF, 0xDEADBEEF, 6, 9]


def test_saveexec_and_scalar_carry():
    def setup(w):
        w.s[2], w.s[3] = 0xF0F0F0F0, 0
    w = run("s_and_saveexec_b64 s[0:1], s[2:3]", exec_mask=0xFF, setup=setup)
    assert w.exec == 0xF0 and w.s[0] | w.s[1] << 32 == 0xFF and w.scc == 1
    w = run("s_add_u32 s0, s2, s3", "s_addc_u32 s1, 0, 0", setup=lambda w: w.s.__setitem__(slice(2, 4),
                                                                                         [0xFFFFFFFF, 1]))
    assert w.s[0] == 0 and w.s[1] == 1 and w.scc == 0


def test_loads_record_what_is_outstanding():
    mem = GlobalMemory()
    base = mem.map("buf", np.arange(64, dtype=np.uint32))

    def setup(w):
        addr = base + 4 * np.arange(64, dtype=np.uint64)
        w.v[2], w.v[3] = addr & 0xFFFFFFFF, addr >> 32
    w = run("global_load_dword v1, v[2:3], off", "v_add_u32_e32 v4, v1, v1", "s_waitcnt vmcnt(0)",
            "v_add_u32_e32 v5, v1, v1", setup=setup, mem=mem)
    assert w.hazards == [(1, ("v", 1))] and w.outstanding["vm"] == []
    assert [int(x) for x in w.v[5][:3]] == [0, 2, 4]
    w = run("global_load_dword v1, v[2:3], off offset:-4", exec_mask=0b10, setup=setup, mem=mem)
    assert int(w.v[1][1]) == 0
    with pytest.raises(MachineFault, match="lane 0"):
        run("global_load_dword v1, v[2:3], off offset:-4", setup=setup, mem=mem)


def test_unmodelled_instructions_are_named_when_run():
    """Decoding keeps them (a path no wave takes may hold them); the wave that runs one raises NotModelled."""
    for line, mnemonic in (("v_mfma_f32_16x16x32_bf16 a[0:3], v[0:3], v[4:7], a[0:3]", "v_mfma_f32_16x16x32_bf16"),
                           ("s_getreg_b32 s0, hwreg(HW_REG_MODE)", "s_getreg_b32"),
                           ("v_add_u32_e64 v0, v1, v2 mul:2", "v_add_u32"),            # omod on an integer
                           ("v_mov_b32_dpp v0, v1 row_share:1", "v_mov_b32_dpp"),       # a gfx10+ DPP control
                           ("v_cmp_eq_u32_dpp vcc, v1, v2 quad_perm:[1,0,3,2]", "v_cmp_eq_u32_dpp")):
        kernel = Kernel(Function("t", (parse_statement(line, 1, 0),)))
        with pytest.raises(NotModelled) as err:
            kernel.run(Wave())
        assert err.value.mnemonic == mnemonic


def test_ds_permutes_follow_the_guides_pseudocode():
    """bpermute: tmp[i] = EXEC[src] ? DATA0[src] : 0 with src = (ADDR[i] + OFFSET) / 4 % 64; permute: tmp[dst] =
    DATA0[i] for active i in ascending order; only active lanes are written."""
    def setup(w):
        w.v[0] = (63 - np.arange(64)) * 4        # lane i reads/writes lane 63 - i (offset 4 shifts it by one)
        w.v[1] = np.arange(64) + 100
        w.v[2] = 0xAAAA
    mask = (1 << 64) - 1 - 1                        # lane 0 off
    got = [int(x) for x in run("ds_bpermute_b32 v2, v0, v1", exec_mask=mask, setup=setup).v[2]]
    assert got[0] == 0xAAAA and got[63] == 0 and got[5] == 100 + 58    # lane 63 reads lane 0, which is off
    got = [int(x) for x in run("ds_bpermute_b32 v2, v0, v1 offset:4", exec_mask=mask, setup=setup).v[2]]
    assert got[1] == 100 + 63 and got[63] == 100 + 1                  # (63 - i + 1) % 64
    w = run("ds_permute_b32 v2, v0, v1", exec_mask=mask, setup=setup)
    got = [int(x) for x in w.v[2]]
    assert got[0] == 0xAAAA and got[63] == 0 and got[5] == 100 + 58
