"""Shape manipulation: `tl.trans`, `permute`, `reshape`, `expand_dims` + `broadcast_to`, `join` and `split`.

Why a module of its own: these ops change which axes a value has and nothing else; they are what exercises the
layout conversions between encodings, so they are kept together where their axis rules can be read as one.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from .opdef import OpDef, VType, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them

OPS.append(OpDef("trans", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) == 2 and "2" not in v.axes,
                 lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[::-1])], lambda n, t, a, c: f"tl.trans({n[0]})",
                 ref=lambda k, x, t, a, n: k.permute(x[0], (1, 0))))
OPS.append(OpDef("permute", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) == 3,
                 lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[1] + t[0].axes[0] + t[0].axes[2])],
                 lambda n, t, a, c: f"tl.permute({n[0]}, (1, 0, 2))", needs="op:permute",
                 ref=lambda k, x, t, a, n: k.permute(x[0], (1, 0, 2))))
OPS.append(OpDef("reshape", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) == 2 and "2" not in v.axes,
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


OPS.append(OpDef("expand", "shape", 1, lambda s, v, c: is_t(v) and len(v.axes) <= 1 and (
      v.axes or not D.is_fp8(v.dtype)), _expand_result, _expand_emit,
                 draw_attrs=_expand_attrs,
                 valid=lambda t, a, c: a["axis"] not in t[0].axes and a["position"] <= len(t[0].axes),
                 ref=lambda k, x, t, a, n: k.expand(x[0], a["position"], k.shape(n["out_types"][0].axes))))
OPS.append(OpDef("join", "shape", 2,
                 lambda s, v, c: is_t(v) and 1 <= len(v.axes) <= 2 and "2" not in v.axes and (
                     s == 0 or (v.dtype == c[0].dtype and v.axes == c[0].axes)),
                 lambda t, a, c: [VType("t", t[0].dtype, t[0].axes + "2")],
                 lambda n, t, a, c: f"tl.join({n[0]}, {n[1]})",
                 needs="op:join", ref=lambda k, x, t, a, n: k.join(x[0], x[1])))
OPS.append(OpDef("split", "shape", 1, lambda s, v, c: is_t(v) and v.axes.endswith("2"),
                 lambda t, a, c: [VType("t", t[0].dtype, t[0].axes[:-1])] * 2, lambda n, t, a, c: f"tl.split({n[0]})",
                 needs="op:split", ref=lambda k, x, t, a, n: k.split(x[0])))
