"""Typed values, conversions and arithmetic of AMD's pseudocode, over numpy lane arrays.

Why a library of its own: the pseudocode is C with sized types, and the executor must reproduce C's widths
exactly (unsigned wrap, integer promotion, sign extension, IEEE rounding) on every lane of a wave at once. Values:

- integers of at most 64 bits are ``uint64`` arrays holding their raw bits masked to the width (a signed value is
  its two's complement bits); wider integers (``65'U``, ``b128``) are object arrays of Python ints;
- ``f16``/``f32``/``f64`` are numpy float arrays; ``bf16`` is a float32 array holding bfloat16 values.

An array is 0-d for a wave-wide (scalar) value and has 64 lanes otherwise; numpy broadcasting mixes the two.
Float work stays exact where the guide's words are exact (fma rounds once, widening keeps NaN payloads); the
choices where they are not are in docs/amdgcn-pcode.md. Nothing here is shared with executors/llvm_ir.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .pcode_parse import Ty

I32, I64, U1, U32, U64 = Ty("i", 32), Ty("i", 64), Ty("u", 1), Ty("u", 32), Ty("u", 64)
F32, F64, BF16 = Ty("f", 32), Ty("f", 64), Ty("bf", 16)
FLOAT = {16: np.float16, 32: np.float32, 64: np.float64}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
MANT = {16: 10, 32: 23, 64: 52}   # stored mantissa bits of each IEEE width
ROUND_NEAREST_EVEN, ROUND_TOWARD_ZERO = 0, 3   # MODE.FP_ROUND encodings
LANE_BITS = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))


class LibError(Exception):
    """A conversion or helper the pseudocode asks for that this library does not model."""


class NotModelled(Exception):
    """The pseudocode of ``mnemonic`` uses ``construct``, which the executor does not model: report unresolved."""

    def __init__(self, mnemonic: str, construct: str):
        super().__init__(f"{mnemonic}: {construct}")
        self.mnemonic, self.construct = mnemonic, construct


_ONES = tuple(np.uint64((1 << b) - 1) for b in range(65))


def ones(bits: int):
    return _ONES[bits] if 0 <= bits <= 64 else (1 << bits) - 1


def const(ty: Ty, value):
    if ty.kind == "bf":
        return narrow(np.asarray(value, np.float64), 64, ty)
    if ty.is_float:
        return np.asarray(value, FLOAT[ty.bits])
    return np.asarray(int(value) & int(ones(ty.bits)), object if ty.bits > 64 else np.uint64)


def as_wide(v):
    return np.asarray(v).astype(object)


def bits_of(v, ty: Ty):
    """The raw bits of a value (uint64, or object when wider than 64)."""
    if ty.kind == "f":
        return np.asarray(v, FLOAT[ty.bits]).view(UINT[ty.bits]).astype(np.uint64)
    if ty.kind == "bf":
        return (np.asarray(v, np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint64)
    return v


def from_bits(b, ty: Ty):
    """A value of ``ty`` from raw bits (extra high bits are dropped)."""
    if ty.bits > 64 and not ty.is_float:
        return as_wide(b) & ones(ty.bits)
    b = (as_wide(b) & ((1 << 64) - 1)).astype(np.uint64) if np.asarray(b).dtype == object else b
    b = np.asarray(b, np.uint64) & ones(ty.bits)
    if ty.kind == "f":
        return b.astype(UINT[ty.bits]).view(FLOAT[ty.bits])
    if ty.kind == "bf":
        return (b << np.uint64(16)).astype(np.uint32).view(np.float32)
    return b


def signed(v, bits: int):
    """Two's complement reading of ``bits``-wide raw bits: int64 (or Python ints when wider)."""
    if bits > 64:
        v = as_wide(v)
        return np.where(v >> (bits - 1), v - (1 << bits), v)
    sb = np.uint64(1 << (bits - 1))
    return np.asarray((np.asarray(v, np.uint64) ^ sb) - sb).view(np.int64)


def extend(v, src: Ty, bits: int):
    """C integer conversion: to ``bits`` wide, sign-extending a signed source, else zero-extending/truncating."""
    if src.kind == "i" and bits > src.bits:
        s = signed(v, src.bits)
        v = as_wide(s) if bits > 64 else np.asarray(s).astype(np.uint64)
    elif bits > 64:
        v = as_wide(v)
    elif src.bits > 64:
        v = (as_wide(v) & int(ones(64))).astype(np.uint64)
    return v & ones(bits)


def _resize_bits(b, src_bits: int, bits: int):
    return extend(b, Ty("b", src_bits), bits)


def _nan_payload(x, src: int, dst: int):
    """Bits of the NaN of width ``dst`` that keeps ``x``'s sign, quiet bit and top payload bits."""
    b = bits_of(x, Ty("f", src))
    sign = (b >> np.uint64(src - 1)) & np.uint64(1)
    payload = b & ones(MANT[src])
    shift = np.uint64(abs(MANT[dst] - MANT[src]))
    payload = (payload << shift) if dst > src else (payload >> shift)
    payload = np.where(payload == 0, np.uint64(1 << (MANT[dst] - 1)), payload)  # a NaN stays a NaN
    return (sign << np.uint64(dst - 1)) | (ones(dst - 1 - MANT[dst]) << np.uint64(MANT[dst])) | payload


def narrow(x, src_bits: int, dst: Ty, rtz: bool = False):
    """Round a float array to ``dst`` (IEEE round-to-nearest-even, or toward zero), keeping NaN payloads."""
    x = np.asarray(x, FLOAT[src_bits])
    if dst.kind == "bf":
        f = x if src_bits <= 32 else round_to_odd(x, np.float32)
        f = np.asarray(f, np.float32)
        b = f.view(np.uint32)
        lsb = (b >> np.uint32(16)) & np.uint32(1)
        r = np.where(rtz, b, b + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
        r = np.where(np.isnan(f), (b | np.uint32(0x00400000)) & np.uint32(0xFFFF0000), r)
        return r.view(np.float32)
    y = x.astype(FLOAT[dst.bits])
    if rtz:
        away = np.abs(y.astype(np.float64)) > np.abs(x.astype(np.float64))
        y = np.where(away, np.nextafter(y, np.zeros_like(y)), y)
    nan = np.isnan(x)
    if nan.any():
        y = np.where(nan, from_bits(_nan_payload(x, src_bits, dst.bits), dst), y)
    return y


def widen(x, src_bits: int, dst_bits: int):
    """Exact float widening; a NaN keeps its payload and its signalling bit (no hardware quieting)."""
    x = np.asarray(x, FLOAT[src_bits])
    y = x.astype(FLOAT[dst_bits])
    nan = np.isnan(x)
    if nan.any():
        y = np.where(nan, from_bits(_nan_payload(x, src_bits, dst_bits), Ty("f", dst_bits)), y)
    return y


def round_to_odd(x64, dtype):
    """f64 -> a narrower float, rounding to odd: a second rounding from it is then correctly rounded."""
    y = np.asarray(x64).astype(dtype)
    back = y.astype(np.float64)
    inexact = (back != x64) & np.isfinite(y)
    even = (y.view({np.float32: np.uint32, np.float16: np.uint16}[dtype]) & 1) == 0
    toward = np.where(x64 > back, np.inf, -np.inf).astype(dtype)
    return np.where(inexact & even, np.nextafter(y, toward), y)


def convert(v, src: Ty, dst: Ty, rtz: bool = False):
    """C value conversion between types (float -> integer is not modelled: the guide's helpers do that)."""
    if src == dst:
        return v
    if not src.is_float and not dst.is_float:
        return extend(v, src, dst.bits)
    if src.is_float and dst.is_float:
        sbits = 32 if src.kind == "bf" else src.bits
        dbits = 32 if dst.kind == "bf" else dst.bits
        if dst.kind == "bf" or dbits < sbits:
            return narrow(v, sbits, dst, rtz)
        return widen(v, sbits, dbits) if dbits > sbits else v
    if src.is_float:
        raise LibError(f"float {src} to integer {dst} conversion")
    if src.bits > 64:
        raise LibError(f"{src} to float")
    n = signed(v, src.bits) if src.kind == "i" else np.asarray(v, np.uint64)
    if dst.kind == "f" and dst.bits >= 32:
        return n.astype(FLOAT[dst.bits])
    return narrow(n.astype(np.float64), 64, dst, rtz)


def view(v, src: Ty, dst: Ty):
    """x.TYPE: same width reinterprets the bits; integers convert; floats of other widths convert by value."""
    if not src.is_float and not dst.is_float:
        return extend(v, src, dst.bits)
    if src.is_float and dst.is_float and src.bits != dst.bits:
        return convert(v, src, dst)
    return from_bits(_resize_bits(bits_of(v, src), src.bits, dst.bits), dst)


def cast(v, src: Ty, dst: Ty):
    """N'T(x): an integer becomes a float by its bits (32'F(0xffc00000)); otherwise a C conversion."""
    if dst.is_float and not src.is_float:
        return from_bits(_resize_bits(v, src.bits, dst.bits), dst)
    return convert(v, src, dst)


def promote(t: Ty) -> Ty:
    return I32 if not t.is_float and t.bits < 32 else t


def common(a: Ty, b: Ty) -> Ty:
    """C's usual arithmetic conversions, over the pseudocode's sized types."""
    if a.is_float or b.is_float:
        if a.is_float and b.is_float and a != b:
            return Ty("f", max(a.bits, b.bits, 32 if a.bits == b.bits else 0))
        return a if a.is_float else b
    a, b = promote(a), promote(b)
    if a.bits == b.bits:
        return Ty("i" if a.kind == b.kind == "i" else "u", a.bits)
    w = a if a.bits > b.bits else b
    return Ty("i" if w.kind == "i" else "u", w.bits)


def truth(v):
    return np.asarray(v) != 0


# ---- arithmetic on operands already converted to the common type ----------------------------------------
def arith(op: str, a, b, ty: Ty):
    if ty.is_float:
        if ty.kind == "bf":
            return narrow(arith(op, a, b, F32), 32, ty)
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op](a, b)
    if op in ("/", "%"):
        if ty.bits > 64:
            raise LibError("wide division")
        x, y = (signed(a, ty.bits), signed(b, ty.bits)) if ty.kind == "i" else (a, b)
        if np.any(np.asarray(y) == 0):
            raise LibError("integer division by zero")
        q = np.abs(x) // np.abs(y) * np.where((x < 0) ^ (y < 0), -1, 1) if ty.kind == "i" else x // y
        r = q if op == "/" else x - q * y
        return np.asarray(r).astype(np.uint64) & ones(ty.bits)
    f = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and, "|": np.bitwise_or,
         "^": np.bitwise_xor}[op]
    if ty.bits > 64:   # Python integers on both sides: a wide scalar next to uint64 lanes overflows numpy's C long
        a, b = as_wide(a), as_wide(b)
    return f(a, b) & ones(ty.bits)


def compare(op: str, a, b, ty: Ty):
    if not ty.is_float and ty.kind == "i":
        a, b = signed(a, ty.bits), signed(b, ty.bits)
    if op == "<>":
        r = (a < b) | (a > b) if ty.is_float else a != b
    else:
        r = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
             ">=": np.greater_equal}[op](a, b)
    return np.asarray(r).astype(np.uint64)


def shift(op: str, a, n, ty: Ty):
    """Shifts by amounts at or past the width act as on an infinitely wide value: 0, or the sign for >> signed."""
    if ty.bits > 64:
        a, n = as_wide(a), as_wide(n)
        if op == "<<":
            return np.where(n >= ty.bits, 0, (a << np.minimum(n, ty.bits)) & ones(ty.bits))
        s = signed(a, ty.bits) if ty.kind == "i" else a
        return (s >> np.minimum(n, ty.bits)) & ones(ty.bits)
    n = np.asarray(n, np.uint64)
    nn = np.minimum(n, np.uint64(63))
    if op == "<<":
        return np.where(n >= ty.bits, np.uint64(0), (np.asarray(a, np.uint64) << nn) & ones(ty.bits))
    if ty.kind == "i":
        return np.asarray(signed(a, ty.bits) >> nn.astype(np.int64)).astype(np.uint64) & ones(ty.bits)
    return np.where(n >= ty.bits, np.uint64(0), np.asarray(a, np.uint64) >> nn)


def negate(a, ty: Ty):
    if ty.is_float:
        return np.negative(a)
    return (ones(ty.bits) - a + (1 if ty.bits > 64 else np.uint64(1))) & ones(ty.bits)


def extract(b, lo, width: int):
    """Bits [lo, lo+width) of raw bits ``b`` (lo: a lane array or int; bits past the value read as 0)."""
    if np.asarray(b).dtype == object or width > 64:
        r = (as_wide(b) >> as_wide(lo)) & ones(width)
        return r if width > 64 else r.astype(np.uint64)
    return shift(">>", b, lo, U64) & ones(width)


def bitreverse(v, bits: int):
    out = np.zeros_like(np.asarray(v))
    for i in range(bits):
        out = out | (((v >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i))
    return out


# ---- float helpers -------------------------------------------------------------------------------------------
def fields(x, ty: Ty):
    """(sign, biased exponent, mantissa, mantissa width) of a float (bf16 read as the f32 it is stored in)."""
    bits = 32 if ty.kind == "bf" else ty.bits
    b = bits_of(np.asarray(x, FLOAT[bits]), Ty("f", bits))
    m = MANT[bits]
    return b >> np.uint64(bits - 1), (b >> np.uint64(m)) & ones(bits - 1 - m), b & ones(m), m


def nan_kind(x, ty: Ty, quiet: bool):
    """isQuietNAN / isSignalNAN: a NaN whose top mantissa bit is (is not) set."""
    _, _, mant, m = fields(x, ty)
    q = ((mant >> np.uint64(m - 1)) & np.uint64(1)) == 1
    return (np.isnan(x) & (q if quiet else ~q)).astype(np.uint64)


def quieten(x, ty: Ty):
    """cvtToQuietNAN: set a NaN's quiet bit, keep its sign and payload."""
    bits = 32 if ty.kind == "bf" else ty.bits
    b = bits_of(np.asarray(x, FLOAT[bits]), Ty("f", bits)) | np.uint64(1 << (MANT[bits] - 1))
    return np.where(np.isnan(x), from_bits(b, Ty("f", bits)), x)


def fma(a, b, c, ty: Ty):
    """a*b+c rounded once: exactly in f64 then rounded to odd for f16/f32/bf16, by rationals for f64."""
    if ty.kind == "f" and ty.bits == 64:
        return _fma64(a, b, c)
    a, b, c = (widen(v, 32 if ty.kind == "bf" else ty.bits, 64) for v in (a, b, c))
    p = a * b
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    odd = np.where((err != 0) & np.isfinite(s) & ((s.view(np.uint64) & 1) == 0),
                   np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return narrow(odd, 64, ty)


def _fma64(a, b, c):
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    out = np.empty(a.shape, np.float64)
    for i in np.ndindex(a.shape):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        if math.isfinite(x) and math.isfinite(y) and math.isinf(z):
            r = z
        elif not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)) or x == 0 or y == 0:
            r = x * y + z
        else:
            exact = Fraction(x) * Fraction(y) + Fraction(z)
            try:
                r = float(exact) if exact else 0.0
            except OverflowError:
                r = math.inf if exact > 0 else -math.inf
        out[i] = r
    return out


def float_to_int(x, bits: int, is_signed: bool):
    """Truncate toward zero, saturate to the integer range, NaN -> 0 (the guide's conversion rule)."""
    t = np.trunc(np.asarray(x).astype(np.float64))
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if is_signed else (0, 2 ** bits - 1)
    t = np.where(np.isnan(t), 0, np.clip(t, lo, hi))
    return t.astype(np.int64).astype(np.uint64) & ones(bits)


def ldexp(x, n, ty: Ty):
    """x * 2**n with one rounding (n: int64 lane array)."""
    n = np.clip(n, -4000, 4000)
    if ty.kind == "bf":
        return narrow(np.ldexp(np.asarray(x, np.float64), n.astype(np.int32)), 64, ty)
    return np.ldexp(np.asarray(x, FLOAT[ty.bits]), n.astype(np.int32)).astype(FLOAT[ty.bits])
