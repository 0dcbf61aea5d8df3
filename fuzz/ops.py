"""The op registry: every op the generator can emit, declared once.

Each entry holds its typing rule (which operand types each slot accepts, what it produces), its attribute choices
and validity constraints, its Triton emission with the undefined-behaviour guard built in, and the capability it
needs. The generator (fuzz/strategies.py), the renderer (fuzz/render.py), capability probing and coverage all read
this table; none keeps a private list.

`ref(k, xs, types, attrs, node)` is the op's reference semantics for the execution oracle: `k` is the oracle's
evaluation kit (oracle/evaluate.py: torch arithmetic on tracked values plus the simulated memory of one program),
`xs` the operands' values, `node` what the program walker resolved (masking, loop offsets). The registry stays free
of torch imports; the kit supplies the numerics.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from hypothesis import strategies as st

from . import dtypes as D
from .axes import K_VIEWS, SCALE_AXES

REGISTRY_VERSION = 3


class VType(NamedTuple):
    kind: str  # "t" tensor/scalar value, "ptr" input pointer, "out" output pointer
    dtype: str
    axes: str  # "" scalar; letters from M N K, plus a trailing "2" after a join
    mode: str = ""  # outputs: "store" | "atomic"


def T(dtype, axes=""):
    return VType("t", dtype, axes)


def is_t(v, dtypes=None):
    """A tensor or scalar value (of one of `dtypes`); raw MX codes only where a slot names them."""
    if dtypes is None:
        return v.kind == "t" and v.dtype not in D.MX_CODES
    return v.kind == "t" and v.dtype in dtypes


def same_or_scalar(a, b):
    return a.axes == b.axes or a.axes == "" or b.axes == ""


def wider_axes(*types):
    return max((t.axes for t in types), key=len)


@dataclass(frozen=True)
class OpDef:
    name: str
    family: str
    arity: int
    accepts: Callable  # (slot, candidate VType, chosen VTypes so far) -> bool
    result: Callable  # (types, attrs, ctx) -> list[VType]
    emit: Callable  # (names, types, attrs, ctx) -> expression (or statement when result is empty)
    draw_attrs: Callable = field(default=lambda draw, types, caps: {})
    valid: Callable = field(default=lambda types, attrs, ctx: True)
    needs: str = ""  # capability key (see fuzz/capabilities.py); "" = always present
    weight: float = 1.0
    ub_guard: str = ""  # what the emission does to exclude undefined behaviour
    ref: Callable = None  # (kit, operand values, types, attrs, node) -> result value(s); see the module docstring


REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    assert op.name not in REGISTRY, op.name
    REGISTRY[op.name] = op
    return op


def first_dtypes(dtypes):
    return lambda slot, v, chosen: is_t(v, dtypes) if slot == 0 else (
        is_t(v, (chosen[0].dtype,)) and same_or_scalar(chosen[0], v))


def keep_type(types, attrs, ctx):
    return [VType("t", types[0].dtype, wider_axes(*types) if len(types) > 1 else types[0].axes)]


def pin(expr, dtype):
    return f"({expr}).to({D.tl(dtype)})"


# ---- elementwise arithmetic -------------------------------------------------------------------------------------
def _binary(name, fmt, dtypes, guard="", weight=1.0, pinned=False):
    def emit(n, types, attrs, ctx):
        expr = fmt.format(a=n[0], b=n[1], mask=D.DTYPES[types[1].dtype].bits - 1)
        return pin(expr, types[0].dtype) if pinned else expr
    register(OpDef(name, "elementwise", 2, first_dtypes(dtypes), keep_type, emit, ub_guard=guard, weight=weight,
                   ref=lambda k, x, t, a, n: k.binary(name, x[0], x[1])))


for _name, _fmt in [("add", "{a} + {b}"), ("sub", "{a} - {b}"), ("mul", "{a} * {b}"),
                    ("maximum", "tl.maximum({a}, {b})"), ("minimum", "tl.minimum({a}, {b})")]:
    _binary(_name, _fmt, D.NUMERIC, weight=1.5)
_binary("truediv", "{a} / {b}", D.FLOATS)
_binary("floordiv", "{a} // (({b} & 7) + 1)", D.INTS, guard="divisor forced into 1..8", pinned=True)
_binary("mod", "{a} % (({b} & 7) + 1)", D.INTS, guard="divisor forced into 1..8", pinned=True)
_binary("and", "{a} & {b}", D.INTS + ("i1",))
_binary("or", "{a} | {b}", D.INTS + ("i1",))
_binary("xor", "{a} ^ {b}", D.INTS + ("i1",))
_binary("shl", "{a} << ({b} & {mask})", D.INTS, guard="shift masked below the bit width", pinned=True)
_binary("shr", "{a} >> ({b} & {mask})", D.INTS, guard="shift masked below the bit width", pinned=True)

register(OpDef(
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
    register(OpDef(_name, "math", 1, lambda s, v, c: is_t(v, D.FLOATS), keep_type,
                   (lambda f: lambda n, t, a, c: f.format(x=n[0]))(_fmt), needs=f"op:{_name}",
                   valid=(lambda name: lambda t, a, c: t[0].dtype == "fp32" or c.caps.has(f"math:{name}:{t[0].dtype}"))(
                       _name), ref=(lambda name: lambda k, x, t, a, n: k.unary(name, x[0]))(_name)))
MATH_OPS = tuple(_UNARY_FLOAT)
register(OpDef("abs", "math", 1, lambda s, v, c: is_t(v, D.NUMERIC), keep_type,
               lambda n, t, a, c: f"tl.abs({n[0]})", ref=lambda k, x, t, a, n: k.unary("abs", x[0])))
register(OpDef("neg", "elementwise", 1, lambda s, v, c: is_t(v, D.NUMERIC), keep_type,
               lambda n, t, a, c: f"-{n[0]}", ref=lambda k, x, t, a, n: k.unary("neg", x[0])))
register(OpDef("not", "elementwise", 1, lambda s, v, c: is_t(v, D.INTS + ("i1",)), keep_type,
               lambda n, t, a, c: f"~{n[0]}", ref=lambda k, x, t, a, n: k.unary("not", x[0])))

# ---- comparisons and selection ----------------------------------------------------------------------------------
_PREDICATES = ["<", "<=", ">", ">=", "==", "!="]


def _bool_result(types, attrs, ctx):
    return [VType("t", "i1", wider_axes(*types) if len(types) > 1 else types[0].axes)]


register(OpDef("cmp", "compare", 2, first_dtypes(D.NUMERIC), _bool_result,
               lambda n, t, a, c: f"{n[0]} {a['pred']} {n[1]}",
               draw_attrs=lambda draw, types, caps: {"pred": draw(st.sampled_from(_PREDICATES))},
               ref=lambda k, x, t, a, n: k.compare(a["pred"], x[0], x[1])))
register(OpDef("cmpc", "compare", 1, lambda s, v, c: is_t(v, D.NUMERIC), _bool_result,
               lambda n, t, a, c: f"{n[0]} {a['pred']} {a['value']}",
               draw_attrs=lambda draw, types, caps: {"pred": draw(st.sampled_from(_PREDICATES)),
                                                     "value": draw(st.sampled_from([0, 1, 2, 3]))},
               weight=1.5, ref=lambda k, x, t, a, n: k.compare_const(a["pred"], x[0], a["value"])))


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


register(OpDef("where", "select", 3, _where_accepts, _where_result,
               lambda n, t, a, c: f"tl.where({n[0]}, {n[1]}, {n[2]})", valid=_where_valid, weight=1.5,
               ref=lambda k, x, t, a, n: k.where(x[0], x[1], x[2])))


# ---- casts ------------------------------------------------------------------------------------------------------
FP8_MAX = {"fp8e4nv": 448.0, "fp8e5": 57344.0, "fp8e4b8": 240.0, "fp8e5b16": 57344.0}
FP8_PARTNERS = ("fp32", "fp16", "bf16")  # what converts to and from an 8-bit float


def _cast_emit(n, types, attrs, ctx):
    src, dst = types[0].dtype, attrs["dtype"]
    if dst == "i1":
        return f"{n[0]} != 0"
    if D.is_fp8(dst):  # out of range is implementation-defined (saturate, inf or NaN by target): clamp first
        top = FP8_MAX[dst]
        clamped = f"tl.minimum(tl.maximum({n[0]}, -{top}), {top})"
        rounding = attrs.get("rounding")
        kw = f', fp_downcast_rounding="{rounding}"' if rounding else ""
        return f"{clamped}.to({D.tl(dst)}{kw})"
    if D.is_float(src) and D.is_int(dst):
        lo, hi = D.INT_RANGE[dst]
        clean = f"tl.where({n[0]} != {n[0]}, 0.0, {n[0]}.to(tl.float32))"
        return f"tl.minimum(tl.maximum({clean}, {lo}.0), {hi}.0).to({D.tl(dst)})"
    rounding = attrs.get("rounding")
    if rounding:
        return f'{n[0]}.to({D.tl(dst)}, fp_downcast_rounding="{rounding}")'
    return f"{n[0]}.to({D.tl(dst)})"


def _cast_attrs(draw, types, caps):
    src = types[0].dtype
    if D.is_fp8(src):
        choices = D.usable(FP8_PARTNERS, caps)
    else:
        choices = D.usable(D.COMMON_DTYPES * 3 + D.MEMORY_DTYPES + ("i1",), caps)
        if src in FP8_PARTNERS and caps.allows("cast:to-fp8"):
            choices += D.usable(D.FP8, caps) * 2
    dst = draw(st.sampled_from([d for d in choices if d != src] or ["fp32"]))
    attrs = {"dtype": dst}
    if src == "fp32" and _rounding_ok(dst, caps) and draw(st.booleans()):
        attrs["rounding"] = draw(st.sampled_from(["rtne", "rtz"]))
    return attrs


def _rounding_ok(dst, caps):
    return (dst in ("fp16", "bf16") and caps.has("cast:rounding")) or (D.is_fp8(dst) and caps.has("cast:fp8-rtz"))


def _cast_valid(types, attrs, ctx):
    src, dst = types[0].dtype, attrs["dtype"]
    if dst == src or dst not in D.DTYPES or D.DTYPES[dst].kind == "mx":
        return False
    if (D.is_fp8(src) or D.is_fp8(dst)) and not (src in FP8_PARTNERS or dst in FP8_PARTNERS):
        return False
    if D.is_fp8(dst) and not ctx.caps.allows("cast:to-fp8"):
        return False
    return not attrs.get("rounding") or (src == "fp32" and _rounding_ok(dst, ctx.caps))


register(OpDef("cast", "cast", 1, lambda s, v, c: is_t(v), lambda t, a, c: [VType("t", a["dtype"], t[0].axes)],
               _cast_emit, draw_attrs=_cast_attrs, valid=_cast_valid,
               ub_guard="float->int: NaN to 0, clamped to the target range; float->fp8: clamped to the finite "
                        "range", weight=1.5,
               ref=lambda k, x, t, a, n: k.cast(x[0], a["dtype"], a.get("rounding"))))

_BITCAST_PAIRS = {"fp32": "i32", "i32": "fp32", "fp16": "bf16", "bf16": "fp16", "fp64": "i64", "i64": "fp64"}
register(OpDef("bitcast", "cast", 1, lambda s, v, c: is_t(v, tuple(_BITCAST_PAIRS)),
               lambda t, a, c: [VType("t", _BITCAST_PAIRS[t[0].dtype], t[0].axes)],
               lambda n, t, a, c: f"{n[0]}.to({D.tl(_BITCAST_PAIRS[t[0].dtype])}, bitcast=True)", weight=0.5,
               ref=lambda k, x, t, a, n: k.bitcast(x[0], _BITCAST_PAIRS[t[0].dtype])))


# ---- constants and indices --------------------------------------------------------------------------------------
_SHAPES = ["", "M", "N", "K", "MN", "NM", "MK", "KM", "KN", "NK"]


def _full_attrs(draw, types, caps):
    dtype = draw(st.sampled_from(D.usable(D.COMMON_DTYPES * 3 + D.MEMORY_DTYPES, caps)))
    value = draw(st.sampled_from([0, 1, 2, -1, 3]))
    return {"dtype": dtype, "axes": draw(st.sampled_from(_SHAPES)), "value": value}


def _full_emit(n, t, attrs, ctx):
    value = attrs["value"]
    literal = f"{float(value)}" if D.is_float(attrs["dtype"]) else str(int(value))
    if not attrs["axes"]:
        return f"tl.full([], {literal}, {D.tl(attrs['dtype'])})"
    shape = ", ".join(ctx.block(a) for a in attrs["axes"])
    return f"tl.full([{shape}], {literal}, {D.tl(attrs['dtype'])})"


register(OpDef("full", "constant", 0, lambda s, v, c: False,
               lambda t, a, c: [VType("t", a["dtype"], a["axes"])], _full_emit, draw_attrs=_full_attrs, weight=0.7,
               ref=lambda k, x, t, a, n: k.full(a["value"], a["dtype"], k.shape(a["axes"]))))
register(OpDef("arange", "constant", 0, lambda s, v, c: False, lambda t, a, c: [VType("t", "i32", a["axis"])],
               lambda n, t, a, c: f"tl.arange(0, {c.block(a['axis'])})",
               draw_attrs=lambda draw, types, caps: {"axis": draw(st.sampled_from("MNK"))}, weight=0.5,
               ref=lambda k, x, t, a, n: k.arange(k.shape(a["axis"])[0])))


# ---- reductions and scans ---------------------------------------------------------------------------------------
def _acc_dtype(dtype):
    return "i32" if D.is_int(dtype) or dtype == "i1" else "fp32"


def _axis_attrs(draw, types, caps):
    return {"axis": draw(st.integers(0, max(0, len(types[0].axes) - 1))), "promote": draw(st.booleans())}


def _drop_axis(axes, axis):
    return axes[:axis] + axes[axis + 1:]


def _reduce(name, fn, dtypes, result_dtype):
    def result(types, attrs, ctx):
        return [VType("t", result_dtype(types[0].dtype), _drop_axis(types[0].axes, attrs["axis"]))]

    def emit(n, types, attrs, ctx):
        src = types[0].dtype
        out = result_dtype(src)
        if name == "sum" and attrs.get("promote") and out != src:
            return f"tl.sum({n[0]}.to({D.tl(out)}), axis={attrs['axis']})"
        return pin(f"{fn}({n[0]}, axis={attrs['axis']})", out)

    register(OpDef(name, "reduce", 1, lambda s, v, c: is_t(v, dtypes) and len(v.axes) >= 1, result, emit,
                   draw_attrs=_axis_attrs, valid=lambda t, a, c: a["axis"] < len(t[0].axes),
                   ref=lambda k, x, t, a, n: k.reduce(name, x[0], a["axis"], result_dtype(t[0].dtype),
                                                      promote=name == "sum" and bool(a.get("promote")))))


_reduce("sum", "tl.sum", D.NUMERIC, _acc_dtype)
_reduce("max", "tl.max", D.NUMERIC, lambda d: d)
_reduce("min", "tl.min", D.NUMERIC, lambda d: d)
_reduce("argmax", "tl.argmax", D.NUMERIC, lambda d: "i32")
_reduce("argmin", "tl.argmin", D.NUMERIC, lambda d: "i32")


def _scan_emit(n, types, attrs, ctx):
    src, out = types[0].dtype, _acc_dtype(types[0].dtype)
    fn = "tl.cumsum" if attrs.get("op", "cumsum") == "cumsum" else "tl.cumprod"
    if attrs.get("promote") and out != src:
        return f"{fn}({n[0]}.to({D.tl(out)}), axis={attrs['axis']})"
    return pin(f"{fn}({n[0]}, axis={attrs['axis']})", out)


def _scan_attrs(draw, types, caps):
    attrs = _axis_attrs(draw, types, caps)
    attrs["op"] = draw(st.sampled_from(["cumsum", "cumsum", "cumprod"]))
    if len(types[0].axes) and caps.has("scan:reverse") and draw(st.booleans()):
        attrs["reverse"] = True
    return attrs


def _scan_emit_full(n, types, attrs, ctx):
    expr = _scan_emit(n, types, attrs, ctx)
    return expr.replace(f"axis={attrs['axis']})", f"axis={attrs['axis']}, reverse=True)", 1) \
        if attrs.get("reverse") else expr


register(OpDef("scan", "scan", 1, lambda s, v, c: is_t(v, D.NUMERIC) and len(v.axes) >= 1,
               lambda t, a, c: [VType("t", _acc_dtype(t[0].dtype), t[0].axes)], _scan_emit_full,
               draw_attrs=_scan_attrs, valid=lambda t, a, c: a["axis"] < len(t[0].axes), weight=1.5,
               ref=lambda k, x, t, a, n: k.scan(x[0], a["axis"], a.get("op", "cumsum"), _acc_dtype(t[0].dtype),
                                                promote=bool(a.get("promote")), reverse=bool(a.get("reverse")))))


# ---- matrix products --------------------------------------------------------------------------------------------
DOT_DTYPES = ("fp32", "fp16", "bf16", "i8", "fp64") + D.FP8


def _dot_accepts(slot, v, chosen):
    if not is_t(v, DOT_DTYPES) or len(v.axes) != 2 or "2" in v.axes:
        return slot == 2 and False
    if slot == 0:
        return True
    a = chosen[0]
    if slot == 1:
        return v.dtype == a.dtype and v.axes[0] == a.axes[1] and v.axes[1] != a.axes[0]
    return v.axes == a.axes[0] + chosen[1].axes[1]


def _dot_out(types, attrs):
    if types[0].dtype == "i8":
        return "i32"
    if types[0].dtype == "fp64":
        return "fp64"
    return attrs.get("out_dtype", "fp32")


def _dot_acc_accepts(slot, v, chosen):
    if slot < 2:
        return _dot_accepts(slot, v, chosen)
    return is_t(v, ("fp32", "i32", "fp16", "fp64")) and v.axes == chosen[0].axes[0] + chosen[1].axes[1] and (
        (v.dtype == "i32") == (chosen[0].dtype == "i8")) and ((v.dtype == "fp64") == (chosen[0].dtype == "fp64"))


def _dot_attrs(draw, types, caps):
    attrs = {}
    if types[0].dtype == "fp32":
        attrs["input_precision"] = draw(st.sampled_from(caps.input_precisions or ["ieee"]))
    if len(types) == 3:
        if types[2].dtype == "fp16":
            attrs["out_dtype"] = "fp16"
    elif types[0].dtype in ("fp16",) and draw(st.integers(0, 4)) == 0:
        attrs["out_dtype"] = "fp16"
    return attrs


def _dot_emit(n, types, attrs, ctx):
    args = [str(x) for x in n]
    kw = []
    if attrs.get("input_precision"):
        kw.append(f'input_precision="{attrs["input_precision"]}"')
    out = _dot_out(types, attrs)
    if out != "fp32" and types[0].dtype != "i8":  # fp16 outputs and fp64 dots name their type: the default is fp32
        kw.append(f"out_dtype={D.tl(out)}")
    if types[0].dtype == "i8":
        kw.append("out_dtype=tl.int32")
    return f"tl.dot({', '.join(args + kw)})"


def _dot_valid(types, attrs, ctx):
    if len(types) == 3 and types[2].dtype != _dot_out(types, attrs):
        return False
    if attrs.get("out_dtype") == "fp16" and types[0].dtype != "fp16":
        return False
    precision = attrs.get("input_precision")
    if types[0].dtype == "fp32" and precision is not None and precision not in (ctx.caps.input_precisions or ["ieee"]):
        return False
    if not ctx.caps.has("dot:" + types[0].dtype):
        return False
    if D.is_fp8(types[0].dtype) and ctx.blocks[types[0].axes[1]] < 32:
        return False  # Hopper's fp8 MMA takes K >= 32 (Triton rejects less there); the same rule everywhere
    return all(ctx.blocks[a] >= 16 for a in types[0].axes + types[1].axes)


_dot_result = lambda t, a, c: [VType("t", _dot_out(t, a), t[0].axes[0] + t[1].axes[1])]  # noqa: E731
_dot_ref = lambda k, x, t, a, n: k.dot(x[0], x[1], x[2] if len(x) > 2 else None, _dot_out(t, a),  # noqa: E731
                                       a.get("input_precision"))
register(OpDef("dot", "dot", 2, _dot_accepts, _dot_result, _dot_emit, draw_attrs=_dot_attrs, valid=_dot_valid,
               weight=2.0, ref=_dot_ref))
register(OpDef("dot_acc", "dot", 3, _dot_acc_accepts, _dot_result, _dot_emit, draw_attrs=_dot_attrs,
               valid=_dot_valid, weight=2.0, ref=_dot_ref))


# ---- block-scaled (MX) matrix products --------------------------------------------------------------------------
# tl.dot_scaled's operand format follows from the operand's dtype; a side's E8M0 scales are a (rows, K / group)
# tile, along axis S (groups of 32) or T (groups of 16). Four ops: scales on both sides, on one, or on none.
MX_FORMATS = {"e2m1x2": "e2m1", "fp8e4nv": "e4m3", "fp8e5": "e5m2", "bf16": "bf16", "fp16": "fp16"}
SCALED_ROLES = {
    "dot_scaled": ("lhs", "lhs_scale", "rhs", "rhs_scale", "acc"),
    "dot_scaled_lhs": ("lhs", "lhs_scale", "rhs", "acc"),
    "dot_scaled_rhs": ("lhs", "rhs", "rhs_scale", "acc"),
    "dot_scaled_none": ("lhs", "rhs", "acc"),
}


def _mx_operand_axes(dtype, side):
    k = "H" if dtype == "e2m1x2" else "K"
    return "M" + k if side == "lhs" else k + "N"


def _scaled_accepts(roles):
    def accepts(slot, v, chosen):
        role = roles[slot]
        if v.kind != "t":
            return False
        if role in ("lhs", "rhs"):
            return v.dtype in MX_FORMATS and v.axes == _mx_operand_axes(v.dtype, role)
        if role in ("lhs_scale", "rhs_scale"):
            rows = "M" if role == "lhs_scale" else "N"
            group = [c.axes[1] for c, r in zip(chosen, roles) if r == "lhs_scale"]
            return v.dtype == "e8m0" and len(v.axes) == 2 and v.axes[0] == rows and v.axes[1] in SCALE_AXES and (
                not group or v.axes[1] == group[0])
        return v.dtype == "fp32" and v.axes == "MN"
    return accepts


def _scaled_operands(roles, values):
    return dict(zip(roles, values))


def _scaled_valid(roles):
    def valid(types, attrs, ctx):
        ops = _scaled_operands(roles, types)
        formats = [MX_FORMATS[ops[side].dtype] for side in ("lhs", "rhs")]
        if not all(ctx.caps.has("dot_scaled:" + f) for f in formats):
            return False
        groups = {ops[r].axes[1] for r in ("lhs_scale", "rhs_scale") if r in ops}
        group = K_VIEWS[groups.pop()] if groups else 32
        if groups or ctx.blocks["K"] % group or ctx.sizes["K"] % group or ctx.blocks["K"] < 32:
            return False
        if group == 16 and not ctx.caps.has("dot_scaled:group16"):
            return False
        return ctx.blocks["M"] >= 16 and ctx.blocks["N"] >= 16
    return valid


def _scaled_emit(roles):
    def emit(n, types, attrs, ctx):
        ops, kinds = _scaled_operands(roles, n), _scaled_operands(roles, types)
        parts = []
        for side in ("lhs", "rhs"):
            scale = ops.get(side + "_scale")
            parts += [str(ops[side]), str(scale) if scale is not None else "None",
                      f'"{MX_FORMATS[kinds[side].dtype]}"']
        return f"tl.dot_scaled({', '.join(parts)}, {ops['acc']})"
    return emit


def _scaled_ref(roles):
    def ref(k, x, t, a, n):
        ops, kinds = _scaled_operands(roles, x), _scaled_operands(roles, t)
        sides = []
        for side in ("lhs", "rhs"):
            scale = side + "_scale"
            sides.append((ops[side], MX_FORMATS[kinds[side].dtype], ops.get(scale),
                          K_VIEWS[kinds[scale].axes[1]] if scale in kinds else 32))
        return k.dot_scaled(sides[0], sides[1], ops["acc"])
    return ref


for _name, _roles in SCALED_ROLES.items():
    register(OpDef(_name, "dot", len(_roles), _scaled_accepts(_roles), lambda t, a, c: [VType("t", "fp32", "MN")],
                   _scaled_emit(_roles), valid=_scaled_valid(_roles), needs="op:dot_scaled", weight=0.5,
                   ref=_scaled_ref(_roles)))


# ---- shape manipulation -----------------------------------------------------------------------------------------
register(OpDef("trans", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) == 2 and "2" not in v.axes,
               lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[::-1])], lambda n, t, a, c: f"tl.trans({n[0]})",
               ref=lambda k, x, t, a, n: k.permute(x[0], (1, 0))))
register(OpDef("permute", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) == 3,
               lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[1] + t[0].axes[0] + t[0].axes[2])],
               lambda n, t, a, c: f"tl.permute({n[0]}, (1, 0, 2))", needs="op:permute", weight=3.0,
               ref=lambda k, x, t, a, n: k.permute(x[0], (1, 0, 2))))
register(OpDef("reshape", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) == 2 and "2" not in v.axes,
             lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[::-1])],
             lambda n, t, a, c: f"tl.reshape({n[0]}, [{c.block(t[0].axes[1])}, {c.block(t[0].axes[0])}])",
             ref=lambda k, x, t, a, n: k.reshape(x[0], k.shape(t[0].axes[::-1]))))


def _expand_attrs(draw, types, caps):
    axes = types[0].axes
    other = draw(st.sampled_from([a for a in "MNK" if a not in axes]))
    return {"axis": other, "position": draw(st.integers(0, len(axes)))}


def _expand_result(types, attrs, ctx):
    axes = types[0].axes
    pos = attrs["position"]
    return [VType("t", types[0].dtype, axes[:pos] + attrs["axis"] + axes[pos:])]


def _expand_emit(n, types, attrs, ctx):
    new_axes = _expand_result(types, attrs, ctx)[0].axes
    shape = ", ".join(ctx.block(a) for a in new_axes)
    if not types[0].axes:
        return f"{n[0]} + tl.zeros([{shape}], dtype={D.tl(types[0].dtype)})"
    return f"tl.broadcast_to(tl.expand_dims({n[0]}, {attrs['position']}), ({shape}))"


register(OpDef("expand", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) <= 1 and (
    v.axes or not D.is_fp8(v.dtype)), _expand_result, _expand_emit,
               draw_attrs=_expand_attrs,
               valid=lambda t, a, c: a["axis"] not in t[0].axes and a["position"] <= len(t[0].axes), weight=1.5,
               ref=lambda k, x, t, a, n: k.expand(x[0], a["position"], k.shape(n["out_types"][0].axes))))
register(OpDef("join", "shape", 2,
               lambda s, v, c: is_t(v) and 1 <= len(v.axes) <= 2 and "2" not in v.axes and (
                   s == 0 or (v.dtype == c[0].dtype and v.axes == c[0].axes)),
               lambda t, a, c: [VType("t", t[0].dtype, t[0].axes + "2")], lambda n, t, a, c: f"tl.join({n[0]}, {n[1]})",
               needs="op:join", ref=lambda k, x, t, a, n: k.join(x[0], x[1])))
register(OpDef("split", "shape", 1, lambda s, v, c: is_t(v) and v.axes.endswith("2"),
               lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[:-1])] * 2, lambda n, t, a, c: f"tl.split({n[0]})",
               needs="op:split", weight=3.0, ref=lambda k, x, t, a, n: k.split(x[0])))


# ---- pointer selection ------------------------------------------------------------------------------------------
def _ptr_where_accepts(slot, v, chosen):
    if slot == 0:
        return is_t(v, ("i1",)) and v.axes == ""
    if slot == 1:
        return v.kind == "ptr"
    return v == chosen[1]  # same dtype, axes and memory order: the two buffers share stride values


def _ptr_where_emit(n, types, attrs, ctx):
    if attrs.get("form") == "ternary":
        return f"{n[1]} if {n[0]} else {n[2]}"
    return f"tl.where({n[0]}, {n[1]}, {n[2]})"


register(OpDef("ptr_select", "pointer", 3, _ptr_where_accepts, lambda t, a, c: [t[1]], _ptr_where_emit,
               draw_attrs=lambda draw, types, caps: {"form": draw(st.sampled_from(["where", "ternary"]))},
               weight=0.8, ref=lambda k, x, t, a, n: k.select_pointer(x[0], x[1], x[2])))


# ---- debugging ops ----------------------------------------------------------------------------------------------
register(OpDef("device_assert", "debug", 1, lambda s, v, c: is_t(v, ("i1",)), lambda t, a, c: [],
               lambda n, t, a, c: f'tl.device_assert({n[0]} | True, "gfxhound")', needs="op:device_assert",
               weight=0.4, ub_guard="the asserted condition is always true", ref=lambda k, x, t, a, n: None))


# ---- memory -----------------------------------------------------------------------------------------------------
LOAD_CACHE = ["", "", "", ".ca", ".cg", ".cv"]
STORE_CACHE = ["", "", "", ".wb", ".cg", ".cs", ".wt"]


def _load_attrs(draw, types, caps):
    other = draw(st.sampled_from([None, 0, 1, -1]))
    attrs = {"masked": draw(st.sampled_from([True, True, True, False])), "other": other,
             "index": draw(st.integers(0, 3))}
    cache = draw(st.sampled_from(LOAD_CACHE))
    if cache:
        attrs["cache"] = cache
    if draw(st.integers(0, 9)) == 0:
        attrs["volatile"] = True
    return attrs


def _load_kw(attrs):
    kw = ""
    if attrs.get("cache"):
        kw += f', cache_modifier="{attrs["cache"]}"'
    if attrs.get("volatile"):
        kw += ", volatile=True"
    return kw


def _load_emit(n, types, attrs, ctx):
    ptr = n[0]
    axes = types[0].axes
    kw = _load_kw(attrs)
    if not axes:
        return f"tl.load({ptr.base} + {attrs['index']}{kw})"
    offsets = ctx.offsets(axes, ptr.strides)
    if not ctx.load_needs_mask(axes, attrs):
        return f"tl.load({ptr.base} + {offsets}{kw})"
    other = attrs.get("other")
    other_kw = "" if other is None else f", other={float(other) if D.is_float(types[0].dtype) else int(other)}"
    return f"tl.load({ptr.base} + {offsets}, mask={ctx.mask(axes)}{other_kw}{kw})"


register(OpDef("load", "memory", 1, lambda s, v, c: v.kind == "ptr",
               lambda t, a, c: [VType("t", t[0].dtype, t[0].axes)], _load_emit, draw_attrs=_load_attrs,
               ub_guard="unmasked only where every address is in bounds", weight=2.5,
               ref=lambda k, x, t, a, n: k.load(x[0], t[0], a, n)))


def _store_accepts(slot, v, chosen):
    if slot == 0:
        return is_t(v, D.MEMORY_DTYPES + D.FP8)
    return v.kind == "out" and v.mode == "store" and v.dtype == chosen[0].dtype and v.axes == chosen[0].axes


def _store_emit(n, types, attrs, ctx):
    axes = types[0].axes
    out = n[1]
    kw = f', cache_modifier="{attrs["cache"]}"' if attrs.get("cache") else ""
    if not axes:
        return f"tl.store({out.base} + 0, {n[0]}{kw})"
    return f"tl.store({out.base} + {ctx.offsets(axes, out.strides)}, {n[0]}, mask={ctx.mask(axes)}{kw})"


register(OpDef("store", "memory", 2, _store_accepts, lambda t, a, c: [], _store_emit,
               draw_attrs=lambda draw, types, caps: ({"cache": c} if (c := draw(st.sampled_from(STORE_CACHE)))
                                                     else {}),
               valid=lambda t, a, c: set(c.grid) <= set(t[0].axes), ub_guard="outputs span the grid: no races",
               weight=0.0, ref=lambda k, x, t, a, n: k.store(x[1], x[0], t[0].axes, n)))

ATOMIC_KINDS = ("add", "max", "min", "xchg")


ATOMIC_DTYPES = ("fp32", "i32", "fp16", "bf16", "fp64", "i64")


def _atomic_accepts(slot, v, chosen):
    if slot == 0:
        return is_t(v, ATOMIC_DTYPES) and "2" not in v.axes
    return v.kind == "out" and v.mode == "atomic" and v.dtype == chosen[0].dtype and v.axes == chosen[0].axes


def _atomic_attrs(draw, types, caps):
    return {"op": draw(st.sampled_from(ATOMIC_KINDS)), "sem": draw(st.sampled_from(caps.atomic_sems)),
            "scope": draw(st.sampled_from(caps.atomic_scopes))}


def _atomic_emit(n, types, attrs, ctx):
    axes = types[0].axes
    out = n[1]
    where = f"{out.base} + {ctx.offsets(axes, out.strides)}" if axes else f"{out.base} + 0"
    mask = f", mask={ctx.mask(axes)}" if axes else ""
    return f'tl.atomic_{attrs["op"]}({where}, {n[0]}{mask}, sem="{attrs["sem"]}", scope="{attrs["scope"]}")'


def _atomic_valid(types, attrs, ctx):
    return ctx.caps.has(f"atomic:{attrs['op']}:{types[0].dtype}")


register(OpDef("atomic", "atomic", 2, _atomic_accepts, lambda t, a, c: [], _atomic_emit, draw_attrs=_atomic_attrs,
               valid=_atomic_valid,
               ub_guard="atomics only: concurrent programs may touch the same element", weight=0.0,
               ref=lambda k, x, t, a, n: k.atomic(a["op"], x[1], x[0], t[0].axes, n)))


def ops_for(caps) -> list[OpDef]:
    """The ops this Triton/target accepts (capability probing decides)."""
    return [op for op in REGISTRY.values() if not op.needs or caps.has(op.needs)]
