"""Memory instructions: load, store, atomicrmw, cmpxchg, fence, and the buffer intrinsics' data movement.

Only the lanes of the execution mask touch memory: a masked-off lane's address is never checked, as on the
hardware. Atomics are applied lane by lane in lane order, a legal serialisation; the value each lane gets back is
the memory's value before its own update.
"""
from __future__ import annotations

import numpy as np

from .errors import NotModelled
from .ir import sizeof
from .memory import buffer_in_range
from .values import dtype_of, from_float, lanes_of, signed, to_float


def to_bytes(value, lanes, n, ty):
    v = lanes_of(value, n)[lanes]
    if v.dtype == np.bool_ and ty[0] == "v":  # <N x i1> is bit-packed in memory, element 0 in bit 0
        return np.packbits(v.astype(np.uint8), axis=1, bitorder="little")[:, :sizeof(ty)]
    if v.dtype == np.bool_:
        v = v.astype(np.uint8)
    return np.ascontiguousarray(v).view(np.uint8).reshape(len(lanes), sizeof(ty))


def from_bytes(raw, n, lanes, ty):
    dt = dtype_of(ty)
    shape = (ty[1],) if ty[0] == "v" else ()
    out = np.zeros((n,) + shape, dt)
    if dt == np.bool_ and shape:
        out[lanes] = np.unpackbits(raw, axis=1, bitorder="little")[:, :shape[0]] != 0
    elif dt == np.bool_:
        out[lanes] = raw.reshape(len(lanes)) != 0
    else:
        out[lanes] = np.ascontiguousarray(raw).view(dt).reshape((len(lanes),) + shape)
    return out


def _load(ins, get):
    gp, space, ty = get(ins.ops[0]), ins.extra["space"], ins.ty
    nbytes = sizeof(ty)

    def run(ex):
        lanes = np.flatnonzero(ex.mask)
        addr = lanes_of(gp(ex), ex.n)[lanes]
        ex.memories.line = ins.line
        return from_bytes(ex.memories.load(space, addr, nbytes, lanes), ex.n, lanes, ty)
    return run


def _store(ins, get):
    gv, gp, space, ty = get(ins.ops[0]), get(ins.ops[1]), ins.extra["space"], ins.extra["vty"]

    def run(ex):
        lanes = np.flatnonzero(ex.mask)
        addr = lanes_of(gp(ex), ex.n)[lanes]
        ex.memories.line = ins.line
        ex.memories.store(space, addr, to_bytes(gv(ex), lanes, ex.n, ty), lanes)
    return run


def rmw(kind, ty):
    """old, value -> new, for one lane (numpy scalars of the type's representation)."""
    if kind in ("fadd", "fsub", "fmax", "fmin", "fmaximum", "fminimum"):
        f = {"fadd": np.add, "fsub": np.subtract, "fmax": np.fmax, "fmin": np.fmin, "fmaximum": np.maximum,
             "fminimum": np.minimum}[kind]
        return lambda old, v: from_float(f(to_float(old, ty), to_float(v, ty)), ty)
    table = {"xchg": lambda o, v: v, "add": lambda o, v: o + v, "sub": lambda o, v: o - v, "and": lambda o, v: o & v,
             "or": lambda o, v: o | v, "xor": lambda o, v: o ^ v, "nand": lambda o, v: ~(o & v),
             "umax": max, "umin": min,
             "max": lambda o, v: o if signed(o) >= signed(v) else v,
             "min": lambda o, v: o if signed(o) <= signed(v) else v,
             "uinc_wrap": lambda o, v: type(o)(0) if o >= v else o + type(o)(1),
             "udec_wrap": lambda o, v: v if (o == 0 or o > v) else o - type(o)(1)}
    if kind not in table:
        raise NotModelled(f"atomicrmw {kind}")
    return table[kind]


def apply_atomic(ex, memory, positions, values, ty, update, lanes):
    """Apply `update` lane by lane; returns the old values [len(lanes)]."""
    dt, width = dtype_of(ty), sizeof(ty)
    shape = (ty[1],) if ty[0] == "v" else ()  # a packed atomic (<2 x half>): the vector at once
    olds = np.zeros((len(lanes),) + shape, dt)
    with np.errstate(all="ignore"):
        for i, pos in enumerate(positions):
            cell = memory[pos:pos + width].view(dt)
            old = cell.copy() if shape else cell[0]
            olds[i] = old
            cell[...] = update(old, values[i])
    return olds


def _atomicrmw(ins, get):
    gp, gv, space, ty = get(ins.ops[0]), get(ins.ops[1]), ins.extra["space"], ins.ty
    if ty[0] == "v" and not ins.extra["kind"].startswith("f"):
        raise NotModelled(f"vector atomicrmw {ins.extra['kind']}")
    update = rmw(ins.extra["kind"], ty)

    def run(ex):
        lanes = np.flatnonzero(ex.mask)
        addr = lanes_of(gp(ex), ex.n)[lanes]
        memory, positions = ex.memories.cells(space, addr, sizeof(ty), lanes)
        olds = apply_atomic(ex, memory, positions, lanes_of(gv(ex), ex.n)[lanes], ty, update, lanes)
        out = np.zeros((ex.n,) + olds.shape[1:], dtype_of(ty))
        out[lanes] = olds
        return out
    return run


def _cmpxchg(ins, get):
    gp, gc, gn, space, ty = get(ins.ops[0]), get(ins.ops[1]), get(ins.ops[2]), ins.extra["space"], ins.extra["vty"]
    dt, width = dtype_of(ty), sizeof(ty)

    def run(ex):
        lanes = np.flatnonzero(ex.mask)
        addr = lanes_of(gp(ex), ex.n)[lanes]
        memory, positions = ex.memories.cells(space, addr, width, lanes)
        cmp, new = lanes_of(gc(ex), ex.n)[lanes], lanes_of(gn(ex), ex.n)[lanes]
        olds, ok = np.zeros(ex.n, dt), np.zeros(ex.n, bool)
        for i, pos in enumerate(positions):
            cell = memory[pos:pos + width].view(dt)
            olds[lanes[i]] = cell[0]
            if cell[0] == cmp[i]:
                cell[0] = new[i]
                ok[lanes[i]] = True
        return (olds, ok)
    return run


def _fence(ins, get):
    return lambda ex: None  # every access is visible at once: the executor's memory is sequentially consistent


COMPILERS = {"load": _load, "store": _store, "atomicrmw": _atomicrmw, "cmpxchg": _cmpxchg, "fence": _fence}


# --- buffer intrinsics (llvm.amdgcn.raw.ptr.buffer.*) ------------------------------------------------------------
def buffer_lanes(ex, rsrc, voffset, soffset, nbytes):
    """Active lanes, their addresses, and which of them are in range."""
    lanes = np.flatnonzero(ex.mask)
    offset = (lanes_of(voffset, ex.n)[lanes].astype(np.uint64) + lanes_of(soffset, ex.n)[lanes].astype(np.uint64))
    picked = rsrc.select(lanes)
    in_range = buffer_in_range(picked, lanes_of(voffset, ex.n)[lanes], nbytes)
    address = np.asarray(picked.base).astype(np.uint64) + offset
    return lanes, lanes_of(address, len(lanes)), in_range


def buffer_load(ex, rsrc, voffset, soffset, ty):
    nbytes = sizeof(ty)
    lanes, address, ok = buffer_lanes(ex, rsrc, voffset, soffset, nbytes)
    raw = np.zeros((len(lanes), nbytes), np.uint8)
    if ok.any():
        raw[ok] = ex.memories.load(1, address[ok], nbytes, lanes[ok])
    return from_bytes(raw, ex.n, lanes, ty)


def buffer_store(ex, value, rsrc, voffset, soffset, ty):
    nbytes = sizeof(ty)
    lanes, address, ok = buffer_lanes(ex, rsrc, voffset, soffset, nbytes)
    if ok.any():
        data = to_bytes(value, lanes, ex.n, ty)[ok]
        ex.memories.store(1, address[ok], data, lanes[ok])


def buffer_atomic(ex, kind, value, rsrc, voffset, soffset, ty, compare=None):
    nbytes = sizeof(ty)
    lanes, address, ok = buffer_lanes(ex, rsrc, voffset, soffset, nbytes)
    out = np.zeros((ex.n,) + ((ty[1],) if ty[0] == "v" else ()), dtype_of(ty))  # a packed <2 x half> atomic too
    if not ok.any():
        return out
    hit = lanes[ok]
    memory, positions = ex.memories.cells(1, address[ok], nbytes, hit)
    values = lanes_of(value, ex.n)[hit]
    if kind == "cmpswap":
        cmp = lanes_of(compare, ex.n)[hit]
        olds = np.zeros(len(hit), dtype_of(ty))
        for i, pos in enumerate(positions):
            cell = memory[pos:pos + nbytes].view(dtype_of(ty))
            olds[i] = cell[0]
            if cell[0] == cmp[i]:
                cell[0] = values[i]
    else:
        name = {"swap": "xchg", "smax": "max", "smin": "min"}.get(kind, kind)
        olds = apply_atomic(ex, memory, positions, values, ty, rmw(name, ty), hit)
    out[hit] = olds
    return out
