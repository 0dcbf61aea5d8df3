"""Casts and bitcasts: `.to(dtype)` with the guards that keep every conversion defined.

Why a module of its own: casts carry the registry's subtlest undefined-behaviour rules (float->int saturation,
fp8 range clamping, rounding modes only some releases accept) and the fp8 conversion table the oracle checks its
own clamping against (FP8_MAX, oracle/arith.py), so they live apart from plain arithmetic.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from . import odds
from .opdef import OpDef, VType, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them

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
        choices = D.usable(D.COMMON_DTYPES * odds.CAST_COMMON_COPIES + D.MEMORY_DTYPES + ("i1",), caps)
        if src in FP8_PARTNERS and caps.allows("cast:to-fp8"):
            choices += D.usable(D.FP8, caps) * odds.CAST_FP8_COPIES
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


OPS.append(OpDef("cast", "cast", 1, lambda s, v, c: is_t(v), lambda t, a, c: [VType("t", a["dtype"], t[0].axes)],
                 _cast_emit, draw_attrs=_cast_attrs, valid=_cast_valid,
                 ub_guard="float->int: NaN to 0, clamped to the target range; float->fp8: clamped to the finite "
                          "range",
                 ref=lambda k, x, t, a, n: k.cast(x[0], a["dtype"], a.get("rounding"))))

_BITCAST_PAIRS = {"fp32": "i32", "i32": "fp32", "fp16": "bf16", "bf16": "fp16", "fp64": "i64", "i64": "fp64"}
OPS.append(OpDef("bitcast", "cast", 1, lambda s, v, c: is_t(v, tuple(_BITCAST_PAIRS)),
                 lambda t, a, c: [VType("t", _BITCAST_PAIRS[t[0].dtype], t[0].axes)],
                 lambda n, t, a, c: f"{n[0]}.to({D.tl(_BITCAST_PAIRS[t[0].dtype])}, bitcast=True)",
                 ref=lambda k, x, t, a, n: k.bitcast(x[0], _BITCAST_PAIRS[t[0].dtype])))
