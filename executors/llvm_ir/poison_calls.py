"""Poison through calls: LLVM's generic intrinsics, AMDGPU's, and the `noundef` sink of any call (poison.py).

Why per family: an elementwise intrinsic passes poison element by element; a cross-lane one moves it between lanes
exactly as it moves the data (the lane functions of lanes.py run on the poison masks), so a DPP reduction's
undefined lanes (row_bcast below the broadcast rows, an undef `old` kept) stay where the data goes and trouble only
a lane that reads them; `readlane` of an inactive lane is poison (IntrinsicsAMDGPU.td leaves its value undefined);
an intrinsic that mixes a wave's lanes otherwise (MFMA, ballot, permlane) poisons the whole wave where any active
lane's operand is poison (conservative). Memory intrinsics (buffer loads, stores, atomics, loads to LDS) take every
operand as an address or a stored value: poison there is UB. LangRef, call: "The parameter operand of a call ...,
when the function or invoking call site has a noundef attribute in the corresponding position" is UB when poison.
"""
from __future__ import annotations

import functools

import numpy as np

from .intrinsics import HOST_OUTPUT, _active, _names, _waves
from .poison import Operand, check, flat, per_lane, source, union, with_new
from .poison import value_getter as _value
from .values import lanes_of, signed

_QUIET = {"__triton_assert_fail", "llvm.amdgcn.s.barrier", "llvm.amdgcn.wave.barrier", "llvm.amdgcn.s.sleep",
          "llvm.amdgcn.s.setprio", "llvm.amdgcn.sched.barrier", "llvm.amdgcn.sched.group.barrier",
          "llvm.amdgcn.s.waitcnt", "llvm.amdgcn.iglp.opt", "llvm.assume", "llvm.trap", "llvm.lifetime.start",
          "llvm.lifetime.end", "llvm.amdgcn.asyncmark", "llvm.amdgcn.wait.asyncmark", "llvm.amdgcn.s.setreg",
          "llvm.amdgcn.workitem.id.x", "llvm.amdgcn.workitem.id.y", "llvm.amdgcn.workitem.id.z",
          "llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y", "llvm.amdgcn.workgroup.id.z",
          "llvm.amdgcn.implicitarg.ptr"}
MEMORY = ("llvm.amdgcn.raw.ptr.buffer.", "llvm.amdgcn.global.load.")
_WAVE = ("llvm.amdgcn.mfma.", "llvm.amdgcn.ballot", "llvm.amdgcn.permlane", "llvm.amdgcn.sdot", "llvm.amdgcn.fdot")


@functools.lru_cache(maxsize=4096)
def _base(callee):
    return list(_names(callee))[-1]


def compile_call(ins, kernel):
    callee = ins.extra["callee"]
    base = _base(callee)
    reads = [Operand(o, ins.line) for o in ins.ops]
    noundef = [r for r, flag in zip(reads, ins.extra.get("noundef", ())) if flag]
    inner, always = _family(ins, callee, base, reads, kernel)
    always = always or any(r.const is not None for r in noundef)
    if not noundef:
        return inner, always

    def pfn(ex, out):
        for k, r in enumerate(noundef):
            check(ex, r(ex), f"a `noundef` argument of {callee}", ins)
        return inner(ex, out) if inner is not None else None
    return pfn, always


def _family(ins, callee, base, reads, kernel):
    """(pfn, always) of the call's own semantics."""
    if base in _QUIET or callee.startswith("asm:") or callee.startswith(HOST_OUTPUT):
        return None, False
    consts = any(r.const is not None for r in reads)
    if callee.startswith(MEMORY):
        return _memory(ins, callee, reads), consts
    if base == "llvm.amdgcn.readlane":
        return _readlane(ins, reads, kernel), True
    if base == "llvm.amdgcn.readfirstlane":
        return _readfirstlane(ins, reads, kernel), consts
    if base == "llvm.amdgcn.update.dpp":
        return _update_dpp(ins, reads, kernel)
    if base in ("llvm.amdgcn.ds.bpermute", "llvm.amdgcn.ds.permute", "llvm.amdgcn.ds.swizzle"):
        return _permute(ins, base, reads, kernel), consts
    if callee.startswith(_WAVE) or base.startswith(_WAVE):
        return _whole_wave(ins, reads, kernel), consts
    cvt = next((name for name in _names(callee) if name in _CVT), None) if "cvt" in callee else None  # ends like a type
    if cvt is not None and all(o[0] == "c" for o in ins.ops[_CVT[cvt][0]:]):
        return _cvt(ins, cvt, reads), consts
    if base in ("llvm.ctlz", "llvm.cttz"):
        return _zero_poison(ins, reads)
    if base == "llvm.abs":
        return _abs(ins, reads)
    return _lanewise(ins, reads), consts


# conversions that read or write parts of a 32-bit word: (index of the first selector operand, kind)
_CVT = {"llvm.amdgcn.cvt.pk.fp8.f32": (3, "pack"), "llvm.amdgcn.cvt.pk.bf8.f32": (3, "pack"),
        "llvm.amdgcn.cvt.pk.f32.fp8": (1, "words"), "llvm.amdgcn.cvt.pk.f32.bf8": (1, "words"),
        "llvm.amdgcn.cvt.f32.fp8": (1, "byte"), "llvm.amdgcn.cvt.f32.bf8": (1, "byte"),
        "llvm.amdgcn.cvt.pkrtz": (2, "pair")}


def _bits_of(entry, n):
    """A scalar's poison as a uint64 bit mask per lane (a bool mask: every bit)."""
    m = lanes_of(np.asarray(entry[0]), n)
    return np.where(m, np.uint64(0xFFFFFFFF), np.uint64(0)) if m.dtype == np.bool_ else m.astype(np.uint64)


def _cvt(ins, base, reads):
    """The fp8/bf8 conversions by the bytes they read and write (CDNA3 ISA V_CVT_PK_FP8_F32: word_sel picks the
    half written, the other half keeps `old`; V_CVT_PK_F32_FP8 / V_CVT_F32_FP8 read one word / one byte), so a
    poison byte elsewhere in the word does not reach the result."""
    first, kind = _CVT[base]
    sel = int(ins.ops[first][2] or 0) if kind != "pair" else 0

    def pfn(ex, out):
        entries = [r(ex) for r in reads[:first]]
        if all(e is None for e in entries):
            return None
        src = next(e[1] for e in entries if e is not None)
        if kind == "pair":
            cols = [np.zeros(ex.n, bool) if e is None else flat(e[0], ex.n) for e in entries]
            m = np.stack(cols, 1)
        elif kind == "pack":
            shift = 16 * (sel & 1)  # `a` lands in the half's low byte, `b` in its high byte
            half = np.uint64(0xFFFF << shift)
            m = np.zeros(ex.n, np.uint64) if entries[2] is None else _bits_of(entries[2], ex.n) & ~half
            for e, byte in zip(entries[:2], (0xFF << shift, 0xFF00 << shift)):
                if e is not None:
                    m = m | np.where(flat(e[0], ex.n), np.uint64(byte), np.uint64(0))
            m = m.astype(np.uint32)
        else:
            bits = _bits_of(entries[0], ex.n)
            if kind == "words":
                word = bits >> np.uint64(16 * (sel & 1))
                m = np.stack([(word & np.uint64(0xFF)) != 0, (word & np.uint64(0xFF00)) != 0], 1)
            else:
                m = ((bits >> np.uint64(8 * (sel & 3))) & np.uint64(0xFF)) != 0
        return (m, src) if m.any() else None
    return pfn


def _memory(ins, callee, reads):
    def pfn(ex, out):
        for k, r in enumerate(reads):
            check(ex, r(ex), f"operand {k} of {callee} (an address, offset or value to store)", ins)
    return pfn


def _lanewise(ins, reads):
    """A lane-local intrinsic: element by element where every operand has the result's type, else per lane."""
    tys, ty = ins.extra.get("tys", []), ins.ty
    if ty[0] == "void":
        return None
    same = all(t == ty for t in tys)
    vector = ty[0] == "v"

    def pfn(ex, out):
        entries = [r(ex) for r in reads]
        if all(e is None for e in entries):
            return None
        if same:
            return union(entries)
        return per_lane(entries, ex.n, (1,) if vector else ())
    return pfn


def _zero_poison(ins, reads):
    """LangRef llvm.ctlz / llvm.cttz: "If the first argument is zero and the second argument is true, the result
    is poison"."""
    flag = ins.ops[1]
    if flag[0] == "c" and not flag[2] and len(flag) == 3:
        return _lanewise(ins, reads[:1]), reads[0].const is not None
    what = source(ins, f"`{_base(ins.extra['callee'])}` of zero with is_zero_poison")
    ga, gf = _value(ins.ops[0]), _value(ins.ops[1])

    def pfn(ex, out):
        entry = union([r(ex) for r in reads])
        return with_new(entry, (np.asarray(ga(ex)) == 0) & np.asarray(gf(ex), bool), what)
    return pfn, True


def _abs(ins, reads):
    """LangRef llvm.abs: "If the first argument is INT_MIN, then the result is also INT_MIN if is_int_min_poison
    == 0 and poison otherwise"."""
    flag = ins.ops[1]
    if flag[0] == "c" and not flag[2] and len(flag) == 3:
        return _lanewise(ins, reads[:1]), reads[0].const is not None
    what = source(ins, "`llvm.abs` of INT_MIN with is_int_min_poison")
    ga, gf = _value(ins.ops[0]), _value(ins.ops[1])
    bits = ins.ty[1] if ins.ty[0] == "i" else ins.ty[2][1]

    def pfn(ex, out):
        entry = union([r(ex) for r in reads])
        a = signed(np.asarray(ga(ex))).astype(np.int64)
        return with_new(entry, (a == -(1 << (bits - 1))) & np.asarray(gf(ex), bool), what)
    return pfn, True


def _wave_flat(ex, entries):
    """bool [W, S]: lanes whose operands hold any poison."""
    per = per_lane(entries, ex.n)
    return None if per is None else (_waves(ex, per[0]), per[1])


def _spread(ex, waves, ins):
    m = np.ascontiguousarray(waves).reshape(ex.n)
    return m[:, None] if ins.ty[0] == "v" else m


def _whole_wave(ins, reads, kernel):
    def pfn(ex, out):
        got = _wave_flat(ex, [r(ex) for r in reads])
        if got is None:
            return None
        hit = (got[0] & _active(ex)).any(axis=1, keepdims=True)
        if not hit.any():
            return None
        return _spread(ex, np.broadcast_to(hit, got[0].shape), ins), got[1]
    return pfn


def _readfirstlane(ins, reads, kernel):
    def pfn(ex, out):
        got = _wave_flat(ex, [reads[0](ex)])
        if got is None:
            return None
        first = np.argmax(_active(ex), axis=1)
        hit = got[0][np.arange(got[0].shape[0]), first][:, None]
        return (_spread(ex, np.broadcast_to(hit, got[0].shape), ins), got[1]) if hit.any() else None
    return pfn


def _readlane(ins, reads, kernel):
    """Poison where the lane read is inactive (no value in the IR) or holds poison, or the lane number is."""
    gl = _value(ins.ops[1])
    what = source(ins, "`readlane` of an inactive lane")

    def pfn(ex, out):
        active = _active(ex)
        w, s = active.shape
        lanes = _waves(ex, np.asarray(gl(ex)).astype(np.int64))
        first = lanes[np.arange(w), np.argmax(active, axis=1)]
        idx = (first & 0xFFFFFFFF) % s
        inactive = ~active[np.arange(w), idx] & active.any(axis=1)
        src = _wave_flat(ex, [reads[0](ex)])
        hit = inactive.copy()
        name = what if inactive.any() else None
        if src is not None:
            hit |= src[0][np.arange(w), idx]
            name = name or src[1]
        lane_p = _wave_flat(ex, [reads[1](ex)])
        if lane_p is not None:
            hit |= (lane_p[0] & active).any(axis=1)
            name = name or lane_p[1]
        if not hit.any():
            return None
        return _spread(ex, np.broadcast_to(hit[:, None], (w, s)), ins), name
    return pfn


def _update_dpp(ins, reads, kernel):
    """The DPP move run on the poison masks: a lane gets its source lane's poison, or `old`'s where it keeps old,
    or none where bound_ctrl writes 0; lanes.dpp_unspecified_lanes (row_bcast below the broadcast rows) are
    poison."""
    from . import lanes as L
    consts = [ins.ops[k] for k in (2, 3, 4, 5)]
    if any(c[0] != "c" for c in consts):
        return None, False  # the value closure raises NotModelled
    ctrl, row_mask, bank_mask, bound = (int(c[2] or 0) for c in consts)
    arch = kernel.arch
    try:
        entry, _ = L.dpp_control(ctrl, arch, kernel.wave_size)
    except Exception:  # noqa: BLE001 - the value closure names what is not modelled
        return None, False
    what = source(ins, f"`update.dpp` {entry.name} lanes the ISA leaves undefined")
    s = kernel.wave_size
    # `old` reaches no active lane when every row and bank is written and bound_ctrl writes 0 for a lane with no
    # source (Triton's reductions pass an undef `old` so): then its poison is not read at all
    if (row_mask & 0xF) == 0xF and (bank_mask & 0xF) == 0xF and bound:
        reads = [None, reads[1]]
    pattern = L.dpp_unspecified_lanes(ctrl, row_mask, bank_mask, np.ones((1, s), bool), arch) \
        if entry.unspecified else None

    def pfn(ex, out):
        old, src = (reads[0](ex) if reads[0] is not None else None), reads[1](ex)
        unspecified = np.broadcast_to(pattern, _active(ex).shape) & _active(ex) if pattern is not None else None
        if old is None and src is None and (unspecified is None or not unspecified.any()):
            return None
        shape = _active(ex).shape
        po = np.zeros(shape, np.uint32) if old is None else _waves(ex, lanes_of(
            np.asarray(old[0]), ex.n)).astype(np.uint32)
        ps = np.zeros(shape, np.uint32) if src is None else _waves(ex, lanes_of(
            np.asarray(src[0]), ex.n)).astype(np.uint32)
        moved = L.update_dpp(po, ps, ctrl, row_mask, bank_mask, bool(bound), _active(ex), arch) != 0
        name = (src or old or (None, what))[1]
        if unspecified is not None and unspecified.any():
            moved = moved | unspecified
            name = name if (src or old) else what
        return (np.ascontiguousarray(moved).reshape(ex.n), name) if moved.any() else None
    return pfn, entry.unspecified or any(r is not None and r.const is not None for r in reads)


def _permute(ins, base, reads, kernel):
    """ds_bpermute / ds_permute / ds_swizzle moved on the poison masks; a lane whose own address is poison reads
    poison (bpermute), a poisoned sender address poisons its wave (permute: where it writes is unknown)."""
    from . import lanes as L

    def pfn(ex, out):
        active = _active(ex)
        if base == "llvm.amdgcn.ds.swizzle":
            data = reads[0](ex)
            if data is None:
                return None
            moved = L.ds_swizzle(_waves(ex, lanes_of(np.asarray(data[0]), ex.n)).astype(np.uint32),
                                 int(ins.ops[1][2]), active) != 0
            return (np.ascontiguousarray(moved).reshape(ex.n), data[1]) if moved.any() else None
        pa, data = reads[0](ex), reads[1](ex)
        if pa is None and data is None:
            return None
        addr = _waves(ex, np.asarray(_value(ins.ops[0])(ex)))
        pd = np.zeros(active.shape, np.uint32) if data is None else _waves(
            ex, lanes_of(np.asarray(data[0]), ex.n)).astype(np.uint32)
        fn = L.ds_bpermute if base == "llvm.amdgcn.ds.bpermute" else L.ds_permute
        moved = fn(addr, pd, active) != 0
        if pa is not None:
            own = _waves(ex, lanes_of(np.asarray(pa[0]), ex.n))
            moved = moved | (own if fn is L.ds_bpermute else (own & active).any(axis=1, keepdims=True))
        name = (data or pa)[1]
        return (np.ascontiguousarray(np.broadcast_to(moved, active.shape)).reshape(ex.n), name) \
            if moved.any() else None
    return pfn
