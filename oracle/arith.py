"""Triton's value semantics on tracked values (oracle/numeric.py): what the op registry's references call.

C-style integer division and remainder, two's-complement wrap-around, arithmetic right shift, casts that round to
nearest even (or toward zero) and wrap, NaN in min/max left open (backends differ), argmax ties to the lowest
index, dots with the accumulation dtype and input precision of the call.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.ops_cast import FP8_MAX

from .numeric import (DYADIC_SCALES, F64, I64, MANT, TINY, TV, UNIT, UndefinedBehaviour, any_bad, constant,
                      dyadic_exact, exact, exact_mask, finish, gamma, int_range, round_to, wrap)
from .tolerance import Table
from .formats import BY_DTYPE, decode_codes, round_to_format


def _where(m, a, b):
    return torch.where(m, a, b)


class Arith:
    def __init__(self, table: Table, sanitize_overflow: bool = False):
        self.table = table
        # debug=True: Triton asserts on integer overflow of +, - and * below 64 bits (semantic.py's
        # binary_op_sanitize_overflow_impl), also inside tl.sum / tl.cumsum / tl.cumprod, whose combine functions
        # use them: a device-side assert there is the user's overflow, not a compiler bug, so it is excluded
        self.sanitize_overflow = sanitize_overflow

    def _overflow_check(self, what, dtype, exact_values, bad):
        """Under debug=True: raise if a lane overflows, or if an undetermined lane (unknown value) takes part."""
        if not self.sanitize_overflow or dtype == "i1" or D.DTYPES[dtype].bits >= 64:
            return
        lo, hi = int_range(dtype)
        over = (exact_values < lo) | (exact_values > hi)
        if bool(over.any()) or bool(bad.any()):
            raise UndefinedBehaviour(f"integer overflow under debug=True ({what} in {dtype}, "
                                     f"{int(over.sum())} lanes; undetermined lanes: {int(bad.sum())}): Triton's "
                                     "overflow sanitizer asserts by design")

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
            return finish(dtype, r, ae + be, ex, bad=bad)
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

    # --- casts --------------------------------------------------------------------------------------------------
    def cast(self, x: TV, dst, rounding=None) -> TV:
        src = x.dtype
        if dst == "i1":
            if D.is_float(src):
                nz = (x.v != 0) | torch.isnan(x.v)
                certain = (x.e == 0) | (x.v.abs() > x.e)
                return TV(nz.to(I64), torch.zeros_like(x.e), x.bad | ~certain, "i1")
            return TV((x.v != 0).to(I64), x.e, x.bad, "i1")
        if D.is_float(src) and not D.is_float(dst):  # emitted: NaN -> 0, clamp to the range, truncate
            lo, hi = D.INT_RANGE[dst]
            clean = torch.where(torch.isnan(x.v), torch.zeros_like(x.v), x.v)
            clamp32 = lambda t: round_to("fp32", t).clamp(lo, hi)  # noqa: E731  (the clamp runs in fp32)
            r = torch.trunc(clamp32(clean))
            t_lo, t_hi = torch.trunc(clamp32(clean - x.e)), torch.trunc(clamp32(clean + x.e))
            unstable = (x.e > 0) & ((t_lo != r) | (t_hi != r))
            return TV(r.to(I64), torch.zeros_like(x.e), x.bad | unstable, dst)
        if not D.is_float(dst):  # int -> int: wrap
            return TV(wrap(dst, x.v), x.e, x.bad, dst)
        if not D.is_float(src):  # int -> float: round to nearest (beyond 2^53 float64 rounds first: not exact)
            r = x.v.to(F64)
            return finish(dst, r, torch.zeros_like(r), x.v.abs() < 2 ** 53, bad=x.bad)
        if D.is_fp8(dst):
            return self._to_fp8(x, dst, rounding or "rtne")
        # float -> float
        ex = x.e == 0
        if rounding == "rtz":  # the reference rounds to nearest: only values that fit are exact both ways
            ex = ex & ((round_to(dst, x.v) == x.v) | torch.isnan(x.v))
        return finish(dst, x.v, x.e, ex, bad=x.bad)

    @staticmethod
    def _to_fp8(x: TV, dst, mode) -> TV:
        """Emitted as a clamp to the finite range, then the conversion. A correct conversion rounds once, so an
        exact operand gives an exact result; an inexact one lands between the roundings of its interval's ends.
        A NaN operand is undetermined: the clamp's max/min may or may not keep it (backend-dependent)."""
        fmt, top = BY_DTYPE[dst], FP8_MAX[dst]
        clamp = lambda t: t.clamp(-top, top)  # noqa: E731
        r = round_to_format(fmt, clamp(x.v), mode)
        lo = round_to_format(fmt, clamp(x.v - x.e), mode)
        hi = round_to_format(fmt, clamp(x.v + x.e), mode)
        e = torch.where(x.e > 0, torch.maximum((hi - r).abs(), (r - lo).abs()), torch.zeros_like(r))
        bad = x.bad | torch.isnan(x.v) | torch.isnan(e)
        return TV(torch.where(torch.isnan(r), torch.zeros_like(r), r), torch.where(bad, torch.zeros_like(e), e),
                  bad, dst)

    def bitcast(self, x: TV, dst) -> TV:
        src = x.dtype
        bits = D.DTYPES[src].bits
        itype = {16: torch.int16, 32: torch.int32, 64: torch.int64}[bits]
        unstable = x.bad | (x.e > 0)
        if D.is_float(src):
            unstable = unstable | torch.isnan(x.v) | (x.v == 0)  # NaN payloads and the sign of zero are open
            raw = round_to(src, torch.where(unstable, torch.zeros_like(x.v), x.v)).to(
                {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "fp64": F64}[src]).view(itype)
        else:
            raw = x.v.to(itype)
        if D.is_float(dst):
            ftype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "fp64": F64}[dst]
            v = raw.view(ftype).to(F64)
            denormal = (v != 0) & (v.abs() < TINY[dst])
            e = torch.where(denormal, torch.full_like(v, TINY[dst]), torch.zeros_like(v))
            return TV(v, e, unstable | torch.isnan(v), dst)
        return TV(raw.to(I64), torch.zeros(raw.shape, dtype=F64), unstable, dst)

    # --- reductions and scans ---------------------------------------------------------------------------------
    def reduce(self, name, x: TV, axis, out_dtype, promote=False) -> TV:
        if name == "sum":
            if promote and out_dtype != x.dtype:
                return self._sum(self.cast(x, out_dtype), axis, out_dtype)
            if D.is_float(x.dtype):
                total = self._sum(x, axis, x.dtype)
                return total if out_dtype == x.dtype else self.cast(total, out_dtype)
            return self._sum(x, axis, out_dtype)
        bad = x.bad.any(dim=axis)
        if name in ("max", "min"):
            v = x.v.amax(dim=axis) if name == "max" else x.v.amin(dim=axis)
            if x.is_float:
                bad = bad | torch.isnan(x.v).any(dim=axis)
                return TV(v, x.e.amax(dim=axis), bad, x.dtype)
            return TV(v, torch.zeros(v.shape, dtype=F64), bad, x.dtype)
        return self._arg(name, x, axis, bad)

    def _sum(self, x: TV, axis, dtype) -> TV:
        n = x.v.shape[axis]
        if not D.is_float(dtype):
            acc = "i32" if D.DTYPES[dtype].bits < 64 else dtype
            self._overflow_check("sum", acc, x.v.abs().sum(dim=axis), x.bad)  # partial sums in any order
            v = wrap(acc, x.v.sum(dim=axis))
            return TV(wrap(dtype, v), torch.zeros(v.shape, dtype=F64), x.bad.any(dim=axis), dtype)
        r = x.v.sum(dim=axis)
        mags = x.v.abs().sum(dim=axis)
        e_in = x.e.sum(dim=axis)
        ex = (x.e == 0).all(dim=axis) & dyadic_exact(x.v, mags, dtype, dim=axis)
        e = e_in + _gamma(n, dtype) * (mags + e_in) + n * TINY[dtype]
        return finish(dtype, r, e, ex, bad=x.bad.any(dim=axis), peak=mags)

    def _arg(self, name, x: TV, axis, bad) -> TV:
        v = x.v if name == "argmax" else -x.v
        best = v.amax(dim=axis, keepdim=True)
        if x.is_float:
            bad = bad | torch.isnan(x.v).any(dim=axis)
            lo_best = (v - x.e).amax(dim=axis, keepdim=True)
            contender = (v + x.e) >= lo_best
            tied = (v == best) & (x.e == 0)
            clean = (contender == tied).all(dim=axis)  # only exact ties with the best can win
            bad = bad | ~clean
        first = torch.argmax((v == best).to(torch.int8), dim=axis)  # the lowest index among ties
        return TV(first.to(I64), torch.zeros(first.shape, dtype=F64), bad, "i32")

    def scan(self, x: TV, axis, op, out_dtype, promote=False, reverse=False) -> TV:
        src = x
        if promote and out_dtype != x.dtype:
            src = self.cast(x, out_dtype)
        dtype = src.dtype
        if not D.is_float(dtype) and D.DTYPES[dtype].bits < 32 and (
                op == "cumsum" or not self.table.narrow_cumprod_wraps):
            dtype = "i32"  # tl.cumsum promotes narrow integers (_pick_sum_dtype); tl.cumprod does not
        flip = (lambda t: t.flip(axis)) if reverse else (lambda t: t)
        v, e, bad = flip(src.v), flip(src.e), flip(src.bad)
        bad_out = bad.to(torch.int32).cumsum(dim=axis) > 0
        n = v.shape[axis]
        if not D.is_float(dtype):
            bound = v.abs().sum(dim=axis) if op == "cumsum" else _abs_prod(v, axis)
            self._overflow_check(op, dtype, bound, bad)  # the scan's partial results, in any combine order
            r = wrap(dtype, v.cumsum(dim=axis) if op == "cumsum" else _int_cumprod(v, axis, dtype))
            out = TV(flip(r), torch.zeros(r.shape, dtype=F64), flip(bad_out), dtype)
        elif op == "cumsum":
            r = v.cumsum(dim=axis)
            mags = v.abs().cumsum(dim=axis)
            e_in = e.cumsum(dim=axis)
            ex = ((e == 0).to(torch.int32).cumprod(dim=axis) > 0) & _prefix_dyadic(v, mags, dtype, axis)
            err = e_in + _gamma(n, dtype) * (mags + e_in) + n * TINY[dtype]
            out = finish(dtype, r, err, ex, bad=bad_out, peak=mags)
            out = TV(flip(out.v), flip(out.e), flip(out.bad), dtype)
        else:
            out = self._cumprod(v, e, bad_out, axis, dtype, n)
            out = TV(flip(out.v), flip(out.e), flip(out.bad), dtype)
        return self.cast(out, out_dtype) if out.dtype != out_dtype else out

    def _cumprod(self, v, e, bad, axis, dtype, n) -> TV:
        vs, es = v.movedim(axis, 0), e.movedim(axis, 0)
        p, E = torch.ones_like(vs[0]), torch.zeros_like(vs[0])
        ps, Es, exs = [], [], []
        ex = torch.ones(vs[0].shape, dtype=torch.bool)
        big, small = torch.ones_like(vs[0]), torch.ones_like(vs[0])
        bigs, smalls = [], []
        for k in range(vs.shape[0]):
            E = E * vs[k].abs() + p.abs() * es[k] + E * es[k]
            p = p * vs[k]
            big = big * (vs[k].abs() + es[k]).clamp(min=1.0)  # no partial product, in any order, exceeds this
            small = small * (vs[k].abs() - es[k]).clamp(min=0.0, max=1.0)
            ex = ex & (es[k] == 0) & (vs[k] == torch.round(vs[k])) & (big <= 2.0 ** MANT[dtype])
            ps.append(p)
            Es.append(E + gamma(k + 1, dtype) * p.abs() + (k + 1) * TINY[dtype])
            exs.append(ex.clone())
            bigs.append(big)
            smalls.append(small)
        r = torch.stack(ps).movedim(0, axis)
        err = torch.stack(Es).movedim(0, axis)
        exm = torch.stack(exs).movedim(0, axis)
        peak = torch.stack(bigs).movedim(0, axis)
        # a partial product of the small factors may underflow where the whole product does not
        floor = torch.stack(smalls).movedim(0, axis)
        underflow = (floor < TINY[dtype]) & (r.abs() >= TINY[dtype])
        return finish(dtype, r, err, exm, bad=bad | underflow, peak=peak)

    # --- matrix products ----------------------------------------------------------------------------------------
    PRECISION_REL = {"ieee": 0.0, "tf32": 2.0 ** -10, "tf32x3": 2.0 ** -20, "bf16x3": 2.0 ** -14,
                     "bf16x6": 2.0 ** -21}

    def dot(self, a: TV, b: TV, acc: TV | None, out_dtype, precision=None) -> TV:
        bad = a.bad.any(dim=1, keepdim=True) | b.bad.any(dim=0, keepdim=True)
        if acc is not None:
            bad = bad | acc.bad
        if a.dtype == "i8":
            r = a.v @ b.v + (acc.v if acc is not None else 0)
            return TV(wrap("i32", r), torch.zeros(r.shape, dtype=F64), bad.expand(r.shape), "i32")
        k = a.v.shape[1]
        av, bv = a.v, b.v
        amag, bmag = av.abs(), bv.abs()
        r = av @ bv
        mags = amag @ bmag
        e_in = amag @ b.e + a.e @ bmag + a.e @ b.e
        if precision is None:  # the backend's default: tf32 on NVIDIA and gfx942, full fp32 in the interpreter
            precision = "ieee" if self.table.name == "interpret" else "tf32"
        rel_in = self.PRECISION_REL.get(precision, 2.0 ** -10) if a.dtype == "fp32" else 0.0
        if rel_in:
            if precision == "tf32":  # operands rounded (or truncated) to 11 bits: no error where they fit
                ea = torch.where(_fits(av, precision), torch.zeros_like(av), amag * rel_in)
                eb = torch.where(_fits(bv, precision), torch.zeros_like(bv), bmag * rel_in)
            else:  # split-precision schemes drop low cross products whatever the operands: never exact
                ea, eb = amag * rel_in, bmag * rel_in
            e_in = e_in + ea @ bmag + amag @ eb + ea @ eb
        acc_dtype = "fp64" if a.dtype == "fp64" else out_dtype
        if acc is not None:
            r = r + acc.v
            mags = mags + acc.v.abs()
            e_in = e_in + acc.e
        # exact in any order when every product is a multiple of 2^-s and the magnitudes stay below 2^MANT
        bits = MANT[acc_dtype]
        gamma_acc = _gamma(k + 1, acc_dtype)
        narrow = self.table.fp8_dot_accumulator_bits
        if narrow and D.is_fp8(a.dtype):  # a narrower, truncating accumulator (oracle/tolerance.py)
            bits = narrow
            gamma_acc = gamma(2 * (k + 1), acc_dtype) * 2.0 ** (MANT[acc_dtype] - narrow)
        scale = _min_scale(av, 1).unsqueeze(1) + _min_scale(bv, 0).unsqueeze(0)
        ex = (e_in == 0) & torch.isfinite(scale) & (mags * torch.exp2(scale.clamp(max=200)) <= 2.0 ** bits)
        if acc is not None:
            scaled = acc.v * torch.exp2(scale.clamp(max=200))
            ex = ex & (scaled == torch.round(scaled))
        err = e_in + gamma_acc * (mags + e_in) + (k + 1) * TINY[acc_dtype]
        return finish(out_dtype, r, err, ex, bad=bad.expand(r.shape), peak=mags + e_in)

    def dot_scaled(self, lhs, rhs, acc: TV) -> TV:
        """tl.dot_scaled: each side (codes or values, format, scale codes or None, group) decoded exactly in float64
        (oracle/formats.py), scaled, then an fp32-accumulated product. Backends without native scaled MFMA/WMMA
        upcast to bf16 (fp16 beside an fp16 operand on CDNA3) first: exact for the scale ranges the generator
        draws, so the same bound holds."""
        a = self._mx_side(*lhs, rows_first=True)
        b = self._mx_side(*rhs, rows_first=False)
        return self.dot(a, b, acc, "fp32", "ieee")

    @staticmethod
    def _mx_side(x: TV, fmt, scale: TV | None, group, rows_first):
        if fmt == "e2m1":  # two codes a byte, the low nibble first along K
            v = decode_codes("e2m1", torch.stack([x.v & 0xF, x.v >> 4], dim=-1 if rows_first else 1))
            bad = torch.stack([x.bad, x.bad], dim=-1 if rows_first else 1)
            v = v.reshape(v.shape[0], -1) if rows_first else v.reshape(-1, v.shape[-1])
            bad = bad.reshape(v.shape)
            e = torch.zeros_like(v)
        else:
            v, e, bad = x.v, x.e, x.bad
        if scale is not None:
            s = decode_codes("e8m0", scale.v).repeat_interleave(group, dim=1)
            sbad = scale.bad.repeat_interleave(group, dim=1)
            if not rows_first:  # the rhs scale is (N, K / group): not transposed in memory
                s, sbad = s.T, sbad.T
            v, e, bad = v * s, e * s, bad | sbad | torch.isnan(s)
        return TV(v, e, bad, "fp32")

    # --- constants ----------------------------------------------------------------------------------------------
    @staticmethod
    def full(value, dtype, shape) -> TV:
        return constant(value, dtype, shape)

    @staticmethod
    def arange(n) -> TV:
        return exact(torch.arange(n, dtype=I64), "i32")


def _gamma(n, dtype):
    """γ_n, doubled for fp64: the float64 reference itself rounds as often as the kernel does."""
    return gamma(n, dtype) * (2 if dtype == "fp64" else 1)


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


def _min_scale(x, dim):
    """Per slice along `dim`: the smallest s in DYADIC_SCALES making every entry a multiple of 2^-s (inf if none)."""
    out = torch.full(x.shape[:dim] + x.shape[dim + 1:], float("inf"), dtype=F64)
    for s in reversed(DYADIC_SCALES):
        scaled = x * (2.0 ** s)
        integral = ((scaled == torch.round(scaled)) & torch.isfinite(scaled)).all(dim=dim)
        out = torch.where(integral, torch.full_like(out, float(s)), out)
    return out


def _abs_prod(v, axis):
    """A bound on |any partial product| along axis, in float64: the scan combines subsets in a tree, and a zero
    in one subset does not stop another subset's product from overflowing (found on the H100), so zeros count as
    one. Rounding is moot: it is only compared with ranges of at most 32 bits."""
    return v.abs().to(F64).clamp(min=1).prod(dim=axis)


def _int_cumprod(v, axis, dtype):
    vs = v.movedim(axis, 0)
    out, p = [], torch.ones_like(vs[0])
    for k in range(vs.shape[0]):
        p = wrap(dtype, p * vs[k])
        out.append(p)
    return torch.stack(out).movedim(0, axis)


def _prefix_dyadic(v, mags, dtype, axis):
    ok = torch.zeros(v.shape, dtype=torch.bool)
    for s in DYADIC_SCALES:
        scaled = v * (2.0 ** s)
        integral = ((scaled == torch.round(scaled)) & torch.isfinite(scaled)).to(torch.int32).cumprod(dim=axis) > 0
        ok |= integral & (mags * (2.0 ** s) <= 2.0 ** MANT[dtype])
    return ok


def _fits(x, precision):
    """Operands that a reduced-precision dot input format holds exactly (tf32: 11 significant bits)."""
    bits = {"tf32": 11, "tf32x3": 22, "bf16x3": 16, "bf16x6": 24}.get(precision or "tf32", 11)
    m, _ = torch.frexp(x)
    scaled = m * (2.0 ** bits)
    return (scaled == torch.round(scaled)) | (x == 0)
