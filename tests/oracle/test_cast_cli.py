"""`gfxhound casts` as a user runs it: a real table on gfx942, findings into the corpus, a draft from one; and the
one-line errors a user can cause."""
import subprocess

import pytest


def _run(gfxhound_bin, *args, timeout=600):
    return subprocess.run([gfxhound_bin, "casts", *args], capture_output=True, text=True, timeout=timeout)


def test_a_small_table_records_the_wrong_conversion_and_drafts_it(gfxhound_bin, tmp_path):
    import triton
    if triton.__version__ != "3.9.0":
        pytest.skip("the expectations are Triton 3.9.0's")
    args = ["--target", "gfx942", "--values", "3", "--sources", "fp16", "--formats", "fp8e5b16,fp8e5",
            "--roundings", "rtz", "--no-constants", "--corpus", str(tmp_path / "c")]
    run = _run(gfxhound_bin, *args)
    assert run.returncode == 0, run.stderr
    assert "WRONG fp16 -> fp8e5b16 (rtz)" in run.stdout and "WRONG fp16 -> fp8e5 " not in run.stdout
    assert "(new): fp16 -> fp8e5b16 (rtz)" in run.stdout
    finding = run.stdout.split("finding ")[1].split()[0]
    again = _run(gfxhound_bin, *args)
    assert f"finding {finding} (known)" in again.stdout
    report = subprocess.run([gfxhound_bin, "report", finding, "--corpus", str(tmp_path / "c")], capture_output=True,
                            text=True, timeout=600)
    assert report.returncode == 0, report.stderr
    draft = (tmp_path / "c" / finding / "draft" / "draft.md").read_text()
    assert "stores the wrong value: 1.0 becomes 0x3c (0.5)" in draft
    assert "<!-- checked before this draft was written:" in draft and "stored 0x3c, expected 0x40" in draft


@pytest.mark.parametrize("args, says", [
    (["--target", "gfx999"], "unknown target gfx999"),
    (["--values", "1"], "--values takes a number of at least 2"),
    (["--formats", "fp8e3"], "unknown fp8 format fp8e3"),
])
def test_user_errors_are_one_line(gfxhound_bin, tmp_path, args, says):
    run = _run(gfxhound_bin, *args, "--corpus", str(tmp_path / "c"), timeout=120)
    assert run.returncode == 2 and says in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
