"""Metamorphic pairs (fuzz/pairs.py): the second member is what the pair says, compiles in a real campaign, and a
second member that crashes is recorded as the spec that reproduces it alone."""
import json

import faults
from hypothesis import given, settings, HealthCheck, strategies as st

from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.corpus_store import Corpus
from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.pairs import LAUNCH_KINDS, draw_pair, variant
from gfxhound.spec import KernelSpec, Launch

ELEMENTWISE = KernelSpec(
    blocks={"M": 64, "N": 16, "K": 16}, sizes={"M": 100, "N": 16, "K": 16}, grid="M",
    inputs=[{"dtype": "fp32", "axes": "M", "order": "row"}], scalars=[],
    outputs=[{"dtype": "fp32", "axes": "M", "mode": "store"}],
    body=[{"op": "load", "args": [0], "attrs": {"masked": True}}, {"op": "exp", "args": [0], "attrs": {}},
          {"op": "store", "args": [0, 0], "attrs": {}}],
    launch=Launch(num_warps=4, num_stages=2, options={"waves_per_eu": 2}, env={"AMDGCN_USE_BUFFER_OPS": "1"}))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.data())
def test_every_pair_changes_exactly_what_its_kind_names(data):
    caps = assume_all("gfx942")
    pair = data.draw(st.composite(lambda draw: draw_pair(draw, caps, ELEMENTWISE.launch))())
    spec = ELEMENTWISE.replace(pair=pair)
    second, arch = variant(spec, "gfx942")
    if pair["kind"] in LAUNCH_KINDS:
        assert arch == "gfx942" and second.pair is None and second.body == spec.body
        assert second.launch != spec.launch
        changed = {k for k in ("num_warps", "num_stages") if getattr(second.launch, k) != getattr(spec.launch, k)}
        changed |= {k for k in set(second.launch.options) | set(spec.launch.options)
                    if second.launch.options.get(k) != spec.launch.options.get(k)}
        changed |= {k for k in set(second.launch.env) | set(spec.launch.env)
                    if second.launch.env.get(k) != spec.launch.env.get(k)}
        assert len(changed) == 1, changed
        assert {"stages": "num_stages", "warps": "num_warps"}.get(pair["kind"], next(iter(changed))) in changed
    elif pair["kind"] == "target":
        assert arch != "gfx942" and second.pair is None and second.launch.options == {} and second.launch.env == {}
    else:
        assert (second, arch) == (spec, "gfx942") and isinstance(pair["seed"], int)


def test_a_campaign_compiles_both_members(tmp_path, worker_env):
    specs = [ELEMENTWISE.replace(pair=pair) for pair in (
        {"kind": "stages", "launch": {"num_warps": 4, "num_stages": 3, "options": {}, "env": {}}},
        {"kind": "target", "arch": "gfx1250"}, {"kind": "layout", "seed": 5})]
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), kernels=len(specs), workers=2,
                            seed=1, worker_env=worker_env)
    stats = Campaign(config, specs=specs).run()
    assert stats.verdicts["pass"] == 3, stats.verdicts
    assert stats.coverage["pair:stages=ok"] == 1 and stats.coverage["pair:target=ok"] == 1
    assert stats.coverage["pair:layout=ok"] == 1, dict(stats.coverage)


def test_a_second_member_that_kills_the_worker_is_recorded_as_its_own_spec(tmp_path, worker_env):
    spec = ELEMENTWISE.replace(pair={"kind": "warps", "launch": {"num_warps": 8, "num_stages": 2,
                                                                  "options": {"waves_per_eu": 2},
                                                                  "env": {"AMDGCN_USE_BUFFER_OPS": "1"}}})
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), kernels=1, workers=1, seed=1,
                            worker_env=worker_env)
    stats = Campaign(config, task_fn=faults.die_in_pair, specs=[spec]).run()
    assert stats.verdicts["ice"] == 1, stats.verdicts
    finding = Corpus(config.corpus).findings()[0]
    recorded = KernelSpec.from_json(json.loads((Corpus(config.corpus).example_dirs(finding.signature)[0]
                                                / "spec.json").read_text()))
    assert recorded == variant(spec, "gfx942")[0] and recorded.launch.num_warps == 8 and recorded.pair is None
    assert "signal:11" in finding.message


def test_a_layout_findings_repro_compiles_the_mutated_ttgir(tmp_path, worker_env):
    """The repro of a layout pair's finding compiles the embedded TTGIR, not the source: a valid mutation is
    'bug absent' (exit 0), a module the parser rejects is 'a different failure' (exit 125)."""
    import os
    import subprocess
    import sys

    from gfxhound import compat
    from gfxhound.fuzz.layouts import mutate
    from gfxhound.fuzz.render import render
    from gfxhound.oracle.repro.compile import render_repro
    from gfxhound.oracle.compile_task import load_kernel
    caps = assume_all("gfx942")
    rendered = render(ELEMENTWISE, caps)
    kernel = load_kernel(rendered.source, tmp_path / "kernel.py", rendered.kernel_name)
    ttgir = compat.compile_for_amd(kernel, rendered.args, "gfx942", rendered.options, rendered.env).asm["ttgir"]
    mutation = mutate(ttgir, 3, 64, 4)
    assert mutation.changes
    expected = {"signature": "0" * 16, "verdict": "ice", "stage": "llir", "normalised": "an assertion"}
    env = dict(os.environ, **worker_env)
    for name, text, code in (("valid", mutation.text, 0), ("invalid", mutation.text.replace("tt.func", "tt.fnuc"),
                                                             125)):
        script = tmp_path / f"repro_{name}.py"
        script.write_text(render_repro(rendered, "gfx942", expected, "test", "x", timeout_s=300, ttgir=text))
        proc = subprocess.run([sys.executable, str(script), "--show"], capture_output=True, text=True, env=env,
                              timeout=600)
        assert proc.returncode == code, proc.stdout[-2000:]
        assert ("Parse MLIR file failed" in proc.stdout) == (name == "invalid")


def test_a_second_target_that_rightly_rejects_the_kernel_is_no_user_error(tmp_path, worker_env):
    """tf32 dots exist on gfx942 only: the gfx950 member of a target pair is rejected as the user's error, which the
    first member is not; the kernel passes and the rejection is counted on the pair."""
    spec = KernelSpec(
        blocks={"M": 16, "N": 16, "K": 16}, sizes={"M": 16, "N": 16, "K": 16}, grid="MN",
        inputs=[{"dtype": "fp32", "axes": "MK", "order": "row"}, {"dtype": "fp32", "axes": "KN", "order": "row"}],
        scalars=[], outputs=[{"dtype": "fp32", "axes": "MN", "mode": "store"}],
        body=[{"op": "load", "args": [1], "attrs": {"masked": True}}, {"op": "load", "args": [0], "attrs": {"masked": True}},
              {"op": "dot", "args": [1, 0], "attrs": {"input_precision": "tf32"}}, {"op": "store", "args": [0, 0], "attrs": {}}],
        pair={"kind": "target", "arch": "gfx950"})
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), kernels=1, workers=1, seed=1,
                            worker_env=worker_env)
    stats = Campaign(config, specs=[spec]).run()
    assert stats.verdicts == {"pass": 1}, dict(stats.verdicts)
    assert stats.coverage["pair:target=rejected"] == 1 and not stats.user_errors
    assert stats.coverage["pair:target=exception"] == 0
