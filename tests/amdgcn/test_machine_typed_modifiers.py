"""neg/abs input modifiers act on the sign bit of the operand's type, as the pseudocode reads it: bit 15 of an
`S0.f16`, not bit 31 of the register holding it. Found by a gfx950 campaign: Triton's `tl.abs` of an fp16 value
before `.to(tl.float32)` compiles to `v_cvt_f32_f16_sdwa v1, |v1| ... src0_sel:WORD_1` (and `v_cvt_f32_f16_e64 v1,
|v1|` at -O0); the machine cleared bit 31, so half the outputs kept their sign. Real llc-22, both executors."""
import numpy as np
import pytest

from gfxhound.oracle.crosscheck import compare

ABS_HIGH = """
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr <2 x half>, ptr addrspace(1) %in, i32 %t
  %v = load <2 x half>, ptr addrspace(1) %p
  %h = extractelement <2 x half> %v, i32 1
  %a = call half @llvm.fabs.f16(half %h)
  %f = fpext half %a to float
  %q = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %f, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare half @llvm.fabs.f16(half)
"""

NEG_MUL = """
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr <2 x half>, ptr addrspace(1) %in, i32 %t
  %v = load <2 x half>, ptr addrspace(1) %p
  %x = extractelement <2 x half> %v, i32 0
  %y = extractelement <2 x half> %v, i32 1
  %n = fneg half %x
  %a = call half @llvm.fabs.f16(half %y)
  %m = fmul half %n, %a
  %f = fpext half %m to float
  %q = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %f, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare half @llvm.fabs.f16(half)
"""


def _halves(launch):
    raw = np.asarray(launch.args[launch.names.index("in")], np.uint32)
    return (raw & 0xFFFF).astype(np.uint16).view(np.float16), (raw >> 16).astype(np.uint16).view(np.float16)


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
def test_abs_of_an_f16_operand_clears_bit_15_in_sdwa_and_vop3_forms(tmp_path, mcpu):
    ll = tmp_path / "k.ll"
    ll.write_text(ABS_HIGH)
    result = compare(str(ll), mcpu, [0, 2], "in: u32[64]; out: fp32[64] out; grid: 1; block: 64")
    assert "|v" in result.assemblies["O2"].text and "_sdwa" in result.assemblies["O2"].text
    assert result.verdict["status"] == "agree", result.verdict
    _, high = _halves(result.launch)
    want = np.abs(high).astype(np.float32)
    for run in result.runs:
        got = run.outputs["out"]
        assert np.array_equal(np.signbit(got), np.signbit(want)), run.label
        assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)],
                                                                                 want[~np.isnan(want)])


def test_neg_and_abs_on_a_16_bit_multiply(tmp_path):
    ll = tmp_path / "k.ll"
    ll.write_text(NEG_MUL)
    result = compare(str(ll), "gfx942", [0, 2], "in: u32[64]; out: fp32[64] out; grid: 1; block: 64")
    assert result.verdict["status"] == "agree", result.verdict
    low, high = _halves(result.launch)
    with np.errstate(all="ignore"):
        want = (-low * np.abs(high)).astype(np.float32)
    got = dict((r.label, r.outputs["out"]) for r in result.runs)["O2"]
    finite = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
    assert np.array_equal(got[finite], want[finite])
