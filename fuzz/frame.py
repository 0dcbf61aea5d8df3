"""Drawing the parts of a kernel's frame that random kernels and kernel shapes share: a problem size for a block,
and the launch (num_warps, num_stages, AMD knobs) with its metamorphic pair.

Why a module of its own: fuzz/strategies.py draws random kernels and imports the shapes (fuzz/shapes.py), so the
shapes cannot import these from it; both draw them the same way from here.
"""
from __future__ import annotations

from hypothesis import strategies as st

from gfxhound.spec import Launch

from . import odds
from .pairs import draw_pair


def draw_size(draw, block):
    """A runtime size for an axis of this block: a multiple of it, smaller than it, or ragged past a multiple."""
    mode = draw(st.sampled_from(odds.menu(odds.SIZE_MODES)))
    if mode == "exact":
        return block * draw(st.integers(*odds.SIZE_EXACT_BLOCKS))
    if mode == "small":
        return draw(st.integers(1, block))
    return block * draw(st.integers(*odds.SIZE_RAGGED_BLOCKS)) + draw(st.integers(1, block - 1))


def draw_launch(draw, caps, warps=None):
    """The launch (num_warps, num_stages, AMD compile options and environment knobs) and a metamorphic pair;
    `warps`: a menu of num_warps in place of odds.NUM_WARPS (kernel shapes that need a wider program)."""
    launch = Launch(num_warps=draw(st.sampled_from(odds.menu(warps or odds.NUM_WARPS))),
                    num_stages=draw(st.sampled_from(odds.menu(odds.NUM_STAGES))))
    draw_knobs(draw, caps, launch)
    pair = draw_pair(draw, caps, launch) if odds.chance(draw, odds.PAIR) else None  # a metamorphic pair
    return launch, pair


def draw_knobs(draw, caps, launch):
    """The target's AMD compile options and environment knobs, each some of the time (a user kernel's launches
    draw them too: fuzz/user_kernel.py)."""
    for name, values in sorted(caps.knobs.items()):
        if values and odds.chance(draw, odds.OPTION_KNOB):
            launch.options[name] = draw(st.sampled_from(values))
    for name, values in sorted(caps.env_knobs.items()):
        if values and odds.chance(draw, odds.ENV_KNOB):
            launch.env[name] = draw(st.sampled_from(values))
