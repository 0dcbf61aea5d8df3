"""On a GPU: the device backend end to end (compile on CPU workers, launch on the GPU worker, compare with the
torch reference), the planted bugs through the same path, and the worker replacement after a fault.

Run on the device machine: `pytest -m gpu tests/oracle/test_gpu_execution.py` (ci/gpu-checks.sh runs it with the rest).
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu


def _fuzz(tmp_path, *extra, budget="60"):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    workers = str(max(2, min(12, (os.cpu_count() or 4) - 2)))
    proc = subprocess.run([sys.executable, "-m", "gfxhound", "fuzz", "--backend", "device", "--budget", budget,
                           "--workers", workers, "--corpus", str(tmp_path / "corpus"), "--json", "--quiet",
                           *extra], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_device_campaign_runs_and_judges(tmp_path):
    summary = _fuzz(tmp_path, "--seed", "11")
    print("device campaign:", summary["kernels"], summary["verdicts"], summary["execution"])
    assert summary["kernels"] == 60
    assert summary["verdicts"].get("pass", 0) >= 50
    assert summary["execution"]["compared"] > 0
    wrong = [f for f in summary["findings"] if f["verdict"] in ("miscompile", "nondeterministic")]
    assert not wrong, f"miscompiles to explain or fix: {wrong}"


@pytest.mark.parametrize("plant", ["drop-mask", "off-by-one", "fadd-fsub", "wrong-acc-dtype", "missing-barrier",
                                   "wrong-e8m0-bias", "swapped-fp4-nibbles"])
def test_planted_bugs_are_flagged_on_the_gpu(tmp_path, plant):
    summary = _fuzz(tmp_path, "--plant", plant, budget="40")
    print("planted", plant, summary["planted"], summary["unresolved"])
    assert summary["planted"]["runs"] == 40
    assert summary["planted"]["ran"] >= 30  # kernels the compiler could not build are counted apart
    assert summary["planted"]["flagged_share"] >= 0.95


def test_fp8_and_block_scaled_dots_with_metamorphic_pairs_on_the_gpu(tmp_path):
    """Issue #7 on a GPU: generated kernels with fp8 tl.dot and tl.dot_scaled, a third of them with a launch pair
    run and compared (bit for bit where the pair keeps the accumulation order): no wrong result goes unexplained."""
    summary = _fuzz(tmp_path, "--seed", "17", budget="400")
    cov = summary["coverage"]
    dots = sum(cov.get(f"detail:dot:{d}", {}).get("kernels", 0) for d in ("fp8e4nv", "fp8e5"))
    scaled = sum(cov.get(f"op:{op}", {}).get("kernels", 0)
                 for op in ("dot_scaled", "dot_scaled_lhs", "dot_scaled_rhs", "dot_scaled_none"))
    pairs = {k: v["kernels"] for k, v in cov.items() if k.startswith("pair:") and "=" in k}
    print("fp8 dots", dots, "dot_scaled", scaled, "pairs", pairs, summary["verdicts"])
    assert dots > 0 and scaled > 0 and sum(pairs.values()) > 0
    wrong = [f for f in summary["findings"] if f["verdict"] in ("miscompile", "nondeterministic")]
    assert not wrong, f"miscompiles to explain or fix: {wrong}"


def test_a_fault_replaces_the_worker_and_the_device_keeps_working(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    from gfxhound.oracle.gpu_pool import GpuPool
    pool = GpuPool(tmp_path / "cache", {}, timeout=120, gpus=1)
    try:
        before = pool.replaced
        pool.replace(0)  # what a fault triggers: retire the worker, then a known-good kernel must run
        assert pool.replaced == before + 1
    finally:
        pool.close()
