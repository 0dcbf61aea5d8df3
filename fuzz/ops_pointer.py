"""Pointer selection: choosing between two input buffers by a scalar condition (`tl.where` or a ternary).

Why a module of its own: it is the only op whose operands and result are pointers rather than values, and the
pointer-analysis passes (buffer ops, `tt.pointer_range`) it exists to exercise have nothing to do with its
neighbours in the registry.
"""
from __future__ import annotations

from hypothesis import strategies as st

from .opdef import OpDef, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them


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


OPS.append(OpDef("ptr_select", "pointer", 3, _ptr_where_accepts, lambda t, a, c: [t[1]], _ptr_where_emit,
                 draw_attrs=lambda draw, types, caps: {"form": draw(st.sampled_from(["where", "ternary"]))},
                 ref=lambda k, x, t, a, n: k.select_pointer(x[0], x[1], x[2])))
