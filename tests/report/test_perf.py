"""Regressions without a crash: the fixed kernel set (corpus/perfset) compiles on the installed Triton with its
compile time and resources measured, and the comparison flags growth beyond both its thresholds (relative and
absolute) and a fall in occupancy, never a kernel that failed on one side."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.report.perf import compare, newly_failing

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"vgpr_count", "sgpr_count", "agpr_count", "vgpr_spill_count", "private_segment_fixed_size", "lds",
        "occupancy", "compile_s"}


def _figures(toolchain, **kernels):
    return {"toolchain": toolchain, "arch": "gfx942", "kernels": kernels}


def test_growth_beyond_both_thresholds_is_a_regression():
    base = {"vgpr_count": 64, "sgpr_count": 30, "vgpr_spill_count": 0, "occupancy": 8, "compile_s": 0.2, "lds": 0}
    old = _figures("a", k1=base, k2=base, k3=base, k4={"failed": "crash"})
    new = _figures("b", k1=dict(base, vgpr_count=70),  # +6 registers: under the absolute threshold
                   k2=dict(base, vgpr_count=96, vgpr_spill_count=3, occupancy=5),
                   k3=dict(base, compile_s=0.5), k4=base)
    found = {(r["kernel"], r["metric"]): r for r in compare(old, new)}
    assert set(found) == {("k2", "vgpr_count"), ("k2", "vgpr_spill_count"), ("k2", "occupancy"), ("k3", "compile_s")}
    assert found[("k2", "vgpr_count")]["growth"] == 0.5 and found[("k2", "occupancy")]["new"] == 5
    assert newly_failing(new, old) == ["k4"]


def _measure(gfxhound_bin, python, out):
    proc = subprocess.run([gfxhound_bin, "perf", "measure", "--set", str(ROOT / "corpus" / "perfset"), "--python",
                           python, "--repeat", "1", "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


def test_the_kernel_set_is_measured_on_the_installed_triton(tmp_path, gfxhound_bin):
    figures = _measure(gfxhound_bin, sys.executable, tmp_path / "new.json")
    assert figures["toolchain"] == "triton-3.9.0" and len(figures["kernels"]) == 12
    for name, f in figures["kernels"].items():
        assert KEYS <= set(f), (name, f)
        assert f["compile_s"] > 0 and 1 <= f["occupancy"] <= 10


@pytest.mark.slow
def test_the_previous_release_compared_with_the_current_one(tmp_path, gfxhound_bin, old_python):
    old = _measure(gfxhound_bin, old_python, tmp_path / "old.json")
    new = _measure(gfxhound_bin, sys.executable, tmp_path / "new.json")
    found = {(r["kernel"], r["metric"]) for r in compare(old, new)}
    assert ("perf-03", "sgpr_count") in found  # 24 -> 86 SGPRs from Triton 3.4.0 to 3.9.0 (docs/findings.md)
    assert not newly_failing(old, new)


def test_make_set_replaces_a_set_whole_and_keeps_its_readme(tmp_path, gfxhound_bin):
    """A new set is built aside and renamed into place (a reader never sees half of one); the person's README
    stays; an interpreter named by a relative path works (the kernels are measured from a temporary folder)."""
    kernel_set = tmp_path / "set"
    (kernel_set / "specs").mkdir(parents=True)
    (kernel_set / "README.md").write_text("notes\n")
    (kernel_set / "specs" / "stale.json").write_text("{}")
    venv = Path(sys.executable).parent.parent
    proc = subprocess.run([gfxhound_bin, "perf", "make-set", "--caps", str(ROOT / "corpus" / "perfset" / "caps.json"),
                           "--count", "2", "--set", str(kernel_set), "--python", "bin/python"],
                          capture_output=True, text=True, timeout=600, cwd=venv)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(p.name for p in (kernel_set / "specs").iterdir()) == ["perf-00.json", "perf-01.json"]
    assert (kernel_set / "README.md").read_text() == "notes\n"
    assert [p.name for p in tmp_path.iterdir()] == ["set"]  # no temporary or previous set left beside it
