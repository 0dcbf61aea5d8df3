"""MFMA on the machine (machine_mfma.py over mfma_data.py, AMD's Matrix Instruction Calculator's layouts).

The expected values use the layout of V_MFMA_F32_16X16X16_F16 as AMD's documentation states it (written out here
by hand, not read from mfma_data.py): A[i][k] is in lane i + 16 * (k // 4), register (k % 4) // 2, half k % 2;
B[k][j] in lane j + 16 * (k // 4), the same register and half; D[i][j] in lane j + 16 * (i // 4), register i % 4.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.machine import Wave
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.asm import parse_program
from gfxhound.executors.amdgcn.run import NotModelled, launch

pytestmark = pytest.mark.skipif(shutil.which("llc-22") is None and not Path(codegen.DEFAULT_LLC).exists(),
                                reason="needs Debian's llc-22")
DATA = Path(__file__).parent / "data"


def product_16x16(ll, mcpu, opt, per_lane, seed):
    """(machine's D, exact A @ B) for a 16x16xK f16 MFMA kernel (K = 4 * per_lane) whose A and B are placed by the
    documented rule: A[i][k] in lane i + 16 * (k // per_lane), element k % per_lane of the lane's halves; B[k][j]
    likewise with j for i; D[i][j] read from lane j + 16 * (i // 4), register i % 4."""
    rng = np.random.default_rng(seed)
    K = 4 * per_lane
    A = rng.integers(-8, 8, (16, K)).astype(np.float16) / np.float16(4)
    B = rng.integers(-8, 8, (K, 16)).astype(np.float16) / np.float16(2)
    a_mem, b_mem = np.zeros((64, per_lane), np.float16), np.zeros((64, per_lane), np.float16)
    for i in range(16):
        for k in range(K):
            a_mem[i + 16 * (k // per_lane), k % per_lane] = A[i, k]
            b_mem[i + 16 * (k // per_lane), k % per_lane] = B[k, i]
    code = codegen.from_ll(ll, mcpu, opt)
    out = launch(code, None, {"a": a_mem.view(np.uint16).ravel(), "b": b_mem.view(np.uint16).ravel(),
                              "c": np.zeros(256, np.float32)}).outputs["c"].view(np.float32).reshape(64, 4)
    got = np.array([[out[j + 16 * (i // 4), i % 4] for j in range(16)] for i in range(16)])
    return got, A.astype(np.float64) @ B.astype(np.float64), code    # small integers over 8: every sum exact


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_mfma_16x16x16_f16_is_the_matrix_product(mcpu, opt):
    got, want, _ = product_16x16(DATA / "mfma.ll", mcpu, opt, per_lane=4, seed=7)
    assert (got == want).all()


def test_mfma_rests_on_its_decision_and_broadcasts_are_not_modelled():
    text = codegen.from_ll(DATA / "mfma.ll", "gfx942", 2).text
    assert 31 in Kernel(parse_program(text).function("mfma")).decisions
    line = next(l for l in text.splitlines() if "v_mfma" in l)
    kernel = Kernel(parse_program(text.replace(line, line + " cbsz:1 abid:1")).function("mfma"))
    at = next(i for i, ins in enumerate(kernel.instructions) if ins.mnemonic.startswith("v_mfma"))
    with pytest.raises(NotModelled, match="cbsz"):   # refused by the wave that runs it
        kernel.steps[at](Wave())


def test_the_generator_reads_the_calculators_cells():
    """mfma_extract.parse_layout on the tool's CSV forms: a 16-bit field, a byte field, a whole VGPR, a pair."""
    from gfxhound.executors.amdgcn.mfma_extract import parse_layout
    text = ("Architecture: CDNA3\nBlock 0\nA[M][K],0,1,2\n0,v0{0}.[15:0],v1{16}.[31:24],v3{5}\n"
            "Block 1\nA[M][K],0,1,2\n0,v[1:0]{7},v0{1}.[7:0],v2{63}.[31:16]\n")
    assert parse_layout(text) == [[[(0, 0, 0, 16), (1, 16, 24, 8), (3, 5, 0, 32)]],
                                  [[(0, 7, 0, 64), (0, 1, 0, 8), (2, 63, 16, 16)]]]


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
def test_f32_division_sequence_rounds_like_ieee_division(mcpu):
    """fdiv.ll: llc's division sequence with V_DIV_SCALE (decision 33), V_RCP, V_DIV_FMAS and V_DIV_FIXUP gives
    the correctly rounded quotient numpy computes, on ordinary values and the cases the scaling exists for: a
    denormal denominator or numerator, quotients near the f32 range's ends, zeros, infinities and NaN."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(64).astype(np.float32) * np.float32(1000)
    y = rng.standard_normal(64).astype(np.float32)
    special = [(1.0, 3.0), (1e-40, 3.0), (3.0, 1e-40), (3e38, 1e-3), (1e-30, 3e7),
               (0.0, 5.0), (5.0, 0.0), (-0.0, 5.0), (np.inf, 2.0), (2.0, np.inf), (np.nan, 1.0), (7.0, 7.0),
               (1.0, 2.0 ** 126), (2.0 ** 127, 0.5), (-1e-45, 1e-45)]
    for i, (p, q) in enumerate(special):
        x[i], y[i] = p, q
    code = codegen.from_ll(DATA / "fdiv.ll", mcpu, 2)
    out = launch(code, None, {"a": x, "b": y, "c": np.zeros(64, np.float32)}).outputs["c"].view(np.float32)
    with np.errstate(all="ignore"):
        want = x / y
    same = (out.view(np.uint32) == want.view(np.uint32)) | (np.isnan(out) & np.isnan(want))
    assert same.all(), [(float(x[i]), float(y[i]), float(out[i]), float(want[i])) for i in np.flatnonzero(~same)]
    # a quotient far below the f32 range reaches V_DIV_FIXUP's UNDERFLOW_F32, whose value the guide does not give
    x[0], y[0] = 2.0 ** -149, 2.0 ** 100
    with pytest.raises(NotModelled, match="UNDERFLOW_F32"):
        launch(code, None, {"a": x, "b": y, "c": np.zeros(64, np.float32)})


@pytest.mark.parametrize("opt", [0, 2])
def test_gfx950_16x16x32_f16_has_twice_the_elements_a_lane(opt):
    """Decision 46: v_mfma_f32_16x16x32_f16 keeps the 16x16x16 form's lane structure with 8 consecutive K elements a
    lane (AMD's ROCm blog on CDNA4 matrix cores): A[i][k] in lane i + 16 * (k // 8), element k % 8 (four VGPRs),
    B[k][j] in lane j + 16 * (k // 8); D as the 16x16x16 form. Expected values written out here by that rule."""
    got, want, code = product_16x16(DATA / "gfx950" / "mfma_16x16x32.ll", "gfx950", opt, per_lane=8, seed=11)
    assert (got == want).all()
    program = parse_program(code.text)
    assert {31, 46} <= set(Kernel(program.function("mfma"), program=program).decisions)
