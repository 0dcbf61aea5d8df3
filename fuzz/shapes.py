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
from .shape_templates import TEMPLATES, available, draw_template

STATEMENT_SHAPES = {"attention": shape_attention, "epilogue": shape_epilogue}  # name -> module: frame(), body()
SHAPES = {**STATEMENT_SHAPES, **TEMPLATES}  # every shape name --shape takes


def draw_shape(draw, caps, names):
    """(spec, body builder) for one of `names` (all shapes when empty), or None where the target cannot build it.
    A template shape (fuzz/shape_templates.py) is a whole kernel: (spec, None)."""
    from hypothesis import strategies as st
    usable = lambda n: n not in TEMPLATES or available(n)  # noqa: E731
    menu = [n for n in odds.menu(odds.SHAPES) if (not names or n in names) and usable(n)]
    menu = menu or [n for n in names if usable(n)]
    if not menu:
        return None
    name = draw(st.sampled_from(menu))
    if name in TEMPLATES:
        return draw_template(draw, caps, name), None
    try:
        return STATEMENT_SHAPES[name].frame(draw, caps), STATEMENT_SHAPES[name].body
    except Incomplete:
        return None


def fill_body(draw, caps, gen, body):
    """Place the shape's statements; where one cannot be placed, the kernel keeps what was placed before it."""
    try:
        body(draw, caps, gen)
    except Incomplete as exc:
        gen.spec.meta["shape_incomplete"] = str(exc)[:200]
