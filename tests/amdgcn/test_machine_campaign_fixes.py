"""Faults of the machine that the three-way device campaigns of Triton 3.9.0 found (each a disagreement or a
hazard where the IR and torch agreed, each checked here to fail before its fix):

- a float inline constant on a 16-bit float operand read as the low half of its f32 bits (`v_add_f16_e32 v0, 1.0,
  v0` added 0): Triton's fp16 `tl.atomic_add` of 1.0 compiles to that in its compare-and-swap loop (decision 45);
- the same on `v_fma_mix_f32`'s f16-read sources (`v_fma_mix_f32 v4, v3, 1.0, 0 op_sel_hi:[1,1,0]`, x * 1.0);
- neg/abs on those sources flipping bit 31 instead of the f16's bit 15 (`v_fma_mix_f32 v3, -v1, v2, v1`);
- a load into AGPRs (`ds_read2_b64 a[32:35], ...`) recorded as pending on v32..v35, so a later read of v33 was
  reported as a read no s_waitcnt retired; and `v_accvgpr_read_b32` of a pending AGPR was not checked at all."""
from __future__ import annotations

import numpy as np
import pytest

from gfxhound.executors.amdgcn.asm import Function, parse_statement
from gfxhound.executors.amdgcn.machine import Wave
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.run import GlobalMemory
from gfxhound.oracle.crosscheck import compare


def run(lines, setup=None):
    ins = tuple(parse_statement(t, i + 1, i) for i, t in enumerate(list(lines) + ["s_endpgm"]))
    w = Wave()
    if setup:
        setup(w)
    Kernel(Function("t", ins), processor="gfx942").run(w, 0)
    return w


@pytest.mark.parametrize("line,want", [("v_add_f16_e32 v0, 1.0, v0", 0x4100), ("v_add_f16_e64 v0, -2.0, v0", 0xB800),
                                       ("v_mul_f16_e32 v0, 0.5, v0", 0x3A00), ("v_add_f32_e32 v1, 1.0, v1", None)])
def test_a_float_inline_constant_is_the_value_in_the_operands_type(line, want):
    """The guide's inline constants are values (1.0, -2.0, 0.5 ...), taken in the type the operation reads: f16
    for a 16-bit float operation. x = 1.5: 1.0 + x = 2.5 (0x4100), -2.0 + x = -0.5 (0xB800), 0.5 * x = 0.75
    (0x3A00); before the fix the f16 operations read 0 for each constant."""
    def setup(w):
        w.v[0] = np.full(64, 0x3E00, np.uint32)                 # 1.5 in f16
        w.v[1] = np.full(64, 0x3FC00000, np.uint32)             # 1.5 in f32
    w = run([line], setup)
    if want is None:
        assert (w.v[1] == 0x40200000).all()                     # 2.5: the f32 form as before
    else:
        assert (w.v[0] & 0xFFFF == want).all()


def test_fma_mix_reads_a_constant_as_f16_where_op_sel_hi_says_f16():
    w = run(["v_fma_mix_f32 v4, v3, 1.0, 0 op_sel_hi:[1,1,0]", "v_fma_mix_f32 v5, v3, 2.0, 0.5 op_sel_hi:[1,1,0]"],
            lambda w: w.v.__setitem__(3, np.full(64, 0x4100, np.uint32)))          # 2.5 in f16
    assert (w.v[4].view(np.float32) == 2.5).all() and (w.v[5].view(np.float32) == 5.5).all()


def test_a_load_into_agprs_leaves_the_vgprs_of_the_same_numbers_alone():
    def setup(w):
        w.lds = GlobalMemory()
        w.lds.map("LDS", np.arange(256, dtype=np.uint32), base=0)
        w.v[0] = np.zeros(64, np.uint32)
        w.v[33] = np.full(64, 7, np.uint32)
    w = run(["ds_read2_b64 a[32:35], v0 offset1:1", "v_mov_b32_e32 v61, v33"], setup)
    assert w.hazards == [] and (w.v[61] == 7).all()
    w = run(["ds_read2_b64 a[32:35], v0 offset1:1", "v_accvgpr_read_b32 v61, a33"], setup)
    assert [(i, r) for i, r in w.hazards] == [(1, ("a", 33))]   # the reader: the AGPR itself is pending


IR_F16_ADD = """
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr half, ptr addrspace(1) %in, i32 %t
  %x = load half, ptr addrspace(1) %p
  %y = fadd half %x, 1.0
  %q = getelementptr half, ptr addrspace(1) %out, i32 %t
  store half %y, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
def test_llc_f16_add_of_a_constant_agrees_with_the_ir(tmp_path, mcpu):
    ll = tmp_path / "k.ll"
    ll.write_text(IR_F16_ADD)
    r = compare(ll, mcpu, [0, 2], "in: fp16[64] values -4..4; out: fp16[64] out; grid: 1; block: 64")
    assert r.verdict["status"] == "agree", r.verdict


@pytest.mark.parametrize("later,pending", [(14, True), (15, False)])
def test_a_counter_holds_its_fields_maximum(later, pending):
    """LGKM_CNT is 4 bits: with 15 later LDS reads issued, 16 would be outstanding, so the first has returned
    (llc counts on it: Triton 3.6.0's gfx950 code writes 9 loaded registers to LDS after 63 later buffer loads,
    with `s_waitcnt vmcnt(62)` only before the tenth). The machine kept 64 entries per counter and reported
    those reads as unretired (the one wait-hazard report of the 3.6.0 campaigns not explained otherwise)."""
    def setup(w):
        w.lds = GlobalMemory()
        w.lds.map("LDS", np.arange(256, dtype=np.uint32), base=0)
        w.v[0] = np.zeros(64, np.uint32)
    lines = ["ds_read_b32 v1, v0"] + [f"ds_read_b32 v{2 + k}, v0 offset:{4 * k}" for k in range(later)]
    w = run(lines + ["v_mov_b32_e32 v100, v1"], setup)
    assert bool(w.hazards) == pending


@pytest.mark.parametrize("line, want", [
    ("v_fma_mix_f32 v3, -v1, v2, v1 op_sel_hi:[1,0,1]", 0x00000000),        # -x * 1.0 + x = 0
    ("v_fma_mix_f32 v3, |v1|, v2, 0 op_sel_hi:[1,0,0]", 0x3E1A0000),        # |x| * 1.0 = 0.150390625
    ("v_fma_mix_f32 v3, -v1, v2, 0 op_sel:[1,0,0] op_sel_hi:[1,0,0]", 0xBFC00000),   # -(high half 1.5) * 1.0
])
def test_fma_mix_negates_an_f16_source_at_its_own_sign_bit(line, want):
    """The third-way device campaign's llc f16 division (`v_fma_mix_f32 v3, -v1, v2, v1 op_sel_hi:[1,0,1]`): neg
    and abs act on the source as the type the text converts it from; on the low-half f16 source that is bit 15. The
    machine flipped bit 31, so -x stayed x and x / x came out 7 instead of 1 (cfb2ad81, f84b0684)."""
    def setup(w):
        w.v[1] = np.full(64, 0x3E00B0D0, np.uint32)          # low half -0.150390625, high half 1.5 (f16)
        w.v[2] = np.full(64, 0x3F800000, np.uint32)          # 1.0 in f32
    w = run([line], setup)
    assert int(w.v[3][0]) == want, hex(int(w.v[3][0]))
