"""Triton's elementwise semantics on tracked values: binary and unary ops, fma, math functions, comparisons and
selection.

Why a module of its own: these are the per-lane rules (C-style integer division and remainder, two's-complement
wrap-around, arithmetic right shift, NaN in min/max left open, the error each math function may add on each backend)
and the bulk of the reference; reductions, casts and dots build on values they produce but not on their code.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D

from .arith_base import ArithBase
from .numeric import F64, I64, TV, UNIT, any_bad, constant, exact_mask, finish, round_to, wrap


def _where(m, a, b):
    return torch.where(m, a, b)


class ElementwiseArith(ArithBase):
    """Lane by lane: arithmetic, fma, math functions, comparisons and selection."""

    # --- elementwise --------------------------------------------------------------------------------------------
    def binary(self, name, a: TV, b: TV) -> TV:
        dtype = a.dtype
        bad = any_bad(a, b)
        if dtype == "i1":
            fn = {"and": torch.logical_and, "or": torch.logical_or, "xor": torch.logical_xor}[name]
            return TV(fn(a.v != 0, b.v != 0).to(I64), torch.zeros(bad.shape, dtype=F64), bad, "i1")
        if not D.is_float(dtype):
            if name in ("add", "sub", "mul"):
                exact_r = a.v + b.v if name == "add" else (a.v - b.v if name == "sub" else a.v * b.v)
                self._overflow_check(name, dtype, exact_r, bad)
            return TV(*self._int_binary(name, a.v, b.v, dtype), bad=bad, dtype=dtype)
        ex = exact_mask(a, b)
        av, bv, ae, be = a.v, b.v, a.e, b.e
        if name in ("add", "sub"):
            r = av + bv if name == "add" else av - bv
            e = ae + be
            for x, other in ((a, b), (b, a)):  # a dot's result plus c: maybe accumulated by the matrix unit
                if x.fold is not None and name == "add":
                    rel, mags = x.fold
                    folded = rel * (mags + other.v.abs())
                    e, ex = e + folded, ex & (folded == 0)
            return finish(dtype, r, e, ex, bad=bad)
        if name == "mul":
            # exact only where the product fits the dtype: else a contraction into an fma rounds it differently
            prod = av * bv
            return finish(dtype, prod, av.abs() * be + bv.abs() * ae + ae * be, ex & product_fits(av, bv, dtype),
                          bad=bad)
        if name == "truediv":
            margin = bv.abs() - be
            unstable = (be > 0) & (margin <= 0)
            denom = torch.where(unstable, torch.ones_like(margin), bv.abs() * margin)
            e = (av.abs() * be + bv.abs() * ae) / denom
            r = av / bv
            ulps = self.table.div_ulps * UNIT["fp32"] if dtype != "fp64" else 2 * self.table.fp64_ulps * UNIT["fp64"]
            # x / ±0 is ±inf by the zero's sign, which free-order sums, max/min and contractions leave open
            sign_open = (bv == 0) & (av != 0)
            return finish(dtype, r, e, ex, correctly_rounded=self.table.div_ulps == 0, rel=ulps,
                          bad=bad | unstable | sign_open)
        if name in ("maximum", "minimum"):
            r = torch.maximum(av, bv) if name == "maximum" else torch.minimum(av, bv)
            nan = torch.isnan(av) | torch.isnan(bv)  # propagate_nan=NONE: the backend decides
            return finish(dtype, r, torch.maximum(ae, be), ex, bad=bad | nan)
        raise KeyError(name)

    @staticmethod
    def _int_binary(name, a, b, dtype):
        bits = D.DTYPES[dtype].bits
        if name == "add":
            r = a + b
        elif name == "sub":
            r = a - b
        elif name == "mul":
            r = a * b
        elif name in ("floordiv", "mod"):  # emitted as a // ((b & 7) + 1): the divisor is 1..8
            d = wrap(dtype, (b & 7) + 1)
            r = torch.div(a, d, rounding_mode="trunc") if name == "floordiv" else torch.fmod(a, d)
        elif name == "and":
            r = a & b
        elif name == "or":
            r = a | b
        elif name == "xor":
            r = a ^ b
        elif name == "shl":
            r = a << (b & (bits - 1))
        elif name == "shr":
            r = a >> (b & (bits - 1))  # arithmetic: the operands are signed
        elif name == "maximum":
            r = torch.maximum(a, b)
        elif name == "minimum":
            r = torch.minimum(a, b)
        else:
            raise KeyError(name)
        r = wrap(dtype, r)
        return r, torch.zeros(r.shape, dtype=F64)

    def fma(self, a: TV, b: TV, c: TV) -> TV:
        dtype = a.dtype
        prod = a.v * b.v
        e = a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e + c.e
        if dtype == "fp64":  # float64 cannot hold the exact product of two fp64 values: one rounding either way
            return finish(dtype, prod + c.v, e, torch.zeros_like(a.bad), absolute=2 * UNIT[dtype] * prod.abs(),
                          bad=any_bad(a, b, c))
        if self.table.fma_fused:
            return finish(dtype, prod + c.v, e, exact_mask(a, b, c), bad=any_bad(a, b, c))
        # two roundings: the product's rounding error is not scaled by the (possibly cancelling) result
        ex = exact_mask(a, b, c) & (round_to(dtype, prod) == prod)
        return finish(dtype, prod + c.v, e, ex, absolute=2 * UNIT[dtype] * prod.abs(), bad=any_bad(a, b, c))

    def unary(self, name, x: TV) -> TV:
        if name == "neg":
            if x.is_float:
                return TV(-x.v, x.e, x.bad, x.dtype)
            self._overflow_check("neg", x.dtype, -x.v, x.bad)  # -x is 0 - x
            return TV(wrap(x.dtype, -x.v), x.e, x.bad, x.dtype)
        if name == "abs":
            return TV(x.v.abs() if x.is_float else wrap(x.dtype, x.v.abs()), x.e, x.bad, x.dtype)
        if name == "not":
            v = (x.v == 0).to(I64) if x.dtype == "i1" else wrap(x.dtype, ~x.v)
            return TV(v, x.e, x.bad, x.dtype)
        return self.math(name, x)

    _MATH = {
        "exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "log2": torch.log2, "sqrt": torch.sqrt,
        "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "erf": torch.erf, "sigmoid": torch.sigmoid,
        "floor": torch.floor, "ceil": torch.ceil,
    }
    _LIPSCHITZ = {"sin": 1.0, "cos": 1.0, "erf": 1.1284, "sigmoid": 0.25}

    def math(self, name, x: TV) -> TV:
        fn = self._MATH[name]
        v, e = x.v, x.e
        r = fn(v)
        if name in ("floor", "ceil"):  # exact, but a step: unstable where the interval crosses an integer
            lo, hi = fn(v - e), fn(v + e)
            unstable = (lo != hi) & (e > 0)
            return TV(round_to(x.dtype, r), torch.zeros_like(e), x.bad | unstable, x.dtype)
        if name in self._LIPSCHITZ:
            prop = self._LIPSCHITZ[name] * e
            domain_bad = torch.zeros_like(x.bad)
        else:  # monotone: the function's values at the interval ends bound it
            lo, hi = fn(v - e), fn(v + e)
            prop = torch.maximum((lo - r).abs(), (hi - r).abs())
            nan_r, nan_lo, nan_hi = torch.isnan(r), torch.isnan(lo), torch.isnan(hi)
            domain_bad = (nan_r != nan_lo) | (nan_r != nan_hi)  # the interval crosses the domain's edge
            prop = torch.where(torch.isnan(prop) & nan_r & ~domain_bad, torch.zeros_like(prop), prop)
        spec = self.table.fn(name)
        if x.dtype == "fp64":
            rel, absolute = 2 * self.table.fp64_ulps * UNIT["fp64"] + 2 * UNIT["fp64"], 0.0  # + torch's own
        else:
            rel = (spec.ulps + spec.arg * v.abs().clamp(max=1e6)) * UNIT["fp32"]
            absolute = spec.abs
        correct = name == "sqrt" and spec.ulps == 0
        out = finish(x.dtype, r, prop, exact_mask(x), correctly_rounded=correct, rel=rel, absolute=absolute,
                     bad=x.bad | domain_bad)
        # log(0) = -inf, sqrt(-1) = NaN, f(NaN) = NaN on exact operands: the IEEE values on every backend
        special = (e == 0) & ~torch.isfinite(r)
        if name == "rsqrt":  # rsqrt(±0) = ±inf: the zero's sign may be open
            special = special & (v != 0)
        out.v = torch.where(special, r, out.v)
        out.e = torch.where(special, torch.zeros_like(out.e), out.e)
        out.bad = torch.where(special, x.bad, out.bad)
        if name in ("rsqrt", "sqrt"):
            out.bad = out.bad | (v == 0)  # the result's sign (or infinity's) follows the zero's open sign
        return out

    # --- comparisons and selection ----------------------------------------------------------------------------
    _CMP = {"<": torch.lt, "<=": torch.le, ">": torch.gt, ">=": torch.ge, "==": torch.eq, "!=": torch.ne}

    def compare(self, pred, a: TV, b: TV) -> TV:
        fn = self._CMP[pred]
        r = fn(a.v, b.v)
        bad = any_bad(a, b)
        if a.is_float:
            e = a.e + b.e
            gap = a.v - b.v
            if pred in ("==", "!="):
                certain = (e == 0) | (gap.abs() > e)
            elif pred in ("<", ">="):  # a < b
                certain = (e == 0) | (gap < -e) | (gap >= e)
            else:  # a <= b, a > b
                certain = (e == 0) | (gap <= -e) | (gap > e)
            bad = bad | ~certain
        return TV(r.to(I64), torch.zeros(r.shape, dtype=F64), bad, "i1")

    def compare_const(self, pred, a: TV, value) -> TV:
        return self.compare(pred, a, constant(value, a.dtype))

    def where(self, c: TV, a: TV, b: TV) -> TV:
        m = c.v != 0
        v = _where(m, a.v, b.v)
        shape = v.shape
        e = _where(m, a.e, b.e).expand(shape)
        bad = (c.bad | _where(m, a.bad, b.bad)).expand(shape)
        return TV(v, e, bad, a.dtype)


def product_fits(a, b, dtype):
    """Lanes where a*b is representable in `dtype` (float64 holds fp32 products exactly; for fp64, Dekker's
    two-product error must be zero)."""
    prod = a * b
    if dtype != "fp64":
        return round_to(dtype, prod) == prod
    split = 134217729.0  # 2^27 + 1 (Veltkamp)
    def halves(x):
        c = split * x
        hi = c - (c - x)
        return hi, x - hi
    ah, al = halves(a)
    bh, bl = halves(b)
    err = ((ah * bh - prod) + ah * bl + al * bh) + al * bl
    return (err == 0) & torch.isfinite(prod)
