"""S_SETREG/S_GETREG of the MODE register (machine_hwreg.py, decision 41). MODE[7:0] is FP_ROUND (3:0) and
FP_DENORM (7:4) per the CDNA guide's Table 26; the machine models round-to-nearest-even with denormals (0xf0)
only. Expected values by hand; the SIMM16 encoding of `hwreg(...)` is checked against llvm-mc."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import Function, parse_statement
from gfxhound.executors.amdgcn.machine import NotModelled, Wave
from gfxhound.executors.amdgcn.machine_hwreg import hwreg_field
from gfxhound.executors.amdgcn.machine_kernel import Kernel

LLVM_MC = Path(codegen.DEFAULT_LLC).with_name("llvm-mc")


def run(*lines, setup=None):
    ins = tuple(parse_statement(t, i + 1, i) for i, t in enumerate(lines + ("s_endpgm",)))
    w = Wave()
    if setup:
        setup(w)
    Kernel(Function("t", ins)).run(w, 0)
    return w


@pytest.mark.skipif(not LLVM_MC.exists(), reason="needs llvm-mc-22")
def test_hwreg_fields_are_llvm_mcs_simm16():
    """SIMM16 = {size - 1 [15:11], offset [10:6], hwRegId [5:0]} (the pseudocode's fields); the id of
    HW_REG_MODE and the bytes are llvm-mc's encoding."""
    forms = ["hwreg(HW_REG_MODE, 23, 1)", "hwreg(HW_REG_MODE, 0, 8)", "hwreg(HW_REG_MODE, 2, 2)",
             "hwreg(HW_REG_MODE, 4, 4)"]
    text = "".join(f"s_setreg_imm32_b32 {f}, 1\n" for f in forms)
    out = subprocess.run([str(LLVM_MC), "-arch=amdgcn", "-mcpu=gfx950", "-show-encoding"], input=text,
                         capture_output=True, text=True, check=True).stdout
    simm16 = [int(b1, 16) << 8 | int(b0, 16) for b0, b1 in re.findall(r"encoding: \[(0x\w+),(0x\w+),", out)]
    for form, raw in zip(forms, simm16):
        parsed = parse_statement(f"s_setreg_imm32_b32 {form}, 1", 1, 0).operands[0]
        assert hwreg_field(parsed, "t") == hwreg_field(parse_statement(f"s_setreg_imm32_b32 {raw}, 1", 1, 0)
                                                       .operands[0], "t")
    assert simm16[0] == 1 | 23 << 6 and simm16[1] == 1 | 7 << 11


def test_writing_the_modelled_round_and_denorm_modes_runs_and_reads_back():
    """FP_ROUND 0 (nearest even), FP_DENORM 3/3 (allow in and out): MODE[7:0] = 0xf0."""
    w = run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 15", "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0",
            "s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 8)", "s_getreg_b32 s1, hwreg(HW_REG_MODE, 4, 2)",
            "s_mov_b32 s2, 0xf0", "s_setreg_b32 hwreg(HW_REG_MODE, 0, 8), s2")
    assert w.s[0] == 0xF0 and w.s[1] == 3


@pytest.mark.parametrize("line,value", [
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 3", 0xFC),      # f16/f64 round toward zero (llc's fptrunc.round)
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0", 0xC0),      # f32 denormals flushed
    ("s_setreg_imm32_b32 0x1801, 0xc", 0xFC),                      # raw SIMM16: MODE[3:0] = 0xc
])
def test_changing_round_or_denorm_mode_is_refused_where_it_runs(line, value):
    with pytest.raises(NotModelled, match=f"FP_ROUND/FP_DENORM = {value:#04x}"):
        run(line)


def test_mode_bit_23_is_recorded_and_refuses_narrow_float_results_only():
    """Triton's fp8 kernels write `hwreg(HW_REG_MODE, 23, 1), 1`: f32 and integer work still runs, an f16 result
    is refused while the bit is set, and runs again once it is cleared."""
    def setup(w):
        w.v[0] = 0x3F800000   # 1.0f
    w = run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1", "v_add_f32_e32 v1, v0, v0",
            "s_getreg_b32 s0, hwreg(HW_REG_MODE, 23, 1)", setup=setup)
    assert int(w.v[1][0]) == 0x40000000 and w.s[0] == 1
    with pytest.raises(NotModelled, match="bit 23"):
        run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1", "v_cvt_f16_f32_e32 v1, v0", setup=setup)
    w = run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1", "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 0",
            "v_cvt_f16_f32_e32 v1, v0", setup=setup)
    assert (w.v[1] & 0xFFFF == 0x3C00).all()


@pytest.mark.parametrize("line,match", [
    ("s_setreg_imm32_b32 hwreg(HW_REG_STATUS, 0, 1), 1", "hardware register"),
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 9, 1), 0", "MODE bits 0x200"),
    ("s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 32)", "MODE bits"),
])
def test_other_registers_and_mode_bits_are_named_when_run(line, match):
    ins = (parse_statement(line, 1, 0), parse_statement("s_endpgm", 2, 1))
    kernel = Kernel(Function("t", ins))   # decoded: refused only by the wave that runs it
    with pytest.raises(NotModelled, match=match):
        kernel.run(Wave())


@pytest.mark.skipif(not Path(codegen.DEFAULT_LLC).exists(), reason="needs llc-22")
def test_llcs_round_toward_zero_conversion_is_refused_at_its_setreg(tmp_path):
    ll = tmp_path / "rtz.ll"
    ll.write_text("""
declare half @llvm.fptrunc.round.f16.f32(float, metadata)
define amdgpu_kernel void @rtz(ptr addrspace(1) %out, float %x) {
  %h = call half @llvm.fptrunc.round.f16.f32(float %x, metadata !"round.towardzero")
  store half %h, ptr addrspace(1) %out
  ret void
}
""")
    from gfxhound.executors.amdgcn.run import launch
    code = codegen.from_ll(ll, "gfx950", 2)
    assert "hwreg(HW_REG_MODE, 2, 2), 3" in code.text
    with pytest.raises(NotModelled, match="FP_ROUND"):
        launch(code, None, {"out": np.zeros(2, np.uint16), "x": 1.0})
