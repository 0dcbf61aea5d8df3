"""Runs one instruction's compiled pseudocode on a few lanes, for the pcode tests.

Registers are raw bits, as the machine will pass them; a list is lanes 0..n-1 of a per-lane register. Expected
values in the tests are written by hand or with plain Python integers and ``struct`` -- never with gfxhound's
LLVM IR executor (executors/llvm_ir), which this executor exists to cross-check.
"""
import struct

import numpy as np

from gfxhound.executors.amdgcn.pcode import compile_op


def lanes(*values) -> np.ndarray:
    a = np.zeros(64, np.uint64)
    a[:len(values)] = [v % 2 ** 64 for v in values]
    return a


def vrun(mnemonic: str, n: int, **regs) -> dict:
    """A per-lane instruction with lanes 0..n-1 active; per-lane results come back as lists of n ints."""
    inputs = {k.replace("__", "."): lanes(*v) if isinstance(v, (list, tuple)) else v for k, v in regs.items()}
    out = compile_op(mnemonic).run(inputs, exec_mask=(1 << n) - 1)
    return {k: [int(x) for x in v[:n]] if isinstance(v, np.ndarray) else v for k, v in out.items()}


def srun(mnemonic: str, **regs) -> dict:
    """A scalar instruction: ints in, ints out."""
    return compile_op(mnemonic).run(regs)


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f16(x: float) -> int:
    return struct.unpack("<H", struct.pack("<e", x))[0]


def as_f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


QNAN32, SNAN32, INF32, NINF32 = 0x7FC00000, 0x7FA00000, 0x7F800000, 0xFF800000
