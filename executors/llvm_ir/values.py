"""How an LLVM value lives in the executor: one numpy array per SSA value across the lanes an executor runs.

Integers are unsigned arrays of their width (i1 is bool), so wrap-around is numpy's; signed operations view them
as signed. `bfloat` is kept as its 16-bit pattern (uint16): numpy has no bfloat16, and every bfloat operation
rounds through float32 exactly as LLVM legalises it for targets without bf16 arithmetic. Pointers are uint64
(global, flat, constant) or uint32 (LDS, private) addresses; a buffer resource is an `Rsrc`. Vectors are
[lanes, n] arrays, aggregates tuples. Constants are 0-d (or [n] for vectors) and broadcast.
"""
from __future__ import annotations

import numpy as np

from .errors import NotModelled

INT_DTYPES = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SIGNED = {np.dtype(np.uint8): np.int8, np.dtype(np.uint16): np.int16, np.dtype(np.uint32): np.int32,
          np.dtype(np.uint64): np.int64, np.dtype(np.bool_): np.bool_}
FLOAT_DTYPES = {"half": np.float16, "float": np.float32, "double": np.float64, "bfloat": np.uint16}
UINT_OF_BITS = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def dtype_of(ty):
    kind = ty[0]
    if kind == "i":
        try:
            return INT_DTYPES[ty[1]]
        except KeyError:
            raise NotModelled(f"integer type i{ty[1]}") from None
    if kind == "f":
        return FLOAT_DTYPES[ty[1]]
    if kind == "p":
        if ty[1] in (3, 5):
            return np.uint32
        if ty[1] in (0, 1, 4):
            return np.uint64
        raise NotModelled(f"pointer in address space {ty[1]} as a value")
    if kind == "v":
        return dtype_of(ty[2])
    raise NotModelled(f"value of type {ty}")


def is_bfloat(ty):
    return ty[0] == "f" and ty[1] == "bfloat" or ty[0] == "v" and ty[2] == ("f", "bfloat")


def bf16_to_f32(bits):
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x):
    """Round float32 to bfloat16 bits, to nearest even; NaN stays a quiet NaN."""
    u = np.asarray(x, np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, (u >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)


def to_float(value, ty):
    """A float operand as a numpy float array (bfloat widened to float32)."""
    return bf16_to_f32(value) if is_bfloat(ty) else value


def from_float(value, ty):
    """A float result in the type's representation."""
    if is_bfloat(ty):
        return f32_to_bf16(np.asarray(value, np.float32))
    return np.asarray(value).astype(dtype_of(ty), copy=False)


def constant(ty, value):
    """A ('c', ty, value) operand as a numpy constant."""
    kind = ty[0]
    if kind == "v":
        items = value if value is not None else [None] * ty[1]
        # [1, n]: a vector constant broadcasts against [lanes, n] and is never mistaken for a per-lane array
        return np.array([_scalar(ty[2], v) for v in items], dtype_of(ty)).reshape(1, ty[1])
    if kind == "s":
        return tuple(constant(t, None) for t in ty[1])
    if kind == "p" and ty[1] == 8:
        raise NotModelled("a constant buffer resource")
    return np.array(_scalar(ty, value), dtype_of(ty))


def _scalar(ty, value):
    if value is None:
        return 0
    if ty[0] == "i":
        return value & ((1 << ty[1]) - 1) if ty[1] > 1 else bool(value & 1)
    if ty[0] == "f":
        bits = {"half": 16, "bfloat": 16, "float": 32, "double": 64}[ty[1]]
        raw = np.array(value, UINT_OF_BITS[bits])
        return raw if ty[1] == "bfloat" else raw.view(FLOAT_DTYPES[ty[1]])
    return value


def signed(a):
    a = np.asarray(a)
    return a.view(SIGNED[a.dtype]) if a.dtype in SIGNED else a


def merge(mask, new, old):
    """`new` on the lanes of `mask`, `old` elsewhere (the executor's write under divergence)."""
    if isinstance(new, tuple):
        olds = old if isinstance(old, tuple) else (None,) * len(new)
        return tuple(merge(mask, n, o) for n, o in zip(new, olds))
    if hasattr(new, "merge"):
        return new.merge(mask, old)
    new = np.asarray(new)
    if old is None:
        old = np.zeros((), new.dtype)
    m = mask if new.ndim <= 1 and np.ndim(old) <= 1 else mask[:, None]
    return np.where(m, new, old)


def lanes_of(value, n):
    """`value` as an array with a leading dimension of n lanes."""
    value = np.asarray(value)
    if value.ndim and value.shape[0] == n:
        return value
    if value.ndim == 1:  # a scalar computed from constants: [1]
        return np.broadcast_to(value, (n,))
    if value.ndim == 2:  # a vector constant, [1, elements]
        return np.broadcast_to(value, (n, value.shape[1]))
    return np.broadcast_to(value, (n,) + value.shape)
