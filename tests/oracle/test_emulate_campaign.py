"""The emulate backend end to end: a campaign of generated kernels compiles for gfx942 and runs on the CPU
executor; a real Triton bug it found (a tl.dot_scaled scale on a bf16 operand, dropped by the AMD backend) becomes
a finding whose repro.py reproduces it on the executor and not in Triton's interpreter."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gfxhound.campaign import Campaign, CampaignConfig  # noqa: E402
from gfxhound.spec import KernelSpec  # noqa: E402

ENV = {"TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld", "TRITON_DEFAULT_FP_FUSION": "1",
       "PYTHONWARNINGS": "ignore"}
DATA = Path(__file__).resolve().parent.parent / "data" / "emulate"


def _campaign(tmp_path, kernels, specs=None, seed=3, machine_code=False):
    """The IR executor's campaign (the machine-code judgement has its own tests: test_emulate_machine.py)."""
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), backend="emulate", kernels=kernels,
                            workers=2, seed=seed, timeout=120, worker_env=ENV, machine_code=machine_code)
    campaign = Campaign(config, specs=specs)
    return campaign, campaign.run()


def test_a_campaign_runs_most_kernels_on_the_executor(tmp_path):
    campaign, stats = _campaign(tmp_path, 40)
    judged = stats.verdicts["pass"] + stats.verdicts["miscompile"] + stats.verdicts["runtime_fault"]
    assert judged >= 0.6 * stats.kernels, (stats.verdicts, stats.unresolved)
    assert stats.execution["compared"] > 10000
    # what the executor cannot judge says so, by name; a harness failure never hides among them
    assert all(reason.startswith(("emulation cannot judge", "generator emitted undefined"))
               for reason in stats.unresolved), stats.unresolved


def test_the_dropped_dot_scaled_scale_is_a_finding_with_a_working_repro(tmp_path):
    spec = KernelSpec.from_json(json.loads((DATA / "dot_scaled_bf16_scale.json").read_text()))
    campaign, stats = _campaign(tmp_path, 1, specs=[spec])
    assert stats.verdicts["miscompile"] == 1, (stats.verdicts, stats.unresolved)
    repro = next((tmp_path / "corpus").glob("*/examples/*/repro.py"))
    run = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr  # present: emulated (no AMD GPU here)
    assert "bug present" in run.stdout
    interpreted = subprocess.run([sys.executable, str(repro), "--interpret"], capture_output=True, text=True,
                                 timeout=600)
    assert interpreted.returncode == 0, interpreted.stdout + interpreted.stderr  # the interpreter applies the scale
