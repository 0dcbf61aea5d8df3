"""A campaign keeps its time: the budget's deadline under hung workers, compile-time blow-ups that cost seconds,
and worker output that stays off the console."""
import functools
import multiprocessing
import time

import faults

from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.corpus_store import Corpus


def _config(tmp_path, worker_env, **kw):
    base = dict(targets=["gfx942"], corpus=str(tmp_path / "corpus"), workers=2, seed=5, max_ops=6,
                worker_env=worker_env, caps_cache=str(tmp_path / "caps"))
    return CampaignConfig(**{**base, **kw})


def test_a_time_budget_is_kept_when_every_worker_hangs(tmp_path, worker_env):
    """From the fourth kernel on every compile hangs and ignores SIGTERM, with a 10-minute timeout: the campaign
    still ends at budget + grace (+ the pools' short stop), counts what it left, and leaves no worker behind."""
    config = _config(tmp_path, worker_env, seconds=6, timeout=600, grace=2)
    campaign = Campaign(config, task_fn=functools.partial(faults.hang_from, index=3))
    stats = campaign.run()
    over = time.time() - stats.started - config.seconds
    assert over < config.grace + 15, f"ended {over:.1f} s after its budget"
    assert stats.kernels == 3 and stats.verdicts["pass"] == 3, stats.verdicts
    assert stats.unfinished == 4  # two hung on the workers, two queued behind them (a queue of 2 per worker)
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_a_ten_minute_compile_costs_seconds_and_is_one_timeout_finding(tmp_path, worker_env):
    config = _config(tmp_path, worker_env, kernels=40, timeout=600, timeout_floor=2.0)  # above a loaded CI's jitter
    campaign = Campaign(config, task_fn=functools.partial(faults.blowup, index=30))
    campaign.limits.warm_up = 10
    started = time.time()
    stats = campaign.run()
    assert time.time() - started < 120  # probing included; the blow-up alone would take 600 s
    assert stats.verdicts["timeout"] == 1 and stats.verdicts["pass"] == 39, stats.verdicts
    figures = stats.timeouts
    assert figures["suspected"] == 1 and figures["confirmed"] == 1, figures
    assert figures["seconds_on_blowups"] == 6.0  # 2 s on the first run (the floor), 4 s on the second
    (finding,) = Corpus(config.corpus).findings()
    assert finding.verdict == "timeout"
    assert finding.message.startswith("compile did not finish in 2 s, nor in 4 s when run again; this "
                                      "campaign's median compile for gfx942: 0.05 s"), finding.message


def test_a_slow_kernel_that_finishes_on_its_second_run_is_not_a_finding(tmp_path, worker_env):
    config = _config(tmp_path, worker_env, kernels=30, timeout=600, timeout_floor=2.0)
    campaign = Campaign(config, task_fn=functools.partial(faults.slow, index=20, seconds=3.0))
    campaign.limits.warm_up = 10
    stats = campaign.run()
    assert stats.verdicts == {"pass": 30}, stats.verdicts
    assert stats.timeouts["suspected"] == 1 and stats.timeouts["cleared"] == 1, stats.timeouts
    assert not Corpus(config.corpus).findings()


def test_worker_output_goes_to_a_log_not_the_console(tmp_path, worker_env, capfd):
    config = _config(tmp_path, worker_env, kernels=4)
    campaign = Campaign(config, task_fn=faults.noisy)
    campaign.run()
    assert "noise from a worker" not in capfd.readouterr().err
    assert campaign.worker_output["lines"] >= 4
    assert campaign.worker_output["last"][-1] == "gfxhound-test: noise from a worker"
    verbose = Campaign(_config(tmp_path, worker_env, kernels=2, verbose=True, corpus=str(tmp_path / "c2")),
                       task_fn=faults.noisy)
    verbose.run()
    assert "noise from a worker" in capfd.readouterr().err


def test_a_pool_pebble_gave_up_on_is_restarted(tmp_path, worker_env):
    """A worker that dies while no task runs breaks a pebble pool for good; restart() brings a working one."""
    from gfxhound.oracle.pool import CompilePool
    pool = CompilePool(1, 60, worker_env, root=str(tmp_path / "pool"))
    try:
        task, future = pool.submit({}, {}, "gfx942", fn=faults.die_after_returning)
        assert pool.outcome(task, future)["status"] == "ok"
        deadline = time.time() + 30
        while pool.healthy() and time.time() < deadline:
            time.sleep(0.2)
        assert not pool.healthy()
        pool.restart()
        task, future = pool.submit({}, {}, "gfx942", fn=faults.quick_ok)
        assert pool.outcome(task, future)["status"] == "ok" and pool.healthy()
    finally:
        pool.close(cancel=True, wait=5)


def test_the_interpreter_keeps_the_users_timeout():
    """Its runs are not compiles: no median-based limit, every run gets --timeout."""
    from gfxhound.campaign.timeouts import TimeoutPolicy
    adaptive, fixed = TimeoutPolicy(60.0, warm_up=3), TimeoutPolicy(60.0, factor=None, warm_up=3)
    for policy in (adaptive, fixed):
        for _ in range(5):
            policy.observe("gfx942", 0.5)
    assert adaptive.first_limit("gfx942") == 10.0 and fixed.first_limit("gfx942") == 60.0
    assert fixed.confirm_limit(fixed.first_limit("gfx942")) is None
