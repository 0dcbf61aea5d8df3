"""llc's IEEE f32 division (v_div_scale, v_rcp, fma refinements, v_div_fmas, v_div_fixup) on quotients that land
among the denormals, and the one wait-state rule that pairs a VCC write with v_div_fmas. Found by a gfx950
campaign: x * sigmoid(x) at x = -88 divides 1 by 1.65e38, and the machine gave NaN where the IR executor and torch
gave -5.3e-37. Two faults of the machine, neither of LLVM:
- V_DIV_SCALE compares the reciprocal with DENORM.f64 ("1.0 / 64'F(S1.f32) == DENORM.f64"); the machine used f32's
  smallest normal, took the "both denormal" case and scaled the denominator by 2^64 into infinity;
- V_DIV_FMAS scaled an already rounded fma: denormal quotients came out 1 ulp off (decision 34 now rounds once).
And rule 4 ("VALU writes VCC -> V_DIV_FMAS") was applied after a v_div_scale whose SDST is s[0:1]: it writes that
SGPR pair, not VCC. Real llc-22; expected quotients are numpy's IEEE f32 division."""
import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.run import launch

DIV = """
define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %t
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %d = fdiv float %x, %y
  %q = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %d, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""

DENOMINATORS = np.float32([1.65e38, 3.0e38, 1e38, 2e38, 1.7e38, 3.4e38, 8.5e37, 1.0e37])


def _operands():
    a = np.ones(64, np.float32)
    b = np.resize(DENOMINATORS, 64).astype(np.float32)
    b[8:16] = -b[8:16]
    a[16:24], a[24:32], a[32:40] = 3.0, 2.0, -7.5
    a[40:48] = np.float32(0.5)         # (a numerator so small the quotient underflows past the denormals meets
    #                                    v_div_fixup's UNDERFLOW_F32, which the guide leaves undefined: unresolved)
    b[48:56] = np.float32(0.75)        # ordinary quotients for contrast
    return a, b


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_denormal_quotients_are_correctly_rounded(tmp_path, mcpu, opt):
    ll = tmp_path / "div.ll"
    ll.write_text(DIV)
    code = codegen.from_ll(ll, mcpu, opt)
    assert "v_div_fmas_f32" in code.text and "v_div_scale_f32" in code.text
    a, b = _operands()
    with np.errstate(all="ignore"):
        want = a / b
    assert np.count_nonzero((want != 0) & (np.abs(want) < np.float32(2.0 ** -126))) >= 20   # denormal quotients
    r = launch(code, None, {"a": a, "b": b, "out": np.zeros(64, np.float32)})
    got = np.asarray(r.outputs["out"]).view(np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert not r.wait_hazards


def test_rule_4_follows_the_vcc_a_div_scale_writes_not_its_mnemonic(tmp_path):
    """llc puts the second v_div_scale (SDST s[0:1]) right before v_div_fmas; only the one writing VCC counts."""
    ll = tmp_path / "div.ll"
    ll.write_text(DIV)
    text = codegen.from_ll(ll, "gfx942", 2).text
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("v_div_")]
    vcc_scale = next(line for line in lines if line.startswith("v_div_scale_f32") and ", vcc," in line)
    fmas = next(line for line in lines if line.startswith("v_div_fmas_f32"))
    a, b = _operands()
    args = {"a": a, "b": b, "out": np.zeros(64, np.float32)}
    assert not launch(text, None, dict(args)).wait_hazards
    # the VCC write moved next to v_div_fmas: fewer than 4 wait states
    moved = text.replace(f"\t{vcc_scale}\n", "").replace(f"\t{fmas}\n", f"\t{vcc_scale}\n\t{fmas}\n")
    assert moved != text
    assert 4 in {h[4] for h in launch(moved, None, dict(args)).wait_hazards}
