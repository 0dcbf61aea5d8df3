"""Tracked values: a reference value, a bound on how far a correct kernel may be from it, and an "unstable" mask.

Why not just run the kernel's arithmetic in float64 and compare with a relative tolerance: random kernels chain
comparisons, floor, casts to int and selects after inexact arithmetic, so a tolerance picked at the end cannot be
honest. Every value carries instead
  v    the reference: each op evaluated on the references of its operands and rounded to the op's dtype (rtne),
  e    a bound on |kernel - v| that any correct compilation meets (error propagation plus the rounding and
       function error of this op, from the tolerance tables in oracle/tolerance.py), 0 where the result is exact,
  bad  lanes whose value a correct compilation does not determine: a comparison whose operands' intervals
       overlap, NaN in min/max, masked-off lanes of a load without `other`, a select on an unstable condition...
Exact stays exact: an IEEE-rounded op (add, mul, fma, casts) on exact operands whose result is representable is
exact, which keeps integer-valued and dyadic data bit-exact through long chains. The model is written down in
docs/tolerance.md; docs/design.md "Tolerance model" is the contract.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from gfxhound.fuzz import dtypes as D

F64 = torch.float64
I64 = torch.int64
TORCH = {name: getattr(torch, d.torch) for name, d in D.DTYPES.items()}
UNIT = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp64": 2.0 ** -53,  # unit roundoff
        "fp8e4nv": 2.0 ** -4, "fp8e5": 2.0 ** -3, "fp8e4b8": 2.0 ** -4, "fp8e5b16": 2.0 ** -3}
TINY = {"fp32": 2.0 ** -126, "fp16": 2.0 ** -14, "bf16": 2.0 ** -126, "fp64": 2.0 ** -1022,  # smallest normal
        "fp8e4nv": 2.0 ** -6, "fp8e5": 2.0 ** -14, "fp8e4b8": 2.0 ** -7, "fp8e5b16": 2.0 ** -15}
MANT = {"fp32": 24, "fp16": 11, "bf16": 8, "fp64": 53,  # significand bits (integers up to 2**MANT are exact)
        "fp8e4nv": 4, "fp8e5": 3, "fp8e4b8": 4, "fp8e5b16": 3}
MAXF = {name: float(torch.finfo(TORCH[name]).max) for name in UNIT}
DYADIC_SCALES = (0, 4, 8, 12, 16, 20, 24)


@dataclass
class TV:
    v: torch.Tensor  # float64 (floats) or int64 (ints and i1 as 0/1)
    e: torch.Tensor  # float64 bound, same shape (zeros for ints)
    bad: torch.Tensor  # bool, same shape
    dtype: str
    # a tl.dot's result without an accumulator (or a zero one): Triton folds `dot(a, b) + c` into `dot(a, b, c)`
    # (its combine pass), and a matrix unit then adds c inside its own accumulation, not as one rounded fp32 add.
    # (relative error per unit of magnitude, magnitudes of the products): what that accumulation may add
    fold: tuple | None = None

    @property
    def is_float(self):
        return D.is_float(self.dtype)


def exact(v, dtype) -> TV:
    v = v.to(F64 if D.is_float(dtype) else I64)
    return TV(v, torch.zeros(v.shape, dtype=F64), torch.zeros(v.shape, dtype=torch.bool), dtype)


def constant(value, dtype, shape=()) -> TV:
    if D.is_float(dtype):
        v = round_to(dtype, torch.full(shape, float(value), dtype=F64))
    else:
        v = wrap(dtype, torch.full(shape, int(value), dtype=I64))
    return exact(v, dtype)


class UndefinedBehaviour(Exception):
    """The kernel as generated would have undefined behaviour: the generator broke its contract."""


def int_range(dtype):
    """The (lowest, highest) value of an integer dtype."""
    bits = D.DTYPES[dtype].bits
    if dtype.startswith("u"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def wrap(dtype, x):
    """Two's-complement wrap-around of exact integers into the dtype (Triton's integer semantics)."""
    if dtype == "i1":
        return (x != 0).to(I64)
    bits = D.DTYPES[dtype].bits
    if bits >= 64:
        return x
    half = 1 << (bits - 1)
    return ((x + half) & ((1 << bits) - 1)) - half


def round_to(dtype, x):
    return x if dtype == "fp64" else x.to(TORCH[dtype]).to(F64)


def ulp_bound(dtype, mag):
    """An upper bound on one ulp of `dtype` at magnitude `mag`, including the denormal range."""
    return 2.0 * UNIT[dtype] * mag + TINY[dtype] * 2.0 * UNIT[dtype]


def finish(dtype, r, e_prop, exact_in, correctly_rounded=True, rel=0.0, absolute=0.0, bad=None, peak=None) -> TV:
    """The result of one float op: round the reference, bound the error, mark what is not determined.

    r: float64 result on the operands' references; e_prop: error propagated from the operands;
    exact_in: operands exact (e == 0) lane by lane; rel/absolute: this op's own error beyond correct rounding
    (function ULP tables, approximate division...). Exact lanes stay exact when the op rounds correctly.
    peak: for sums and products in a free order, the largest magnitude a partial result can reach: at or past
    the dtype's largest finite value an intermediate may overflow, so the lane is not determined.
    """
    v = round_to(dtype, r)
    mag = r.abs() + e_prop
    inexact = e_prop + rel * mag + absolute + ulp_bound(dtype, mag)
    exact_lane = exact_in & correctly_rounded
    # flush-to-zero: a denormal result may come back as zero
    denormal = (v != 0) & (v.abs() < TINY[dtype])
    e = torch.where(exact_lane, torch.where(denormal, torch.full_like(r, TINY[dtype]), torch.zeros_like(r)), inexact)
    e = torch.where(denormal & ~exact_lane, e + TINY[dtype], e)
    finite = torch.isfinite(v)
    unstable = (~finite & (e > 0)) | torch.isnan(e) | (finite & (v.abs() + e >= MAXF[dtype]) & (e > 0))
    unstable |= ~torch.isfinite(r) & finite  # float64 overflowed where the dtype did not: do not trust it
    if bad is not None:
        unstable = unstable | bad
    if peak is not None:
        unstable = unstable | ((peak >= MAXF[dtype]) & finite)
    e = torch.where(unstable | ~finite, torch.zeros_like(e), e)
    return TV(v, e, unstable, dtype)


def exact_mask(*xs):
    out = None
    for x in xs:
        m = x.e == 0
        out = m if out is None else out & m
    return out


def any_bad(*xs):
    out = None
    for x in xs:
        out = x.bad if out is None else out | x.bad
    return out


def dyadic_exact(values, abs_sum_of, dtype, dim=None):
    """True where a sum of `values` (over `dim`) is exact in `dtype` in any order: every term a multiple of 2^-s
    and the sum of magnitudes below 2^MANT * 2^-s, so every partial sum is representable."""
    ok = torch.zeros(abs_sum_of.shape, dtype=torch.bool)
    for s in DYADIC_SCALES:
        scaled = values * (2.0 ** s)
        integral = (scaled == torch.round(scaled)) & torch.isfinite(scaled)
        if dim is not None:
            integral = integral.all(dim=dim)
        ok |= integral & (abs_sum_of * (2.0 ** s) <= 2.0 ** MANT[dtype])
    return ok


def gamma(n, dtype):
    u = UNIT[dtype]
    n = max(1, n)
    return n * u / max(1e-300, 1 - n * u) if n * u < 0.5 else math.inf
