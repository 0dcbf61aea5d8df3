"""Triton's reductions and scans on tracked values: sum, max, min, argmax/argmin (ties to the lowest index),
cumsum and cumprod, with the error bound of a free summation order.

Why a module of its own: a reduction's order is the backend's choice, so its bound (γ_n over the magnitudes) and its
exactness test (every partial sum representable, in any order) are about many lanes at once, not one; integer
scans follow tl.cumsum's promotion of narrow integers and the overflow sanitizer's partial results.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D

from .arith_base import reference_gamma
from .arith_casts import CastArith
from .numeric import DYADIC_SCALES, F64, I64, MANT, TINY, TV, dyadic_exact, finish, gamma, wrap


class ReductionArith(CastArith):
    """Reductions and scans; a promoting one casts its operand first (CastArith)."""

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
        e = e_in + reference_gamma(n, dtype) * (mags + e_in) + n * TINY[dtype]
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
            err = e_in + reference_gamma(n, dtype) * (mags + e_in) + n * TINY[dtype]
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
