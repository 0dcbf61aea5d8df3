"""LLVM IR instructions' semantics over lane arrays (values.py), each compiled once into a closure.

`compile_op(ins, get)` returns `fn(ex) -> value`: `get(operand)` is a getter `ex -> array`. Where LLVM says
poison (division by zero, a shift past the width, an out-of-range float-to-int), the lanes a masked branch would
not have run still compute: the executor must not trap on them, so such lanes get a harmless value; the lanes that
matter are never poison in a kernel our UB rules admit.
"""
from __future__ import annotations

import numpy as np

from .errors import NotModelled
from .ir import sizeof
from .values import dtype_of, from_float, is_bfloat, signed, to_float

_INT_BITS = {np.dtype(np.uint8): 8, np.dtype(np.uint16): 16, np.dtype(np.uint32): 32, np.dtype(np.uint64): 64}


def _shift(amount, bits):
    return (np.asarray(amount) % bits).astype(np.asarray(amount).dtype)


def _tdiv(a, b):
    """Signed division rounding toward zero (LLVM sdiv); b = 0 (poison) gives 0."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    with np.errstate(over="ignore"):   # floor division, then toward zero: np.abs(INT64_MIN) would wrap
        q = np.floor_divide(a64, safe)
        q = np.where(((a64 - q * safe) != 0) & ((a64 < 0) != (safe < 0)), q + 1, q)
    return np.where(b64 == 0, 0, q)


def _int_binary(op, ty):
    bits = ty[1] if ty[0] == "i" else ty[2][1]
    if op == "add":
        return lambda a, b: a + b
    if op == "sub":
        return lambda a, b: a - b
    if op == "mul":
        return lambda a, b: a * b
    if op == "and":
        return lambda a, b: a & b
    if op == "or":
        return lambda a, b: a | b
    if op == "xor":
        return lambda a, b: a ^ b
    if op == "shl":
        return lambda a, b: a << _shift(b, bits)
    if op == "lshr":
        return lambda a, b: a >> _shift(b, bits)
    if op == "ashr":
        return lambda a, b: (signed(a) >> _shift(b, bits).astype(signed(a).dtype)).view(a.dtype)
    if op == "udiv":
        return lambda a, b: np.where(b == 0, 0, a // np.where(b == 0, 1, b)).astype(a.dtype)
    if op == "urem":
        return lambda a, b: np.where(b == 0, 0, a % np.where(b == 0, 1, b)).astype(a.dtype)
    if op == "sdiv":
        return lambda a, b: _tdiv(signed(a), signed(b)).astype(signed(a).dtype).view(a.dtype)
    if op == "srem":
        return lambda a, b: (signed(a).astype(np.int64) - _tdiv(signed(a), signed(b)) * signed(b).astype(np.int64)
                             ).astype(signed(a).dtype).view(a.dtype)
    raise NotModelled(f"integer {op}")


def _float_binary(op, ty):
    f = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply, "fdiv": np.divide, "frem": np.fmod}[op]
    if is_bfloat(ty):
        return lambda a, b: from_float(f(to_float(a, ty), to_float(b, ty)), ty)
    return f


def _binary(ins, get):
    ga, gb = get(ins.ops[0]), get(ins.ops[1])
    if ins.op.startswith("f"):
        f = _float_binary(ins.op, ins.ty)
    else:
        f = _int_binary(ins.op, ins.ty)
        if (ins.ty[1] if ins.ty[0] == "i" else ins.ty[2][1]) == 1:  # i1 logic: and/or/xor on bools
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(ins.op) or _not_i1(ins.op)
    dt = dtype_of(ins.ty)

    def run(ex):
        a, b = ga(ex), gb(ex)
        return np.asarray(f(a, b)).astype(dt, copy=False)
    return run


def _not_i1(op):
    raise NotModelled(f"i1 {op}")


def _fneg(ins, get):
    g = get(ins.ops[0])
    if is_bfloat(ins.ty):
        return lambda ex: g(ex) ^ np.uint16(0x8000)
    return lambda ex: -g(ex)


_ICMP = {"eq": np.equal, "ne": np.not_equal, "ugt": np.greater, "uge": np.greater_equal, "ult": np.less,
         "ule": np.less_equal, "sgt": np.greater, "sge": np.greater_equal, "slt": np.less, "sle": np.less_equal}


def _icmp(ins, get):
    ga, gb = get(ins.ops[0]), get(ins.ops[1])
    f = _ICMP[ins.extra["pred"]]
    if ins.extra["pred"][0] == "s":
        return lambda ex: f(signed(ga(ex)), signed(gb(ex)))
    return lambda ex: f(ga(ex), gb(ex))


def _fcmp(ins, get):
    ga, gb = get(ins.ops[0]), get(ins.ops[1])
    pred, ty = ins.extra["pred"], ins.extra["opty"]
    base = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
            "le": np.less_equal}

    def run(ex):
        a, b = to_float(ga(ex), ty), to_float(gb(ex), ty)
        unordered = np.isnan(a) | np.isnan(b)
        if pred == "true":
            return np.ones(np.broadcast(a, b).shape, bool)
        if pred == "false":
            return np.zeros(np.broadcast(a, b).shape, bool)
        if pred == "ord":
            return ~unordered
        if pred == "uno":
            return unordered
        with np.errstate(invalid="ignore"):
            got = base[pred[1:]](a, b)
        return (got & ~unordered) if pred[0] == "o" else (got | unordered)
    return run


def _select(ins, get):
    gc, ga, gb = (get(o) for o in ins.ops)

    def run(ex):
        c, a, b = gc(ex), ga(ex), gb(ex)
        if isinstance(a, tuple) or hasattr(a, "merge"):
            raise NotModelled("select of an aggregate or buffer resource")
        c = np.asarray(c)
        if c.ndim == 1 and (np.ndim(a) == 2 or np.ndim(b) == 2):
            c = c[:, None]
        return np.where(c, a, b)
    return run


def _float_to_int(x, bits, is_signed):
    x = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if is_signed else (0, 2 ** bits - 1)
    return np.clip(x, lo, hi)


def _cast(ins, get):
    g = get(ins.ops[0])
    src, dst, op = ins.extra["from"], ins.ty, ins.op
    dt = dtype_of(dst) if not (dst[0] == "p" and dst[1] == 8) else None
    if op in ("trunc", "zext"):
        if dst[0] != "v" and dst[1] == 1 or dst[0] == "v" and dst[2][1] == 1:
            return lambda ex: (np.asarray(g(ex)) & 1).astype(bool)
        return lambda ex: np.asarray(g(ex)).astype(dt)
    if op == "sext":
        def sext(ex):
            v = np.asarray(g(ex))
            if v.dtype == np.bool_:
                return np.where(v, np.array(np.iinfo(dt).max, dt), np.array(0, dt))
            return signed(v).astype(np.int64).astype(signed(np.zeros((), dt)).dtype).view(dt)
        return sext
    if op in ("fptrunc", "fpext"):
        return lambda ex: from_float(to_float(g(ex), src).astype(np.float64) if op == "fptrunc"
                                     else to_float(g(ex), src), dst)
    if op in ("fptosi", "fptoui"):
        bits = dst[1] if dst[0] == "i" else dst[2][1]
        sig = op == "fptosi"
        return lambda ex: _float_to_int(to_float(g(ex), src), bits, sig).astype(
            np.int64 if sig else np.uint64).astype(dt)
    if op in ("sitofp", "uitofp"):
        def to_fp(ex):
            v = np.asarray(g(ex))
            v = signed(v).astype(np.int64) if op == "sitofp" else v.astype(np.uint64)
            # straight to the destination format (one rounding); bfloat through float32 (LLVM's legalisation)
            return from_float(v.astype(np.float32 if is_bfloat(dst) else dt), dst)
        return to_fp
    if op in ("ptrtoint", "inttoptr"):
        return lambda ex: np.asarray(g(ex)).astype(dt)
    if op == "addrspacecast":
        if {src[1], dst[1]} <= {0, 1, 4}:
            return g
        raise NotModelled(f"addrspacecast {src[1]} -> {dst[1]}")
    if op == "bitcast":
        return _bitcast(g, src, dst)
    raise NotModelled(f"cast {op}")


def _bitcast(g, src, dst):
    if src[0] == "p" or dst[0] == "p":
        return g
    dt = dtype_of(dst)
    n_src = src[1] if src[0] == "v" else 0
    n_dst = dst[1] if dst[0] == "v" else 0
    if dtype_of(src) == np.bool_ or dt == np.bool_:
        return _bitcast_i1(g, src, dst)

    def run(ex):
        v = np.ascontiguousarray(g(ex))
        lead = v.shape[:-1] if n_src else v.shape
        out = v.view(dt)
        return out.reshape(lead + ((n_dst,) if n_dst else ()))
    return run


def _bitcast_i1(g, src, dst):
    """<N x i1> <-> iN: element k is bit k."""
    if src[0] == "v" and dst[0] == "i":
        def pack(ex):
            bits = np.atleast_2d(g(ex)).astype(np.uint8)
            packed = np.packbits(bits, axis=1, bitorder="little")  # Fortran-ordered for a transposed input
            return np.ascontiguousarray(packed).view(dtype_of(dst)).reshape(-1)
        return pack
    if src[0] == "i" and dst[0] == "v":
        n = dst[1]
        return lambda ex: np.unpackbits(np.ascontiguousarray(np.atleast_1d(g(ex))).view(np.uint8).reshape(
            -1, src[1] // 8), axis=1, bitorder="little")[:, :n].astype(bool)
    raise NotModelled(f"bitcast {src} -> {dst}")


def _extractelement(ins, get):
    gv, gi = get(ins.ops[0]), get(ins.ops[1])
    if ins.ops[1][0] == "c":
        k = int(ins.ops[1][2] or 0)
        return lambda ex: gv(ex)[..., k]

    def run(ex):
        v, i = gv(ex), np.asarray(gi(ex)).astype(np.int64)
        v2 = np.atleast_2d(v)
        i = np.clip(i, 0, v2.shape[1] - 1)  # an index past the end is poison (poison_ops.py): any value here
        return np.take_along_axis(v2, np.broadcast_to(i.reshape(-1, 1) if i.ndim else i, (v2.shape[0], 1)), 1)[:, 0]
    return run


def _insertelement(ins, get):
    gv, ge, gi = (get(o) for o in ins.ops)
    n = ins.ty[1]
    constant_index = int(ins.ops[2][2] or 0) if ins.ops[2][0] == "c" else None

    def run(ex):
        v, e = gv(ex), ge(ex)
        rows = max(np.shape(v)[0] if np.ndim(v) == 2 else 1, np.shape(e)[0] if np.ndim(e) else 1,
                   1 if constant_index is not None else np.size(gi(ex)))
        out = np.array(np.broadcast_to(v, (rows, n)))
        if constant_index is not None:
            out[:, constant_index] = e
        else:  # a lane-varying index: each lane writes its own element (an index past the end is poison: none)
            index = np.broadcast_to(np.asarray(gi(ex)).astype(np.int64), (rows,))
            ok = (index >= 0) & (index < n)
            out[np.flatnonzero(ok), index[ok]] = np.broadcast_to(e, (rows,))[ok]
        return out
    return run


def _shufflevector(ins, get):
    ga, gb = get(ins.ops[0]), get(ins.ops[1])
    mask = np.array([max(m, 0) for m in ins.extra["mask"]])

    def run(ex):
        a, b = np.atleast_2d(ga(ex)), np.atleast_2d(gb(ex))
        rows = max(a.shape[0], b.shape[0])
        both = np.concatenate([np.broadcast_to(a, (rows, a.shape[1])), np.broadcast_to(b, (rows, b.shape[1]))], 1)
        return both[:, mask]
    return run


def _extractvalue(ins, get):
    g = get(ins.ops[0])
    idx = ins.extra["idx"]

    def run(ex):
        v = g(ex)
        for k in idx:
            v = v[k]
        return v
    return run


def _insertvalue(ins, get):
    gv, ge = get(ins.ops[0]), get(ins.ops[1])
    if len(ins.extra["idx"]) != 1:
        raise NotModelled("insertvalue into a nested aggregate")
    k = ins.extra["idx"][0]

    def run(ex):
        v = list(gv(ex))
        v[k] = ge(ex)
        return tuple(v)
    return run


def gep_offsets(src, itys):
    """For each GEP index: ('scale', bytes) or ('field', [offset per field])."""
    steps, ty = [("scale", sizeof(src))], src
    for _ in itys[1:]:
        if ty[0] in ("a", "v"):
            ty = ty[2]
            steps.append(("scale", sizeof(ty)))
        elif ty[0] == "s":
            offsets, at = [], 0
            for field in ty[1]:
                offsets.append(at)
                at += sizeof(field)
            steps.append(("field", offsets))
            ty = None  # a struct index picks the field type below (Triton's IR indexes no structs)
            raise NotModelled("getelementptr into a struct")
        else:
            raise NotModelled(f"getelementptr into {ty}")
    return steps


def _gep(ins, get):
    gb = get(ins.ops[0])
    gis = [get(o) for o in ins.ops[1:]]
    steps = gep_offsets(ins.extra["src"], ins.extra["itys"])
    if ins.ty[0] != "p":
        raise NotModelled("getelementptr over a vector of pointers")
    dt = dtype_of(ins.ty)

    def run(ex):
        address = np.asarray(gb(ex)).astype(np.int64)
        for (kind, scale), gi in zip(steps, gis):
            address = address + signed(gi(ex)).astype(np.int64) * scale
        return address.astype(dt)
    return run


def _freeze(ins, get):
    return get(ins.ops[0])


COMPILERS = {"fneg": _fneg, "icmp": _icmp, "fcmp": _fcmp, "select": _select, "extractelement": _extractelement,
             "insertelement": _insertelement, "shufflevector": _shufflevector, "extractvalue": _extractvalue,
             "insertvalue": _insertvalue, "getelementptr": _gep, "freeze": _freeze}


def compile_op(ins, get):
    from .ir import BINARY, CASTS
    if ins.op in BINARY:
        return _binary(ins, get)
    if ins.op in CASTS:
        return _cast(ins, get)
    fn = COMPILERS.get(ins.op)
    if fn is None:
        raise NotModelled(f"instruction {ins.op}")
    return fn(ins, get)
