"""The instructions of a generated LLVM IR kernel (fuzz/ir_kernels.py): an SSA builder that draws each value's
operation and operands with Hypothesis, and writes only IR without undefined behaviour. Why a file of its own:
what may be drawn and how each op is kept UB-free (divisors forced non-zero, INT_MIN / -1 steered away, shift
amounts masked below the width, `is_zero_poison`/`is_int_min_poison` off, no nsw/nuw/exact flags) is one concern;
the kernel's frame (arguments, bounds, stores, launch) is ir_kernels.py's.

Cross-lane operations (DPP, ds.bpermute, readlane, LDS) are drawn only where every lane of the workgroup is
active (the top level, after the bounded loads have reconverged), so no lane they read is inactive, and mov.dpp
always writes every lane (full row and bank masks, bound_ctrl: out-of-range sources read 0).
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

SCALARS = ("i1", "i8", "i16", "i32", "i64")
VECTORS = ("<2 x i32>", "<4 x i16>")
WIDTH = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}
VECTOR_PARTS = {"<2 x i32>": (2, "i32"), "<4 x i16>": (4, "i16")}
BSWAP_WIDTHS = ("i16", "i32", "i64")
# DPP controls every gfx9 target has (GFX9's DPP_CTRL enumeration): quad_perm, row_shl/shr/ror 1..15, the mirrors
DPP_CONTROLS = {"quad_perm": (0x00, 0xFF), "row_shl": (0x101, 0x10F), "row_shr": (0x111, 0x11F),
                "row_ror": (0x121, 0x12F), "row_mirror": (0x140, 0x140), "row_half_mirror": (0x141, 0x141)}


@dataclass
class Value:
    name: str
    ty: str
    uniform: bool = False


def element(ty):
    return VECTOR_PARTS[ty][1] if ty in VECTOR_PARTS else ty


def const_of(draw, ty) -> str:
    """A constant of `ty`: the boundary patterns (0, 1, -1, the sign bit alone, the largest signed) or any value."""
    if ty in VECTOR_PARTS:
        n, el = VECTOR_PARTS[ty]
        return "<" + ", ".join(f"{el} {const_of(draw, el)}" for _ in range(n)) + ">"
    if ty == "i1":
        return draw(st.sampled_from(["true", "false"]))
    w = WIDTH[ty]
    pattern = draw(st.integers(0, 5))
    value = [0, 1, -1, -(1 << (w - 1)), (1 << (w - 1)) - 1, None][pattern]
    return str(value if value is not None else draw(st.integers(-(1 << (w - 1)), (1 << (w - 1)) - 1)))


def splat(ty, value) -> str:
    n, el = VECTOR_PARTS[ty]
    return "<" + ", ".join(f"{el} {value}" for _ in range(n)) + ">"


class Builder:
    """Lines of one function body; `pool` holds the values in scope (a branch's own values leave it at the join)."""

    def __init__(self, draw):
        self.draw, self.lines, self.pool, self.declares, self.features = draw, [], [], set(), set()
        self.counter, self.block = 0, "entry"
        self.mov_dpp_odds = (1, 3)  # (k, n): a DPP value is mov.dpp k times in n (ir_kernels.MOV_DPP sets it)

    def fresh(self, stem="v") -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    def emit(self, text):
        self.lines.append("  " + text)

    def label(self, name):
        self.lines.append(f"{name[1:]}:")
        self.block = name

    def add(self, name, ty, uniform=False) -> Value:
        value = Value(name, ty, uniform)
        self.pool.append(value)
        return value

    def declare(self, text):
        self.declares.add(text)

    # ---- operands -----------------------------------------------------------------------------------------------
    def operand(self, ty, window=8) -> Value:
        """A value of `ty` in scope (one of the `window` most recent) or a constant; made from another type's value
        by a cast where none of `ty` exists."""
        of_ty = [v for v in self.pool if v.ty == ty][-window:]
        if of_ty and self.draw(st.integers(0, 5)) > 0:
            return of_ty[self.draw(st.integers(0, len(of_ty) - 1))]
        if self.draw(st.integers(0, 3)) == 0 or not self.pool:
            return Value(const_of(self.draw, ty), ty, True)
        return self.convert(self.pool[-1 - self.draw(st.integers(0, min(window, len(self.pool)) - 1))], ty)

    def convert(self, src: Value, ty) -> Value:
        """`src` as a `ty`: zext/sext/trunc between integers, bitcast between 64-bit shapes, lanes of vectors."""
        if src.ty == ty:
            return src
        if src.ty in VECTOR_PARTS:  # a vector to a scalar: one of its elements (or the whole as i64)
            if ty == "i64":
                return self._cast("bitcast", src, ty)
            n, el = VECTOR_PARTS[src.ty]
            name = self.fresh("e")
            self.emit(f"{name} = extractelement {src.ty} {src.name}, i32 {self.draw(st.integers(0, n - 1))}")
            return self.convert(Value(name, el, src.uniform), ty)
        if ty in VECTOR_PARTS:  # a scalar to a vector: the i64 bitcast, or an element inserted into a constant
            if src.ty == "i64" and self.draw(st.booleans()):
                return self._cast("bitcast", src, ty)
            n, el = VECTOR_PARTS[ty]
            part = self.convert(src, el)
            name = self.fresh("ins")
            self.emit(f"{name} = insertelement {ty} {const_of(self.draw, ty)}, {el} {part.name}, "
                      f"i32 {self.draw(st.integers(0, n - 1))}")
            self.features.add("vector")
            return Value(name, ty, src.uniform)
        self.features.add("cast")
        if WIDTH[src.ty] > WIDTH[ty]:
            return self._cast("trunc", src, ty)
        return self._cast("sext" if src.ty != "i1" and self.draw(st.booleans()) else "zext", src, ty)

    def _cast(self, op, src, ty):
        name = self.fresh("c")
        self.emit(f"{name} = {op} {src.ty} {src.name} to {ty}")
        return Value(name, ty, src.uniform)

    # ---- one value ----------------------------------------------------------------------------------------------
    def value(self, kind, ty) -> Value:
        """One new value of `ty` by an op of `kind` (a knob of ir_kernels.FEATURES), added to the pool."""
        self.features.add(kind)
        made = getattr(self, "_castop" if kind == "cast" else f"_{kind}")(ty)
        if ty in VECTOR_PARTS:
            self.features.add("vector")
        self.features.add(f"type:{ty}")
        return self.add(made.name, ty, made.uniform)

    def _binary(self, op, ty, a, b) -> Value:
        name = self.fresh()
        self.emit(f"{name} = {op} {ty} {a.name}, {b.name}")
        return Value(name, ty, a.uniform and b.uniform)

    def _arith(self, ty):
        a, b = self.operand(ty), self.operand(ty)
        ops = ("xor", "and", "or") if ty == "i1" else ("add", "sub", "mul")
        return self._binary(self.draw(st.sampled_from(ops)), ty, a, b)

    def _bitwise(self, ty):
        return self._binary(self.draw(st.sampled_from(("and", "or", "xor"))), ty, self.operand(ty),
                            self.operand(ty))

    def _shift(self, ty):
        a, b = self.operand(ty), self.operand(ty)
        mask = WIDTH[element(ty)] - 1
        amount = self._binary("and", ty, b, Value(splat(ty, mask) if ty in VECTOR_PARTS else str(mask), ty, True))
        return self._binary(self.draw(st.sampled_from(("shl", "lshr", "ashr"))), ty, a, amount)

    def _div(self, ty):
        """udiv/urem by (b | 1); sdiv/srem by (b | 1), made 1 where a is INT_MIN and it is -1 (scalars only)."""
        a, b = self.operand(ty), self.operand(ty)
        one = splat(ty, 1) if ty in VECTOR_PARTS else "1"
        d = self._binary("or", ty, b, Value(one, ty, True))
        op = self.draw(st.sampled_from(("udiv", "urem") if ty in VECTOR_PARTS else ("udiv", "urem", "sdiv", "srem")))
        if op in ("sdiv", "srem"):
            w = WIDTH[ty]
            is_min, is_m1, both, safe = (self.fresh("g") for _ in range(4))
            self.emit(f"{is_min} = icmp eq {ty} {a.name}, {-(1 << (w - 1))}")
            self.emit(f"{is_m1} = icmp eq {ty} {d.name}, -1")
            self.emit(f"{both} = and i1 {is_min}, {is_m1}")
            self.emit(f"{safe} = select i1 {both}, {ty} 1, {ty} {d.name}")
            d = Value(safe, ty, d.uniform)
        return self._binary(op, ty, a, d)

    def _cmp_select(self, ty):
        cty = self.draw(st.sampled_from([t for t in SCALARS[1:]] + list(VECTORS))) if ty not in VECTOR_PARTS else ty
        a, b = self.operand(cty), self.operand(cty)
        pred = self.draw(st.sampled_from(("eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle")))
        cond = self.fresh("cmp")
        self.emit(f"{cond} = icmp {pred} {cty} {a.name}, {b.name}")
        if cty in VECTOR_PARTS and ty not in VECTOR_PARTS:
            c = Value(cond, f"<{VECTOR_PARTS[cty][0]} x i1>", a.uniform and b.uniform)
            scalar = self.fresh("cmpe")
            self.emit(f"{scalar} = extractelement {c.ty} {cond}, i32 0")
            cond = scalar
        if ty == "i1":
            return Value(cond, ty, a.uniform and b.uniform)
        x, y = self.operand(ty), self.operand(ty)
        cty_text = f"<{VECTOR_PARTS[ty][0]} x i1>" if ty in VECTOR_PARTS else "i1"
        name = self.fresh("sel")
        self.emit(f"{name} = select {cty_text} {cond}, {ty} {x.name}, {ty} {y.name}")
        return Value(name, ty, a.uniform and b.uniform and x.uniform and y.uniform)

    def _castop(self, ty):
        others = [v for v in self.pool if v.ty != ty][-8:]
        if not others:
            return self.operand(ty)
        return self.convert(others[self.draw(st.integers(0, len(others) - 1))], ty)

    def _intrinsic(self, name, ty, args, what):
        suffix = ".v" + ty[1:-1].replace(" x ", "") if ty in VECTOR_PARTS else "." + ty
        arg_types = ", ".join(t for t, _ in args)
        self.declare(f"declare {ty} @llvm.{what}{suffix}({arg_types})")
        out = self.fresh(name)
        self.emit(f"{out} = call {ty} @llvm.{what}{suffix}(" + ", ".join(f"{t} {v}" for t, v in args) + ")")
        return out

    def _bitcount(self, ty):
        a = self.operand(ty)
        what = self.draw(st.sampled_from(("ctpop", "ctlz", "cttz")))
        args = [(ty, a.name)] + ([] if what == "ctpop" else [("i1", "false")])  # zero is defined (is_zero_poison off)
        return Value(self._intrinsic("bc", ty, args, what), ty, a.uniform)

    def _funnel(self, ty):
        a, b, c = self.operand(ty), self.operand(ty), self.operand(ty)  # the amount is taken modulo the width
        what = self.draw(st.sampled_from(("fshl", "fshr")))
        return Value(self._intrinsic("fs", ty, [(ty, a.name), (ty, b.name), (ty, c.name)], what), ty,
                     a.uniform and b.uniform and c.uniform)

    def _bswap(self, ty):
        a = self.operand(ty)
        return Value(self._intrinsic("bs", ty, [(ty, a.name)], "bswap"), ty, a.uniform)

    def _minmax(self, ty):
        a, b = self.operand(ty), self.operand(ty)
        what = self.draw(st.sampled_from(("smin", "smax", "umin", "umax")))
        return Value(self._intrinsic("mm", ty, [(ty, a.name), (ty, b.name)], what), ty, a.uniform and b.uniform)

    def _abs(self, ty):
        a = self.operand(ty)  # is_int_min_poison false: abs(INT_MIN) = INT_MIN
        return Value(self._intrinsic("abs", ty, [(ty, a.name), ("i1", "false")], "abs"), ty, a.uniform)

    def _shuffle(self, ty):
        n, _ = VECTOR_PARTS[ty]
        a, b = self.operand(ty), self.operand(ty)
        mask = ", ".join(f"i32 {self.draw(st.integers(0, 2 * n - 1))}" for _ in range(n))
        name = self.fresh("shuf")
        self.emit(f"{name} = shufflevector {ty} {a.name}, {ty} {b.name}, <{n} x i32> <{mask}>")
        return Value(name, ty, a.uniform and b.uniform)

    # ---- uniform values and cross-lane operations (i32 results) -------------------------------------------------
    def _readfirstlane(self, ty):
        src = self.operand("i32")
        self.declare("declare i32 @llvm.amdgcn.readfirstlane.i32(i32)")
        name = self.fresh("rfl")
        self.emit(f"{name} = call i32 @llvm.amdgcn.readfirstlane.i32(i32 {src.name})")
        return self.convert(Value(name, "i32", True), ty)

    def _readlane(self, ty, lane=None):
        src = self.operand("i32")
        lane = lane or str(self.draw(st.integers(0, 63)))
        self.declare("declare i32 @llvm.amdgcn.readlane.i32(i32, i32)")
        name = self.fresh("rl")
        self.emit(f"{name} = call i32 @llvm.amdgcn.readlane.i32(i32 {src.name}, i32 {lane})")
        return self.convert(Value(name, "i32", True), ty)

    def _dpp(self, ty):
        src = self.operand("i32")
        family = self.draw(st.sampled_from(sorted(DPP_CONTROLS)))
        lo, hi = DPP_CONTROLS[family]
        ctrl = self.draw(st.integers(lo, hi))
        self.features.add(f"dpp:{family}")
        name = self.fresh("dpp")
        if self.draw(st.integers(0, self.mov_dpp_odds[1] - 1)) < self.mov_dpp_odds[0]:  # mov.dpp: its old is
            # undefined, so every lane is written
            self.features.add("dpp:mov")
            self.declare("declare i32 @llvm.amdgcn.mov.dpp.i32(i32, i32, i32, i32, i1)")
            self.emit(f"{name} = call i32 @llvm.amdgcn.mov.dpp.i32(i32 {src.name}, i32 {ctrl}, i32 15, i32 15, "
                      "i1 true)")
        else:
            old = self.operand("i32")
            masks = [self.draw(st.sampled_from((15, 15, 1, 2, 5, 10, 12, 3))) for _ in range(2)]
            bound = self.draw(st.booleans())
            self.features.add(f"dpp:bound_ctrl={int(bound)}")
            self.declare("declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)")
            self.emit(f"{name} = call i32 @llvm.amdgcn.update.dpp.i32(i32 {old.name}, i32 {src.name}, i32 {ctrl}, "
                      f"i32 {masks[0]}, i32 {masks[1]}, i1 {'true' if bound else 'false'})")
        return self.convert(Value(name, "i32"), ty)

    def _bpermute(self, ty):
        src = self.operand("i32")
        if self.draw(st.booleans()):  # another lane's index, times 4
            k = self.draw(st.integers(0, 63))
            lane = self._binary(self.draw(st.sampled_from(("xor", "add", "sub"))), "i32",
                                Value("%tid", "i32"), Value(str(k), "i32", True))
            addr = self._binary("shl", "i32", lane, Value("2", "i32", True))
        else:  # any value: only bits [7:2] pick the lane
            addr = self.operand("i32")
        self.declare("declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)")
        name = self.fresh("bp")
        self.emit(f"{name} = call i32 @llvm.amdgcn.ds.bpermute(i32 {addr.name}, i32 {src.name})")
        return self.convert(Value(name, "i32"), ty)
