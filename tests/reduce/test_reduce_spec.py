"""Spec-level reduction: the passes reach small kernels, keep the property, and real compiler crashes reduce
to a repro of a few lines that still shows the same signature."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.render import render
from gfxhound.reduce.spec_level import reduce_spec

ROOT = Path(__file__).resolve().parents[2]
LIVE_ICE = "93260d1c0e8fc7a2"  # Triton 3.9.0: f64 atomic exchange, "Cannot select BUFFER_ATOMIC_SWAP" on gfx942
OLD_ICE = "050407154b648f34"  # Triton 3.4.0, a TTGIR-stage crash found by a campaign


def test_passes_reach_the_smallest_kernel_with_the_property():
    """A fake predicate ("a dot is still rendered") on generated kernels: the reduction keeps it and ends at a
    kernel with a handful of lines (quality check, as Hypothesis tests its shrinker)."""
    caps = assume_all("gfx942")
    checked = 0
    def has_dot(s):
        return any(k in ("dot", "dot_acc") for k in render(s, caps).features.ops)

    for spec in spec_stream(caps, 4):
        if not has_dot(spec):
            continue
        before = render(spec, caps).body_lines
        result = reduce_spec(spec, has_dot, deadline_s=120, caps=caps)
        after = render(result.spec, caps).body_lines
        assert has_dot(result.spec)
        assert after <= 6 and after < before, render(result.spec, caps).source
        assert not result.spec.launch.options and not result.spec.launch.env
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_a_deadline_keeps_the_best_so_far():
    caps = assume_all("gfx942")
    spec = next(spec_stream(caps, 5))
    calls = []

    def slow_predicate(s):
        calls.append(1)
        return True  # everything is "interesting": only the deadline stops it

    result = reduce_spec(spec, slow_predicate, deadline_s=0.0)
    assert result.interrupted and result.spec is not None


def _reduce(python, sig, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / sig, corpus / sig)
    proc = subprocess.run([python, "-m", "gfxhound", "reduce", sig[:10], "--corpus", str(corpus), "--json",
                           "-j", "2", "--timeout", "600"], capture_output=True, text=True, timeout=1200, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    dest = corpus / sig / "reduced" / "spec"
    return summary, dest


@pytest.mark.slow
def test_the_live_ice_reduces_to_a_few_lines_with_its_signature(tmp_path):
    summary, dest = _reduce(sys.executable, LIVE_ICE, tmp_path)
    assert summary["body_lines_before"] > 20 and summary["body_lines_after"] <= 5
    assert summary["repro_exit"] == 1  # the reduced repro shows the same signature
    assert "atomic_xchg" in (dest / "kernel.py").read_text()


@pytest.mark.slow
def test_a_real_ice_of_an_older_release_reduces(tmp_path, old_python):
    if "3.4.0" not in subprocess.run([old_python, "-c", "import triton; print(triton.__version__)"],
                                     capture_output=True, text=True).stdout:
        pytest.skip("the checked-in finding is from Triton 3.4.0")
    summary, dest = _reduce(old_python, OLD_ICE, tmp_path)
    assert summary["body_lines_after"] <= 10 and summary["body_lines_after"] < summary["body_lines_before"]
    assert summary["repro_exit"] == 1


def test_an_interrupted_reduction_keeps_its_best_result():
    """Ctrl-C during spec reduction ends it like a deadline: the best spec so far is the result."""
    caps = assume_all("gfx942")
    spec = next(iter(spec_stream(caps, 4)))
    calls = []

    def interesting(candidate):
        calls.append(candidate)
        if len(calls) > 6:
            raise KeyboardInterrupt
        return True  # every candidate "fails": each test shrinks the spec

    result = reduce_spec(spec, interesting, deadline_s=600, caps=caps)
    assert result.interrupted and result.accepted >= 5
    assert render(result.spec, caps).body_lines < render(spec, caps).body_lines


def test_unrolling_a_loop_to_one_trip_keeps_every_op_and_drops_the_loop_from_the_shape():
    """The reducer's way to remove a loop that carries values: one trip of tl.static_range, which Triton's frontend
    unrolls, written as the straight-line code it becomes. Every op keeps its operands (inlining the body instead
    re-aims the loop's results at other values), and the kernel's features, hence a reduced wrong result's shape, no
    longer name a loop."""
    from gfxhound.reduce.spec_level import UnrollOnce
    caps = assume_all("gfx942")
    checked = 0
    for spec in spec_stream(caps, 4):
        before = render(spec, caps)
        loops = before.source.count(" in range(") + before.source.count(" in tl.range(") + \
            before.source.count(" in tl.static_range(")
        if "for_carried" not in before.features.control or "kloop_dot" not in before.features.control or loops != 1:
            continue
        candidate = next(UnrollOnce().candidates(spec))
        after = render(candidate, caps)
        assert " in range(" not in after.source and " in tl.range(" not in after.source  # written straight-line
        assert "static_range" not in after.source
        assert after.features.ops == before.features.ops  # nothing dropped, every reference kept
        assert not {"for", "for_carried", "kloop_dot", "kloop_pipelined"} & set(after.features.control)
        assert after.features.dropped == before.features.dropped
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_sigterm_during_a_cli_reduction_ends_it_as_ctrl_c_does():
    """`timeout` and a cancelled CI job send SIGTERM: inside the reduce command it is a KeyboardInterrupt, which the
    reducers answer by keeping their best result (the test above); outside, the previous handler is back."""
    import os
    import signal

    from gfxhound.cli.reduce import terminate_as_interrupt
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with terminate_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before
