"""Memory: `tl.load`, `tl.store` and the `tl.atomic_*` family, with the masking and scope rules that keep them
defined.

Why a module of its own: these ops are where undefined behaviour hides (out-of-bounds lanes, races between
programs), so their guards (masks unless every address is in bounds, stores only to outputs that span the grid,
atomics with a scope wide enough) are kept in one place next to the emission they protect.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from . import odds
from .opdef import OpDef, VType, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them


def _load_attrs(draw, types, caps):
    other = draw(st.sampled_from([None, 0, 1, -1]))
    attrs = {"masked": draw(st.sampled_from(odds.menu(odds.LOAD_MASKED))), "other": other,
             "index": draw(st.integers(0, 3))}
    cache = draw(st.sampled_from(odds.menu(odds.LOAD_CACHE)))
    if cache:
        attrs["cache"] = cache
    if odds.chance(draw, odds.LOAD_VOLATILE):
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


OPS.append(OpDef("load", "memory", 1, lambda s, v, c: v.kind == "ptr",
                 lambda t, a, c: [VType("t", t[0].dtype, t[0].axes)], _load_emit, draw_attrs=_load_attrs,
                 ub_guard="unmasked only where every address is in bounds",
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


def _store_attrs(draw, types, caps):
    cache = draw(st.sampled_from(odds.menu(odds.STORE_CACHE)))
    return {"cache": cache} if cache else {}


OPS.append(OpDef("store", "memory", 2, _store_accepts, lambda t, a, c: [], _store_emit, draw_attrs=_store_attrs,
                 valid=lambda t, a, c: set(c.grid) <= set(t[0].axes), ub_guard="outputs span the grid: no races",
                 ref=lambda k, x, t, a, n: k.store(x[1], x[0], t[0].axes, n)))

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


OPS.append(OpDef("atomic", "atomic", 2, _atomic_accepts, lambda t, a, c: [], _atomic_emit, draw_attrs=_atomic_attrs,
                 valid=_atomic_valid,
                 ub_guard="atomics only: concurrent programs may touch the same element",
                 ref=lambda k, x, t, a, n: k.atomic(a["op"], x[1], x[0], t[0].axes, n)))
