"""LLVM's generic math and integer intrinsics, and the AMDGPU math ones, over lane arrays.

Transcendentals (exp2, log2, sqrt, rcp, rsq, ...) are computed in float64 and rounded once: the hardware's are
approximations (v_exp_f32 and v_log_f32 to 1 ULP, v_rcp_f32 to 1 ULP, as AMD's ISA guides state), so the exact
value is within what the oracle's HIP tolerance table allows for them (oracle/tolerance.py). What the hardware does
exactly (fma, min/max, rounding to integer, bit operations) is done exactly.
"""
from __future__ import annotations

import numpy as np

from .errors import NotModelled
from .values import dtype_of, from_float, signed, to_float


def _float_fn(f):
    def compile_(ins, args, kernel):
        ty = ins.ty

        def run(ex):
            with np.errstate(all="ignore"):
                xs = [to_float(g(ex), ty).astype(np.float64) for g in args]
                return from_float(f(*xs), ty)
        return run
    return compile_


def _same_type_fn(f):
    """Exact operations: computed in the operands' own format (bfloat through float32, exact for these)."""
    def compile_(ins, args, kernel):
        ty = ins.ty

        def run(ex):
            with np.errstate(all="ignore"):
                return from_float(f(*[to_float(g(ex), ty) for g in args]), ty)
        return run
    return compile_


def _rcp(x):
    return 1.0 / x


def _rsq(x):
    return 1.0 / np.sqrt(x)


def _canonicalize(x):
    return x + 0.0 if np.ndim(x) else x  # quiets a signalling NaN; denormals are kept (IEEE mode)


def _ldexp(ins, args, kernel):
    ty = ins.ty

    def run(ex):
        with np.errstate(all="ignore"):
            x = to_float(args[0](ex), ty).astype(np.float64)
            return from_float(np.ldexp(x, signed(args[1](ex)).astype(np.int64).clip(-2000, 2000)), ty)
    return run


def _int_fn(f):
    def compile_(ins, args, kernel):
        dt = dtype_of(ins.ty)
        bits = np.dtype(dt).itemsize * 8 if dt != np.bool_ else 1

        def run(ex):
            return np.asarray(f(bits, *[g(ex) for g in args])).astype(dt)
        return run
    return compile_


def _fsh(left):
    def f(bits, a, b, c):
        a, b = np.asarray(a).astype(np.uint64), np.asarray(b).astype(np.uint64)
        s = (np.asarray(c).astype(np.uint64) % np.uint64(bits))
        wide = (a << np.uint64(bits)) | b if bits < 64 else None
        if wide is None:
            raise NotModelled("funnel shift of i64")
        mask = np.uint64((1 << bits) - 1)
        if left:
            return ((wide << s) >> np.uint64(bits)) & mask
        return (wide >> s) & mask
    return f


def _bit_length(a):
    x = np.asarray(a).astype(np.uint64)
    length = np.zeros(x.shape, np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        high = (x >> np.uint64(step)) != 0
        length += step * high
        x = np.where(high, x >> np.uint64(step), x)
    return length + (x != 0)


def _ctlz(bits, a, _poison=None):
    return bits - _bit_length(a)


def _cttz(bits, a, _poison=None):
    a = np.asarray(a).astype(np.uint64)
    return np.where(a == 0, bits, _bit_length(a & (~a + np.uint64(1))) - 1)


def _overflow(op):
    def compile_(ins, args, kernel):
        dt = dtype_of(ins.ty[1][0])
        bits = np.dtype(dt).itemsize * 8
        is_signed = op[0] == "s"

        def run(ex):
            a, b = np.asarray(args[0](ex)), np.asarray(args[1](ex))
            if bits > 32:
                raise NotModelled(f"{op}.with.overflow of i{bits}")
            wa = signed(a).astype(np.int64) if is_signed else a.astype(np.int64)
            wb = signed(b).astype(np.int64) if is_signed else b.astype(np.int64)
            exact = {"add": wa + wb, "sub": wa - wb, "mul": wa * wb}[op[1:]]
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed else (0, (1 << bits) - 1)
            return exact.astype(dt), (exact < lo) | (exact > hi)
        return run
    return compile_


def _sat(op):
    def f(bits, a, b):
        is_signed = op[0] == "s"
        wa = signed(a).astype(np.float64) if is_signed else np.asarray(a).astype(np.float64)
        wb = signed(b).astype(np.float64) if is_signed else np.asarray(b).astype(np.float64)
        exact = wa + wb if op.endswith("add") else wa - wb
        lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if is_signed else (0, 2 ** bits - 1)
        if bits > 32:
            raise NotModelled("saturating i64 arithmetic")
        return np.clip(exact, lo, hi).astype(np.int64)
    return f


def _minmax(f, is_signed):
    return lambda bits, a, b: f(signed(a), signed(b)) if is_signed else f(a, b)


def _abs(bits, a, _poison=None):
    return np.abs(signed(a).astype(np.int64))


def _bswap(bits, a):
    """llvm.bswap: the bytes of an integer of 2k bytes, reversed (LangRef)."""
    a, out = np.asarray(a).astype(np.uint64), 0
    for k in range(bits // 8):
        out = out | ((a >> np.uint64(8 * k)) & np.uint64(0xFF)) << np.uint64(bits - 8 - 8 * k)
    return out


def _ctpop(bits, a):
    return np.bitwise_count(np.asarray(a).astype(np.uint64))


_INT_REDUCE = {"add": np.add, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
               "umax": np.maximum, "umin": np.minimum, "smax": np.maximum, "smin": np.minimum}


def _vector_reduce(op):
    """llvm.vector.reduce.<op> over the elements of each lane's vector (integers wrap in their width; fmax/fmin are
    exact, NaN-ignoring as llvm.maxnum)."""
    def compile_(ins, args, kernel):
        ty = ins.ty

        def run(ex):
            v = np.asarray(args[-1](ex))
            if op in ("fmax", "fmin"):
                x = to_float(v, ty)
                return from_float((np.fmax if op == "fmax" else np.fmin).reduce(x, axis=-1), ty)
            dt = dtype_of(ty)
            if dt == np.bool_:
                raise NotModelled(f"vector.reduce.{op} of i1")
            x = signed(v) if op in ("smax", "smin") else v
            with np.errstate(over="ignore"):
                return _INT_REDUCE[op].reduce(x, axis=-1).astype(dt)
        return run
    return compile_


def _fma(a, b, c):
    return a * b + c  # exact product in float64 for half/float operands, one addition, then one rounding


MATH = {
    "llvm.fmuladd": _float_fn(_fma), "llvm.fma": _float_fn(_fma),
    "llvm.maxnum": _same_type_fn(np.fmax), "llvm.minnum": _same_type_fn(np.fmin),
    "llvm.maximum": _same_type_fn(np.maximum), "llvm.minimum": _same_type_fn(np.minimum),
    "llvm.maximumnum": _same_type_fn(np.fmax), "llvm.minimumnum": _same_type_fn(np.fmin),
    "llvm.fabs": _same_type_fn(np.abs), "llvm.copysign": _same_type_fn(np.copysign),
    "llvm.floor": _same_type_fn(np.floor), "llvm.ceil": _same_type_fn(np.ceil), "llvm.trunc": _same_type_fn(np.trunc),
    "llvm.rint": _same_type_fn(np.rint), "llvm.nearbyint": _same_type_fn(np.rint),
    "llvm.roundeven": _same_type_fn(np.rint),
    "llvm.round": _same_type_fn(lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)),
    "llvm.canonicalize": _same_type_fn(_canonicalize),
    "llvm.sqrt": _float_fn(np.sqrt), "llvm.exp2": _float_fn(np.exp2), "llvm.exp": _float_fn(np.exp),
    "llvm.log": _float_fn(np.log), "llvm.log2": _float_fn(np.log2), "llvm.log10": _float_fn(np.log10),
    "llvm.sin": _float_fn(np.sin), "llvm.cos": _float_fn(np.cos), "llvm.tan": _float_fn(np.tan),
    "llvm.pow": _float_fn(np.power),
    "llvm.amdgcn.exp2": _float_fn(np.exp2), "llvm.amdgcn.log": _float_fn(np.log2),
    "llvm.amdgcn.sqrt": _float_fn(np.sqrt), "llvm.amdgcn.rcp": _float_fn(_rcp), "llvm.amdgcn.rsq": _float_fn(_rsq),
    "llvm.amdgcn.fract": _float_fn(lambda x: np.minimum(x - np.floor(x), np.nextafter(1.0, 0.0))),
    "llvm.ldexp": _ldexp, "llvm.amdgcn.ldexp": _ldexp,
    "llvm.fshl": _int_fn(_fsh(True)), "llvm.fshr": _int_fn(_fsh(False)),
    "llvm.umax": _int_fn(_minmax(np.maximum, False)), "llvm.umin": _int_fn(_minmax(np.minimum, False)),
    "llvm.smax": _int_fn(_minmax(np.maximum, True)), "llvm.smin": _int_fn(_minmax(np.minimum, True)),
    "llvm.abs": _int_fn(_abs), "llvm.ctlz": _int_fn(_ctlz), "llvm.cttz": _int_fn(_cttz), "llvm.ctpop": _int_fn(_ctpop),
    "llvm.bswap": _int_fn(_bswap),
    "llvm.sadd.with.overflow": _overflow("sadd"), "llvm.uadd.with.overflow": _overflow("uadd"),
    "llvm.ssub.with.overflow": _overflow("ssub"), "llvm.usub.with.overflow": _overflow("usub"),
    "llvm.smul.with.overflow": _overflow("smul"), "llvm.umul.with.overflow": _overflow("umul"),
    "llvm.uadd.sat": _int_fn(_sat("uadd")), "llvm.usub.sat": _int_fn(_sat("usub")),
    "llvm.sadd.sat": _int_fn(_sat("sadd")), "llvm.ssub.sat": _int_fn(_sat("ssub")),
    **{f"llvm.vector.reduce.{op}": _vector_reduce(op) for op in (*_INT_REDUCE, "fmax", "fmin")},
    "llvm.lifetime.start": lambda ins, args, kernel: (lambda ex: None),
    "llvm.lifetime.end": lambda ins, args, kernel: (lambda ex: None),
}
