"""A campaign over several targets never lets one worker process compile for two of them.

Triton 3.5 and 3.6 keep the AMD backend's fp8 conversion table in a function-local `static` filled by the first
compile of the process: a gfx950 kernel compiled in a process that first lowered an fp8 cast for gfx942 decodes
fp8e4b8/fp8e5b16 with gfx942's conversion instructions (2x values, NaN read as -0 on gfx950) or trips an
assertion. A 7-minute emulate campaign over gfx942,gfx950 recorded 4 miscompile and 4 ICE signatures that way,
none of which a repro (a fresh process) showed. oracle/pool.py TargetPools gives every target its own workers.
"""
import os
import time
from pathlib import Path

from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.fuzz.capabilities import introspect
from gfxhound.oracle.pool import split_workers

LOG = "GFXHOUND_TEST_TARGET_LOG"


def log_target(task):
    """Stand-in for a compile: note which process took which target's kernel."""
    with open(Path(os.environ[LOG]) / str(os.getpid()), "a") as f:
        f.write(task["arch"] + "\n")
    time.sleep(0.1)  # long enough for every worker to get kernels
    return {"status": "ok", "duration": 0.1}


def test_split_workers():
    assert split_workers(8, 2) == [4, 4]
    assert split_workers(5, 2) == [3, 2]
    assert split_workers(1, 2) == [2, 2]  # at least two per target: a pool of one worker can break
    assert split_workers(3, 2) == [2, 2]
    assert split_workers(3, 1) == [3]


def test_each_worker_compiles_for_one_target(tmp_path, worker_env):
    log = tmp_path / "targets"
    log.mkdir()
    targets = ["gfx942", "gfx950"]
    config = CampaignConfig(targets=targets, corpus=str(tmp_path / "corpus"), kernels=16, workers=3, seed=3,
                            timeout=30.0, max_ops=4, worker_env=dict(worker_env, **{LOG: str(log)}))
    stats = Campaign(config, task_fn=log_target, caps={arch: introspect(arch) for arch in targets}).run()
    assert stats.kernels == 16 and stats.verdicts["pass"] == 16, stats.verdicts
    seen = {pid.name: set(pid.read_text().split()) for pid in log.iterdir()}
    assert len(seen) >= 2
    assert all(len(archs) == 1 for archs in seen.values()), seen
    assert set().union(*seen.values()) == set(targets)
