"""gfx950's f8f6f4 MFMA (decision 48) on both executors: llc's v_mfma_f32_{32x32x64,16x16x128}_f8f6f4 on the
machine (machine_mfma_f8f6f4.py) and the intrinsic on the IR executor (matrix.py), held to numpy's product of A
and B placed here by the ROCm blog's rule, written out by hand: row i (column j of B) in lanes i + M * g of the
64 / M lane groups g; fp8/fp6 in chunks of 16 K (element e of group g is K = 16 * (G * (e // 16) + g) + e % 16),
fp4 32 consecutive K (K = 32 * g + e); element e at bit e * width of the lane's registers. Values come from exact
small codes, so every sum is exact in f32."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.oracle import crosscheck as C

pytestmark = pytest.mark.skipif(shutil.which("llc-22") is None and not Path(codegen.DEFAULT_LLC).exists(),
                                reason="needs Debian's llc-22")
LL = Path(__file__).parent / "data" / "gfx950" / "mfma_f8f6f4.ll"
# kernel -> (M, A format, B format); formats: name, width, code -> value for the codes the test draws
KERNELS = {"m32_fp8_fp8": (32, "fp8", "fp8"), "m32_bf8_fp8": (32, "bf8", "fp8"), "m32_fp6_bf6": (32, "fp6", "bf6"),
           "m32_fp4_fp4": (32, "fp4", "fp4"), "m16_fp8_bf8": (16, "fp8", "bf8"), "m16_fp4_fp6": (16, "fp4", "fp6")}
# a few codes of each format with their values (OCP: fp8 E4M3 bias 7, bf8 E5M2 bias 15, fp6 E2M3 bias 1, bf6 E3M2
# bias 3, fp4 E2M1 bias 1)
CODES = {"fp8": {0x38: 1.0, 0x40: 2.0, 0xB8: -1.0, 0x30: 0.5, 0x00: 0.0, 0x3C: 1.5},
         "bf8": {0x3C: 1.0, 0x40: 2.0, 0xBC: -1.0, 0x38: 0.5, 0x00: 0.0, 0x3E: 1.5},
         "fp6": {0x08: 1.0, 0x10: 2.0, 0x28: -1.0, 0x04: 0.5, 0x00: 0.0, 0x0C: 1.5},
         "bf6": {0x0C: 1.0, 0x10: 2.0, 0x2C: -1.0, 0x08: 0.5, 0x00: 0.0, 0x0E: 1.5},
         "fp4": {0x2: 1.0, 0x4: 2.0, 0xA: -1.0, 0x1: 0.5, 0x0: 0.0, 0x3: 1.5}}
WIDTH = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}


def place(codes: np.ndarray, m: int, width: int) -> np.ndarray:
    """[M, K] codes -> uint32 [64, 8] lane words by the rule in the module docstring."""
    k = codes.shape[1]
    groups = 64 // m
    lanes = [0] * 64
    for row in range(m):
        for kk in range(k):
            if width == 4:
                g, e = kk // 32, kk % 32
            else:
                g = (kk // 16) % groups
                e = (kk // (16 * groups)) * 16 + kk % 16
            lanes[g * m + row] |= int(codes[row, kk]) << (e * width)
    return np.array([[(v >> (32 * r)) & 0xFFFFFFFF for r in range(8)] for v in lanes], np.uint32)


def d_layout(m: int) -> np.ndarray:
    """[64, M*M/64] -> (i, j) of D: the CDNA 32x32x8 / 16x16x16 f32 output, register r of lane l holds row
    8 * (r // 4) + 4 * (l // 32) + r % 4 (32x32) or 4 * (l // 16) + r (16x16), column l % M."""
    rows = np.zeros((64, m * m // 64), np.int64)
    for lane in range(64):
        for r in range(m * m // 64):
            rows[lane, r] = 8 * (r // 4) + 4 * (lane // 32) + r % 4 if m == 32 else 4 * (lane // 16) + r
    return rows


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_f8f6f4_mfma_on_both_executors_is_the_product(kernel):
    m, fa, fb = KERNELS[kernel]
    k = 64 if m == 32 else 128
    rng = np.random.default_rng(5)
    ca = rng.choice(list(CODES[fa]), (m, k))
    cb = rng.choice(list(CODES[fb]), (k, m))
    A = np.vectorize(CODES[fa].get)(ca).astype(np.float64)
    B = np.vectorize(CODES[fb].get)(cb).astype(np.float64)
    Cm = rng.integers(-4, 4, (m, m)).astype(np.float64)
    want = A @ B + Cm
    rows = d_layout(m)
    c_lanes = Cm[rows, np.arange(64)[:, None] % m].astype(np.float32)
    text = LL.read_text()
    nd = m * m // 64
    launch = C.make_launch(f"a: i32[512]; b: i32[512]; c: fp32[{64 * nd}]; d: fp32[{64 * nd}] out; grid: 1; "
                           "block: 64", C.ir_params(text, kernel))
    launch.args[0][:] = place(ca, m, WIDTH[fa]).ravel()
    launch.args[1][:] = place(cb.T, m, WIDTH[fb]).ravel()
    launch.args[2][:] = c_lanes.ravel()
    assembly = codegen.from_ll(LL, "gfx950", 2)
    for run in (C.run_ir(text, kernel, "gfx950", launch), C.run_machine("O2", assembly, kernel, launch)):
        assert not run.unresolved and not run.fault, (run.label, run.unresolved, run.fault)
        got = np.zeros((m, m))
        got[rows, np.arange(64)[:, None] % m] = run.outputs["d"].reshape(64, nd)
        assert (got == want).all(), (run.label, np.argwhere(got != want)[:4])
