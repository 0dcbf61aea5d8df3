"""TTIR/TTGIR reduction and layer localisation: a real internal compiler error of an older release, reduced on the
IR its failing stage consumed, keeps its signature; the reduced file is compiled by the bundle's command."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.reduce.localise import REDUCE_LEVEL, localise
from gfxhound.reduce.mlir import strip_locations

ROOT = Path(__file__).resolve().parents[2]
OLD_ICE = "050407154b648f34"  # Triton 3.4.0: MFMA encoding assertion in a TTGIR pass (matrix_instr_nonkdim=4)
LOWERING_ICE = "bbdb50510c06510f"  # Triton 3.4.0: async copy left illegal while lowering TTGIR on RDNA


def test_locations_are_stripped_and_nothing_else():
    text = ('#loc = loc("/tmp/k.py":6:0)\nmodule {\n  %0 = arith.constant 1 : i32 loc(#loc1)\n'
            '  %1 = tt.splat %0 : i32 -> tensor<4xi32> loc(fused[#loc2, "x"])\n} loc(#loc)\n'
            '#loc1 = loc("/tmp/k.py":7:4)\n')
    assert strip_locations(text) == ("module {\n  %0 = arith.constant 1 : i32\n"
                                     "  %1 = tt.splat %0 : i32 -> tensor<4xi32>\n}\n")


def test_layers_follow_the_stage_and_the_traceback():
    assert localise("ttir", "triton.compiler.errors.CompilationError: at 3:4") == "frontend"
    assert localise("ttir", "RuntimeError: PassManager::run failed") == "ttir-passes"
    assert localise("ttgir", "") == "ttgir-passes"
    assert localise("llir", "PassManager::run failed | failed to legalize") == "llvm-lowering"
    assert localise("amdgcn", "LLVM ERROR: Cannot select", toolchain_has_amd_codegen=True) == "amd-codegen"
    assert localise("amdgcn", "LLVM ERROR: Cannot select") == "llvm-codegen"
    assert localise("llc-verify", "") == "external-llc"
    assert REDUCE_LEVEL[localise("llir", "")] == "ttgir" and REDUCE_LEVEL[localise("ttgir", "")] == "ttir"


def test_a_crash_with_no_ir_level_yet_is_refused_in_one_line(tmp_path, gfxhound_bin):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "a1a5b4ce020c7add", corpus / "a1a5b4ce020c7add")  # a link-stage (hsaco) crash
    proc = subprocess.run([gfxhound_bin, "reduce", "a1a5b4ce", "--corpus", str(corpus), "--level", "ir"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--level spec" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("sig,level,layer", [(OLD_ICE, "ttir", "ttgir-passes")])
def test_a_real_ice_of_an_older_release_reduces_at_ir_level(tmp_path, old_python, worker_env, sig, level, layer):
    if shutil.which("cvise") is None:
        pytest.skip("needs Debian's cvise (make tools installs it)")
    if "3.4.0" not in subprocess.run([old_python, "-c", "import triton; print(triton.__version__)"],
                                     capture_output=True, text=True).stdout:
        pytest.skip("the checked-in finding is from Triton 3.4.0")
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / sig, corpus / sig)
    proc = subprocess.run([old_python, "-P", "-m", "gfxhound", "reduce", sig[:8], "--corpus", str(corpus),
                           "--level", "ir", "--timeout", "120", "-j", "2", "--json"], capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, **worker_env))
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["level"] == level and summary["layer"] == layer and summary["signature"] == sig
    assert summary["lines_after"] <= 0.75 * summary["lines_before"], summary
    dest = corpus / sig / "reduced" / level
    reduced = (dest / f"reduced.{level}").read_text()
    assert "loc(" not in reduced and "tt.dot" in reduced  # the MFMA encoding comes from the dot
    check = subprocess.run([old_python, "-P", "-c", "import json, sys\nfrom gfxhound.reduce.mlir import "
                            "same_failure\nprop = json.load(open('reduce.json'))['property']\n"
                            f"sys.exit(0 if same_failure(prop, 'reduced.{level}') else 1)"],
                           cwd=dest, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, **worker_env))
    assert check.returncode == 0, check.stderr[-2000:]
    run = subprocess.run([old_python, "command.py"], cwd=dest, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **worker_env))
    assert run.returncode != 0 and "Assertion" in run.stderr  # the bundle's command shows the crash
