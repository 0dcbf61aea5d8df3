"""Naming the part of LLVM that makes machine code wrong (oracle/llvm_layer.py), checked against LLVM's own
history: for each historical case that a Debian llc gets wrong at -O2 (data/history/cases.json), the pass the fix
changed is what -opt-bisect-limit names. Real llc-16/19/22, real machine-code and IR executor runs."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.oracle.llvm_layer import Judge, name_layer

HISTORY = Path(__file__).parent / "data" / "history"
CASES = {c["slug"]: c for c in json.loads((HISTORY / "cases.json").read_text())}

# slug -> the pass opt-bisect names, and where the fix landed (the case's PR, cases.json)
NAMED = {
    "umul-lohi-i24-sign": ("AMDGPU DAG->DAG Pattern Instruction Selection", "performMulLoHiCombine, a DAG combine"),
    "sdiv64-sext32-as-24bit": ("AMDGPU IR optimizations", "AMDGPUCodeGenPrepare"),
    "udiv64-sext-shrunk": ("AMDGPU IR optimizations", "AMDGPUCodeGenPrepare"),
    "sdwa-sub-commute-cse": ("Machine Common Subexpression Elimination", "SDWA commuting, which MachineCSE trusted"),
    "uaddo-carry-fold": ("amdgpu-isel", "DAGCombiner's UADDO_CARRY fold"),
    "select-fcmp-one-nan": ("amdgpu-isel", "performSelectCombine"),
    "or-minus-one-fold": ("si-fold-operands", "SIFoldOperands"),
    # the fix is in si-pre-emit-peephole, which opt-bisect cannot skip: the search names the pass that makes the
    # pattern it mishandles (the layer text says so)
    "pre-emit-peephole-scc": ("si-shrink-instructions", "si-pre-emit-peephole (not skippable)"),
}


def _judge(case, opt=2):
    llc = case["llc_old"]
    if not shutil.which(llc):
        pytest.skip(f"{llc} is not installed (make tools)")
    return Judge(str(HISTORY / case["file"]), case["mcpu_old"], opt, case["launch"], llc)


@pytest.mark.parametrize("slug", sorted(NAMED))
def test_opt_bisect_names_the_pass_the_fix_changed(slug):
    found = name_layer(_judge(CASES[slug]))
    assert found.reproduced and found.method.startswith("-opt-bisect-limit")
    assert found.pass_name == NAMED[slug][0], found.steps
    # the search's own evidence: the pass before it leaves the code right
    assert found.steps[-1].endswith(("right", "wrong")) and found.pass_index > 0


def test_a_fault_no_pass_can_skip_is_put_in_selection_dag_when_global_isel_is_right(tmp_path):
    """The v4i16 shift kernel (docs/findings.md): wrong at -O0 and -O2, wrong with every skippable pass skipped,
    right through GlobalISel."""
    ll = tmp_path / "v4.ll"
    ll.write_text(V4I16)
    llc = "/usr/lib/llvm-22/bin/llc"
    found = name_layer(Judge(str(ll), "gfx942", 2, "out: u32[64] out; s: 5; grid: 1; block: 64", llc))
    assert found.reproduced and found.global_isel == "right" and found.pass_index == 0
    assert found.layer.startswith("SelectionDAG instruction selection"), found.steps


def test_right_code_names_no_layer():
    case = CASES["or-minus-one-fold"]
    found = name_layer(Judge(str(HISTORY / case["file"]), "gfx942", 0, case["launch"], "/usr/lib/llvm-22/bin/llc"))
    assert not found.reproduced and found.layer == "" and found.steps == ["llc -O0: right"]


def test_the_cli_prints_the_layer_of_each_wrong_level(tmp_path):
    ll = tmp_path / "v4.ll"
    ll.write_text(V4I16)
    out = subprocess.run([sys.executable, "-m", "gfxhound", "emulate", str(ll), "--launch",
                          "out: u32[64] out; s: 5; grid: 1; block: 64", "--opt", "0,2", "--name-layer", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 1, out.stderr
    layers = json.loads(out.stdout)["layers"]
    assert sorted(layers) == ["O0", "O2"]
    assert all(v["format"] == "gfxhound.llvm-layer/1" and v["global_isel"] == "right" for v in layers.values())


V4I16 = (Path(__file__).parents[1] / "data" / "llvm" / "v4i16-shift-zext-llc22.ll").read_text()


def test_without_a_pass_list_it_says_it_cannot_tell(monkeypatch):
    """An llc whose -opt-bisect-limit=-1 lists nothing (or does not finish): no pass is named by default."""
    case = CASES["or-minus-one-fold"]
    judge = _judge(case)
    monkeypatch.setattr(judge, "passes", lambda timeout=120: [])
    found = name_layer(judge)
    assert found.reproduced and found.pass_name == "" and found.layer.startswith("cannot tell: llc listed no pass")
