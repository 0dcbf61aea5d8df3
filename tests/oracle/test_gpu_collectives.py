"""On a GPU: collective patterns on virtual ranks (all ranks in one grid on one device), the collective planted
bugs (a barrier whose waits do nothing, lost signals, a spin that never ends), and, with two or more GPUs, one
process per GPU through torchrun.

Run on the device machine: `pytest -m gpu tests/oracle/test_gpu_collectives.py` (ci/gpu-collectives.sh gives the
figures of docs/collectives.md).
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    return torch


def _fuzz(tmp_path, *extra, budget="150", timeout="60"):
    _torch()
    workers = str(max(2, min(12, (os.cpu_count() or 4) - 2)))
    proc = subprocess.run([sys.executable, "-m", "gfxhound", "fuzz", "--backend", "device", "--budget", budget,
                           "--workers", workers, "--timeout", timeout, "--corpus", str(tmp_path / "corpus"),
                           "--json", "--quiet", *extra], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_a_virtual_rank_campaign_of_every_pattern_reports_nothing_false(tmp_path):
    summary = _fuzz(tmp_path, "--family", "collectives", "--controls", "0.2", "--seed", "21")
    print("collectives:", summary["kernels"], summary["verdicts"],
          {k: v["kernels"] for k, v in summary["coverage"].items() if k.startswith("check:control")})
    assert summary["kernels"] == 150
    assert summary["verdicts"] == {"pass": 150}, summary["findings"]
    patterns = {k for k in summary["coverage"] if k.startswith("op:collective:")}
    assert len(patterns) == 14
    assert summary["execution"]["compared"] > 100000


def test_a_barrier_whose_waits_do_nothing_is_caught(tmp_path):
    summary = _fuzz(tmp_path, "--plant", "missing-collective-barrier", budget="12")
    print("missing-collective-barrier:", summary["planted"])
    assert summary["planted"]["runs"] == 12 and summary["planted"]["flagged"] >= 11


def test_lost_signals_are_timeouts_from_the_error_counter(tmp_path):
    summary = _fuzz(tmp_path, "--plant", "lost-signal", budget="3")
    assert summary["verdicts"] == {"timeout": 3}, summary


def test_a_spin_that_never_ends_is_a_timeout_and_the_gpu_stays_usable(tmp_path):
    hang = _fuzz(tmp_path / "hang", "--plant", "lost-signal-hang", budget="1", timeout="20")
    assert hang["verdicts"] == {"timeout": 1}, hang
    after = _fuzz(tmp_path / "after", "--family", "collectives", "--seed", "3", budget="10")
    assert after["verdicts"] == {"pass": 10}, after["findings"]


def test_two_or_more_gpus_run_the_patterns_one_process_each(tmp_path):
    torch = _torch()
    gpus = torch.cuda.device_count()
    if gpus < 2:
        pytest.skip("needs two GPUs")
    for heap in ("symm", "ipc"):
        out = tmp_path / f"{heap}.json"
        proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={gpus}", "-m",
                               "gfxhound.oracle.distributed", "--kernels", "40", "--seed", "4", "--heap", heap,
                               "--json", str(out)], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        summary = json.loads(out.read_text())
        print(heap, summary["tally"], summary["seconds"])
        assert summary["tally"]["kernels"] == 40 and summary["tally"].get("pass") == 40, summary["failures"][:2]
