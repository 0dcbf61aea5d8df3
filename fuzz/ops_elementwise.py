"""Elementwise arithmetic, math functions, comparisons and `tl.where`: the ops that combine values lane by lane.

Why a module of its own: these are the bulk of the registry and share one typing rule (operands of one dtype,
broadcast against scalars) and one guard style (divisors and shift amounts forced into range in the emission), so
they read best side by side, away from the ops with shapes, memory or matrix units.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from .opdef import OpDef, VType, first_dtypes, is_t, keep_type, pin, wider_axes

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them


def _binary(name, fmt, dtypes, guard="", pinned=False):
    def emit(n, types, attrs, ctx):
        expr = fmt.format(a=n[0], b=n[1], mask=D.DTYPES[types[1].dtype].bits - 1)
        return pin(expr, types[0].dtype) if pinned else expr
    OPS.append(OpDef(name, "elementwise", 2, first_dtypes(dtypes), keep_type, emit, ub_guard=guard,
                     ref=lambda k, x, t, a, n: k.binary(name, x[0], x[1])))


for _name, _fmt in [("add", "{a} + {b}"), ("sub", "{a} - {b}"), ("mul", "{a} * {b}"),
                    ("maximum", "tl.maximum({a}, {b})"), ("minimum", "tl.minimum({a}, {b})")]:
    _binary(_name, _fmt, D.NUMERIC)
_binary("truediv", "{a} / {b}", D.FLOATS)
_binary("floordiv", "{a} // (({b} & 7) + 1)", D.INTS, guard="divisor forced into 1..8", pinned=True)
_binary("mod", "{a} % (({b} & 7) + 1)", D.INTS, guard="divisor forced into 1..8", pinned=True)
_binary("and", "{a} & {b}", D.INTS + ("i1",))
_binary("or", "{a} | {b}", D.INTS + ("i1",))
_binary("xor", "{a} ^ {b}", D.INTS + ("i1",))
_binary("shl", "{a} << ({b} & {mask})", D.INTS, guard="shift masked below the bit width", pinned=True)
_binary("shr", "{a} >> ({b} & {mask})", D.INTS, guard="shift masked below the bit width", pinned=True)

OPS.append(OpDef(
    "fma", "elementwise", 3,
    lambda s, v, c: is_t(v, D.FLOATS) and (s == 0 or (v.dtype == c[0].dtype and v.axes == c[0].axes)),
    keep_type, lambda n, t, a, c: f"tl.fma({n[0]}, {n[1]}, {n[2]})", needs="op:fma",
    ref=lambda k, x, t, a, n: k.fma(x[0], x[1], x[2])))

_UNARY_FLOAT = {
    "exp": "tl.exp({x})", "exp2": "tl.exp2({x})", "log": "tl.log({x})", "log2": "tl.log2({x})",
    "sqrt": "tl.sqrt({x})", "rsqrt": "tl.rsqrt({x})", "sin": "tl.sin({x})", "cos": "tl.cos({x})",
    "sigmoid": "tl.sigmoid({x})", "floor": "tl.floor({x})", "ceil": "tl.ceil({x})", "erf": "tl.erf({x})",
}
for _name, _fmt in _UNARY_FLOAT.items():
    OPS.append(OpDef(_name, "math", 1, lambda s, v, c: is_t(v, D.FLOATS), keep_type,
                     (lambda f: lambda n, t, a, c: f.format(x=n[0]))(_fmt), needs=f"op:{_name}",
                     valid=(lambda name: lambda t, a, c: t[0].dtype == "fp32"
                            or c.caps.has(f"math:{name}:{t[0].dtype}"))(_name),
                     ref=(lambda name: lambda k, x, t, a, n: k.unary(name, x[0]))(_name)))
MATH_OPS = tuple(_UNARY_FLOAT)
OPS.append(OpDef("abs", "math", 1, lambda s, v, c: is_t(v, D.NUMERIC), keep_type,
                 lambda n, t, a, c: f"tl.abs({n[0]})", ref=lambda k, x, t, a, n: k.unary("abs", x[0])))
OPS.append(OpDef("neg", "elementwise", 1, lambda s, v, c: is_t(v, D.NUMERIC), keep_type,
                 lambda n, t, a, c: f"-{n[0]}", ref=lambda k, x, t, a, n: k.unary("neg", x[0])))
OPS.append(OpDef("not", "elementwise", 1, lambda s, v, c: is_t(v, D.INTS + ("i1",)), keep_type,
                 lambda n, t, a, c: f"~{n[0]}", ref=lambda k, x, t, a, n: k.unary("not", x[0])))

# ---- comparisons and selection ----------------------------------------------------------------------------------
_PREDICATES = ["<", "<=", ">", ">=", "==", "!="]


def _bool_result(types, attrs, ctx):
    return [VType("t", "i1", wider_axes(*types) if len(types) > 1 else types[0].axes)]


OPS.append(OpDef("cmp", "compare", 2, first_dtypes(D.NUMERIC), _bool_result,
                 lambda n, t, a, c: f"{n[0]} {a['pred']} {n[1]}",
                 draw_attrs=lambda draw, types, caps: {"pred": draw(st.sampled_from(_PREDICATES))},
                 ref=lambda k, x, t, a, n: k.compare(a["pred"], x[0], x[1])))
OPS.append(OpDef("cmpc", "compare", 1, lambda s, v, c: is_t(v, D.NUMERIC), _bool_result,
                 lambda n, t, a, c: f"{n[0]} {a['pred']} {a['value']}",
                 draw_attrs=lambda draw, types, caps: {"pred": draw(st.sampled_from(_PREDICATES)),
                                                       "value": draw(st.sampled_from([0, 1, 2, 3]))},
                 ref=lambda k, x, t, a, n: k.compare_const(a["pred"], x[0], a["value"])))


def _where_accepts(slot, v, chosen):
    if slot == 0:
        return is_t(v, ("i1",))
    if slot == 1:
        return is_t(v, D.NUMERIC) and (chosen[0].axes in ("", v.axes) or v.axes == "")
    return is_t(v, (chosen[1].dtype,)) and (v.axes == chosen[1].axes or v.axes == "")


def _where_result(types, attrs, ctx):
    axes = max((t.axes for t in types), key=len)
    return [VType("t", types[1].dtype, axes)]


def _where_valid(types, attrs, ctx):
    axes = [t.axes for t in types if t.axes]
    return len(set(axes)) <= 1


OPS.append(OpDef("where", "select", 3, _where_accepts, _where_result,
                 lambda n, t, a, c: f"tl.where({n[0]}, {n[1]}, {n[2]})", valid=_where_valid,
                 ref=lambda k, x, t, a, n: k.where(x[0], x[1], x[2])))
