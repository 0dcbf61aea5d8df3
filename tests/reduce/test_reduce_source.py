"""Source-level reduction of a user's script: C-Vise on a copy, the user's file untouched, the output still
matching; a script that does not show the expected output is refused in one line."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.slow
def test_a_user_script_reduces_to_the_failing_line(tmp_path, gfxhound_bin):
    if shutil.which("cvise") is None:
        pytest.skip("needs Debian's cvise (make tools installs it)")
    script = tmp_path / "user.py"
    shutil.copyfile(DATA / "user_script_arange.py", script)
    before = script.read_text()
    proc = subprocess.run([gfxhound_bin, "reduce", "--script", str(script), "--expect", "power of 2", "-j", "2",
                           "--timeout", "300"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert script.read_text() == before  # never touched
    reduced = tmp_path / "user.reduced.py"
    lines = [line for line in reduced.read_text().splitlines() if line.strip()]
    assert len(lines) <= 10 and any("tl.arange(0, 3)" in line for line in lines), lines
    run = subprocess.run([sys.executable, str(reduced)], capture_output=True, text=True, timeout=300)
    assert "power of 2" in run.stdout + run.stderr


def test_a_script_without_the_expected_output_is_refused(tmp_path, gfxhound_bin):
    script = tmp_path / "ok.py"
    script.write_text("print('all good')\n")
    proc = subprocess.run([gfxhound_bin, "reduce", "--script", str(script), "--expect", "power of 2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nothing to reduce" in proc.stderr
    proc = subprocess.run([gfxhound_bin, "reduce", "--script", str(script)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "--expect" in proc.stderr
