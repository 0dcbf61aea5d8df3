"""A real internal compiler error of the current Triton, found, recorded and replayed end to end.

Triton 3.9 on gfx942 aborts in instruction selection for a 64-bit float atomic exchange lowered to a buffer
atomic (`LLVM ERROR: Cannot select: ... f64 ... AMDGPUISD::BUFFER_ATOMIC_SWAP`); campaigns find it within
minutes. If a later Triton fixes it, the first test says so and the rest are skipped.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.corpus_store import Corpus
from gfxhound.spec import KernelSpec, Launch

XCHG_F64 = KernelSpec(
    blocks={"M": 64, "N": 16, "K": 16}, sizes={"M": 100, "N": 16, "K": 16}, grid="M",
    inputs=[{"dtype": "fp64", "axes": "M", "order": "row"}], scalars=[],
    outputs=[{"dtype": "fp64", "axes": "M", "mode": "atomic"}],
    body=[{"op": "load", "args": [0], "attrs": {"masked": True}},
          {"op": "atomic", "args": [0, 0], "attrs": {"op": "xchg", "sem": "acq_rel", "scope": "gpu"}}],
    launch=Launch(num_warps=4, num_stages=2))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, worker_env):
    root = tmp_path_factory.mktemp("corpus")
    config = CampaignConfig(targets=["gfx942"], corpus=str(root), workers=1, timeout=120, worker_env=worker_env,
                            caps_cache=str(tmp_path_factory.mktemp("caps")))
    campaign = Campaign(config, specs=[XCHG_F64, XCHG_F64.replace(sizes={"M": 300, "N": 16, "K": 16})])
    stats = campaign.run()
    return root, stats, campaign.toolchain


@pytest.fixture(scope="module")
def worker_env():
    return {"TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore",
            "TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld"}


def test_the_crash_is_one_finding_seen_twice(recorded):
    root, stats, toolchain = recorded
    if stats.verdicts.get("pass") == 2:
        pytest.skip(f"{toolchain} no longer crashes on this kernel")
    findings = Corpus(root).findings()
    assert len(findings) == 1
    finding = findings[0]
    assert finding.verdict == "ice" and finding.stage == "amdgcn" and finding.count == 2
    assert "BUFFER_ATOMIC_SWAP" in finding.message and "f64" in finding.message
    assert len(Corpus(root).example_dirs(finding.signature)) == 2


def test_its_repro_exits_1_from_its_directory_alone(recorded, tmp_path):
    root, stats, _ = recorded
    if not Corpus(root).findings():
        pytest.skip("no finding")
    example = Corpus(root).example_dirs(Corpus(root).findings()[0].signature)[0]
    alone = tmp_path / "alone"
    subprocess.run(["cp", "-r", str(example), str(alone)], check=True)
    proc = subprocess.run([sys.executable, "repro.py"], cwd=alone, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    gfxhound = str(Path(sys.executable).parent / "gfxhound")
    replay = subprocess.run([gfxhound, "corpus", "replay", Corpus(root).findings()[0].signature[:6],
                             "--corpus", str(root)], capture_output=True, text=True, timeout=600)
    assert replay.returncode == 1 and replay.stdout.strip().endswith("present")


@pytest.mark.slow
def test_where_the_bug_is_absent_the_repro_says_so(recorded, old_python):
    root, stats, _ = recorded
    if not Corpus(root).findings():
        pytest.skip("no finding")
    example = Corpus(root).example_dirs(Corpus(root).findings()[0].signature)[0]
    proc = subprocess.run([old_python, "repro.py"], cwd=example, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 125), proc.stdout + proc.stderr
