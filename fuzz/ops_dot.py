"""`tl.dot`, with and without an accumulator: the matrix products that reach the MFMA/WMMA lowering.

Why a module of its own: the dot's typing (M x K times K x N, the output dtype each input dtype implies, fp8's
K >= 32) and its capability checks are the densest rules in the registry, and the K-loop template
(fuzz/statements.py) builds around exactly these two ops.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from . import odds
from .opdef import OpDef, VType, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them

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
    elif types[0].dtype in ("fp16",) and odds.chance(draw, odds.DOT_FP16_OUT):
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
OPS.append(OpDef("dot", "dot", 2, _dot_accepts, _dot_result, _dot_emit, draw_attrs=_dot_attrs, valid=_dot_valid,
                 ref=_dot_ref))
OPS.append(OpDef("dot_acc", "dot", 3, _dot_acc_accepts, _dot_result, _dot_emit, draw_attrs=_dot_attrs,
                 valid=_dot_valid, ref=_dot_ref))
