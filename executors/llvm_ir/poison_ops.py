"""Poison of LLVM IR instructions (not calls): where each creates poison and how it passes poison on (poison.py).

Each rule quotes the LangRef clause it implements (https://llvm.org/docs/LangRef.html, the instruction's section).
`compile_op(ins)` returns (pfn, always): pfn(ex, out) -> entry or None, run after the value `out` is computed;
`always` says the instruction can create poison (or immediate UB) from clean operands, so pfn must run even while
no poison exists. Not tracked: `getelementptr inbounds` / `nusw` / `nuw` (poison for an address outside its object:
the executor knows the launch's buffers but not each pointer's object, and a wrong address faults anyway when used),
fast-math `nnan`/`ninf` (poison for a NaN or infinite operand), memory holding poison (a store of poison is a sink
instead, so poison never enters memory).
"""
from __future__ import annotations

import numpy as np

from .ir_tokens import BINARY, CASTS
from .poison import Operand, check, immediate, source, union, with_new
from .poison import reads as _reads, value_getter as _value
from .values import dtype_of, signed, to_float
from .poison_vectors import (_bitcast, _extractelement, _extractvalue, _insertelement, _insertvalue,  # noqa: E402
                             _shufflevector)

_INT_DIV = {"udiv", "sdiv", "urem", "srem"}


def _bits(ty):
    return ty[1] if ty[0] == "i" else ty[2][1] if ty[0] == "v" and ty[2][0] == "i" else 0


def _const_int(operand):
    return int(operand[2]) if operand[0] == "c" and isinstance(operand[2], int) else None


def _elementwise(ins, extra=None, always=False):
    """Union of the operands' poison, plus what `extra(ex, out)` creates (a mask or None)."""
    reads = _reads(ins)
    always = always or any(r.const is not None for r in reads)
    what = source(ins, f"`{' '.join((ins.op,) + tuple(ins.extra.get('flags', ())))}`")

    def pfn(ex, out):
        entry = union([r(ex) for r in reads])
        return with_new(entry, extra(ex, out), what) if extra is not None else entry
    return pfn, always or extra is not None


def _binary(ins):
    op, flags, bits = ins.op, ins.extra.get("flags", ()), _bits(ins.ty)
    if op in _INT_DIV:
        return _division(ins, flags, bits)
    if op.startswith("f") or bits <= 1:
        return _elementwise(ins)
    ga, gb = (_value(o) for o in ins.ops)
    tests = []
    if op in ("add", "sub", "mul"):
        if "nsw" in flags:
            tests.append(_signed_overflow(op, bits))
        if "nuw" in flags:
            tests.append(_unsigned_overflow(op, bits))
    elif op in ("shl", "lshr", "ashr"):
        amount = _const_int(ins.ops[1])
        if amount is None or amount >= bits:  # "If op2 is ... equal to or larger than the number of bits in op1,
            tests.append(lambda a, b, r: np.asarray(b).astype(np.uint64) >= bits)  # this instruction returns poison"
        if op == "shl" and "nuw" in flags:  # "poison value if it shifts out any non-zero bits"
            tests.append(lambda a, b, r: (r >> _amt(b, bits)) != a)
        if op == "shl" and "nsw" in flags:  # "... any bits that disagree with the resultant sign bit"
            tests.append(lambda a, b, r: (signed(r) >> _amt(b, bits).astype(signed(r).dtype)) != signed(a))
        if op != "shl" and "exact" in flags:  # "poison value if any of the bits shifted out are non-zero"
            tests.append(lambda a, b, r: (r << _amt(b, bits)) != a)
    elif op == "or" and "disjoint" in flags:  # "If the disjoint flag is set, and the or has a one and the other
        tests.append(lambda a, b, r: (a & b) != 0)  # has a zero bit in the same position, the result is poison"
    if not tests:
        return _elementwise(ins)

    def extra(ex, out):
        a, b, r = np.asarray(ga(ex)), np.asarray(gb(ex)), np.asarray(out)
        with np.errstate(all="ignore"):
            bad = tests[0](a, b, r)
            for t in tests[1:]:
                bad = bad | t(a, b, r)
        return bad
    return _elementwise(ins, extra)


def _amt(b, bits):
    b = np.asarray(b)
    return (b % bits).astype(b.dtype)


def _signed_overflow(op, bits):
    """LangRef add/sub/mul: "If the nuw and/or nsw keywords are present, the result value ... is a poison value
    if unsigned and/or signed overflow, respectively, occurs"."""
    if op == "add":
        return lambda a, b, r: (signed(a ^ r) & signed(b ^ r)) < 0
    if op == "sub":
        return lambda a, b, r: (signed(a ^ b) & signed(a ^ r)) < 0
    if bits <= 32:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return lambda a, b, r: ((p := signed(a).astype(np.int64) * signed(b).astype(np.int64)) < lo) | (p > hi)

    def mul64(a, b, r):
        sa, sb, sr = signed(a), signed(b), signed(r)
        safe = np.where(sa == 0, 1, sa)
        return ((sa != 0) & (sr // safe != sb)) | ((sa == -1) & (sb == np.iinfo(np.int64).min))
    return mul64


def _unsigned_overflow(op, bits):
    if op == "add":
        return lambda a, b, r: r < a
    if op == "sub":
        return lambda a, b, r: a < b
    if bits <= 32:
        return lambda a, b, r: a.astype(np.uint64) * b.astype(np.uint64) > np.uint64((1 << bits) - 1)
    return lambda a, b, r: (a != 0) & (r // np.where(a == 0, 1, a) != b)


def _division(ins, flags, bits):
    """LangRef udiv/sdiv/urem/srem: "Division by zero is undefined behavior"; sdiv/srem: "Overflow also leads to
    undefined behavior ... -2147483648 by -1"; a poison divisor is UB too (Poison Values: "The divisor operand of
    a udiv, sdiv, urem or srem instruction"); `exact`: "poison value if %op1 is not a multiple of %op2"."""
    reads = _reads(ins)
    ga, gb = (_value(o) for o in ins.ops)
    is_signed = ins.op in ("sdiv", "srem")
    int_min = -(1 << (bits - 1))
    what = source(ins, f"`{ins.op} exact` with a remainder")
    divisor = _const_int(ins.ops[1])
    constant_safe = divisor is not None and divisor % (1 << bits) != 0 and not (
        is_signed and divisor % (1 << bits) == (1 << bits) - 1) and "exact" not in flags

    def pfn(ex, out):
        pa, pb = reads[0](ex), reads[1](ex)
        check(ex, pb, f"the divisor of `{ins.op}`", ins)
        a, b = np.asarray(ga(ex)), np.asarray(gb(ex))
        immediate(ex, b == 0, f"`{ins.op}` by zero (LangRef: \"Division by zero is undefined behavior\")", ins)
        if is_signed:
            immediate(ex, (signed(a).astype(np.int64) == int_min) & (signed(b) == -1),
                      f"`{ins.op}` of INT_MIN by -1 (LangRef: \"Overflow also leads to undefined behavior\")", ins)
        if "exact" in flags and ins.op in ("udiv", "sdiv"):
            with np.errstate(all="ignore"):
                if is_signed:
                    sb = np.where(b == 0, 1, signed(b)).astype(np.int64)
                    rem = np.fmod(signed(a).astype(np.int64), sb)
                else:
                    rem = a % np.where(b == 0, 1, b)
            return with_new(union([pa]), rem != 0, what)
        return union([pa])
    return pfn, not constant_safe or any(r.const is not None for r in reads)


def _cast(ins):
    op, flags, src, dst = ins.op, ins.extra.get("flags", ()), ins.extra["from"], ins.ty
    g = _value(ins.ops[0])
    if op in ("fptosi", "fptoui"):  # "If the value cannot fit in ty2, the result is a poison value."
        bits = _bits(dst)
        lo, hi = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if op == "fptosi" else (0.0, 2.0 ** bits)

        def fits(ex, out):  # NaN fails both comparisons: poison too
            x = np.trunc(to_float(np.asarray(g(ex)), src).astype(np.float64))
            with np.errstate(invalid="ignore"):
                return ~((x >= lo) & (x < hi))
        return _elementwise(ins, fits)
    if op == "bitcast" and (src[0] == "v" or dst[0] == "v") and src[0] != "p" and dst[0] != "p":
        return _bitcast(ins, src, dst)
    tests = []
    if op in ("zext", "uitofp") and "nneg" in flags:  # "If the nneg flag is set, and the argument is negative,
        tests.append(lambda a, r: signed(a) < 0)       # the result is a poison value"
    if op == "trunc" and "nuw" in flags:  # "If the nuw keyword is present, and any of the truncated bits are
        tests.append(lambda a, r: r.astype(a.dtype) != a)  # non-zero, the result is a poison value"
    if op == "trunc" and "nsw" in flags:  # "... any of the truncated bits are not the same as the top bit of the
        tests.append(lambda a, r: signed(r).astype(signed(a).dtype) != signed(a))  # truncation result"
    def extra(ex, out):
        a, r = np.asarray(g(ex)), np.asarray(out)
        bad = tests[0](a, r)
        for t in tests[1:]:
            bad = bad | t(a, r)
        return bad
    if op in ("trunc", "zext") and src[0] == "i" and dst[0] == "i" and src[1] >= 8 and dst[1] >= 8:
        return _int_resize(ins, src, dst, extra if tests else None)
    return _elementwise(ins, extra if tests else None)


def _int_resize(ins, src, dst, extra):
    """trunc / zext of an integer whose poison is a bit mask (a bitcast vector, an fp8 conversion's word): the
    bits kept keep their poison, zext's new bits are defined (Triton truncates a packed fp8 word to its byte)."""
    (read,) = _reads(ins)
    dt = dtype_of(dst)
    keep = (1 << min(src[1], dst[1])) - 1
    what = source(ins, f"`{' '.join((ins.op,) + tuple(ins.extra.get('flags', ())))}`")

    def pfn(ex, out):
        entry = read(ex)
        if entry is not None:
            m = np.asarray(entry[0])
            if m.dtype != np.bool_:
                m = (m.astype(np.uint64) & np.uint64(keep)).astype(dt)
                entry = (m, entry[1]) if m.any() else None
        return with_new(entry, extra(ex, out), what) if extra is not None else entry
    return pfn, extra is not None or read.const is not None


def _select(ins):
    """LangRef Poison Values: "Most instructions return poison when one of their arguments is poison. A notable
    exception is the select instruction": the arm not selected does not pass its poison on; a poison condition
    makes the result poison."""
    rc, ra, rb = _reads(ins)
    gc = _value(ins.ops[0])

    def pfn(ex, out):
        pc, pa, pb = rc(ex), ra(ex), rb(ex)
        if pc is None and pa is None and pb is None:
            return None
        if isinstance(out, tuple) or hasattr(out, "merge"):
            return union([pc, pa, pb])
        c = np.asarray(gc(ex))
        vector = np.ndim(out) == 2
        if c.ndim == 1 and vector:
            c = c[:, None]
        zero = np.zeros((), bool)
        m = np.where(c, zero if pa is None else pa[0], zero if pb is None else pb[0])
        src = (pa or pb or pc)[1]
        if pc is not None:
            cm = pc[0]
            if vector and np.ndim(cm) == 1:
                cm = cm[:, None]
            m = m | cm
            src = pc[1] if not (pa or pb) else src
        return (m, src) if np.any(m) else None
    return pfn, any(r.const is not None for r in (rc, ra, rb))


def _freeze(ins):
    """LangRef freeze: "If the argument is undef or poison, 'freeze' returns an arbitrary, but fixed, value of type
    'ty'". The value chosen is the bits the executor already holds (0 for an undef constant): no poison after it."""
    return None, False


def _icmp(ins):
    if "samesign" not in ins.extra.get("flags", ()):
        return _elementwise(ins)
    ga, gb = (_value(o) for o in ins.ops)

    def extra(ex, out):  # LangRef icmp: "If the samesign keyword is present and the operands are not of the same
        return (signed(np.asarray(ga(ex))) < 0) != (signed(np.asarray(gb(ex))) < 0)  # sign then the result is poison"
    return _elementwise(ins, extra)


def _load(ins):
    (rp,) = _reads(ins)

    def pfn(ex, out):  # Poison Values: UB for "The pointer operand of a load, store or any other pointer
        check(ex, rp(ex), "the address of a `load`", ins)  # dereferencing instruction"
    return pfn, rp.const is not None


def _store(ins):
    rv, rp = _reads(ins)

    def pfn(ex, out):
        check(ex, rp(ex), "the address of a `store`", ins)
        check(ex, rv(ex), "the value of a `store` (the output would hold undefined bits)", ins)
    return pfn, rv.const is not None or rp.const is not None


def _atomic(ins):
    reads = _reads(ins)

    def pfn(ex, out):
        check(ex, reads[0](ex), f"the address of `{ins.op}`", ins)
        for r in reads[1:]:
            check(ex, r(ex), f"a value `{ins.op}` stores", ins)
    return pfn, any(r.const is not None for r in reads)


def _none(ins):
    return None, False


COMPILERS = {"select": _select, "freeze": _freeze, "extractelement": _extractelement,
             "insertelement": _insertelement, "shufflevector": _shufflevector, "extractvalue": _extractvalue,
             "insertvalue": _insertvalue, "icmp": _icmp, "fcmp": _elementwise, "fneg": _elementwise,
             "getelementptr": _elementwise, "load": _load, "store": _store, "atomicrmw": _atomic,
             "cmpxchg": _atomic, "fence": _none}


def compile_op(ins):
    if ins.op in BINARY:
        return _binary(ins)
    if ins.op in CASTS:
        return _cast(ins)
    fn = COMPILERS.get(ins.op)
    return fn(ins) if fn is not None else (None, False)
