"""The interpret backend end to end: a real campaign is quiet on correct code, planted bugs are loud, a wrong
result's repro reproduces, undefined behaviour and interpreter limitations are never reported as compiler bugs."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

from gfxhound.fuzz.capabilities import assume_all  # noqa: E402
from gfxhound.fuzz.render import render  # noqa: E402
from gfxhound.oracle.compare import runs_agree  # noqa: E402
from gfxhound.oracle.evaluate import UndefinedBehaviour, evaluate  # noqa: E402
from gfxhound.oracle.repro.execute import render_exec_repro  # noqa: E402
from gfxhound.oracle.inputs import make_inputs  # noqa: E402
from gfxhound.oracle.judge import judge_execute  # noqa: E402
from gfxhound.oracle.planted import PLANTS, mutate_source, spec_stream  # noqa: E402
from gfxhound.oracle.run_task import reference  # noqa: E402
from gfxhound.oracle.tolerance import INTERPRET  # noqa: E402
from gfxhound.spec import KernelSpec, Launch  # noqa: E402

CAMPAIGN_KERNELS = 300


def fuzz(gfxhound_bin, tmp_path, *args, timeout=900):
    env = dict(os.environ, GFXHOUND_CACHE=str(tmp_path / "cache"), PYTHONWARNINGS="ignore")
    proc = subprocess.run([gfxhound_bin, "fuzz", "--backend", "interpret", "--workers", "2", "--corpus",
                           str(tmp_path / "corpus"), "--json", "--quiet", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_interpret_campaign_has_no_miscompiles(gfxhound_bin, tmp_path):
    summary = fuzz(gfxhound_bin, tmp_path, "--budget", str(CAMPAIGN_KERNELS), "--seed", "21")
    ex = summary["execution"]
    print("interpret campaign:", summary["kernels"], summary["verdicts"], ex, summary["unresolved"])
    assert summary["kernels"] == CAMPAIGN_KERNELS
    assert summary["verdicts"].get("miscompile", 0) == 0, summary["findings"]
    assert summary["verdicts"].get("nondeterministic", 0) == 0, summary["findings"]
    assert ex["mismatches"] == 0 and ex["compared"] > 100_000
    assert ex["steered_share"] < 0.05  # kernels that met an interpreter limitation anyway
    assert ex["excluded_features"] == ["exclude:dtype:bf16", "exclude:raw-loop-index", "exclude:raw-scalar-args",
                                       "exclude:cast:to-fp8", "exclude:fp8:specials"] + [
        f"exclude:pair:{k}" for k in ("stages", "warps", "knobs", "target", "layout")] + [
        "exclude:collective:later-waits"]
    assert summary["verdicts"].get("pass", 0) >= 0.9 * CAMPAIGN_KERNELS
    assert "dtype:bf16" not in summary["coverage"]
    assert summary["coverage"]["op:dot_acc"]["share"] > 0.2 and "op:atomic" in summary["coverage"]
    # issue #7 under the interpreter: block-scaled products of every MX format and fp8 dots of both families
    for feature in ("detail:dot_scaled:e2m1", "detail:dot_scaled:e4m3", "detail:dot_scaled:e5m2",
                    "detail:fp8:ocp", "detail:fp8:fnuz"):
        assert summary["coverage"][feature]["share"] >= 0.05, feature


# the collective family's plants need a GPU (their patterns wait on later programs): tests/oracle/test_gpu_collectives.py
SOURCE_PLANTS = sorted(name for name, plant in PLANTS.items() if plant.pattern and plant.family != "collective")
INTERPRETABLE_PLANTS = sorted(name for name, plant in PLANTS.items() if plant.family != "collective")


@pytest.mark.parametrize("plant", SOURCE_PLANTS)
def test_planted_bugs_are_flagged(gfxhound_bin, tmp_path, plant):
    summary = fuzz(gfxhound_bin, tmp_path, "--plant", plant, "--budget", "20", "--seed", "3")
    assert summary["planted"]["runs"] == 20 and summary["planted"]["ran"] == 20
    assert summary["planted"]["flagged_share"] >= 0.95, summary
    assert not (tmp_path / "corpus").exists() or not any((tmp_path / "corpus").glob("*/finding.json"))


@pytest.mark.parametrize("plant", INTERPRETABLE_PLANTS)
def test_planted_families_pass_without_the_plant(tmp_path, plant):
    """The control: the same kernels, unmutated, are judged correct (else 'flagged' would mean nothing)."""
    from gfxhound.oracle.run_task import run_interpret
    caps = assume_all("gfx942")
    stream = spec_stream(plant, 5)
    code = ("import os, sys, json; os.environ['TRITON_INTERPRET'] = '1'\n"
            "from gfxhound.oracle.run_task import run_interpret\n"
            "task = json.load(open(sys.argv[1])); r = run_interpret(task)\n"
            "print(json.dumps({'status': r['status'], 'checks': r.get('checks')}))\n")
    for i in range(3):
        spec = next(stream)
        task = {"spec": spec.to_json(), "caps": caps.to_json(), "task_dir": str(tmp_path), "backend": "interpret",
                "stderr_path": str(tmp_path / "err")}
        (tmp_path / "task.json").write_text(json.dumps(task))
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "task.json")], capture_output=True,
                             text=True, timeout=300)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["status"] == "ok" and result["checks"]["mismatches"] == 0, (out.stderr[-2000:], result)
    assert run_interpret  # the same entry point the campaign's workers run


def test_the_missing_barrier_edit_applies_to_real_amd_code(tmp_path, worker_env):
    """A GPU-only plant: check here that the kernels it edits do have workgroup barriers to delete."""
    os.environ.update(worker_env)
    from gfxhound import compat
    from gfxhound.oracle.compile_task import load_kernel
    from gfxhound.oracle.planted import mutate_ir
    caps = assume_all("gfx942")
    stream = spec_stream("missing-barrier", 1)
    for i in range(2):
        spec = next(stream)
        rendered = render(spec, caps)
        (tmp_path / f"k{i}").mkdir()
        kernel = load_kernel(rendered.source, tmp_path / f"k{i}" / "kernel.py", rendered.kernel_name)
        llir = compat.compile_for_amd(kernel, rendered.args, "gfx942", rendered.options).asm["llir"]
        edited = mutate_ir("missing-barrier", llir)
        assert "llvm.amdgcn.s.barrier()" in llir and "call void @llvm.amdgcn.s.barrier" not in edited
    with pytest.raises(ValueError):
        mutate_source("missing-barrier", rendered.source)


def test_a_wrong_result_repro_reproduces_and_a_right_one_does_not(tmp_path):
    caps = assume_all("gfx942")
    spec = next(spec_stream("off-by-one", 8))
    rendered = render(spec, caps)
    expected = reference(spec, caps, "interpret")
    execution = {"spec_hash": spec.spec_hash(), "verdict": "miscompile", "backend": "interpret",
                 "target": "gfx942", "toolchain": "test", "message": "planted"}
    codes = []
    for source in (rendered.source, mutate_source("off-by-one", rendered.source)):
        rendered.source = source
        path = tmp_path / "repro.py"
        path.write_text(render_exec_repro(rendered, spec, make_inputs(spec), expected, execution))
        proc = subprocess.run([sys.executable, str(path), "--interpret"], capture_output=True, text=True,
                              timeout=300)
        codes.append(proc.returncode)
    assert codes == [0, 1]
    assert "bug present: out_0: " in proc.stdout and "elements wrong" in proc.stdout, proc.stdout


_FAULTING_KERNEL = """
class _Launcher:
    def __getitem__(self, grid):
        def run(*args, **kwargs):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return run
kernel = _Launcher()
"""


def test_a_fault_after_launch_is_bug_present_and_one_before_is_cannot_test(tmp_path):
    """Runtime faults get the execution repro: a fault once the kernel was launched reproduces the finding
    (exit 1); the same text before the launch (here: raised while the kernel module loads) cannot test (125)."""
    import re
    caps = assume_all("gfx942")
    spec = next(spec_stream("off-by-one", 8))
    execution = {"spec_hash": spec.spec_hash(), "verdict": "runtime_fault", "backend": "device",
                 "target": "gfx942", "toolchain": "test", "message": "fault"}
    text = render_exec_repro(render(spec, caps), spec, make_inputs(spec), reference(spec, caps, "interpret"),
                             execution)
    codes = []
    for kernel in (_FAULTING_KERNEL, "raise RuntimeError('CUDA error: no device')\n"):
        path = tmp_path / "repro.py"
        path.write_text(re.sub(r"^KERNEL = .*$", lambda m: "KERNEL = " + repr(kernel), text, count=1, flags=re.M))
        proc = subprocess.run([sys.executable, str(path), "--interpret"], capture_output=True, text=True,
                              timeout=300)
        codes.append((proc.returncode, proc.stdout.strip().splitlines()[-1]))
    assert codes[0] == (1, "bug present: runtime fault: RuntimeError: CUDA error: an illegal memory access was "
                           "encountered"), codes
    assert codes[1][0] == 125, codes


def _oob_spec(masked):
    body = [{"op": "load", "args": [0], "attrs": {"masked": masked, "other": 0}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": 32, "N": 16, "K": 16}, sizes={"M": 40, "N": 16, "K": 16}, grid="M",
                      inputs=[{"dtype": "fp32", "axes": "M", "order": "row"}], scalars=[],
                      outputs=[{"dtype": "fp32", "axes": "M", "mode": "store"}], body=body, launch=Launch())


def test_the_oracle_refuses_undefined_behaviour():
    """An unmasked load past the end would be UB: the program walker masks it, and if a spec still got one in,
    the reference run raises instead of inventing a value."""
    caps = assume_all("gfx942")
    spec = _oob_spec(masked=False)
    assert "mask=" in render(spec, caps).source  # ragged M: the walker keeps the mask although the spec asked not
    from gfxhound.fuzz.program import walk
    walker = walk(spec, caps)
    walker.nodes[0]["masked"] = False  # as if the generator had broken its contract
    with pytest.raises(UndefinedBehaviour):
        evaluate(spec, caps, make_inputs(spec), INTERPRET, walker=walker)


def test_rerun_disagreement_is_nondeterministic_and_limitations_are_unresolved():
    outcome = {"status": "ok", "checks": {"mismatches": 3, "compared": 10, "undetermined": 0},
               "message": "out_0 wrong", "reruns": 3, "reruns_agreeing": 1}
    ex = judge_execute(outcome, "h", "gfx942", "triton-x", {}, "device", ["add", "store"])
    assert ex.verdict == "nondeterministic" and ex.checks["rerun_disagreement_rate"] == 0.667
    outcome["reruns_agreeing"] = 3
    assert judge_execute(outcome, "h", "gfx942", "triton-x", {}, "device", ["add"]).verdict == "miscompile"
    limited = {"status": "exception", "phase": "run", "text": "ValueError: All-NaN slice encountered"}
    ex = judge_execute(limited, "h", "gfx942", "triton-x", {}, "interpret")
    assert ex.verdict == "unresolved" and ex.reason == "limitation interpret-all-nan-reduction"
    fault = {"status": "exception", "phase": "run", "text": "RuntimeError: CUDA error: an illegal memory access"}
    assert judge_execute(fault, "h", "gfx942", "triton-x", {}, "device").verdict == "runtime_fault"


def _atomic_sum_spec(scope):
    return KernelSpec(blocks={"M": 16, "N": 16, "K": 16}, sizes={"M": 64, "N": 16, "K": 16}, grid="M",
                      inputs=[{"dtype": "fp32", "axes": "M", "order": "row", "values": "real"}], scalars=[],
                      outputs=[{"dtype": "fp32", "axes": "", "mode": "atomic"}],
                      body=[{"op": "load", "args": [0], "attrs": {"masked": True}},
                            {"op": "sum", "args": [0], "attrs": {"axis": 0}},
                            {"op": "atomic", "args": [0, 0], "attrs": {"op": "add", "sem": "relaxed",
                                                                      "scope": scope}}],
                      launch=Launch())


def test_cta_scoped_atomics_from_several_programs_are_undefined():
    """Found on the H100: four programs' `scope="cta"` adds to one address lost an update (expected 2, got 1).
    PTX and the AMDGPU memory model make a cta-scoped atomic atomic only within its program: a race, not a bug."""
    caps = assume_all("gfx942")
    spec = _atomic_sum_spec("cta")
    with pytest.raises(UndefinedBehaviour, match="scope 'cta' from more than one program"):
        evaluate(spec, caps, make_inputs(spec), INTERPRET)
    one_program = KernelSpec.from_json(dict(spec.to_json(), sizes={"M": 16, "N": 16, "K": 16}))
    assert evaluate(one_program, caps, make_inputs(one_program), INTERPRET).outputs["out_0"].count[0] == 1
    evaluate(_atomic_sum_spec("gpu"), caps, make_inputs(spec), INTERPRET)  # the device scope is fine


def test_runs_agree_ignores_free_order_atomics_only():
    spec = _atomic_sum_spec("gpu")
    caps = assume_all("gfx942")
    expected = evaluate(spec, caps, make_inputs(spec), INTERPRET)
    buf = expected.outputs["out_0"]
    assert int(buf.count[0]) == 4 and not bool(buf.bad[0]) and float(buf.e[0]) > 0
    a = torch.zeros(4)
    a[0] = float(buf.v[0])
    b = a.clone()
    b[0] = float(buf.v[0]) + float(buf.e[0]) / 2  # another summation order
    assert runs_agree(expected, {"out_0": a}, {"out_0": b})
    b[1] = 1.0  # an element nobody may change
    assert not runs_agree(expected, {"out_0": a}, {"out_0": b})
