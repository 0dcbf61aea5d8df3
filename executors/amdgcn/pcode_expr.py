"""Expression half of the pseudocode compiler: a syntax node -> ``_E`` (static type + closure frame -> value).

Why typed here: C's rules decide every width once -- integer promotion to 32 bits, the usual arithmetic
conversions, a typed view ``x.u32`` as a reinterpretation of bits, ``N'T(x)`` as a sized conversion -- so the
closures only do numpy work (``pcode_lib``). Which names are registers, and how wide, is also decided here.

Calls resolve, in order, to a lambda of the text, a helper of ``pcode_helpers``, a ``Calc*Addr`` memory hook, or
another instruction of the table: ``v_max3_f32(...)`` in V_MED3_F32 runs V_MAX3_F32's own pseudocode with S0..S2
bound to the arguments and yields its D0 -- the guide defines those helpers by its own text.

Adopted from tinygrad's emulator (test/mockgpu/amd/pcode.py), as readings of the text rather than code: a slice
written low-to-high (``S0.u32[0 : 31]``) is a bit reversal; 16-bit operands widen before a multiply
(``SIMM16.i16 * 16'4``); ``<>`` on floats is false for NaN.
"""
from __future__ import annotations

import math
import re

import numpy as np

from . import pcode_lib as L
from .pcode_data import PCODE
from .pcode_helpers import APPROXIMATE, HELPERS
from .pcode_parse import (Binary, Call, Cast, Concat, ExprStmt, Index, Mem, Name, Num, PartSel, Return, Slice,
                          Ternary, Ty, Unary, View)

REGISTERS = frozenset({"S0", "S1", "S2", "D0", "D1", "SCC", "VCC", "EXEC", "VCCZ", "EXECZ", "M0", "PC", "SIMM16",
                       "SIMM32", "OPSEL", "OPSEL_HI", "SRC0", "SRC1", "VDST", "DST", "ADDR", "DATA", "DATA0", "DATA2",
                       "OFFSET", "OFFSET0", "OFFSET1", "SADDR", "VADDR", "VDATA", "SDATA", "SBASE", "SOFFSET",
                       "SRSRC", "RETURN_DATA", "WAVE_MODE.IEEE", "INST.OMOD", "INST.ABS", "INST.NEG"})
PER_LANE = frozenset({"S0", "S1", "S2", "D0", "ADDR", "DATA", "DATA0", "DATA2", "VADDR", "VDATA", "RETURN_DATA"})
ROUND32 = PER_LANE | {"SDATA", "SBASE", "SOFFSET", "SADDR", "SRSRC", "M0"}   # whole 32-bit registers
FIXED = {"SCC": 1, "VCCZ": 1, "EXECZ": 1, "WAVE_MODE.IEEE": 1, "VCC": 64, "EXEC": 64, "PC": 64, "D1": 64,
         "SIMM16": 16, "SIMM32": 32, "ADDR": 64, "SADDR": 64, "SBASE": 64, "VADDR": 64, "SRSRC": 128}
# Widths the text cannot show: V_PK_MOV_B32 picks S0's half with OPSEL, S0.u32[OPSEL[0].i32 * 32 + 31 : ...]
WIDTH_OVERRIDES = {"v_pk_mov_b32": {"S0": 64, "S1": 64}}
MACHINE_STATE = frozenset({"VGPR", "SGPR", "HW_REGISTERS", "TTMP", "LDS", "TBA", "VSKIP"})
CONSTANTS = {"INF": (L.F64, math.inf), "NAN": (L.F64, math.nan), "PI": (L.F64, math.pi),
             "ROUND_NEAREST_EVEN": (L.I32, L.ROUND_NEAREST_EVEN), "ROUND_TOWARD_ZERO": (L.I32, L.ROUND_TOWARD_ZERO)}
DEFERRED = {"UNDERFLOW_F32": L.F32, "OVERFLOW_F32": L.F32, "UNDERFLOW_F64": L.F64, "OVERFLOW_F64": L.F64}
LANE_ID = np.arange(64, dtype=np.uint64)
_CMP = ("==", "!=", "<>", "<", "<=", ">", ">=")


class _E:
    """A compiled expression: static type, closure; const/pow2/zsign are compile-time facts about its syntax."""
    __slots__ = ("ty", "fn", "const", "pow2", "zsign")

    def __init__(self, ty, fn, const=None, pow2=None, zsign=None):
        self.ty, self.fn, self.const, self.pow2, self.zsign = ty, fn, const, pow2, zsign


def nodes(n):
    yield n
    if isinstance(n, tuple):
        for x in n:
            yield from nodes(x)
    elif hasattr(n, "__dataclass_fields__"):
        for k in n.__dataclass_fields__:
            yield from nodes(getattr(n, k))


def extents(body) -> dict[str, int]:
    """name -> highest bit + 1 that a typed view, constant slice or constant bit index of it touches."""
    ext: dict[str, int] = {}
    for n in nodes(body):
        base, hi = n, 0
        if isinstance(n, View) and isinstance(n.expr, Name):
            base, hi = n.expr, n.ty.bits
        elif isinstance(n, (Slice, Index)):
            base = n.expr.expr if isinstance(n.expr, View) else n.expr
            bounds = (n.hi, n.lo) if isinstance(n, Slice) else (n.index,)
            hi = max([b.value + 1 for b in bounds if isinstance(b, Num)] or [0])
        if isinstance(base, Name) and hi:
            ext[base.id] = max(ext.get(base.id, 0), hi)
    return ext


def is_lane(n) -> bool:
    return isinstance(n, Name) and n.id in ("laneId", "laneID")


def constval(n):
    if isinstance(n, Num):
        return n.value
    if isinstance(n, Binary) and n.op in "+-*":
        a, b = constval(n.left), constval(n.right)
        return None if a is None or b is None else {"+": a + b, "-": a - b, "*": a * b}[n.op]
    return None


def uniform(v, ty: Ty, mn: str) -> int:
    a = np.asarray(L.signed(v, ty.bits) if ty.kind == "i" else v)
    if a.ndim and not (a == a.flat[0]).all():
        raise L.NotModelled(mn, "a loop bound or array index that differs between lanes")
    return int(a.flat[0])


class ExprCompiler:
    """Needs, from the statement compiler: mn, lanes, regs, scopes, floor, returns, ext, ids, flags, hooks,
    filled, and block(), lookup(), reg(), bare(), width(), inline_instruction()."""

    def fail(self, what: str):
        raise L.NotModelled(self.mn, what)

    def ex(self, n) -> _E:
        method = getattr(self, "ex_" + type(n).__name__, None)
        if method is None:
            self.fail(f"expression {type(n).__name__}")
        return method(n)

    # ---- names ---------------------------------------------------------------------------------------------
    def ex_Num(self, n: Num):
        c = L.const(n.ty, n.value)
        return _E(n.ty, lambda f: c, const=n.value)

    def ex_Name(self, n: Name):
        name, ent = n.id, self.lookup(n.id)
        if is_lane(n):
            if not self.lanes:
                self.fail("laneId in a scalar instruction")
            return _E(L.I32, lambda f: LANE_ID)
        if ent:
            if ent[0] != "var":
                self.fail(f"{ent[0]} {name} used as a value")
            key = ent[1]
            return _E(ent[2], lambda f: f.v[key])
        if name in CONSTANTS:
            ty, value = CONSTANTS[name]
            return self.ex_Num(Num(value, ty))
        if name in DEFERRED:
            def fn(f):
                raise L.NotModelled(self.mn, f"{name}: the guide does not give its value")
            return _E(DEFERRED[name], fn)
        if name == "ROUND_MODE":
            return _E(L.I32, lambda f: L.const(L.I32, f.round))
        if name in REGISTERS:
            return self.read_reg(name)
        self.fail(f"unknown name {name}")

    def read_reg(self, name: str) -> _E:
        self.reg(name, read=True)
        ty, mn = self.bare(name), self.mn

        def fn(f):
            if name not in f.supplied:  # read after a write: only the bits written in the active lanes exist
                w = np.broadcast_to(f.w[name], np.shape(f.m))
                if np.any((w != L.ones(self.width(name))) & f.m):
                    raise L.NotModelled(mn, f"{name} is read before all of it is written: supply it")
            return f.v[name]
        return _E(ty, fn)

    def alias(self, t):
        """VGPR[laneId][VDST] is this lane's destination, D0; VGPR[laneId][SRC0] its first source, S0."""
        if isinstance(t, Index) and isinstance(t.expr, Index) and t.expr.expr == Name("VGPR"):
            reg = t.index.expr if isinstance(t.index, View) else t.index
            if is_lane(t.expr.index) and reg in (Name("VDST"), Name("SRC0")):
                return Name("D0" if reg.id == "VDST" else "S0")
            self.fail("a VGPR access across lanes")
        return None

    # ---- views, bits, slices -------------------------------------------------------------------------------
    def ex_View(self, n: View):
        if isinstance(n.expr, Mem):
            return self.load(n.expr.addr, n.ty)
        inner, t = self.ex(n.expr), n.ty
        return _E(t, lambda f: L.view(inner.fn(f), inner.ty, t))

    def bits_base(self, n) -> _E:
        """The value a slice or bit index reads: S0.u32[63 : 32] addresses the register S0's bits, not the
        32-bit view (V_PK_MOV_B32 selects S0's high half that way)."""
        if isinstance(n, View) and isinstance(n.expr, Name) and n.expr.id in REGISTERS and not self.lookup(n.expr.id):
            return self.read_reg(n.expr.id)
        return self.ex(self.alias(n) or n)

    def ex_Index(self, n: Index):
        al = self.alias(n)
        if al:
            return self.ex(al)
        if isinstance(n.expr, Name):
            ent = self.lookup(n.expr.id)
            if ent and ent[0] in ("array", "regs"):
                return self.array_read(ent, n.index)
        v, i = self.bits_base(n.expr), self.ex(n.index)
        return _E(L.U1, lambda f: L.extract(L.bits_of(v.fn(f), v.ty), L.extend(i.fn(f), i.ty, 64), 1))

    def array_read(self, ent, index) -> _E:
        idx = self.ex(index)
        if ent[0] == "regs":
            names = ent[1]
            for r in names:
                self.reg(r, read=True)
            ty, get = Ty("b", 32), (lambda f: [f.v[r] for r in names])
        else:
            ty, key = ent[2], ent[1]
            if key not in self.filled:
                self.fail(f"a table whose contents the pseudocode does not give ({key.split('@')[0]})")
            get = (lambda f: f.v[key])

        def fn(f):
            elems = get(f)
            i = np.asarray(L.signed(idx.fn(f), idx.ty.bits) if idx.ty.kind == "i" else idx.fn(f)).astype(np.int64)
            if i.ndim == 0:
                if not 0 <= int(i) < len(elems):
                    raise L.NotModelled(self.mn, "array index out of range")
                return elems[int(i)]
            arr = np.stack(np.broadcast_arrays(*elems, i)[:-1])
            return arr[np.clip(i, 0, len(elems) - 1), np.arange(arr.shape[1])]
        return _E(ty, fn)

    def bounds(self, t: Slice):
        """(lo syntax node, width) of x[hi : lo]: constant bounds, or hi written as 'lo + k'."""
        hi, lo = constval(t.hi), constval(t.lo)
        if hi is not None and lo is not None:
            return Num(min(hi, lo), L.I32), abs(hi - lo) + 1
        if isinstance(t.hi, Binary) and t.hi.op == "+" and t.hi.left == t.lo and constval(t.hi.right) is not None:
            return t.lo, constval(t.hi.right) + 1
        self.fail("a bit slice whose width is not constant")

    def ex_Slice(self, n: Slice):
        inner = self.bits_base(n.expr)
        hi, lo = constval(n.hi), constval(n.lo)
        lo_n, width = self.bounds(n)
        lo_e, t = self.ex(lo_n), Ty("b", width)
        if hi is not None and lo is not None and hi < lo:   # x[0 : 31]: the bits in reverse order
            return _E(t, lambda f: L.bitreverse(L.extract(L.bits_of(inner.fn(f), inner.ty), hi, width), width))
        return _E(t, lambda f: L.extract(L.bits_of(inner.fn(f), inner.ty), L.extend(lo_e.fn(f), lo_e.ty, 64), width))

    def ex_PartSel(self, n: PartSel):
        inner, base, width = self.bits_base(n.expr), self.ex(n.base), constval(n.width)
        if width is None:
            self.fail("a part select of unknown width")
        return _E(Ty("b", width),
                  lambda f: L.extract(L.bits_of(inner.fn(f), inner.ty), L.extend(base.fn(f), base.ty, 64), width))

    def ex_Concat(self, n: Concat):
        items = [self.ex(x) for x in n.items]
        total = sum(e.ty.bits for e in items)

        def fn(f):
            out, pos = L.const(Ty("b", total), 0), 0
            for e in reversed(items):
                b = L.extend(L.bits_of(e.fn(f), e.ty), Ty("b", e.ty.bits), total)
                out = out | L.shift("<<", b, L.const(L.U64, pos), Ty("u", total))
                pos += e.ty.bits
            return out
        return _E(Ty("b", total), fn)

    def ex_Cast(self, n: Cast):
        inner, t = self.ex(n.expr), n.ty
        if inner.ty.is_float and not t.is_float:
            self.fail(f"float to integer cast {t}")
        return _E(t, lambda f: L.cast(inner.fn(f), inner.ty, t), pow2=inner.pow2 if t.is_float else None)

    # ---- memory ------------------------------------------------------------------------------------------
    def load(self, addr, ty: Ty) -> _E:
        if ty.bits % 8 or ty.bits > 64:
            self.fail(f"a {ty.bits}-bit memory access")
        a = self.ex(addr)
        self.flags.add("load")
        return _E(ty, lambda f: L.from_bits(np.asarray(f.mem.load(np.asarray(L.extend(a.fn(f), a.ty, 64)),
                                                                    ty.bits // 8, f.m), np.uint64), ty))

    def ex_Mem(self, n: Mem):
        return self.load(n.addr, Ty("b", 32))   # an untyped MEM[addr] is a dword

    # ---- operators ---------------------------------------------------------------------------------------
    def conv(self, e: _E, t: Ty) -> _E:
        if e.ty == t:
            return e
        if e.ty.is_float and not t.is_float:
            self.fail(f"float {e.ty} used as integer {t}")
        return _E(t, lambda f: L.convert(e.fn(f), e.ty, t), zsign=e.zsign)

    def ex_Unary(self, n: Unary):
        e = self.ex(n.expr)
        if n.op == "!":
            return _E(L.U1, lambda f: (~L.truth(e.fn(f))).astype(np.uint64))
        t = L.promote(e.ty)
        x = self.conv(e, t)
        zsign = n.op if isinstance(n.expr, Num) and e.ty.is_float and n.expr.value == 0 else None
        if n.op == "+":
            return _E(t, x.fn, const=e.const, zsign=zsign)
        if n.op == "-":
            return _E(t, lambda f: L.negate(x.fn(f), t), zsign=zsign,
                      const=None if e.const is None else -e.const)
        if t.is_float:
            self.fail("~ of a float")
        return _E(t, lambda f: x.fn(f) ^ L.ones(t.bits))

    def ex_Binary(self, n: Binary):
        if n.op == "**":
            base, e = self.ex(n.left), self.ex(n.right)
            if base.const != 2.0 or not base.ty.is_float or e.ty.is_float:
                self.fail("** other than 2.0 ** integer")
            t = base.ty
            one = L.const(t, 1.0)
            return _E(t, lambda f: L.ldexp(one, L.signed(L.extend(e.fn(f), e.ty, 64), 64), t), pow2=e)
        return self.binop(n.op, self.ex(n.left), self.ex(n.right))

    def binop(self, op: str, a: _E, b: _E) -> _E:
        if op == "*" and (a.pow2 or b.pow2):    # x * 2.0 ** n: an exact scaling, rounded once (ldexp)
            x, p = (b, a) if a.pow2 else (a, b)
            t = L.common(x.ty, p.ty)
            xv, n = self.conv(x, t), p.pow2
            return _E(t, lambda f: L.ldexp(xv.fn(f), L.signed(L.extend(n.fn(f), n.ty, 64), 64), t))
        if op in ("&&", "||"):
            f2 = np.logical_and if op == "&&" else np.logical_or
            return _E(L.U1, lambda f: f2(L.truth(a.fn(f)), L.truth(b.fn(f))).astype(np.uint64))
        if op in ("<<", ">>"):
            if a.ty.is_float or b.ty.is_float:
                self.fail("shift of a float")
            t = L.promote(a.ty)
            x = self.conv(a, t)
            return _E(t, lambda f: L.shift(op, x.fn(f), L.extend(b.fn(f), b.ty, 64), t))
        t = L.common(a.ty, b.ty)
        x, y = self.conv(a, t), self.conv(b, t)
        if op in _CMP:
            if t.is_float and op in ("==", "!=") and (a.zsign or b.zsign):
                return self.signed_zero_compare(op, x, y, t, a.zsign or b.zsign, y if a.zsign else x)
            return _E(L.U1, lambda f: L.compare(op, x.fn(f), y.fn(f), t))
        if t.is_float and op in "&|^%":
            self.fail(f"{op} of floats")
        if t.is_float and op == "/":
            self.flags.add("approx")
        return _E(t, lambda f: L.arith(op, x.fn(f), y.fn(f), t))

    def signed_zero_compare(self, op, x, y, t, zsign, other):
        """x == -0.0 (a literal zero written with a sign) tests the sign too: V_MAX_F32 tells +0 from -0 so."""
        want = np.uint64(1 if zsign == "-" else 0)

        def fn(f):
            r = (L.compare("==", x.fn(f), y.fn(f), t) == 1) & (L.fields(other.fn(f), t)[0] == want)
            return (r if op == "==" else ~r).astype(np.uint64)
        return _E(L.U1, fn)

    def ex_Ternary(self, n: Ternary):
        c, a, b = self.ex(n.cond), self.ex(n.then), self.ex(n.other)
        t = a.ty if a.ty == b.ty else L.common(a.ty, b.ty)
        x, y = self.conv(a, t), self.conv(b, t)
        return _E(t, lambda f: np.where(L.truth(c.fn(f)), x.fn(f), y.fn(f)))

    # ---- calls -----------------------------------------------------------------------------------------------
    def ex_Call(self, n: Call):
        ent = self.lookup(n.name)
        if re.fullmatch(r"Calc\w*Addr", n.name):
            return self.address(n)
        args = [self.ex(a) for a in n.args]
        if ent and ent[0] == "lambda":
            return self.inline_lambda(ent[1], args)
        if n.name in HELPERS:
            try:
                ty, fn = HELPERS[n.name]([a.ty for a in args])
            except L.LibError as e:
                self.fail(str(e))
            if n.name in APPROXIMATE:
                self.flags.add("approx")
            return _E(ty, lambda f: fn(f, *[a.fn(f) for a in args]))
        if n.name in PCODE and len(args) <= 3:
            return self.inline_instruction(n.name, args)
        self.fail(f"helper {n.name}()")

    def address(self, n: Call) -> _E:
        """CalcGlobalAddr(ADDR.b32, SADDR.b32, OFFSET.b32) -> memory.address(name, *args). An argument that views a
        register is passed whole: a flat address is a 64-bit VGPR pair whatever the guide's ``.b32`` says."""
        self.flags.add("addr")
        self.hooks.add(n.name)
        args = [self.read_reg(a.expr.id) if isinstance(a, View) and a.expr.id in REGISTERS else self.ex(a)
                for a in n.args]
        name = n.name
        return _E(L.U64, lambda f: np.asarray(f.mem.address(name, *[L.bits_of(a.fn(f), a.ty) for a in args]),
                                              np.uint64))

    def run_inline(self, run, f, keys_values, result_key):
        """Run an inlined body under the caller's current lanes, with its own dead-lane mask."""
        for key, value in keys_values:
            f.v[key] = value
        m, dead = f.m, f.dead
        f.dead = np.zeros_like(np.asarray(m))
        run(f, m)
        f.m, f.dead = m, dead
        return f.v.get(result_key)

    def inline_lambda(self, lam, args) -> _E:
        k = next(self.ids)
        keys = [f"{p}@{k}" for p in lam.params]
        self.scopes.append({p: ("var", key, a.ty) for p, key, a in zip(lam.params, keys, args)})
        ret = [f"return@{k}", None]
        self.returns.append(ret)
        body = lam.body
        if body and isinstance(body[-1], ExprStmt):     # lambda(x, y) (x > y ? x - y : y - x): its value
            body = body[:-1] + (Return(body[-1].expr),)
        run = self.block(body)
        self.scopes.pop()
        self.returns.pop()
        if ret[1] is None:
            self.fail(f"lambda {lam.name} returns nothing")
        return _E(ret[1], lambda f: self.run_inline(run, f, [(key, a.fn(f)) for key, a in zip(keys, args)], ret[0]))
