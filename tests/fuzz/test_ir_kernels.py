"""Generated LLVM IR kernels (fuzz/ir_kernels.py) and their campaign (oracle/ir_campaign.py,
`gfxhound emulate-campaign`): seeded kernels are what real llc-22 takes, every knob of the table is reached, a
seed names one kernel, nothing in them can be undefined behaviour by the flags they carry, and a small real
campaign's counts add up."""
import argparse
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.cli.common import UserError
from gfxhound.cli.emulate_campaign import add_emulate_campaign, run_emulate_campaign
from gfxhound.fuzz.ir_kernels import FEATURES, kernel
from gfxhound.oracle.crosscheck import kernel_names, make_launch, ir_params

LLC = codegen.find_llc() if Path(codegen.DEFAULT_LLC).exists() or shutil.which("llc-22") else None
needs_llc = pytest.mark.skipif(LLC is None, reason="no llc-22 (Debian's llvm-22)")
SEEDS = range(150)


@pytest.fixture(scope="module")
def kernels():
    return [kernel(s) for s in SEEDS]


def test_a_seed_names_one_kernel():
    assert kernel(17).text == kernel(17).text and kernel(17).launch == kernel(17).launch
    assert kernel(17).text != kernel(18).text


def test_every_feature_of_the_knob_table_is_reached(kernels):
    reached = set().union(*(k.features for k in kernels))
    assert set(FEATURES) - reached == set()


def test_no_flag_or_intrinsic_operand_that_could_make_poison(kernels):
    for k in kernels:
        assert not re.search(r"\b(nsw|nuw|exact|disjoint|samesign)\b", k.text), k.seed
        for call in re.findall(r"= call \S+ @llvm\.(?:ctlz|cttz|abs)\.[\w.]+\((.*)\)", k.text):
            assert call.endswith("i1 false"), (k.seed, call)  # zero (INT_MIN) is defined
        for line in re.findall(r"= (?:sdiv|srem) .*", k.text):  # the divisor is the guarded select
            assert re.search(r", %g\d+$", line), (k.seed, line)
        for line in re.findall(r"= (?:udiv|urem) .*", k.text):
            assert re.search(r", %v\d+$", line), (k.seed, line)  # the `or b, 1`
        for call in re.findall(r"= call i32 @llvm\.amdgcn\.mov\.dpp\.i32\((.*)\)", k.text):
            assert call.endswith(", i32 15, i32 15, i1 true"), (k.seed, call)  # every lane written


def test_the_launch_fits_the_kernel(kernels):
    for k in kernels[:40]:
        (name,) = kernel_names(k.text)
        launch = make_launch(k.launch, ir_params(k.text, name), seed=1)
        assert launch.block[0] in (64, 128, 256) and all(launch.roles[n] in ("in", "out") for n in launch.roles)


@needs_llc
def test_seeded_kernels_compile_with_real_llc(kernels, tmp_path):
    for k in kernels[:60]:
        path = tmp_path / f"{k.name}.ll"
        path.write_text(k.text)
        out = subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O2", "-filetype=null",
                              str(path)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, (k.seed, out.stderr[-2000:])


def _parser():
    parser = argparse.ArgumentParser()
    add_emulate_campaign(parser.add_subparsers())
    return parser


def test_the_parser_and_its_one_line_errors():
    args = _parser().parse_args(["emulate-campaign", "--count", "3", "--mcpu", "gfx942,gfx950", "--workers", "1"])
    assert (args.count, args.mcpu, args.opt, args.time_cap, args.func) == (3, "gfx942,gfx950", "0,2", 20.0,
                                                                           run_emulate_campaign)
    with pytest.raises(SystemExit):
        _parser().parse_args(["emulate-campaign", "--count", "0"])
    for bad in (["--mcpu", "gfx1100"], ["--mcpu", ","], ["--opt", "0,7"]):
        with pytest.raises(UserError):
            run_emulate_campaign(_parser().parse_args(["emulate-campaign", "--count", "1", *bad]))


@needs_llc
def test_a_small_real_campaign_adds_up(tmp_path, capsys):
    args = _parser().parse_args(["emulate-campaign", "--count", "6", "--mcpu", "gfx942", "--opt", "0,2",
                                 "--seed", "5", "--workers", "2", "--out", str(tmp_path), "--json"])
    code = run_emulate_campaign(args)
    import json
    summary = json.loads(capsys.readouterr().out)
    t = summary["targets"]["gfx942"]
    assert summary["kernels"] == t["kernels"] == 6
    assert sum(t["exits"].values()) == 6 and t["judged"] == t["exits"]["0"] + t["exits"]["1"]
    assert len(summary["disagreements"]) == t["exits"]["1"] and code == (1 if t["exits"]["1"] else 0)
    unresolved_kernels = t["exits"]["125"]
    assert sum(row["kernels"] for row in summary["unresolved"]) >= unresolved_kernels
    assert summary["timing"]["kernels"] >= t["judged"] and summary["timing"]["compile"]["p50"] > 0
    assert (tmp_path / "summary.json").is_file()
    for d in summary["disagreements"]:  # each kept so it re-runs alone
        stem = tmp_path / f"gfx942-k{d['kernel_seed']}"
        assert stem.with_suffix(".ll").is_file() and stem.with_suffix(".launch").is_file()


@needs_llc
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the executors wrap on purpose
def test_a_kernel_over_the_time_cap_is_unresolved():
    from gfxhound.oracle.ir_campaign import OVER_CAP, judge_one
    out = judge_one({"kernel_seed": 3, "input_seed": 0, "target": "gfx942", "opts": [2], "llc": None,
                     "time_cap": 1e-9})
    assert out["unresolved"] == [{"run": "machine", "construct": OVER_CAP}] and out["exit"] not in (0, 1)
    assert out["timings"]["machine"] > 0 and out["timings"]["compile"] > 0


def test_the_unresolved_table_flags_machine_opcodes():
    from gfxhound.oracle.ir_campaign import construct_key, opcode_class
    assert opcode_class("v_bitop3_b16: D0 is written in part") == "VALU"
    assert opcode_class("s_pack_ll_b32_b16: not modelled") == "SALU"
    assert opcode_class("call to llvm.bswap.i32") == opcode_class("over the time cap") == ""
    assert construct_key("executor error: IR line 105 (sdiv %v72)") == construct_key("executor error: IR line 7 "
                                                                                      "(sdiv %x)")
