"""The attention forward shape: Q·Kᵀ, an online softmax over key blocks, P·V, as FlashAttention-style Triton
kernels write it (Triton's fused-attention tutorial, vLLM's and aiter's prefill kernels).

Axes: M is the query block, K the key/value sequence (the loop walks it), N the head dimension. Per key block:
    qk = dot(q[M,N], kᵀ[N,K]) (* sm_scale) (+ bias[M,K])
    m_new = maximum(m, max(qk, 1));  p = exp2(qk - m_new[:, None]);  alpha = exp2(m - m_new)
    l = l * alpha + sum(p, 1);  acc = acc * alpha[:, None] + dot(p.to(dtype), v[K,N]);  m = m_new
then out = acc / l[:, None] and, some of the time, the log-sum-exp m + log2(l) (or m + log(l) with exp).
One program per query block holds the whole head (padded heads mask the block's tail).

Why these choices: the running max starts at -2**100 (exact in fp32; real kernels use -inf, which exp2 maps to the
same 0) and sm_scale is dyadic, so the reference stays exact where the GPU is; key columns past the sequence are
loaded as 0 and take part in the softmax (the reference does the same), which keeps every lane defined.
"""
from __future__ import annotations

from hypothesis import strategies as st

from gfxhound.spec import KernelSpec

from . import dtypes as D
from . import odds
from .frame import draw_launch
from .shape_build import Builder, Incomplete

RUNNING_MAX_START = -2.0 ** 100


def frame(draw, caps):
    """The spec before its body: blocks, sizes, q/kᵀ/v (and a bias tile), sm_scale, the launch."""
    dtypes = [d for d in D.usable(odds.menu(odds.ATTENTION_DTYPES), caps) if caps.has("dot:" + d)
              and (not D.is_fp8(d) or caps.allows("cast:to-fp8"))]  # P is cast to the inputs' dtype
    if not dtypes:
        raise Incomplete("no 16-bit or fp8 tl.dot on this target")
    dtype = draw(st.sampled_from(dtypes))
    wide = 32 if D.is_fp8(dtype) else 16  # an fp8 dot reduces over >= 32
    head = draw(st.sampled_from([b for b in odds.menu(odds.ATTENTION_HEAD_BLOCKS) if b >= wide]))
    kv = draw(st.sampled_from([b for b in odds.menu(odds.ATTENTION_KV_BLOCKS) if b >= wide]))
    rows = draw(st.sampled_from(odds.menu(odds.ATTENTION_M_BLOCKS)))
    rows = max(16, min(rows, odds.TILE_ELEMENTS_MAX // max(head, kv)))
    blocks = {"M": rows, "N": head, "K": kv}
    grid = "M"  # one program holds a query block's whole head (a head split over programs is not attention)
    # padded head sizes (80, 96, 112 in real models) mask the block's tail
    heads = head if odds.chance(draw, odds.ATTENTION_HEAD_EXACT) else draw(st.integers(1, head - 1))
    seq = kv * draw(st.integers(0, odds.ATTENTION_KV_BLOCKS_MAX)) + draw(st.integers(1, kv))
    queries = rows * draw(st.integers(0, 2)) + draw(st.integers(1, rows))
    sizes = {"M": queries, "N": heads, "K": seq}
    order = lambda: draw(st.sampled_from(odds.menu(odds.OPERAND_ORDER)))  # noqa: E731
    inputs = [{"dtype": dtype, "axes": "MN", "order": "row"},  # q
              {"dtype": dtype, "axes": "NK", "order": draw(st.sampled_from(["col", "col", "row"]))},  # kᵀ
              {"dtype": dtype, "axes": "KN", "order": order()}]  # v
    if odds.chance(draw, odds.ATTENTION_BIAS):  # an additive bias or mask tile (ALiBi, relative positions)
        inputs.append({"dtype": draw(st.sampled_from(D.usable(["fp32", "fp16", "bf16"], caps))), "axes": "MK",
                       "order": "row"})
    scalars = [{"dtype": "fp32", "value": draw(st.sampled_from([0.125, 0.25, 0.5, 1.0]))}]  # sm_scale
    launch, pair = draw_launch(draw, caps, odds.ATTENTION_WARPS)
    return KernelSpec(blocks=blocks, sizes=sizes, grid=grid, inputs=inputs, scalars=scalars, outputs=[], body=[],
                      launch=launch, pair=pair, meta={"shape": "attention"})


def body(draw, caps, gen):
    b = Builder(gen)
    spec = gen.spec
    dtype = spec.inputs[0]["dtype"]
    q = b.load(b.value("in_0"))
    m0 = b.full("fp32", "M", RUNNING_MAX_START)
    l0 = b.full("fp32", "M", 0)
    acc0 = b.full("fp32", "MN", 0)
    scale = odds.chance(draw, odds.ATTENTION_SCALED)
    exp = draw(st.sampled_from(["exp2", "exp2", "exp"]))
    stages = draw(st.integers(1, 4)) if caps.has("loop:num_stages") and odds.chance(draw, odds.LOOP_STAGES) else None

    def step(index, carried):
        acc, m, l = carried
        kt = b.load(b.value("in_1"), masked=True)
        qk = b.op("dot", q, kt)
        if scale:
            qk = b.op("mul", qk, b.value("sa_0"))
        if len(spec.inputs) > 3:
            qk = b.op("add", qk, b.cast(b.load(b.value("in_3")), "fp32"))
        m_new = b.op("maximum", m, b.reduce("max", qk, 1))
        p = b.op(exp, b.op("sub", qk, b.expand(m_new, "K", 1)))
        alpha = b.op(exp, b.op("sub", m, m_new))
        l_new = b.op("add", b.op("mul", l, alpha), b.reduce("sum", p, 1))
        acc = b.op("mul", acc, b.expand(alpha, "N", 1))
        v = b.load(b.value("in_2"), masked=True)
        acc = b.op("dot_acc", b.cast(p, dtype), v, acc)
        return [acc, m_new, l_new]

    acc, m, l = b.loop([acc0, m0, l0], step, stages=stages)
    out = b.op("truediv", acc, b.expand(l, "N", 1))
    out_dtype = draw(st.sampled_from([d for d in D.usable(["fp32", "fp16", "bf16"], caps)]))
    b.store(b.cast(out, out_dtype))
    if odds.chance(draw, odds.ATTENTION_LSE):  # the log-sum-exp, for a backward pass, in the softmax's base
        b.store(b.op("add", m, b.op("log2" if exp == "exp2" else "log", l)))
