"""Constants and indices: `tl.full` and `tl.arange`, the ops that take no operand.

Why a module of its own: an op with arity 0 is the generator's only way to make a value from nothing, so these
two decide which shapes and dtypes exist before any operand is drawn; they share nothing with the ops around them.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from . import odds
from .opdef import OpDef, VType

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them

_SHAPES = ["", "M", "N", "K", "MN", "NM", "MK", "KM", "KN", "NK"]


def _full_attrs(draw, types, caps):
    dtype = draw(st.sampled_from(D.usable(D.COMMON_DTYPES * odds.FULL_COMMON_COPIES + D.MEMORY_DTYPES, caps)))
    value = draw(st.sampled_from([0, 1, 2, -1, 3]))
    return {"dtype": dtype, "axes": draw(st.sampled_from(_SHAPES)), "value": value}


def _full_emit(n, t, attrs, ctx):
    value = attrs["value"]
    literal = f"{float(value)}" if D.is_float(attrs["dtype"]) else str(int(value))
    if not attrs["axes"]:
        return f"tl.full([], {literal}, {D.tl(attrs['dtype'])})"
    shape = ", ".join(ctx.block(a) for a in attrs["axes"])
    return f"tl.full([{shape}], {literal}, {D.tl(attrs['dtype'])})"


OPS.append(OpDef("full", "constant", 0, lambda s, v, c: False,
                 lambda t, a, c: [VType("t", a["dtype"], a["axes"])], _full_emit, draw_attrs=_full_attrs,
                 ref=lambda k, x, t, a, n: k.full(a["value"], a["dtype"], k.shape(a["axes"]))))
OPS.append(OpDef("arange", "constant", 0, lambda s, v, c: False, lambda t, a, c: [VType("t", "i32", a["axis"])],
                 lambda n, t, a, c: f"tl.arange(0, {c.block(a['axis'])})",
                 draw_attrs=lambda draw, types, caps: {"axis": draw(st.sampled_from("MNK"))},
                 ref=lambda k, x, t, a, n: k.arange(k.shape(a["axis"])[0])))
