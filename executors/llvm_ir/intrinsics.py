"""Calls: LLVM's generic intrinsics, AMDGPU's, and Triton's device-assertion helper.

Policy as data: `AMDGPU` and `MATH` map an intrinsic's name (its type suffixes stripped) to a compiler
`(ins, args) -> fn(ex)`. A call to anything else is `NotModelled`, so the kernel is `unresolved`, never judged on
a guessed semantics. Cross-lane operations (lanes.py), conversions (convert.py) and the matrix instructions
(matrix.py) are their own modules, with the ISA's documented semantics; this module moves lanes into their waves
([workgroups, wave size]) and back.
"""
from __future__ import annotations

import re

import numpy as np

from . import access
from .errors import NotModelled
from .memory import EmulatedFault, Rsrc
from .matrix_calls import compile_mfma
from .values import dtype_of, lanes_of, to_float

BARRIER = object()  # what a barrier's closure returns: the executor yields to the other waves there


class DeviceAssertion(Exception):
    """A `tl.device_assert` (or the overflow sanitizer of debug=True) fired on some lane."""


_SUFFIX = re.compile(r"\.(?:v\d+)?(?:[if]\d+|bf16|p\d+|f16)$")


def _names(callee: str):
    """The callee, then the callee with its type-mangling suffixes stripped one at a time (llvm.fma.v2f32 ->
    llvm.fma): an intrinsic whose own name ends like a type (cvt.pk.fp8.f32) is found before it is stripped."""
    name = callee
    while True:
        yield name
        stripped = _SUFFIX.sub("", name)
        if stripped == name or stripped.count(".") < 1:
            return
        name = stripped


def base_name(callee: str) -> str:
    return list(_names(callee))[-1]


def compile_call(ins, get, kernel):
    callee = ins.extra["callee"]
    args = [get(o) for o in ins.ops]
    if callee == "__triton_assert_fail":
        message = kernel.module.globals.get(ins.ops[0][1], (0, b""))[1] or b"device assertion failed"
        text = message.decode("latin-1").rstrip("\x00\n")
        return _assert_fail(text)
    if callee.startswith("asm:"):
        if callee.strip() == "asm:s_trap 2":
            return _trap
        raise NotModelled(f"inline assembly {callee[4:]!r}")
    if callee.startswith(HOST_OUTPUT):
        return _host_output(ins)
    if callee.startswith("llvm.amdgcn.mfma."):  # not overloaded: '.i8' in mfma.i32.16x16x32.i8 is its name
        return compile_mfma(ins, args, kernel)
    for name in _names(callee):
        for table in (AMDGPU, MATH):
            if name in table:
                return table[name](ins, args, kernel)
    raise NotModelled(f"call to {callee}")


def _assert_fail(text):
    def run(ex):
        raise DeviceAssertion(text)
    return run


def _trap(ex):
    raise EmulatedFault("s_trap executed")


# printf's device half (the hostcall buffer protocol of ROCm's device library): what it writes goes to the host and
# nothing the kernel computes depends on it, so a call does nothing and returns 0 (the message descriptor is only
# handed to the next printf call). Triton before 3.8 prints a failed device assertion's message this way and then
# calls llvm.trap; without this, every kernel compiled with debug=True would be unresolved, asserting or not.
HOST_OUTPUT = ("__ockl_fprintf_", "__ockl_printf_")


def _host_output(ins):
    if ins.ty[0] == "void":
        return lambda ex: None
    dt = dtype_of(ins.ty)
    return lambda ex: np.zeros(ex.n, dt)


def _llvm_trap(ins, args, kernel):
    def run(ex):
        raise DeviceAssertion("llvm.trap executed (Triton before 3.8 ends a failed device assertion so, after "
                              "printing its message, which the executor does not model)")
    return run


def _none(ins, args, kernel):
    return lambda ex: None


def _barrier(ins, args, kernel):
    return lambda ex: BARRIER


def _workitem(axis):
    def compile_(ins, args, kernel):
        return (lambda ex: ex.tid) if axis == 0 else (lambda ex: np.zeros(ex.n, np.uint32))
    return compile_


def _workgroup(axis):
    def compile_(ins, args, kernel):
        return lambda ex: ex.pid[:, axis]
    return compile_


def _waves(ex, value):
    """[n] or [n, k] lane array as [workgroups, wave size, ...]."""
    value = lanes_of(value, ex.n)
    return value.reshape((ex.n // ex.kernel.wave_size, ex.kernel.wave_size) + value.shape[1:])


def _active(ex):
    return ex.mask.reshape(-1, ex.kernel.wave_size)


def _as_u32(value):
    value = np.ascontiguousarray(value)
    return value.view(np.uint32) if value.dtype.itemsize == 4 else value


def _readfirstlane(ins, args, kernel):
    from . import lanes as L
    dt = dtype_of(ins.ty)
    return lambda ex: L.readfirstlane(_waves(ex, args[0](ex)), _active(ex)).reshape(ex.n).astype(dt, copy=False)


def _readlane(ins, args, kernel):
    from . import lanes as L
    dt = dtype_of(ins.ty)
    # a read of an inactive lane is poison (poison_calls.py), not an error: the executor tracks it to its use
    tracked = getattr(kernel, "poison_tracking", True)
    return lambda ex: L.readlane(_waves(ex, args[0](ex)), _waves(ex, args[1](ex)), _active(ex),
                                 inactive_ok=tracked).reshape(ex.n).astype(dt, copy=False)


def _fdot2(ins, args, kernel):
    """v_dot2_f32_f16 / v_dot2_f32_bf16: a0*b0 + a1*b1 + c, the products exact, rounded once to f32."""
    def run(ex):
        a = to_float(lanes_of(args[0](ex), ex.n), ins.extra["tys"][0]).astype(np.float64)
        b = to_float(lanes_of(args[1](ex), ex.n), ins.extra["tys"][1]).astype(np.float64)
        c = lanes_of(args[2](ex), ex.n).astype(np.float64)
        return (a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + c).astype(np.float32)
    if ins.ops[3][0] != "c" or ins.ops[3][2]:
        raise NotModelled("a clamping dot2")
    return run


def _sdot4(ins, args, kernel):
    """v_dot4_i32_i8: the four signed byte products of a and b, plus c (wrapping; clamp off)."""
    def run(ex):
        a = np.ascontiguousarray(lanes_of(args[0](ex), ex.n).astype(np.uint32)).view(np.int8).reshape(-1, 4)
        b = np.ascontiguousarray(lanes_of(args[1](ex), ex.n).astype(np.uint32)).view(np.int8).reshape(-1, 4)
        c = lanes_of(args[2](ex), ex.n).astype(np.int64)
        return (c + (a.astype(np.int64) * b.astype(np.int64)).sum(1)).astype(np.uint32)
    if ins.ops[3][0] != "c" or ins.ops[3][2]:
        raise NotModelled("a clamping dot4")
    return run


def _ballot(ins, args, kernel):
    from . import lanes as L
    dt = dtype_of(ins.ty)
    return lambda ex: np.repeat(L.ballot(_waves(ex, args[0](ex)), _active(ex)), kernel.wave_size).astype(dt)


def _mbcnt(high):
    """v_mbcnt_lo/hi: acc + the number of set bits of `mask` below this lane (lanes 0-31 / 32-63)."""
    def compile_(ins, args, kernel):
        from . import lanes as L
        fn = L.mbcnt_hi if high else L.mbcnt_lo
        return lambda ex: fn(lanes_of(args[0](ex), ex.n), lanes_of(args[1](ex), ex.n), ex.lane)
    return compile_


def _bpermute(ins, args, kernel, forward=False):
    from . import lanes as L
    permute = L.ds_permute if forward else L.ds_bpermute

    def run(ex):
        out = permute(_waves(ex, args[0](ex)).astype(np.uint32), _waves(ex, _as_u32(args[1](ex))),
                            _active(ex))
        return out.reshape(ex.n).view(dtype_of(ins.ty)) if dtype_of(ins.ty) != np.uint32 else out.reshape(ex.n)
    return run


def _swizzle(ins, args, kernel):
    from . import lanes as L
    if ins.ops[1][0] != "c":
        raise NotModelled("ds.swizzle with a non-constant pattern")
    pattern = int(ins.ops[1][2])
    dt = dtype_of(ins.ty)

    def run(ex):
        src = _waves(ex, np.ascontiguousarray(lanes_of(args[0](ex), ex.n)).view(np.uint32) if np.dtype(dt).itemsize
                     == 4 else args[0](ex))
        return np.ascontiguousarray(L.ds_swizzle(src, pattern, _active(ex))).reshape(ex.n).view(dt)
    return run


def _update_dpp(ins, args, kernel):
    from . import lanes as L
    consts = [ins.ops[k] for k in (2, 3, 4, 5)]
    if any(c[0] != "c" for c in consts):
        raise NotModelled("update.dpp with non-constant controls")
    ctrl, row_mask, bank_mask, bound = (int(c[2] or 0) for c in consts)
    dt = dtype_of(ins.ty)
    if np.dtype(dt).itemsize != 4:
        raise NotModelled(f"update.dpp of {ins.ty}")

    def run(ex):
        old = _waves(ex, np.asarray(args[0](ex)).astype(dt, copy=False)).view(np.uint32) \
            if not (ins.ops[0][0] == "c" and ins.ops[0][2] is None) else np.zeros((ex.n // kernel.wave_size, kernel.wave_size), np.uint32)
        src = _waves(ex, np.asarray(args[1](ex)).astype(dt, copy=False)).view(np.uint32)
        out = L.update_dpp(old, src, ctrl, row_mask, bank_mask, bool(bound), _active(ex), kernel.arch)
        return np.ascontiguousarray(out).reshape(ex.n).view(dt)
    return run


def _perm(ins, args, kernel):
    from .convert import perm_b32

    def run(ex):
        a, b, sel = (lanes_of(g(ex), ex.n).astype(np.uint32) for g in args)
        return perm_b32(a, b, sel)
    return run


def _setreg(ins, args, kernel):
    def run(ex):
        ex.env["__mode_fp16_ovfl"] = bool(int(np.asarray(args[1](ex)).flat[0]) & 1)  # hwreg(MODE, 23, 1)
    if ins.ops[0][0] != "c" or int(ins.ops[0][2]) != 1473:
        raise NotModelled(f"s.setreg of hwreg {ins.ops[0][2]}")
    return run


def _make_rsrc(ins, args, kernel):
    def run(ex):
        return Rsrc(lanes_of(args[0](ex), ex.n).astype(np.uint64), np.asarray(args[1](ex)).astype(np.uint64),
                    np.asarray(args[2](ex)).astype(np.uint64), np.asarray(args[3](ex)))
    return run


def _buffer_load(ins, args, kernel):
    ty = ins.ty
    return lambda ex: access.buffer_load(ex, args[0](ex), args[1](ex), args[2](ex), ty)


def _buffer_store(ins, args, kernel):
    ty = ins.extra["tys"][0]
    return lambda ex: access.buffer_store(ex, args[0](ex), args[1](ex), args[2](ex), args[3](ex), ty)


def _buffer_atomic(ins, args, kernel):
    kind = base_name(ins.extra["callee"]).rsplit(".", 1)[1]
    ty = ins.ty
    if kind == "cmpswap":
        return lambda ex: access.buffer_atomic(ex, kind, args[0](ex), args[2](ex), args[3](ex), args[4](ex), ty,
                                               compare=args[1](ex))
    return lambda ex: access.buffer_atomic(ex, kind, args[0](ex), args[1](ex), args[2](ex), args[3](ex), ty)


def _to_lds(buffer, deferred):
    """Loads straight into LDS (buffer_load ... lds / global_load_lds): each lane loads `size` bytes from its
    address and writes them at the wave's LDS base (M0: the first active lane's pointer) + offset + lane * size
    (CDNA3 ISA, "Global Load LDS"; LLVM's llvm.amdgcn.*.load.lds). The async forms land in LDS only when a
    `wait.asyncmark` lets their group complete: a missing wait shows as a stale read."""
    def compile_(ins, args, kernel):
        size_op = ins.ops[2]
        if size_op[0] != "c":
            raise NotModelled("a load to LDS of a lane-varying size")
        size = int(size_op[2])
        offset_index = 5 if buffer else 3
        if ins.ops[offset_index][0] != "c":
            raise NotModelled("a load to LDS with a non-constant offset")
        offset = int(ins.ops[offset_index][2] or 0)
        ty = ("v", size // 4, ("i", 32)) if size >= 4 else ("i", 8 * size)

        def run(ex):
            if buffer:
                data = access.buffer_load(ex, args[0](ex), np.asarray(args[3](ex)).astype(np.uint32) + np.uint32(offset),
                                          args[4](ex), ty)
            else:
                data = _global_load(ex, args[0](ex), offset, ty)
            base = _waves(ex, np.asarray(args[1](ex)).astype(np.int64))
            first = base[np.arange(base.shape[0]), np.argmax(_active(ex), axis=1)]
            lds = (first[:, None] + offset + np.arange(ex.kernel.wave_size) * size).reshape(ex.n)
            lanes = np.flatnonzero(ex.mask)
            raw = access.to_bytes(data, lanes, ex.n, ty)
            write = (ins.line, lds[lanes].astype(np.uint32), raw, lanes)  # the line: a race names this load
            if deferred:
                ex.env.setdefault("__async_open", []).append(write)
            else:
                _land(ex, write)
        return run
    return compile_


def _global_load(ex, pointer, offset, ty):
    lanes = np.flatnonzero(ex.mask)
    addr = lanes_of(pointer, ex.n)[lanes].astype(np.uint64) + np.uint64(offset)
    return access.from_bytes(ex.memories.load(1, addr, access.sizeof(ty), lanes), ex.n, lanes, ty)


def _asyncmark(ins, args, kernel):
    def run(ex):
        groups = ex.env.setdefault("__async_groups", [])
        groups.append(ex.env.pop("__async_open", []))
    return run


def _wait_asyncmark(ins, args, kernel):
    if ins.ops[0][0] != "c":
        raise NotModelled("wait.asyncmark with a lane-varying count")
    keep = int(ins.ops[0][2] or 0)

    def run(ex):
        groups = ex.env.setdefault("__async_groups", [])
        while len(groups) > keep:
            for write in groups.pop(0):
                _land(ex, write)
    return run


def _land(ex, write):
    """A load's bytes arrive in LDS, checked for races under the IR line of the load that sent them."""
    line, *store = write
    ex.memories.line = line
    ex.memories.store(3, *store)


def _cvt(fn_name):
    def compile_(ins, args, kernel):
        from . import cvt_calls as convert
        fn = getattr(convert, fn_name)
        # every operand as its typed value (a float constant is its value, not its bit pattern); selectors are
        # read back as ints by cvt_calls
        return lambda ex: fn(ex, kernel.arch, *[lanes_of(g(ex), ex.n) for g in args])
    return compile_

AMDGPU = {
    "llvm.amdgcn.workitem.id.x": _workitem(0), "llvm.amdgcn.workitem.id.y": _workitem(1),
    "llvm.amdgcn.workitem.id.z": _workitem(2),
    "llvm.amdgcn.workgroup.id.x": _workgroup(0), "llvm.amdgcn.workgroup.id.y": _workgroup(1),
    "llvm.amdgcn.workgroup.id.z": _workgroup(2),
    "llvm.amdgcn.implicitarg.ptr": lambda ins, args, kernel: (lambda ex: ex.env["__implicitarg"]),
    "llvm.trap": _llvm_trap,
    "llvm.amdgcn.s.barrier": _barrier, "llvm.amdgcn.wave.barrier": _none, "llvm.amdgcn.s.sleep": _none,
    "llvm.amdgcn.s.setprio": _none, "llvm.amdgcn.sched.barrier": _none, "llvm.amdgcn.sched.group.barrier": _none,
    "llvm.amdgcn.s.waitcnt": _none, "llvm.amdgcn.iglp.opt": _none, "llvm.assume": _none,
    "llvm.amdgcn.readfirstlane": _readfirstlane, "llvm.amdgcn.readlane": _readlane, "llvm.amdgcn.ballot": _ballot,
    "llvm.amdgcn.fdot2": _fdot2, "llvm.amdgcn.sdot4": _sdot4,
    "llvm.amdgcn.mbcnt.lo": _mbcnt(False), "llvm.amdgcn.mbcnt.hi": _mbcnt(True),
    "llvm.amdgcn.ds.bpermute": _bpermute, "llvm.amdgcn.ds.swizzle": _swizzle,
    "llvm.amdgcn.ds.permute": lambda ins, args, kernel: _bpermute(ins, args, kernel, forward=True), "llvm.amdgcn.update.dpp": _update_dpp,
    "llvm.amdgcn.perm": _perm, "llvm.amdgcn.s.setreg": _setreg,
    "llvm.amdgcn.make.buffer.rsrc": _make_rsrc,
    "llvm.amdgcn.raw.ptr.buffer.load": _buffer_load, "llvm.amdgcn.raw.ptr.buffer.store": _buffer_store,
    "llvm.amdgcn.raw.ptr.buffer.load.lds": _to_lds(True, False), "llvm.amdgcn.global.load.lds": _to_lds(False, False),
    "llvm.amdgcn.raw.ptr.buffer.load.async.lds": _to_lds(True, True),
    "llvm.amdgcn.global.load.async.lds": _to_lds(False, True),
    "llvm.amdgcn.asyncmark": _asyncmark, "llvm.amdgcn.wait.asyncmark": _wait_asyncmark,
    "llvm.amdgcn.cvt.pk.fp8.f32": _cvt("emu_cvt_pk_fp8_f32"), "llvm.amdgcn.cvt.pk.bf8.f32": _cvt("emu_cvt_pk_bf8_f32"),
    "llvm.amdgcn.cvt.pk.f32.fp8": _cvt("emu_cvt_pk_f32_fp8"), "llvm.amdgcn.cvt.pk.f32.bf8": _cvt("emu_cvt_pk_f32_bf8"),
    "llvm.amdgcn.cvt.f32.fp8": _cvt("emu_cvt_f32_fp8"), "llvm.amdgcn.cvt.f32.bf8": _cvt("emu_cvt_f32_bf8"),
    "llvm.amdgcn.cvt.pkrtz": _cvt("emu_cvt_pkrtz"),
}
for _kind in ("fadd", "add", "swap", "cmpswap", "smax", "smin", "umax", "umin", "and", "or", "xor", "fmax", "fmin",
              "sub"):
    AMDGPU[f"llvm.amdgcn.raw.ptr.buffer.atomic.{_kind}"] = _buffer_atomic

from .llvm_math import MATH  # noqa: E402 - the generic half of the table
from .gfx950 import GFX950  # noqa: E402 - gfx950's (CDNA4) additions
AMDGPU.update(GFX950)
from .cvt_calls import SCALEF32_CALLS  # noqa: E402 - gfx950's fp8 conversions with a scale
AMDGPU.update(SCALEF32_CALLS)
