"""The GEMM-with-epilogue shape: a K-loop of tl.dot, then what real GEMM kernels do with the accumulator before
(or instead of) storing it: bias, activation, row softmax, reductions and scans of the dot's result with their
broadcasts back to the tile, a residual, a down-cast, and chains into a second dot (a fused MLP) that programs
split over N combine with atomics (split-K style).

Why these steps: the lowering bugs users report live where a dot's result layout (MFMA/WMMA, MMA) meets another op
class: reductions and scans over it, slices of it broadcast back, a conversion to a dot operand. Each step draws
its own operands, so a kernel is any chain of them.
"""
from __future__ import annotations

from hypothesis import strategies as st

from gfxhound.spec import KernelSpec

from . import dtypes as D
from . import odds
from .frame import draw_launch, draw_size
from .shape_build import Builder, Incomplete

FLOAT_OUT = ("fp32", "fp16", "bf16")


def frame(draw, caps):
    dtypes = [d for d in D.usable(odds.menu(odds.EPILOGUE_DTYPES), caps) if caps.has("dot:" + d)]
    if not dtypes:
        raise Incomplete("no tl.dot on this target")
    dtype = draw(st.sampled_from(dtypes))
    wide = 32 if D.is_fp8(dtype) else 16
    blocks = {a: max(wide if a == "K" else 16, draw(st.sampled_from(odds.menu(odds.BLOCK_SIZES)))) for a in "MNK"}
    for axis, most in odds.TILE_SHRINK.items():
        if max(blocks["M"] * blocks["N"], blocks["M"] * blocks["K"], blocks["K"] * blocks["N"]) > \
                odds.TILE_ELEMENTS_MAX:
            blocks[axis] = max(wide if axis == "K" else 16, min(blocks[axis], most))
    sizes = {a: draw_size(draw, blocks[a]) for a in "MNK"}
    order = lambda: draw(st.sampled_from(odds.menu(odds.OPERAND_ORDER)))  # noqa: E731
    inputs = [{"dtype": dtype, "axes": "MK", "order": order()}, {"dtype": dtype, "axes": "KN", "order": order()}]
    steps = draw(st.lists(st.sampled_from(odds.menu(odds.EPILOGUE_STEPS)), min_size=1,
                          max_size=odds.EPILOGUE_STEPS_MAX))
    ending = draw(st.sampled_from(odds.menu(odds.EPILOGUE_ENDINGS)))
    extra = {"bias": ("N", "fp32"), "residual": ("MN", "fp16"), "second_dot": ("NK", "fp16")}
    roles = {}
    for step in sorted(set(steps + [ending]) & set(extra)):
        axes, fallback = extra[step]
        choice = [d for d in D.usable(["fp16", "bf16", "fp32"], caps)
                  if step != "second_dot" or caps.has("dot:" + d)] or [fallback]
        roles[step] = len(inputs)
        inputs.append({"dtype": draw(st.sampled_from(choice)), "axes": axes, "order": order()})
    grid = draw(st.sampled_from(odds.menu(odds.GRID)))
    launch, pair = draw_launch(draw, caps)
    return KernelSpec(blocks=blocks, sizes=sizes, grid=grid, inputs=inputs, scalars=[], outputs=[], body=[],
                      launch=launch, pair=pair,
                      meta={"shape": "epilogue", "steps": steps, "ending": ending, "roles": roles})


def body(draw, caps, gen):
    b = Builder(gen)
    spec = gen.spec
    meta = spec.meta
    acc_dtype = "i32" if spec.inputs[0]["dtype"] == "i8" else "fp32"
    stages = draw(st.integers(1, 4)) if caps.has("loop:num_stages") and odds.chance(draw, odds.LOOP_STAGES) else None

    def kstep(index, carried):
        a = b.load(b.value("in_0"), masked=draw(st.booleans()))
        w = b.load(b.value("in_1"), masked=draw(st.booleans()))
        if odds.chance(draw, odds.EPILOGUE_LOOP_EXTRA):
            gen.random_op(b.env, b.body)
        return [b.op("dot_acc", a, w, carried[0])]

    x, = b.loop([b.full(acc_dtype, "MN", 0)], kstep, stages=stages)
    x = b.cast(x, "fp32")
    for step in meta["steps"]:
        x = STEPS[step](draw, caps, b, x)
    ENDINGS[meta["ending"]](draw, caps, b, x)


def _input(b, role):
    return b.value(f"in_{b.gen.spec.meta['roles'][role]}")


def _bias(draw, caps, b, x):
    return b.op("add", x, b.expand(b.cast(b.load(_input(b, "bias")), "fp32"), "M", 0))


def _residual(draw, caps, b, x):
    return b.op("add", x, b.cast(b.load(_input(b, "residual")), "fp32"))


def _activation(draw, caps, b, x):
    kind = draw(st.sampled_from(["relu", "silu", "erf", "sigmoid"]))
    if kind == "relu":
        return b.op("maximum", x, b.full("fp32", "", 0))
    if kind == "silu":
        return b.op("mul", x, b.op("sigmoid", x))
    return b.op(kind, x)


def _softmax(draw, caps, b, x):
    """Along one axis: x - max, exp2, / sum (the row softmax of a fused attention-score epilogue)."""
    axis = draw(st.integers(0, 1))
    other = "MN"[axis]
    e = b.op("exp2", b.op("sub", x, b.expand(b.reduce("max", x, axis), other, axis)))
    return b.op("truediv", e, b.expand(b.reduce("sum", e, axis), other, axis))


def _reduce(draw, caps, b, x):
    """A reduction of the dot's result, used both broadcast back (x - mean-like) and stored on its own."""
    axis = draw(st.integers(0, 1))
    kind = draw(st.sampled_from(["sum", "max", "min"]))
    r = b.reduce(kind, x, axis)
    kept = "MN"[1 - axis]
    if set(b.gen.spec.grid) <= {kept}:
        b.store(r)
    else:  # programs along the reduced axis share r's elements: combine them atomically
        op = kind if kind != "sum" and caps.has(f"atomic:{kind}:fp32") else "add"
        b.store(r, mode="atomic", op=op, sem=draw(st.sampled_from(caps.atomic_sems)), scope="gpu")
    return b.op("sub", x, b.expand(r, "MN"[axis], axis))


def _scan(draw, caps, b, x):
    return b.op("scan", x, axis=draw(st.integers(0, 1)), op=draw(st.sampled_from(["cumsum", "cumsum", "cumprod"])),
                promote=False)


def _downcast(draw, caps, b, x):
    return b.cast(b.cast(x, draw(st.sampled_from(D.usable(["fp16", "bf16"], caps) or ["fp32"]))), "fp32")


def _store(draw, caps, b, x):
    b.store(b.cast(x, draw(st.sampled_from(D.usable(FLOAT_OUT, caps)))))


def _second_dot(draw, caps, b, x):
    """x[M,N] as the lhs of a second product with w2[N,K]: a fused MLP. Programs split over N hold partial sums of
    the same [M,K] result: they add them atomically."""
    w2 = b.load(_input(b, "second_dot"))
    y = b.op("dot", b.cast(x, w2.type.dtype), w2)
    if "N" in b.gen.spec.grid:
        b.store(y, mode="atomic", op="add", sem="relaxed", scope="gpu")
    else:
        b.store(y)


STEPS = {"bias": _bias, "residual": _residual, "activation": _activation, "softmax": _softmax, "reduce": _reduce,
         "scan": _scan, "downcast": _downcast}
ENDINGS = {"store": _store, "second_dot": _second_dot}
