"""Statement half of the pseudocode compiler: a parsed instruction -> one closure ``run(frame, lane_mask)``.

Why masks: the pseudocode describes one lane; the closures run it for all 64 lanes of a wave at once, SIMT
style. ``if``/``elsif`` split the lane mask, ``break`` and ``return`` retire lanes (``frame.dead``) until the loop
or lambda ends, and every assignment merges its new value into the old with ``np.where`` under the mask. Loops
unroll at run time over uniform bounds. A temporary takes the type of its first assignment (as a C declaration
would); registers record which bits each lane wrote (``frame.w``), so the caller can tell a partial write.
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from . import pcode_lib as L
from .pcode_expr import (FIXED, MACHINE_STATE, PER_LANE, REGISTERS, ROUND32, WIDTH_OVERRIDES, ExprCompiler, _E,
                         extents, is_lane, nodes, uniform)
from .pcode_data import PCODE
from .pcode_parse import (Assign, Break, Call, Concat, Declare, ExprStmt, For, If, Index, Lambda, Mem, Name, Num,
                          PartSel, Return, Slice, Ty, View, parse)


@lru_cache(maxsize=None)
def instruction_body(name: str):
    """The parsed text of an instruction another one calls by name (V_MED3_F32 calls v_max3_f32)."""
    return parse(PCODE[name])


def _result_type(body, width: int) -> Ty:
    """The type an instruction's D0 is first written as (its value when another instruction calls it)."""
    for n in nodes(body):
        if isinstance(n, Assign):
            for t in n.targets:
                if isinstance(t, View) and t.expr == Name("D0"):
                    return t.ty
    return Ty("b", width)


class Compiler(ExprCompiler):
    def __init__(self, mnemonic: str, lanes: bool):
        self.mn, self.lanes = mnemonic, lanes
        self.regs: dict[str, dict] = {}      # register -> {"read", "written", "ty", "min"}
        self.lane_masks: set[str] = {"D1"} if lanes else set()
        self.scopes: list[dict] = [{}]       # name -> ("var", key, ty) | ("array", key, ty, n) | ("lambda", node)
        self.floor = [0]                     # first visible scope: an inlined instruction sees only its own
        self.returns: list[list] = []        # [result key, result type] of each lambda being compiled
        self.ext: dict[str, int] = {}
        self.wext: dict[str, int] = {}
        self.ids = itertools.count()
        self.flags: set[str] = set()
        self.hooks: set[str] = set()         # Calc*Addr helpers the text calls
        self.filled: set[str] = set()        # arrays the text writes before reading (CVT_OFF_TABLE is never filled)

    def compile(self, body):
        self.ext = extents(body)
        # a written register is as wide as its writes: S_BCNT1_I32_B64 writes D0.i32, then tests D0.u64 != 0
        self.wext = extents(tuple(t for n in nodes(body) if isinstance(n, Assign) for t in n.targets))
        for n in nodes(body):                # VCC.u64[laneId] = ...: a wave-wide mask written lane by lane
            if self.lanes and isinstance(n, Assign):
                for t in n.targets:
                    base = getattr(t, "expr", None)
                    base = base.expr if isinstance(base, View) else base
                    if isinstance(t, Index) and isinstance(base, Name) and is_lane(t.index):
                        self.lane_masks.add(base.id)
        return self.block(body)

    # ---- names -----------------------------------------------------------------------------------------------
    def width(self, r: str) -> int:
        if r in FIXED:
            return FIXED[r]
        w = max((self.wext if r in self.wext else self.ext).get(r, 0), self.regs.get(r, {}).get("min", 0),
                WIDTH_OVERRIDES.get(self.mn, {}).get(r, 0)) or 32
        return -(-w // 32) * 32 if r in ROUND32 else w

    def reg(self, r: str, read=False, written=False) -> dict:
        info = self.regs.setdefault(r, {"read": False, "written": False})
        info["read"] |= read and not info["written"]   # a register written before it is read is no input
        info["written"] |= written
        return info

    def bare(self, r: str) -> Ty:
        return self.regs.get(r, {}).get("ty") or Ty("b", self.width(r))

    def lookup(self, name: str):
        for scope in reversed(self.scopes[self.floor[-1]:]):
            if name in scope:
                return scope[name]
        return None

    def new_var(self, name: str, ty: Ty) -> str:
        key = f"{name}@{next(self.ids)}"
        self.scopes[-1][name] = ("var", key, ty)
        return key

    # ---- statements ------------------------------------------------------------------------------------------
    def block(self, stmts):
        fns = [self.st(s) for s in stmts]

        def run(f, mask):
            for fn in fns:
                m = mask & ~f.dead
                if not m.any():
                    return
                f.m = m
                fn(f, m)
        return run

    def st(self, n):
        kind = type(n).__name__
        if isinstance(n, ExprStmt) and isinstance(n.expr, Call) and n.expr.name == "nop":
            return lambda f, mask: None
        method = getattr(self, "st_" + kind, None)
        if method is None:
            self.fail(f"statement {kind}")
        return method(n)

    def st_Assign(self, n: Assign):
        if n.op != "=":
            if len(n.targets) != 1:
                self.fail("chained compound assignment")
            val = self.binop(n.op[:-1], self.ex(n.targets[0]), self.ex(n.value))
        else:
            val = self.ex(n.value)
        writers = [self.assign(t, val) for t in reversed(n.targets)]

        def st(f, mask):
            for w in writers:
                w(f, mask)
        return st

    def st_If(self, n: If):
        branches = [(self.ex(c), self.block(b)) for c, b in n.branches]
        orelse = self.block(n.orelse) if n.orelse else None

        def st(f, mask):
            rest = mask
            for cond, body in branches:
                f.m = rest
                t = L.truth(cond.fn(f)) & rest
                if t.any():
                    body(f, t)
                rest = rest & ~t
                if not rest.any():
                    return
            if orelse:
                orelse(f, rest)
        return st

    def st_For(self, n: For):
        lo, hi = self.ex(n.lo), self.ex(n.hi)
        ent = self.lookup(n.var)
        key, ty = (ent[1], ent[2]) if ent and ent[0] == "var" else (self.new_var(n.var, L.I32), L.I32)
        body = self.block(n.body)

        def st(f, mask):
            dead = f.dead
            for i in range(uniform(lo.fn(f), lo.ty, self.mn), uniform(hi.fn(f), hi.ty, self.mn) + 1):
                f.v[key] = L.const(ty, i)
                body(f, mask)
            f.dead = dead
        return st

    def st_Declare(self, n: Declare):
        if n.name in REGISTERS and n.count is None:          # declare OFFSET0 : 8'U -- the field's width
            info = self.reg(n.name)
            info["ty"], info["min"] = n.ty, n.ty.bits
            return lambda f, mask: None
        if n.name == "S" and n.count == 3:                   # V_MAD_MIX: S[i] are the sources S0, S1, S2
            self.scopes[-1]["S"] = ("regs", ("S0", "S1", "S2"))
            return lambda f, mask: None
        zero = L.const(n.ty, 0)
        if n.count is not None:
            key = f"{n.name}@{next(self.ids)}"
            self.scopes[-1][n.name] = ("array", key, n.ty, n.count)
            return lambda f, mask: f.v.__setitem__(key, [zero] * n.count)
        key = self.new_var(n.name, n.ty)
        return lambda f, mask: f.v.__setitem__(key, zero)

    def st_Lambda(self, n: Lambda):
        self.scopes[-1][n.name] = ("lambda", n)
        return lambda f, mask: None

    def st_Break(self, n: Break):
        def st(f, mask):
            f.dead = f.dead | mask
        return st

    def st_Return(self, n: Return):
        if not self.returns:
            self.fail("return outside a lambda")
        ctx, e = self.returns[-1], self.ex(n.expr)
        ctx[1] = ctx[1] or e.ty
        val, key = self.conv_assign(e, ctx[1]), ctx[0]

        def st(f, mask):
            v, old = val.fn(f), f.v.get(key)
            f.v[key] = v if old is None else np.where(mask, v, old)
            f.dead = f.dead | mask
        return st

    # ---- assignment ------------------------------------------------------------------------------------------
    def conv_assign(self, e: _E, dst: Ty) -> _E:
        """C assignment conversion, except that bit patterns ('b' types) move between ints and floats unchanged."""
        s = e.ty
        if s == dst:
            return e
        if s.is_float and not dst.is_float and dst.kind != "b":
            self.fail(f"a float stored into {dst}")
        if s.is_float != dst.is_float:
            if "b" in (s.kind, dst.kind):
                return _E(dst, lambda f: L.view(e.fn(f), s, dst))
        return _E(dst, lambda f: L.convert(e.fn(f), s, dst))

    def assign(self, t, val: _E):
        view = None
        if isinstance(t, View) and not isinstance(t.expr, (Name, Mem)):
            view, t = t.ty, t.expr                           # tmp[15 : 0].f16 = ...
        if isinstance(t, Concat):
            return self.assign_concat(t, val)
        if isinstance(t, Mem) or isinstance(t, View) and isinstance(t.expr, Mem):
            ty = t.ty if isinstance(t, View) else val.ty
            return self.store((t.expr if isinstance(t, View) else t).addr, self.conv_assign(val, ty))
        if t == Name("ROUND_MODE"):
            def st(f, mask):
                f.round = uniform(val.fn(f), val.ty, self.mn)
            return st
        if isinstance(t, Name):
            return self.write(t.id, None, None, val)
        if isinstance(t, View):                              # D0.u32 = ...: bits [0, 32) of D0
            if t.expr.id in self.lane_masks and t.ty.bits == 1:
                return self.lane_bit(t.expr.id, val)         # { D1.u1, D0.u64 }: D1.u1 is this lane's bit
            return self.write(t.expr.id, Num(0, L.I32), t.ty.bits, self.conv_assign(val, t.ty))
        if not isinstance(t, (Slice, Index, PartSel)):
            self.fail(f"assignment to {type(t).__name__}")
        base = self.alias(t.expr) or t.expr
        base = base.expr if isinstance(base, View) else base
        if not isinstance(base, Name):
            self.fail(f"assignment into {type(base).__name__}")
        ent = self.lookup(base.id)
        if isinstance(t, Index) and ent and ent[0] == "array":
            return self.array_write(ent, t.index, self.conv_assign(val, ent[2]))
        if isinstance(t, Index) and base.id in self.lane_masks and is_lane(t.index):
            return self.lane_bit(base.id, val)
        if view:
            val = self.conv_assign(val, view)
        if isinstance(t, Slice):
            lo, width = self.bounds(t)
        elif isinstance(t, Index):
            lo, width = t.index, 1
        else:
            lo, width = t.base, t.width.value if isinstance(t.width, Num) else self.fail("part select width")
        return self.write(base.id, lo, width, val)

    def write(self, name: str, lo, width, val: _E):
        """Write val into bits [lo, lo+width) of a register or temporary; lo None: the whole of it."""
        ent = self.lookup(name)
        if ent is None and name in REGISTERS:
            if self.lanes and (name not in PER_LANE or name in self.lane_masks):
                self.fail(f"a per-lane write of the whole wave-wide register {name}")
            info = self.reg(name, written=True)
            if lo is None:
                width = FIXED.get(name) or val.ty.bits
                val = self.conv_assign(val, Ty("u", width)) if name in FIXED else val
                info["min"] = max(info.get("min", 0), width)
                lo = Num(0, L.I32)
            return self.region(name, None, self.ex(lo), width, val, track=name)
        if ent is None:
            if "." in name or name in MACHINE_STATE:
                self.fail(f"a write of machine state {name}")
            if lo is None:
                return self.set_var(self.new_var(name, val.ty), val)
            self.new_var(name, Ty("b", max(self.ext.get(name, 0), (lo.value if isinstance(lo, Num) else 0) + width)))
            ent = self.lookup(name)
        if ent[0] != "var":
            self.fail(f"a write to {ent[0]} {name}")
        key, ty = ent[1], ent[2]
        if lo is None:
            return self.set_var(key, self.conv_assign(val, ty))
        if ty.is_float:
            self.fail(f"a bit write into the float temporary {name}")
        return self.region(key, ty.bits, self.ex(lo), width, val, track=None)

    def region(self, key, total, lo_e: _E, width: int, val: _E, track):
        src = val.ty if not val.ty.is_float else Ty("b", val.ty.bits)
        fixed = []   # a constant low bit in a register of at most 64 bits: the masks, worked out at the first run

        def st(f, mask):
            if not fixed:
                tot, o = total or self.width(key), lo_e.const
                fixed.append((tot, int(o), ((1 << width) - 1) << int(o) & ((1 << tot) - 1)) if tot <= 64 and
                             o is not None and 0 <= int(o) < 64 else None)
            if fixed[0] is not None:
                tot, o, m = fixed[0]
                old = f.v.get(key, np.uint64(0))
                b = ((L.extend(L.bits_of(val.fn(f), val.ty), src, tot) << np.uint64(o)) & np.uint64(m))
                f.v[key] = np.where(mask, (old & np.uint64(((1 << tot) - 1) ^ m)) | b, old)
                if track:
                    f.w[track] = np.where(mask, f.w[track] | np.uint64(m), f.w[track])
                return
            tot = total or self.width(key)
            old = f.v.get(key)
            old = L.const(Ty("b", tot), 0) if old is None else old
            o = L.extend(lo_e.fn(f), lo_e.ty, 64)
            o = L.as_wide(o) if tot > 64 else np.asarray(o, np.uint64)
            b = L.extend(L.bits_of(val.fn(f), val.ty), src, tot) & L.ones(width)
            m = (L.ones(width) << o) & L.ones(tot)
            f.v[key] = np.where(mask, (old & (L.ones(tot) ^ m)) | ((b << o) & L.ones(tot)), old)
            if track:
                f.w[track] = np.where(mask, f.w[track] | m, f.w[track])
        return st

    def set_var(self, key: str, val: _E):
        def st(f, mask):
            v, old = val.fn(f), f.v.get(key)
            f.v[key] = v if old is None else np.where(mask, v, old)
        return st

    def lane_bit(self, name: str, val: _E):
        self.reg(name, written=True)

        def st(f, mask):
            bit = np.broadcast_to(np.asarray(L.bits_of(val.fn(f), val.ty)) & np.uint64(1), (64,)) == 1
            on = np.bitwise_or.reduce(np.where(mask & bit, L.LANE_BITS, np.uint64(0)))
            hit = np.bitwise_or.reduce(np.where(mask, L.LANE_BITS, np.uint64(0)))
            f.v[name] = (f.v[name] & ~hit) | on
            f.w[name] = f.w[name] | hit
        return st

    def assign_concat(self, t: Concat, val: _E):
        """{ D1.u1, D0.u64 } = v: the rightmost item takes the low bits."""
        widths = [self.target_width(x) for x in t.items]
        key, total = f"concat@{next(self.ids)}", sum(widths)
        writers, pos = [], 0
        for item, w in reversed(list(zip(t.items, widths))):
            part = _E(Ty("b", w), lambda f, p=pos, w=w: L.extract(f.v[key], p, w))
            writers.append(self.assign(item, part))
            pos += w

        def st(f, mask):
            f.v[key] = L.extend(L.bits_of(val.fn(f), val.ty), Ty("b", val.ty.bits), total)
            for w in writers:
                w(f, mask)
        return st

    def target_width(self, t) -> int:
        if isinstance(t, View):
            return t.ty.bits
        if isinstance(t, Slice):
            return self.bounds(t)[1]
        if isinstance(t, Name) and t.id in REGISTERS:
            return self.width(t.id)
        self.fail("a concatenation target of unknown width")

    def array_write(self, ent, index, val: _E):
        idx = self.ex(index)
        self.filled.add(ent[1])

        def st(f, mask):
            i = uniform(idx.fn(f), idx.ty, self.mn)
            elems = list(f.v[ent[1]])
            elems[i] = np.where(mask, val.fn(f), elems[i])
            f.v[ent[1]] = elems
        return st

    def store(self, addr, val: _E):
        if val.ty.bits % 8 or val.ty.bits > 64:
            self.fail(f"a {val.ty.bits}-bit memory store")
        a = self.ex(addr)
        self.flags.add("store")

        def st(f, mask):
            f.mem.store(np.asarray(L.extend(a.fn(f), a.ty, 64)), val.ty.bits // 8, L.bits_of(val.fn(f), val.ty), mask)
        return st

    def inline_instruction(self, name: str, args) -> _E:
        """Run another instruction's text with S0..S2 bound to ``args`` (temporaries of its own scope, which sees
        none of the caller's) and yield its D0, typed as it first writes D0."""
        body = instruction_body(name)
        ext, k = extents(body), next(self.ids)
        width = max(ext.get("D0", 32), 1)
        rty = _result_type(body, width)
        scope = {f"S{i}": ("var", f"S{i}@{k}", Ty("b", a.ty.bits)) for i, a in enumerate(args)}
        scope["D0"] = ("var", f"D0@{k}", Ty("b", width))
        self.scopes.append(scope)
        self.floor.append(len(self.scopes) - 1)
        saved, self.ext = self.ext, ext
        try:
            run = self.block(body)
        finally:
            self.ext = saved
            self.scopes.pop()
            self.floor.pop()
        zero = L.const(Ty("b", width), 0)

        def fn(f):
            values = [(f"S{i}@{k}", L.bits_of(a.fn(f), a.ty)) for i, a in enumerate(args)] + [(f"D0@{k}", zero)]
            return L.view(self.run_inline(run, f, values, f"D0@{k}"), Ty("b", width), rty)
        return _E(rty, fn)
