"""Kernel shapes (fuzz/shapes.py): each is drawn whole on a target that has what it needs, renders without a
dropped statement, contains the op combination it exists for, and takes its share of a default campaign."""
import itertools
from collections import Counter

import pytest

from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.render import render
from gfxhound.fuzz.shapes import SHAPES

CAPS = assume_all("gfx942")

# what each shape exists for: ops every one of its kernels has
SIGNATURE_OPS = {"attention": {"dot", "dot_acc", "max", "sum", "expand", "maximum"},
                 "epilogue": {"dot_acc", "full"}}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_is_drawn_whole_and_renders(shape):
    incomplete, steps = [], Counter()
    for spec in itertools.islice(spec_stream(CAPS, 5, shapes=(shape,)), 150):
        assert spec.meta["shape"] == shape
        r = render(spec, CAPS)
        compile(r.source, "kernel.py", "exec")
        assert r.features.dropped == 0
        missing = SIGNATURE_OPS[shape] - set(r.features.ops)
        assert not missing, (missing, r.source)
        if spec.meta.get("shape_incomplete"):
            incomplete.append(spec.meta["shape_incomplete"])
        steps.update(spec.meta.get("steps", []) + [spec.meta.get("ending", "")])
    assert len(incomplete) <= 3, Counter(incomplete).most_common(3)  # <= 2%
    if shape == "epilogue":  # every step and ending is drawn
        assert set(steps) >= {"bias", "activation", "softmax", "reduce", "scan", "residual", "downcast", "store",
                              "second_dot"}, steps


def test_attention_carries_softmax_state_through_a_pipelined_loop():
    specs = list(itertools.islice(spec_stream(CAPS, 9, shapes=("attention",)), 60))
    sources = [render(s, CAPS).source for s in specs]
    assert all("tl.exp2(" in src or "tl.exp(" in src for src in sources)
    assert sum("num_stages=" in src for src in sources) >= 5  # the loop names its own stages at times
    assert {s.grid for s in specs} == {"M", "MN"}
    assert any(s.sizes["N"] < s.blocks["N"] for s in specs)  # padded head dimensions
    assert {s.inputs[0]["dtype"] for s in specs} >= {"fp16", "bf16"}


def test_default_campaigns_draw_shapes_in_their_share():
    specs = list(itertools.islice(spec_stream(CAPS, 11), 300))
    shares = Counter(s.meta.get("shape", "random") for s in specs)
    assert 0.2 <= (shares["attention"] + shares["epilogue"]) / 300 <= 0.4, shares
    assert shares["attention"] > 20 and shares["epilogue"] > 20, shares


def test_a_target_without_the_shapes_dot_falls_back_to_random_kernels():
    caps = assume_all("gfx942")
    caps.features = [f for f in caps.features if not f.startswith("dot:")]
    for spec in itertools.islice(spec_stream(caps, 3, shapes=("attention",)), 10):
        assert "shape" not in spec.meta
        assert render(spec, caps).features.dropped == 0
