"""Poison of LLVM IR's vector and aggregate instructions, and of bitcasts that regroup elements (poison_ops.py
holds the rest): per element, as LangRef defines poison for vectors (each element is poison or not), with the bytes
of a vector bitcast to one integer kept apart as a bit mask (poison.py). Each rule quotes its LangRef clause."""
from __future__ import annotations

import numpy as np

from .poison import as_bool, source, union, with_new
from .poison import reads as _reads, value_getter as _value
from .values import dtype_of, lanes_of


def _const_int(operand):
    return int(operand[2]) if operand[0] == "c" and isinstance(operand[2], int) else None


def _bitcast(ins, src, dst):
    """A vector bitcast regroups elements: a result element is poison where any source element it holds bits of
    is (LangRef bitcast: "as if the value had been stored to memory and read back as type ty2"). A vector bitcast
    to one integer keeps which bits came from poison elements (a bit mask, see poison.py: LangRef would call the
    whole integer poison; LLVM's backend and the hardware keep the other bits, and Triton's fp8 packing relies on
    it: `shufflevector` with poison bytes, a bitcast to i32, then `cvt.pk.f32.fp8` of the defined half)."""
    (read,) = _reads(ins)
    ns = src[1] if src[0] == "v" else 1
    nd = dst[1] if dst[0] == "v" else 1
    if dst[0] == "i" and src[0] == "v" and src[2][0] == "i" and src[2][1] >= 8:
        return _to_bits(read, ns, src[2][1], dst[1]), read.const is not None
    if src[0] == "i" and dst[0] == "v" and dst[2][0] == "i" and dst[2][1] >= 8:
        return _from_bits(read, nd, dst[2][1]), read.const is not None

    def pfn(ex, out):
        entry = read(ex)
        if entry is None:
            return None
        m = lanes_of(as_bool(entry[0]), ex.n)
        m = m.reshape(ex.n, ns) if ns > 1 or m.ndim > 1 else m.reshape(ex.n, 1)
        if ns >= nd and ns % nd == 0:
            m = m.reshape(ex.n, nd, ns // nd).any(axis=2)
        elif nd % ns == 0:
            m = np.repeat(m, nd // ns, axis=1)
        else:
            m = np.broadcast_to(m.any(axis=1, keepdims=True), (ex.n, nd))
        return (m if dst[0] == "v" else m[:, 0]), entry[1]
    return pfn, read.const is not None


def _to_bits(read, ns, eb, bits):
    """<ns x iEB> -> iBITS: element k's poison as bits [k*eb, (k+1)*eb) of the mask."""
    dt = dtype_of(("i", bits))
    weights = np.array([((1 << eb) - 1) << (k * eb) for k in range(ns)], dtype=dt)

    def pfn(ex, out):
        entry = read(ex)
        if entry is None:
            return None
        m = lanes_of(as_bool(entry[0]), ex.n).reshape(ex.n, -1)
        m = np.broadcast_to(m, (ex.n, ns))
        return np.bitwise_or.reduce(np.where(m, weights, dt(0)), axis=1), entry[1]
    return pfn


def _from_bits(read, nd, eb):
    """iBITS -> <nd x iEB>: element j is poison where any of its bits is (a bool mask: every bit)."""
    def pfn(ex, out):
        entry = read(ex)
        if entry is None:
            return None
        m = lanes_of(np.asarray(entry[0]), ex.n)
        if m.dtype == np.bool_:
            return np.broadcast_to(m[:, None], (ex.n, nd)), entry[1]
        m = m.astype(np.uint64)
        part = np.stack([(m >> np.uint64(j * eb)) & np.uint64((1 << eb) - 1) for j in range(nd)], 1) != 0
        return part, entry[1]
    return pfn


def _extractelement(ins):
    """LangRef extractelement: "If idx exceeds the length of val for a fixed-length vector, the result is a poison
    value"; otherwise the element's own poison."""
    rv, ri = _reads(ins)
    n = ins.extra["n"]
    gi = _value(ins.ops[1])
    k = _const_int(ins.ops[1])
    what = source(ins, "an `extractelement` index past the vector")

    def pfn(ex, out):
        pv, pi = rv(ex), ri(ex)
        idx = lanes_of(np.asarray(gi(ex)).astype(np.uint64), ex.n)
        bad = idx >= n
        m = None
        if pv is not None:
            vm = lanes_of(np.asarray(pv[0]), ex.n).reshape(ex.n, -1)
            vm = np.broadcast_to(vm, (ex.n, n)) if vm.shape[1] == 1 else vm
            m = np.take_along_axis(vm, np.minimum(idx, n - 1).astype(np.int64)[:, None], 1)[:, 0]
        entry = union([None if m is None else (m, pv[1]), pi])
        return with_new(entry, bad, what)
    return pfn, k is None or k >= n or rv.const is not None or ri.const is not None


def _insertelement(ins):
    """LangRef insertelement: "If idx exceeds the length of val for a fixed-length vector, the result is a poison
    value"; the element written takes the inserted scalar's poison, the others keep theirs."""
    rv, re_, ri = _reads(ins)
    n = ins.ty[1]
    gi = _value(ins.ops[2])
    k = _const_int(ins.ops[2])
    what = source(ins, "an `insertelement` index past the vector")

    def constant_index(ex, out):  # the common case (a vector built from poison): no per-lane index work
        pv, pe = rv(ex), re_(ex)
        if pv is None and pe is None:
            return None
        base = np.zeros((1, n), bool) if pv is None else np.atleast_2d(as_bool(pv[0]))
        if pe is None:
            vm = base.copy()
            vm[:, k] = False
        else:
            vm = np.array(np.broadcast_to(base, (ex.n, n)))
            vm[:, k] = lanes_of(as_bool(pe[0]), ex.n)
        return (vm, (pe or pv)[1]) if vm.any() else None

    if k is not None and 0 <= k < n and ri.const is None:
        return constant_index, rv.const is not None or re_.const is not None

    def pfn(ex, out):
        pv, pe, pi = rv(ex), re_(ex), ri(ex)
        idx = lanes_of(np.asarray(gi(ex)).astype(np.uint64), ex.n)
        bad = idx >= n
        if pv is None and pe is None and pi is None and not bad.any():
            return None
        vm = np.zeros((ex.n, n), bool) if pv is None else np.array(np.broadcast_to(
            lanes_of(np.asarray(pv[0]), ex.n).reshape(ex.n, -1), (ex.n, n)))
        em = np.zeros(ex.n, bool) if pe is None else lanes_of(np.asarray(pe[0]), ex.n)
        ok = np.flatnonzero(~bad)
        vm[ok, idx[ok].astype(np.int64)] = em[ok]
        vm[bad] = True
        if pi is not None:
            vm |= lanes_of(np.asarray(pi[0]), ex.n)[:, None]
        if not vm.any():
            return None
        src = (pe and pe[1]) if pe is not None and em.any() else None
        src = src or (pi and pi[1]) or (what if bad.any() else None) or (pv and pv[1]) or what
        return vm, src
    return pfn, k is None or k >= n or any(r.const is not None for r in (rv, re_, ri))


def _shufflevector(ins):
    """LangRef shufflevector: a poison (or undef) mask element gives a poison result element; the others take the
    poison of the element they select."""
    ra, rb = _reads(ins)
    sel = np.array(ins.extra["mask"])
    n_in = ins.extra["n"]
    undef_sel = sel < 0
    what = source(ins, "an undef `shufflevector` mask element")

    def pfn(ex, out):
        pa, pb = ra(ex), rb(ex)
        if pa is None and pb is None:
            return (undef_sel[None, :], what) if undef_sel.any() else None
        parts = [np.zeros((1, n_in), bool) if p is None else np.atleast_2d(np.asarray(p[0])) for p in (pa, pb)]
        rows = max(parts[0].shape[0], parts[1].shape[0])
        both = np.concatenate([np.broadcast_to(p, (rows, n_in)) for p in parts], 1)
        m = both[:, np.maximum(sel, 0)] | undef_sel[None, :]
        if not m.any():
            return None
        return m, (pa or pb)[1] if (pa or pb) else what
    return pfn, bool(undef_sel.any()) or any(r.const is not None for r in (ra, rb))


def _extractvalue(ins):
    (read,) = _reads(ins)
    idx = ins.extra["idx"]

    def pfn(ex, out):
        entry = read(ex)
        if entry is None:
            return None
        m = entry[0]
        for k in idx:
            if not isinstance(m, tuple):
                break
            m = m[k]
            if m is None:
                return None
        return m, entry[1]
    return pfn, read.const is not None


def _insertvalue(ins):
    rv, re_ = _reads(ins)
    k = ins.extra["idx"][0]
    fields = len(ins.ty[1]) if ins.ty[0] == "s" else ins.ty[1]

    def pfn(ex, out):
        pv, pe = rv(ex), re_(ex)
        if pv is None and pe is None:
            return None
        ms = list(pv[0]) if pv is not None and isinstance(pv[0], tuple) else [
            None if pv is None else pv[0]] * fields
        ms[k] = None if pe is None else pe[0]
        if all(m is None for m in ms):
            return None
        return tuple(ms), (pe or pv)[1]
    return pfn, rv.const is not None or re_.const is not None
