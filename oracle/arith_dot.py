"""Triton's matrix products on tracked values: tl.dot with the accumulation dtype and input precision of the call
(ieee, tf32, the split-precision schemes, a narrow fp8 accumulator), and tl.dot_scaled's block-scaled formats.

Why a module of its own: a dot's bound depends on what the backend may do to its operands before the products
(round to tf32, split into bf16 parts) and on how it accumulates, which no elementwise op shares; its exactness test
works per row and column.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D

from .arith_base import ArithBase, reference_gamma
from .formats import decode_codes
from .numeric import DYADIC_SCALES, F64, MANT, TINY, TV, finish, gamma, wrap


class DotArith(ArithBase):
    """tl.dot and tl.dot_scaled."""

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
        gamma_acc = reference_gamma(k + 1, acc_dtype)
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
        out = finish(out_dtype, r, err, ex, bad=bad.expand(r.shape), peak=mags + e_in)
        if out_dtype != "fp64" and (acc is None or bool((acc.v == 0).all() and (acc.e == 0).all())):
            out.fold = (gamma(k + 2, acc_dtype), mags + e_in)  # `+ c` may join the accumulation (TV.fold)
        return out

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


def _min_scale(x, dim):
    """Per slice along `dim`: the smallest s in DYADIC_SCALES making every entry a multiple of 2^-s (inf if none)."""
    out = torch.full(x.shape[:dim] + x.shape[dim + 1:], float("inf"), dtype=F64)
    for s in reversed(DYADIC_SCALES):
        scaled = x * (2.0 ** s)
        integral = ((scaled == torch.round(scaled)) & torch.isfinite(scaled)).all(dim=dim)
        out = torch.where(integral, torch.full_like(out, float(s)), out)
    return out


def _fits(x, precision):
    """Operands that a reduced-precision dot input format holds exactly (tf32: 11 significant bits)."""
    bits = {"tf32": 11, "tf32x3": 22, "bf16x3": 16, "bf16x6": 24}.get(precision or "tf32", 11)
    m, _ = torch.frexp(x)
    scaled = m * (2.0 ** bits)
    return (scaled == torch.round(scaled)) | (x == 0)
