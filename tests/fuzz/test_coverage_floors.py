"""Coverage floors (fuzz/floors.py): the generator's output for gfx942 meets every floor, a campaign summary says
which floor it misses, and too small a campaign is not judged."""
from gfxhound.campaign import features_of
from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.floors import FLOORS, MIN_KERNELS, check
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.render import render

NO_TTGIR = ["exclude:ttgir"]  # these coverages come from the generator alone: nothing was compiled


def _coverage(seed, count):
    caps = assume_all("gfx942")
    counts = {}
    stream = spec_stream(caps, seed)
    for _ in range(count):
        spec = next(stream)
        for feature in features_of(spec, render(spec, caps).features, "gfx942"):
            counts[feature] = counts.get(feature, 0) + 1
    return {k: {"kernels": v} for k, v in counts.items()}


def test_the_generator_meets_every_floor():
    for seed in (1, 2):
        result = check(_coverage(seed, 300), 300, 0.0, excluded=NO_TTGIR)
        assert result["judged"] and result["missed"] == [], result


def test_a_missing_feature_and_too_many_user_errors_are_named():
    coverage = _coverage(3, MIN_KERNELS)
    del coverage["op:scan"]
    result = check(coverage, MIN_KERNELS, 0.05, excluded=NO_TTGIR)
    assert [m["floor"] for m in result["missed"]] == ["scan", "user errors"]
    assert not check(coverage, MIN_KERNELS - 1, 0.0)["judged"]
    assert all(0 < least <= 0.5 for _, least, *_ in FLOORS.values())


def test_a_floor_the_backend_cannot_reach_is_not_judged():
    coverage = _coverage(4, MIN_KERNELS)
    del coverage["dtype:bf16"]
    assert [m["floor"] for m in check(coverage, MIN_KERNELS, 0.0, excluded=NO_TTGIR)["missed"]] == ["bf16 values"]
    assert check(coverage, MIN_KERNELS, 0.0, excluded=["exclude:dtype:bf16"] + NO_TTGIR)["missed"] == []
    # the TTGIR floors, where a compile backend kept no TTGIR, are named as missed
    missed = [m["floor"] for m in check(coverage, MIN_KERNELS, 0.0, excluded=["exclude:dtype:bf16"])["missed"]]
    assert missed == ["reduction of a dot result (TTGIR)", "dot-result slice broadcast back (TTGIR)",
                      "dot result through LDS or into a dot operand (TTGIR)", "while loop (TTGIR)",
                      "persistent loop over tl.num_programs (TTGIR)", "scf.if yielding a pointer (TTGIR)"]
