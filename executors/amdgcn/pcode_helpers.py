"""The helper functions AMD's pseudocode calls (``fma``, ``isNAN``, ``f32_to_i32``, ``signext`` ...).

Why here, and why only these: the guide uses them without defining them, so each is written from its name, its
uses in the pseudocode and the guide's prose (choices in docs/amdgcn-pcode.md). A helper missing from ``HELPERS``
(``f32_to_snorm``, the fp8/fp6/fp4 conversions, ``ConvertFromFormat``...) makes its instruction ``NotModelled``.

Each entry is a typer: argument types -> (result type, fn(frame, *argument values)); the frame gives the round mode.
"""
from __future__ import annotations

import numpy as np

from .pcode_lib import (BF16, F32, F64, I32, I64, ROUND_TOWARD_ZERO, U1, U32, LibError, Ty, common, convert, extend,
                        fields, float_to_int, fma, ldexp, nan_kind, ones, quieten, signed)

HELPERS: dict = {}
APPROXIMATE = frozenset({"sqrt", "log2", "pow", "sin", "cos"})  # the guide gives these an ulp bound, not exactness


def _float(tys, name):
    if not tys[0].is_float or tys[0].kind == "bf":
        raise LibError(f"{name}() of {tys[0]}")
    return tys[0]


def _unary(name, f, result=None):
    def typer(tys):
        t = _float(tys, name)
        return (result or t), (lambda fr, x: f(x, t))
    HELPERS[name] = typer


for _name, _f in {"trunc": np.trunc, "floor": np.floor, "sqrt": np.sqrt, "log2": np.log2, "sin": np.sin,
                  "cos": np.cos, "abs": np.abs}.items():
    _unary(_name, lambda x, t, f=_f: f(x))
_unary("fract", lambda x, t: x - np.floor(x))
_unary("mantissa", lambda x, t: np.frexp(x)[0])        # frexp's significand in [0.5, 1), sign kept
_unary("cvtToQuietNAN", quieten)
_unary("isNAN", lambda x, t: np.isnan(x).astype(np.uint64), U1)
_unary("isQuietNAN", lambda x, t: nan_kind(x, t, True), U1)
_unary("isSignalNAN", lambda x, t: nan_kind(x, t, False), U1)
_unary("isEven", lambda x, t: (np.fmod(x, 2) == 0).astype(np.uint64), U1)
_unary("sign", lambda x, t: fields(x, t)[0], U1)
_unary("exponent", lambda x, t: fields(x, t)[1], I32)  # the biased exponent field, as V_CMP_CLASS uses it


def _fma(tys):
    t = common(common(tys[0], tys[1]), tys[2])
    if not t.is_float:
        raise LibError("fma() of integers")
    return t, lambda fr, a, b, c: fma(*(convert(v, s, t) for v, s in zip((a, b, c), tys)), t)


def _pow(tys):
    t = _float(tys[1:], "pow")

    def fn(fr, base, x):
        if not np.all(np.asarray(base) == 2):
            raise LibError("pow() of a base other than 2.0")
        return np.exp2(x)
    return t, fn


def _ldexp(tys):
    t = _float(tys, "ldexp")
    return t, lambda fr, x, n: ldexp(x, signed(extend(n, tys[1], 64), 64), t)


def _signext(tys):
    t = tys[0]
    if t.is_float or t.bits > 64:
        raise LibError(f"signext() of {t}")
    return I64, lambda fr, x: extend(x, Ty("i", t.bits), 64)


def _signext_from_bit(tys):
    t = tys[0]
    if t.is_float or t.bits > 64:
        raise LibError(f"signext_from_bit() of {t}")

    def fn(fr, v, w):
        w = np.asarray(extend(w, tys[1], 64), np.uint64)
        ok = (w > 0) & (w < t.bits)                 # width 0 or >= the type's width: nothing to extend
        ww = np.where(ok, w, np.uint64(1))
        neg = ((v >> (ww - np.uint64(1))) & np.uint64(1)) == 1
        high = ones(t.bits) ^ ((np.uint64(1) << ww) - np.uint64(1))
        return np.where(ok & neg, v | high, v) & ones(t.bits)
    return t, fn


def _conversion(src: Ty, dst: Ty):
    """An IEEE conversion: honours the round mode the text sets, and quiets a signalling NaN (a sized cast
    ``64'F(x)`` does not: ``isSignalNAN(64'F(S0.f32))`` must still see it)."""
    def typer(tys):
        def fn(fr, x):
            y = convert(convert(x, tys[0], src), src, dst, rtz=fr.round == ROUND_TOWARD_ZERO)
            return quieten(y, dst) if dst.is_float else y
        return dst, fn
    return typer


def _to_int(src: Ty, bits: int, is_signed: bool):
    def typer(tys):
        return Ty("i" if is_signed else "u", bits), lambda fr, x: float_to_int(convert(x, tys[0], src), bits, is_signed)
    return typer


F16, I16, U16 = Ty("f", 16), Ty("i", 16), Ty("u", 16)
HELPERS.update({
    "fma": _fma, "pow": _pow, "ldexp": _ldexp, "signext": _signext, "signext_from_bit": _signext_from_bit,
    "i32_to_f32": _conversion(I32, F32), "u32_to_f32": _conversion(U32, F32), "i32_to_f64": _conversion(I32, F64),
    "u32_to_f64": _conversion(U32, F64), "f32_to_f64": _conversion(F32, F64), "f64_to_f32": _conversion(F64, F32),
    "f16_to_f32": _conversion(F16, F32), "f32_to_f16": _conversion(F32, F16), "i16_to_f16": _conversion(I16, F16),
    "u16_to_f16": _conversion(U16, F16), "bf16_to_f32": _conversion(BF16, F32), "f32_to_bf16": _conversion(F32, BF16),
    "u16_to_u32": _conversion(U16, U32), "u8_to_u32": _conversion(Ty("u", 8), U32),
    "u4_to_u32": _conversion(Ty("u", 4), U32), "i16_to_i32": _conversion(I16, I32),
    "i8_to_i32": _conversion(Ty("i", 8), I32), "i4_to_i32": _conversion(Ty("i", 4), I32),
    "f32_to_i32": _to_int(F32, 32, True), "f32_to_u32": _to_int(F32, 32, False),
    "f64_to_i32": _to_int(F64, 32, True), "f64_to_u32": _to_int(F64, 32, False),
    "f16_to_i16": _to_int(F16, 16, True), "f16_to_u16": _to_int(F16, 16, False),
})
