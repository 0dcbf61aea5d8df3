"""LLVM release bisection over Debian's llc packages (llvm-14, 15, 16, 19, 22; `make tools` installs them), on two
real AMDGPU backend bugs found with llvm-stress (tests/data/llvm, docs/findings.md): a segfault in "Rename
Disconnected Subregister Components" in llc 14 and 15 that 16 fixed, and a PromoteAlloca use-after-free that
only llc 19 has. A processor an old llc does not know is a skip, never "good"."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.bisect.llvm_releases import installed, llc_candidates

DATA = Path(__file__).resolve().parent / "data" / "llvm"
ROOT = Path(__file__).resolve().parent.parent
FLAGS = "-mtriple=amdgcn-amd-amdhsa -mcpu=gfx900 -O2"
MAJORS = [14, 15, 16, 19, 22]

needs_llcs = pytest.mark.skipif(not set(MAJORS) <= {m for m, _ in installed()},
                                reason="needs Debian's llvm-14, 15, 16, 19 and 22 (make tools)")


def _bisect(gfxhound_bin, tmp_path, *args):
    proc = subprocess.run([gfxhound_bin, "bisect", *args, "--llc-args", FLAGS, "--cache", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), proc.stderr


@needs_llcs
def test_a_crash_fixed_between_releases_is_named(tmp_path, gfxhound_bin):
    record, progress = _bisect(gfxhound_bin, tmp_path, "--ll", str(DATA / "segv-llc14-15.ll"), "--llc", "14..22",
                               "--fix")
    assert record["kind"] == "llvm-releases" and record["mode"] == "fix"
    assert record["first_new"].startswith("16.") and record["last_old"].startswith("15.")
    outcomes = {p["candidate"].split(".")[0]: p["outcome"] for p in record["probes"]}
    assert outcomes["14"] == "present" and outcomes["22"] == "absent"
    assert "Rename Disconnected Subregister Components" in next(p["detail"] for p in record["probes"]
                                                                if p["outcome"] == "present")
    assert "step 1 (of about 5): llc 22." in progress


@needs_llcs
def test_a_regression_in_one_release_is_named(tmp_path, gfxhound_bin):
    record, _ = _bisect(gfxhound_bin, tmp_path, "--ll", str(DATA / "promote-alloca-llc19.ll"), "--llc", "14..19")
    assert record["first_new"].startswith("19.") and record["last_old"].startswith("16.")
    assert record["confidence"] == 1.0 and record["untested_between"] == []


@needs_llcs
def test_an_llc_that_does_not_know_the_processor_cannot_test(tmp_path, gfxhound_bin):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "28f1b1b801f666bf", corpus / "28f1b1b801f666bf")
    proc = subprocess.run([gfxhound_bin, "bisect", "28f1b1b8", "--llc", "19..22", "--corpus", str(corpus),
                           "--cache", str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and "cannot test the bug" in last and "not a recognized processor" in last


def test_llc_ranges_and_lists(tmp_path):
    have = [m for m, _ in installed()]
    if len(have) < 2:
        pytest.skip("needs two Debian llvm-N packages")
    chosen = llc_candidates(f"{have[0]}..{have[-1]}")
    assert [label.split(".")[0] for label, _ in chosen] == [str(m) for m in have]
    from gfxhound.bisect.llvm_releases import LlcError
    with pytest.raises(LlcError, match="no llc 99 here"):
        llc_candidates(f"{have[0]}..99")
    with pytest.raises(LlcError, match="at least two"):
        llc_candidates(chosen[0][1])
