"""A worker killed mid-compile and a compile that hangs: the campaign goes on, each is recorded once."""
import faults

from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.corpus_store import Corpus


def test_killed_worker_and_hang_are_recorded_once_and_the_campaign_continues(tmp_path, worker_env):
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), kernels=10, workers=2, seed=8,
                            timeout=15.0, max_ops=8, worker_env=worker_env)
    stats = Campaign(config, task_fn=faults.kill_and_hang).run()
    assert stats.kernels == 10
    assert stats.verdicts["ice"] == 1 and stats.verdicts["timeout"] == 1, stats.verdicts
    # the other 8 compiled (gfx942's known memory-model defect makes some of them `miscompile`: compiled too)
    assert stats.verdicts["pass"] + stats.verdicts["miscompile"] == 8, stats.verdicts
    findings = {f.verdict: f for f in Corpus(config.corpus).findings() if f.stage != "memory-model"}
    assert set(findings) == {"ice", "timeout"}
    assert findings["ice"].stage == "llir" and "signal:11" in findings["ice"].message
    assert findings["timeout"].stage == "amdgcn" and "did not finish in 15 s" in findings["timeout"].message
    assert all(f.count == 1 for f in findings.values())
    for f in findings.values():
        example = Corpus(config.corpus).example_dirs(f.signature)[0]
        assert (example / "spec.json").exists() and (example / "repro.py").exists()
    # the IR of the stages that finished before the kill is kept
    ice_example = Corpus(config.corpus).example_dirs(findings["ice"].signature)[0]
    assert (ice_example / "ir" / "kernel.ttgir").exists()
