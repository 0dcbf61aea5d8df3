"""gfx950's f8f6f4 MFMA on the machine: ``v_mfma_f32_32x32x64_f8f6f4`` and ``v_mfma_f32_16x16x128_f8f6f4``, the
forms llc selects for ``llvm.amdgcn.mfma.scale...f8f6f4`` when both scales are the constant 0 (Triton's every
fp8 ``tl.dot`` on gfx950). CBSZ names A's format and BLGP B's: 0 fp8 (E4M3), 1 bf8 (E5M2), 2 fp6 (E2M3), 3 bf6
(E3M2), 4 fp4 (E2M1).

Decision 48 (docs/amdgcn-pcode.md): AMD's Matrix Instruction Calculator has no CDNA4 table, so the A and B lane
placement is AMD's ROCm blog "Matrix Core Programming on AMD CDNA3 and CDNA4 architecture": a lane holds 32
elements of one row (A) or column (B), the rows spread over 64 / M lane groups; fp8 and fp6 in two chunks of 16
consecutive K (lane group g holds K = 16g.. and 16(G + g)..), fp4 as 32 consecutive K. The IR executor's
matrix.py follows the same blog, so the two executors share the placement here, as for decision 46. Elements are
packed from bit 0 of the first register, `bits` apart (a fp6 element may cross two registers). C and D are laid
out as the calculator's 32x32x8 (16x16x16) f16 form. fp8/bf8 decode in the processor's formats (machine_fp8.py);
the fp6/fp4 formats from their fields as the OCP MX specification defines them (no infinity, no NaN). The sum is
exact in float64 and rounded once (decision 31).

The scaled instructions (``v_mfma_scale_f32_*``) are ``NotModelled``: their scale operands' op_sel byte choice is
not in our sources.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Reg
from gfxhound.executors.amdgcn.machine import M64, NotModelled, _check_modifiers, _hazard
from gfxhound.executors.amdgcn.machine_fp8 import fmt, values
from gfxhound.executors.amdgcn.machine_mfma import _encode, _gather, _layout, mfma_operands

# mnemonic -> (M = N, K, the calculator form whose C/D layout it shares)
F8F6F4 = {"v_mfma_f32_32x32x64_f8f6f4": (32, 64, "v_mfma_f32_32x32x8_f16"),
          "v_mfma_f32_16x16x128_f8f6f4": (16, 128, "v_mfma_f32_16x16x16_f16")}
# CBSZ / BLGP code -> (name, element bits, exponent bits, mantissa bits, bias); fp8/bf8 via machine_fp8
FORMATS = {0: ("fp8", 8, 0, 0, 0), 1: ("bf8", 8, 0, 0, 0), 2: ("e2m3", 6, 2, 3, 1), 3: ("e3m2", 6, 3, 2, 3),
           4: ("e2m1", 4, 2, 1, 1)}


@lru_cache(maxsize=None)
def _mx_values(exp_bits: int, man_bits: int, bias: int) -> np.ndarray:
    """float64 value of every code of an OCP MX fp6/fp4 format: subnormals at exponent 0, every code finite."""
    out = []
    for code in range(1 << (1 + exp_bits + man_bits)):
        sign = -1.0 if code >> (exp_bits + man_bits) else 1.0
        e, m = (code >> man_bits) & ((1 << exp_bits) - 1), code & ((1 << man_bits) - 1)
        if e == 0:
            out.append(sign * m * 2.0 ** (1 - bias - man_bits))
        else:
            out.append(sign * ((1 << man_bits) + m) * 2.0 ** (e - bias - man_bits))
    return np.array(out)


@lru_cache(maxsize=None)
def operand_bits(rows: int, k: int, chunked: bool, element_bits: int):
    """(lane, first bit) [rows, k] of element (row, k) of A (or column k... of B, as [N, K]), decision 48."""
    groups = 64 // rows
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    if chunked:
        chunk, within = kk // 16, kk % 16
        group, element = chunk % groups, (chunk // groups) * 16 + within
    else:
        group, element = kk // 32, kk % 32
    return group * rows + r, element * element_bits


def _elements(w, reg: Reg, rows: int, k: int, code: int, processor: str, mn: str) -> np.ndarray:
    name, bits, exp_bits, man_bits, bias = FORMATS[code]
    lanes, first = operand_bits(rows, k, bits != 4, bits)
    needed = (32 * bits + 31) // 32
    if reg.count < needed:
        raise NotModelled(mn, f"operand {reg}: {needed} registers hold 32 {name} elements")
    file = getattr(w, reg.file)
    index = first // 32
    low = file[reg.index + index, lanes].astype(np.uint64)
    high = file[reg.index + np.minimum(index + 1, needed - 1), lanes].astype(np.uint64)
    raw = ((low | (high << np.uint64(32))) >> (first % 32).astype(np.uint64)) & np.uint64((1 << bits) - 1)
    table = values(fmt(name, processor, mn)) if bits == 8 else _mx_values(exp_bits, man_bits, bias)
    return table[raw.astype(np.int64)]


def f8f6f4_step(ins, processor: str = ""):
    mn = ins.mnemonic
    if processor != "gfx950":
        raise NotModelled(mn, f"on {processor or 'an unknown processor'} (a gfx950 instruction)")
    _check_modifiers(ins, {"cbsz", "blgp", "abid"})
    fmt_a, fmt_b = int(ins.mod("cbsz", 0) or 0), int(ins.mod("blgp", 0) or 0)
    if int(ins.mod("abid", 0) or 0) or fmt_a not in FORMATS or fmt_b not in FORMATS:
        raise NotModelled(mn, f"formats cbsz:{fmt_a} blgp:{fmt_b} abid:{ins.mod('abid', 0)}")
    m, k, like = F8F6F4[mn]
    dst, a, b, c, c_zero = mfma_operands(ins)
    lay_c, lay_d = _layout(like, "C"), _layout(like, "D")
    hazard = _hazard(ins.index)
    read_regs = [(op.file, op.index + i) for op in (a, b) + (() if c_zero else (c,)) for i in range(op.count)]

    def step(w):
        if w.exec != M64:
            raise NotModelled(mn, "an MFMA with EXEC not all ones")
        hazard(w, read_regs)
        A = _elements(w, a, m, k, fmt_a, processor, mn)              # [M, K]
        B = _elements(w, b, m, k, fmt_b, processor, mn)              # [N, K]
        if c_zero:
            C = np.zeros((m, m))
        else:
            cv, cshape = _gather(w, c, lay_c)
            C = (cv.astype(np.uint32).view(np.float32).astype(np.float64)).reshape(cshape)[0]
        with np.errstate(invalid="ignore"):
            out = _encode((A @ B.T + C)[None], np.float32).ravel()
        _, regs, lanes, _, _ = lay_d
        getattr(w, dst.file)[dst.index + regs, lanes] = (out & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        w.pc += 1
    step.decisions = (31, 48) + ((42,) if fmt_a < 2 or fmt_b < 2 else ())
    step.outputs = 1
    return step
