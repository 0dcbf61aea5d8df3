"""Hypothesis strategies for valid random Triton kernels (KernelSpec).

`kernel_specs` draws a kernel's frame (grid, blocks, sizes, input and scalar arguments, block-scaled operands,
launch options, a metamorphic pair), then hands the body to the statement generator (fuzz/statements.py).
"""
from __future__ import annotations

from hypothesis import strategies as st

from gfxhound.spec import KernelSpec

from . import dtypes as D
from . import odds
from .ops_dot_scaled import MX_FORMATS, SCALED_ROLES
from .frame import draw_launch, draw_size
from .shapes import draw_shape, fill_body
from .statements import Generator

GENERATOR_VERSION = 4  # 4: kernel shapes (fuzz/shapes.py)
INPUT_AXES = ["MK", "KN", "MN", "NM", "KM", "NK", "M", "N", "K", ""]


def _block(draw):
    return draw(st.sampled_from(odds.menu(odds.BLOCK_SIZES)))


def mx_operands(draw, caps):
    """The inputs of a block-scaled product: (inputs, op name, scale group), or None where the target has no
    tl.dot_scaled. Operands come first, in the op's order, each with its role; scale values stay near 1 (E8M0
    codes 124..130) so an fp16 partner, which CDNA3 upcasts both sides to, cannot overflow."""
    dtypes = [d for d, fmt in MX_FORMATS.items() if caps.has("dot_scaled:" + fmt)
              and (d == "e2m1x2" or caps.allows_dtype(d)) and (not D.is_fp8(d) or caps.has("fp8:" + d))]
    if not caps.has("op:dot_scaled") or not dtypes:
        return None
    weighted = [d for d in dtypes for _ in range(odds.MX_OPERAND_DTYPES[d])]
    op = draw(st.sampled_from(odds.menu(odds.MX_OPS)))
    # 16-element groups only with both sides scaled: an unscaled side counts as 32, and Triton 3.9 rejects the
    # mix late, in a TTGIR pass ("Operands must have the same scale factor"), which a campaign would keep finding
    group = 16 if op == "dot_scaled" and caps.has("dot_scaled:group16") and odds.chance(draw, odds.MX_SCALE_GROUP16) \
        else 32
    scale_axis = "S" if group == 32 else "T"
    inputs = []
    for role in SCALED_ROLES[op]:
        if role in ("lhs", "rhs"):
            dtype = draw(st.sampled_from(weighted))
            k = "H" if dtype == "e2m1x2" else "K"
            axes = "M" + k if role == "lhs" else k + "N"
            inputs.append({"dtype": dtype, "axes": axes, "order": draw(st.sampled_from(odds.menu(odds.OPERAND_ORDER))),
                           "role": role})
        elif role != "acc":
            rows = "M" if role == "lhs_scale" else "N"
            inputs.append({"dtype": "e8m0", "axes": rows + scale_axis, "order": "row", "role": role})
    return inputs, op, group


@st.composite
def kernel_specs(draw, caps, max_ops=24, shapes=()):
    """A random kernel, or (some of the time, or always when `shapes` names some) a kernel shape (fuzz/shapes.py)
    with random statements after it."""
    if shapes or odds.chance(draw, odds.SHAPE_KERNELS):
        drawn = draw_shape(draw, caps, shapes)
        if drawn is not None:
            spec, fill = drawn
            if fill is None:  # a template shape: a whole kernel file's launch (fuzz/shape_templates.py)
                return spec
            spec.meta["generator"] = GENERATOR_VERSION
            gen = Generator(draw, caps, spec, max_ops)
            fill_body(draw, caps, gen, fill)
            gen.block(gen.env, spec.body, 1, draw(st.integers(0, odds.SHAPE_EXTRA_STATEMENTS)))
            gen.epilogue(spec.body)
            return spec
    grid = draw(st.sampled_from(odds.menu(odds.GRID)))
    blocks = {a: _block(draw) for a in "MNK"}
    if max(blocks["M"] * blocks["N"], blocks["M"] * blocks["K"], blocks["K"] * blocks["N"]) > odds.TILE_ELEMENTS_MAX:
        for axis, most in odds.TILE_SHRINK.items():
            blocks[axis] = min(blocks[axis], most)
    sizes = {a: draw_size(draw, blocks[a]) for a in "MNK"}
    mx = mx_operands(draw, caps) if odds.chance(draw, odds.MX_KERNELS) else None
    matmul = mx is not None or odds.chance(draw, odds.MATMUL_KERNELS)
    inputs = []
    meta = {"generator": GENERATOR_VERSION}
    if mx:
        inputs, op, group = mx
        blocks["K"] = draw(st.sampled_from([b for b in (32, 64, 128) if b >= group]))
        blocks["M"], blocks["N"] = (min(blocks[a], odds.MX_MN_BLOCK_MAX) for a in "MN")
        if draw(st.booleans()):
            sizes["K"] = blocks["K"] * draw(st.integers(*odds.SIZE_EXACT_BLOCKS))
        else:
            sizes["K"] = blocks["K"] * draw(st.integers(*odds.SIZE_RAGGED_BLOCKS)) + \
                group * draw(st.integers(1, blocks["K"] // group))
        meta.update(mx=len(inputs), mx_op=op)
    elif matmul:
        dtype = draw(st.sampled_from([d for d in D.usable(odds.menu(odds.MATMUL_DTYPES), caps)
                                      if caps.has("dot:" + d)] or ["fp16"]))
        inputs += [{"dtype": dtype, "axes": "MK", "order": draw(st.sampled_from(odds.menu(odds.OPERAND_ORDER)))},
                   {"dtype": dtype, "axes": "KN", "order": draw(st.sampled_from(odds.menu(odds.OPERAND_ORDER)))}]
    for _ in range(draw(st.integers(0 if matmul else 1, odds.EXTRA_INPUTS_MAX))):
        axes = draw(st.sampled_from(INPUT_AXES))
        inputs.append({"dtype": draw(st.sampled_from(D.usable(D.MEMORY_DTYPES + D.FP8, caps))), "axes": axes,
                       "order": draw(st.sampled_from(["row", "col"])) if len(axes) == 2 else "row"})
    if matmul and odds.chance(draw, odds.BIAS_TILE):  # a bias/mask tile read inside the K-loop (attention-like)
        inputs.append({"dtype": draw(st.sampled_from(D.usable(["fp32", "fp16", "bf16", "i8"], caps))), "axes": "MN",
                       "order": "row"})
    if inputs and odds.chance(draw, odds.TWIN_BUFFER):  # a twin buffer, so kernels can choose between two pointers
        twin = dict(draw(st.sampled_from(inputs)))
        twin.pop("role", None)
        inputs.append(twin)
    for arg in inputs:
        if odds.chance(draw, odds.HUGE_ARGUMENT):  # a view into a > 2 GB allocation: no tt.pointer_range for it
            arg["huge"] = True
        if D.is_fp8(arg["dtype"]) and "role" not in arg and caps.allows("fp8:specials") and draw(st.booleans()):
            arg["values"] = "specials"  # NaN, infinities, the largest value, the smallest subnormal (oracle/inputs.py)
    scalars = []
    for _ in range(draw(st.integers(*odds.SCALARS))):
        if draw(st.booleans()):
            scalars.append({"dtype": "i32", "value": draw(st.sampled_from([0, 2, 3, 7, 16, 33]))})
        else:
            scalars.append({"dtype": "fp32", "value": draw(st.sampled_from([0.0, 0.5, 1.0, -2.0, 3.25]))})
    launch, pair = draw_launch(draw, caps)
    spec = KernelSpec(blocks=blocks, sizes=sizes, grid=grid, inputs=inputs, scalars=scalars, outputs=[], body=[],
                      launch=launch, pair=pair, meta=meta)
    gen = Generator(draw, caps, spec, max_ops)
    body = spec.body
    if mx:
        gen.gen_for(gen.env, body, 1, kloop=True)
    elif matmul and not odds.chance(draw, odds.KLOOP_FIRST_SKIPPED):
        gen.random_op(gen.env, body) if draw(st.booleans()) else None
        gen.gen_for(gen.env, body, 1, kloop=True)
    gen.block(gen.env, body, 1, draw(st.integers(odds.TOP_STATEMENTS_MIN, max_ops)))
    gen.epilogue(body)
    return spec
