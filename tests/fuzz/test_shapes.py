"""Kernel shapes (fuzz/shapes.py): each is drawn whole on a target that has what it needs, renders without a
dropped statement, contains the op combination it exists for, and takes its share of a default campaign."""
import itertools
from collections import Counter

import pytest

from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.render import render
from gfxhound.fuzz.shapes import SHAPES, STATEMENT_SHAPES

CAPS = assume_all("gfx942")

# what each shape exists for: ops every one of its kernels has
SIGNATURE_OPS = {"attention": {"dot", "dot_acc", "max", "sum", "expand", "maximum", "truediv"},
                 "epilogue": {"dot_acc", "full"}}
# what each epilogue step and ending must have placed (one of each set of alternatives)
STEP_OPS = {"bias": [{"expand"}, {"add"}], "residual": [{"add"}], "softmax": [{"exp2"}, {"truediv"}, {"sum"},
            {"max"}, {"expand"}], "reduce": [{"sub"}, {"expand"}, {"sum", "max", "min"}, {"store", "atomic"}],
            "scan": [{"scan"}], "downcast": [{"cast"}], "activation": [{"maximum", "sigmoid", "erf"}],
            "store": [{"store"}], "second_dot": [{"dot"}, {"store", "atomic"}]}


@pytest.mark.parametrize("shape", sorted(STATEMENT_SHAPES))
def test_each_shape_is_drawn_whole_and_renders(shape):
    incomplete, steps = [], Counter()
    for spec in itertools.islice(spec_stream(CAPS, 5, shapes=(shape,)), 150):
        assert spec.meta["shape"] == shape
        r = render(spec, CAPS)
        compile(r.source, "kernel.py", "exec")
        assert r.features.dropped == 0
        ops = set(r.features.ops)
        missing = SIGNATURE_OPS[shape] - ops
        assert not missing, (missing, r.source)
        if spec.meta.get("shape_incomplete"):
            incomplete.append(spec.meta["shape_incomplete"])
            continue
        for step in spec.meta.get("steps", []) + [spec.meta.get("ending")] * (shape == "epilogue"):
            for alternatives in STEP_OPS[step]:
                assert alternatives & ops, (step, alternatives, r.source)
            steps[step] += 1
        _no_output_stored_twice(spec)
    assert len(incomplete) <= 3, Counter(incomplete).most_common(3)  # <= 2%
    if shape == "epilogue":  # every step and ending is drawn
        assert set(steps) == set(STEP_OPS), steps


def _no_output_stored_twice(spec):
    """Each value is stored to an output of its own: two stores to one address from different layouts race."""
    lines = [line for line in render(spec, CAPS).source.splitlines() if "tl.store(out_" in line]
    targets = Counter(line.split("tl.store(")[1].split(" ")[0] for line in lines)
    assert all(n == 1 for n in targets.values()), lines


def test_attention_carries_softmax_state_through_a_pipelined_loop():
    specs = list(itertools.islice(spec_stream(CAPS, 9, shapes=("attention",)), 60))
    stages = 0
    for spec in specs:
        src = render(spec, CAPS).source
        lines = [line.strip() for line in src.splitlines()]
        defs = dict(line.split(" = ", 1) for line in lines if " = " in line and not line.startswith("for "))
        loop = next(i for i, line in enumerate(lines) if line.startswith("for "))
        inits = [line for line in lines[loop - 3:loop]]  # acc, m, l enter the loop in this order
        assert [defs[i.split(" = ")[1]].split("(")[0] for i in inits] == ["tl.full"] * 3, inits
        body = lines[loop + 1:]
        yields = [line for line in body if line.startswith("c_")][-3:]  # what the loop carries out
        acc, m, l = (defs[y.split(" = ")[1]] for y in yields)
        assert acc.startswith("tl.dot(") and acc.count(",") == 2, acc  # the P @ V dot accumulating
        assert m.startswith("tl.maximum("), m  # the running max
        assert " + " in l, l  # l * alpha + sum(p)
        stages += "num_stages=" in lines[loop]
    assert stages >= 5  # the loop names its own stages at times
    assert {s.grid for s in specs} == {"M"}
    assert any(s.sizes["N"] < s.blocks["N"] for s in specs)  # padded head dimensions
    assert {s.inputs[0]["dtype"] for s in specs} >= {"fp16", "bf16"}


def test_default_campaigns_draw_shapes_in_their_share():
    specs = list(itertools.islice(spec_stream(CAPS, 11), 300))
    shares = Counter(s.meta.get("shape", "random") for s in specs)
    assert 0.2 <= sum(shares[n] for n in SHAPES) / 300 <= 0.4, shares
    assert shares["attention"] > 12 and shares["epilogue"] > 12, shares
    templates = [n for n in SHAPES if n not in STATEMENT_SHAPES]  # kernel templates (fuzz/shape_templates.py)
    assert sum(shares[n] for n in templates) > 15 and sum(s.family == "user" for s in specs) == sum(
        shares[n] for n in templates), shares


def test_a_target_without_the_shapes_dot_falls_back_to_random_kernels():
    caps = assume_all("gfx942")
    caps.features = [f for f in caps.features if not f.startswith("dot:")]
    for spec in itertools.islice(spec_stream(caps, 3, shapes=("attention",)), 10):
        assert "shape" not in spec.meta
        assert render(spec, caps).features.dropped == 0
