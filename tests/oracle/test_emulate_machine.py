"""The three-way judgement of `--backend emulate` (oracle/emulate_machine.py): torch judges the IR executor's
outputs and, on the same inputs, the outputs of Triton's own machine code on the AMDGCN executor; a wrong result
names its layer. Real Triton compiles, real kernels, the worker function in process (so the machine code can be
edited the way an LLVM bug would leave it)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gfxhound.fuzz.capabilities import assume_all  # noqa: E402
from gfxhound.oracle import emulate_task  # noqa: E402
from gfxhound.oracle.judge import judge_execute  # noqa: E402
from gfxhound.spec import KernelSpec  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "emulate"
ENV = {"TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld", "TRITON_DEFAULT_FP_FUSION": "1"}
def _judged(spec: KernelSpec, monkeypatch, edit=None):
    """run_emulate's outcome and verdict for `spec` on gfx942; `edit`: a function applied to the machine code."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    if edit is not None:
        from gfxhound import compat
        real = compat.compile_for_amd

        def compile_and_edit(*args, **kwargs):
            compiled = real(*args, **kwargs)
            compiled.asm["amdgcn"] = edit(compiled.asm["amdgcn"])
            return compiled
        monkeypatch.setattr(compat, "compile_for_amd", compile_and_edit)
    folder = Path(tempfile.mkdtemp())
    task = {"spec": spec.to_json(), "caps": assume_all("gfx942").to_json(), "arch": "gfx942", "backend": "emulate",
            "task_dir": str(folder), "stderr_path": str(folder / "stderr.txt"), "llc": None, "timeout": 600}
    outcome = emulate_task.run_emulate(task)
    ops = [name for name, count in ((outcome.get("features") or {}).get("ops") or {}).items() for _ in range(count)]
    return outcome, judge_execute(outcome, spec.spec_hash(), "gfx942", "triton-test", {}, "emulate", ops)


@pytest.fixture(scope="module")
def vadd():
    """A generated kernel (spec_stream seed 17 with assume_all("gfx942"), the 42nd, max_ops 6) whose output
    rests on a v_add_f32_e32 of its machine code, and which runs right on the machine in about a second."""
    return KernelSpec.from_json(json.loads((DATA / "fp32_add_agrees.json").read_text()))


def test_the_machine_code_of_a_right_kernel_agrees(vadd, monkeypatch):
    outcome, execution = _judged(vadd, monkeypatch)
    assert outcome["machine"]["status"] == "agree", outcome["machine"]
    assert execution.verdict == "pass" and execution.checks["machine"] == "agree"
    assert "layer" not in execution.checks


def test_machine_code_that_is_wrong_where_the_ir_is_right_is_an_llvm_miscompile(vadd, monkeypatch):
    """The plant an LLVM bug would leave: the add selected as a subtract. The IR executor runs Triton's IR (right);
    the machine code is wrong against torch: verdict miscompile, stage machine-code, layer llvm."""
    def plant(text):
        edited, count = re.subn(r"\bv_add_f32_e32\b", "v_sub_f32_e32", text)
        assert count, "the kernel's machine code has no v_add_f32_e32 to plant in"
        return edited
    outcome, execution = _judged(vadd, monkeypatch, plant)
    assert outcome["checks"]["mismatches"] == 0  # the IR executor: right
    assert outcome["machine"]["status"] == "disagree", outcome["machine"]
    assert execution.verdict == "miscompile" and execution.stage == "machine-code"
    assert execution.checks["layer"] == "llvm"
    assert "elements wrong" in execution.message and "expected" in execution.message  # the comparison's words
    # its repro embeds the IR executor only, which agrees with torch here: it must say it cannot test, never
    # "bug absent" (a machine-code finding's repro once exited 0)
    from gfxhound.oracle.repro.choose import write_repro
    from gfxhound.fuzz.render import render
    caps = assume_all("gfx942")
    script = write_repro(execution, vadd, render(vadd, caps), caps, backend="emulate", toolchain="triton-test",
                         timeout_s=300, lld=ENV["TRITON_HIP_LLD_PATH"])
    path = Path(tempfile.mkdtemp()) / "repro.py"
    path.write_text(script)
    ran = subprocess.run([sys.executable, str(path), "--emulate"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, **ENV})
    assert ran.returncode == 125, ran.stdout + ran.stderr
    assert "machine code" in ran.stdout + ran.stderr


def test_a_wrong_ir_is_triton_s_whatever_the_machine_code_says(monkeypatch):
    """The real Triton bug of docs/findings.md (a tl.dot_scaled scale on a bf16 operand dropped on AMD): the IR is
    wrong, so the finding is Triton's (layer triton), and the machine code's run is recorded beside it."""
    spec = KernelSpec.from_json(json.loads((DATA / "dot_scaled_bf16_scale.json").read_text()))
    outcome, execution = _judged(spec, monkeypatch)
    assert execution.verdict == "miscompile" and execution.stage == "run"
    assert execution.checks["layer"] == "triton"
    assert execution.checks["machine"] in ("agree", "disagree", "unresolved", "hazard")


def test_an_unmodelled_instruction_leaves_the_machine_unresolved_and_the_kernel_judged(vadd, monkeypatch):
    """An instruction the machine does not run (v_cvt_pknorm_i16_f32: its text calls f32_to_snorm, which the guide
    never defines), put before the kernel's add: the machine cannot judge (named), and the kernel keeps the IR
    executor's verdict. (v_fma_mix_f32 served here until the machine learned to run it.)"""
    def plant(text):
        return re.sub(r"^(\s*)(v_add_f32_e32 )", r"\1v_cvt_pknorm_i16_f32 v0, v1, v2\n\1\2", text, count=1,
                      flags=re.M)
    outcome, execution = _judged(vadd, monkeypatch, plant)
    assert outcome["machine"]["status"] == "unresolved", outcome["machine"]
    assert execution.verdict == "pass" and execution.checks["machine"] == "unresolved"
    assert "v_cvt_pknorm_i16_f32" in execution.checks["machine_detail"]


def test_a_right_kernel_with_a_machine_hazard_is_a_hazard_finding(vadd, monkeypatch, tmp_path):
    """The plant a waitcnt bug leaves: every s_waitcnt removed. The values still come out right, so it is no wrong
    result: the verdict is `hazard` (stage machine-code, layer llvm), keyed by the reading instruction, stored in
    the corpus as a finding of the newest formats and listed apart; the campaign counts it and keeps its spec;
    its repro cannot test it under the embedded IR executor (exit 125), never "bug absent"."""
    from gfxhound.campaign.record import HAZARD_KERNELS_KEPT, count_machine
    from gfxhound.campaign.stats import Stats
    from gfxhound.corpus_store import Corpus
    from gfxhound.families import is_apart
    from gfxhound.oracle.repro.choose import kind_of
    from gfxhound.signature_machine import hazard_signature

    def plant(text):
        edited, count = re.subn(r"^\s*s_waitcnt\b.*\n", "", text, flags=re.M)
        assert count, "no s_waitcnt to drop"
        return edited
    outcome, execution = _judged(vadd, monkeypatch, plant)
    assert outcome["machine"]["status"] == "hazard", outcome["machine"]
    assert re.fullmatch(r"[sv]_\w+ reads a register no s_waitcnt retired", outcome["machine"]["key"])
    assert execution.verdict == "hazard" and execution.stage == "machine-code" and execution.is_bug
    assert execution.checks["layer"] == "llvm" and execution.checks["machine"] == "hazard"
    assert execution.signature == hazard_signature("gfx942", outcome["machine"]["key"])[1]
    assert execution.format == 3 and json.loads(execution.dumps())["verdict"] == "hazard"
    assert kind_of(execution, vadd, "emulate") == "execute"
    stats = Stats()
    for _ in range(HAZARD_KERNELS_KEPT + 3):
        count_machine(stats, execution, vadd)
    assert stats.execution["machine_code_hazards"] == HAZARD_KERNELS_KEPT + 3
    assert len(stats.machine_hazards) == HAZARD_KERNELS_KEPT
    kept = stats.machine_hazards[0]
    assert kept["spec"] == vadd.to_json() and kept["target"] == "gfx942" and "s_waitcnt" in kept["detail"]
    from gfxhound.fuzz.render import render
    from gfxhound.oracle.repro.choose import write_repro
    caps = assume_all("gfx942")
    path = tmp_path / "repro.py"
    path.write_text(write_repro(execution, vadd, render(vadd, caps), caps, backend="emulate",
                                toolchain="triton-test", timeout_s=300, lld=ENV["TRITON_HIP_LLD_PATH"]))
    ran = subprocess.run([sys.executable, str(path), "--emulate"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, **ENV})
    assert ran.returncode == 125 and "machine code" in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    # where the kernel runs (an AMD GPU) and its values come out right, as they did when the hazard was found, the
    # repro cannot call the bug absent: a child that reports right values stands in for that GPU here
    right = tmp_path / "right.py"
    right.write_text(path.read_text().replace("def child():\n", "def child():\n    print('gfxhound-result: 0 wrong')"
                                              "\n    sys.exit(0)\n", 1))
    ran = subprocess.run([sys.executable, str(right)], capture_output=True, text=True, timeout=600)
    assert ran.returncode == 125 and "the values are right" in ran.stdout, ran.stdout + ran.stderr
    corpus = Corpus(tmp_path / "corpus")
    corpus.record(execution.to_json(), {"spec.json": vadd.dumps()})
    finding = corpus.get(execution.signature)
    assert finding.verdict == "hazard" and finding.to_json()["format"] == 4 and is_apart(finding)


def test_the_machine_judgement_has_a_time_cap(vadd, monkeypatch):
    from gfxhound.oracle import emulate_machine
    real = emulate_machine.judge_machine
    monkeypatch.setattr(emulate_task, "judge_machine",
                        lambda run, emulated, compiled, arch: real(run, emulated, compiled, arch, cap=1e-4))
    outcome, execution = _judged(vadd, monkeypatch)
    assert outcome["machine"] == {"status": "unresolved", "text": "over the time cap (0.0001 s)",
                                  "s": outcome["machine"]["s"]}
    assert execution.verdict == "pass"


def test_a_campaign_reports_the_share_all_three_judged(tmp_path):
    """A short real campaign with the machine code on: each kernel the IR executor ran is counted, the share is in
    the summary's execution block, and the machine's unresolved constructs are tabled by name."""
    from gfxhound.campaign import Campaign, CampaignConfig
    from gfxhound.campaign.stats import summary_json
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), backend="emulate", kernels=6,
                            workers=2, seed=5, timeout=120, worker_env=dict(ENV, PYTHONWARNINGS="ignore"))
    campaign = Campaign(config)
    stats = campaign.run()
    ex = summary_json(stats, config, campaign.toolchain)["execution"]
    assert ex["machine_code_runs"] >= 1
    assert ex["machine_code_share"] == round(ex["machine_code_judged"] / stats.kernels, 4)
    assert sum(ex["machine_code_unresolved"].values()) <= ex["machine_code_runs"] - ex["machine_code_judged"]
    # the speed figure: both executors' seconds against the compile's, over the kernels the machine ran
    speed = ex["speed"]
    assert 1 <= speed["kernels"] <= ex["machine_code_runs"]
    assert speed["compile_s_median"] > 0 and speed["executors_s_median"] > 0 and speed["ratio_median"] > 0
    # no false alarm on this seeded set: a machine-code finding here is an executor bug or a real LLVM bug to reduce
    assert not [f for f in stats.findings.values() if f.get("stage") == "machine-code"], stats.findings


def test_the_speed_figure_is_the_median_kernel():
    from gfxhound.campaign.stats import _speed
    assert _speed([]) == {}
    assert _speed([(1.0, 3.0), (2.0, 2.0), (4.0, 1.0)]) == {"kernels": 3, "compile_s_median": 2.0,
                                                           "executors_s_median": 2.0, "ratio_median": 1.0}
