"""Calls of the AMDGPU matrix intrinsics (`llvm.amdgcn.mfma.*`, `mfma.scale.*`) for intrinsics.py: the operands
read from the lanes as matrix.py takes them (raw bytes, bf16 widened, immediates checked), D returned per lane.

Why apart: intrinsics.py holds the table of every AMDGPU intrinsic; the matrix calls' operand handling is the
longest entry and grows with each matrix form.
"""
from __future__ import annotations

import re

import numpy as np

from .errors import NotModelled
from .matrix import mfma
from .values import bf16_to_f32, is_bfloat, lanes_of


def _waves(ex, value):
    """[n, ...] lane values as [workgroups' waves, wave size, ...] (as intrinsics._waves; that module imports this)."""
    value = lanes_of(value, ex.n)
    return value.reshape((ex.n // ex.kernel.wave_size, ex.kernel.wave_size) + value.shape[1:])


def compile_mfma(ins, args, kernel):
    """A call to llvm.amdgcn.mfma.* or mfma.scale.*: its operands as matrix.mfma takes them."""
    name = ins.extra["callee"][len("llvm.amdgcn."):]
    if name.startswith("mfma.scale"):
        return _mfma_scale(ins, args, kernel, re.sub(r"(\.v\d+i32)+$", "", name))
    tys = ins.extra["tys"]
    mods = [int(o[2] or 0) if o[0] == "c" else None for o in ins.ops[3:6]]
    if None in mods:
        raise NotModelled("mfma with non-constant modifiers")

    def operand(ex, value, ty):
        v = _waves(ex, value)
        if v.ndim == 2:
            v = v[..., None]
        if ty[0] == "i" and ty[1] == 64 or ty[0] == "i" and ty[1] == 32 or ty[0] == "v" and ty[2] == ("i", 8):
            raw = np.ascontiguousarray(v).view(np.uint8)
            return raw.view(np.int8) if ".i8" in name else raw
        if ty[0] == "v" and ty[2] == ("i", 16) or is_bfloat(ty):
            return bf16_to_f32(v)
        return v

    def run(ex):
        a = operand(ex, args[0](ex), tys[0])
        b = operand(ex, args[1](ex), tys[1])
        c = _waves(ex, args[2](ex))
        d = mfma(name, a, b, c, *mods, kernel.arch)
        return np.ascontiguousarray(d).reshape((ex.n,) + d.shape[2:])
    return run


def _mfma_scale(ins, args, kernel, name):
    """llvm.amdgcn.mfma.scale.f32.{16x16x128,32x32x64}.f8f6f4(A, B, C, A format, B format, op_sel A, scale A,
    op_sel B, scale B) [IntrinsicsAMDGPU.td]: the formats and op_sels are immediates; both scales the constant 0
    mean unscaled (matrix.mfma: LLVM then selects the unscaled instruction)."""
    consts = [int(o[2] or 0) if o[0] == "c" else None for o in ins.ops[3:9]]
    fmt_a, fmt_b, opsel_a, _, opsel_b, _ = consts
    if None in (fmt_a, fmt_b, opsel_a, opsel_b):
        raise NotModelled(f"{name} with non-constant formats or op_sel")
    unscaled = consts[3] == 0 and consts[5] == 0

    def raw(ex, value):
        v = _waves(ex, value)
        return np.ascontiguousarray(v if v.ndim == 3 else v[..., None]).view(np.uint8)

    def run(ex):
        scales = {} if unscaled else {"scale_a": _waves(ex, args[6](ex)), "scale_b": _waves(ex, args[8](ex))}
        d = mfma(name, raw(ex, args[0](ex)), raw(ex, args[1](ex)), _waves(ex, args[2](ex)), fmt_a, 0, fmt_b,
                 kernel.arch, opsel_a=opsel_a, opsel_b=opsel_b, **scales)
        return np.ascontiguousarray(d).reshape((ex.n,) + d.shape[2:])
    return run
