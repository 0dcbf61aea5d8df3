"""Reductions and scans: `tl.sum`/`max`/`min`/`argmax`/`argmin` and `tl.cumsum`/`cumprod` along one axis.

Why a module of its own: these are the ops that remove (reductions) or walk (scans) an axis, with one accumulator
rule (integers accumulate in i32, floats in fp32) that both share and no other op needs.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from . import odds
from .opdef import OpDef, VType, is_t, pin

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them


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

    OPS.append(OpDef(name, "reduce", 1, lambda s, v, c: is_t(v, dtypes) and len(v.axes) >= 1, result, emit,
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
    attrs["op"] = draw(st.sampled_from(odds.menu(odds.SCAN_KINDS)))
    if len(types[0].axes) and caps.has("scan:reverse") and draw(st.booleans()):
        attrs["reverse"] = True
    return attrs


def _scan_emit_full(n, types, attrs, ctx):
    expr = _scan_emit(n, types, attrs, ctx)
    return expr.replace(f"axis={attrs['axis']})", f"axis={attrs['axis']}, reverse=True)", 1) \
        if attrs.get("reverse") else expr


OPS.append(OpDef("scan", "scan", 1, lambda s, v, c: is_t(v, D.NUMERIC) and len(v.axes) >= 1,
                 lambda t, a, c: [VType("t", _acc_dtype(t[0].dtype), t[0].axes)], _scan_emit_full,
                 draw_attrs=_scan_attrs, valid=lambda t, a, c: a["axis"] < len(t[0].axes),
                 ref=lambda k, x, t, a, n: k.scan(x[0], a["axis"], a.get("op", "cumsum"), _acc_dtype(t[0].dtype),
                                                  promote=bool(a.get("promote")), reverse=bool(a.get("reverse")))))
