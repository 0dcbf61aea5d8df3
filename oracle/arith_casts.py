"""Triton's casts on tracked values: float to int (NaN to 0, clamp, truncate), int to int (wrap), int to float and
float to float (round to nearest even, or toward zero), to fp8 (clamp, then one rounding), and bitcasts.

Why a module of its own: a cast is where an interval of possible values meets a rounding or a truncation step, so
each direction has its own rule for when the result is still determined; reductions and scans that promote
(oracle/arith_reductions.py) call these.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.ops_cast import FP8_MAX

from .arith_base import ArithBase
from .formats import BY_DTYPE, round_to_format
from .numeric import F64, I64, TINY, TV, finish, round_to, wrap


class CastArith(ArithBase):
    """Value casts (`cast`, with fp8 through `_to_fp8`) and bit reinterpretation (`bitcast`)."""

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
