"""Kernel shapes: the generator's templates for the kernels people write for AMD GPUs (attention forward, GEMMs
with epilogue chains), drawn in place of a random composition some of the time, or always with `--shape`.

Why templates inside the `kernels` family rather than families of their own: a shape's output is an ordinary
KernelSpec of registry ops (fuzz/shape_build.py), so the renderer, the reference, the oracle, the reducer and the
repro writer handle it unchanged, and a reduced finding sheds the parts of the shape its bug does not need. What a
shape adds is the order and combination of ops: reductions over dot results broadcast back, a dot result becoming a
dot operand, loop-carried softmax state, atomics combining programs' partial results. `spec.meta["shape"]` names
it (the campaign's coverage table counts `shape:NAME`); a shape the target cannot build (no suitable tl.dot) falls
back to the random generator, and a statement it cannot place ends the shape there, the random generator finishing
the kernel (counted as `shape:NAME:incomplete`).
"""
from __future__ import annotations

from . import odds, shape_attention, shape_epilogue
from .shape_build import Incomplete

SHAPES = {"attention": shape_attention, "epilogue": shape_epilogue}  # name -> module with frame() and body()


def draw_shape(draw, caps, names):
    """(spec, body builder) for one of `names` (all shapes when empty), or None where the target cannot build it."""
    from hypothesis import strategies as st
    menu = [n for n in odds.menu(odds.SHAPES) if not names or n in names] or list(names)
    name = draw(st.sampled_from(menu))
    try:
        return SHAPES[name].frame(draw, caps), SHAPES[name].body
    except Incomplete:
        return None


def fill_body(draw, caps, gen, body):
    """Place the shape's statements; where one cannot be placed, the kernel keeps what was placed before it."""
    try:
        body(draw, caps, gen)
    except Incomplete as exc:
        gen.spec.meta["shape_incomplete"] = str(exc)[:200]
