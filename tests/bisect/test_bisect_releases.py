"""Release bisection over real Triton wheels (the two venvs `make test` builds: 3.4.0 and 3.9.0), on a compiler
crash our campaigns found on 3.4.0 and that 3.9.0 fixed, and on the frontend miscompile 3.5.0 introduced; the
venv cache is the one a user's bisection would fill (`--only-cached` keeps CI off the network)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.bisect.releases import ReleaseError, release_range, version_key

from fake_releases import fake_cache as _fake_cache

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ["2.3.1", "3.0.0", "3.4.0", "3.5.0rc1", "3.5.0", "3.5.1", "3.9.0"]


def test_the_range_is_the_final_releases_between_the_ends():
    assert release_range("3.4.0..3.9.0", sorted(VERSIONS, key=version_key)) == ["3.4.0", "3.5.0", "3.5.1", "3.9.0"]
    with pytest.raises(ReleaseError, match="not a published release"):
        release_range("3.4.0..3.10.0", VERSIONS)
    with pytest.raises(ReleaseError, match="older"):
        release_range("3.9.0..3.4.0", VERSIONS)
    with pytest.raises(ReleaseError, match="OLD..NEW"):
        release_range("3.4.0", VERSIONS)


@pytest.mark.slow
def test_a_fix_and_a_regression_are_bisected_over_real_releases(tmp_path, old_python, gfxhound_bin):
    old_venv = Path(old_python).parent.parent
    cache = _fake_cache(tmp_path, {"3.4.0": old_venv, "3.9.0": Path(sys.executable).parent.parent})
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "eaa292644627f3a9", corpus / "eaa292644627f3a9")
    common = ["--triton", "3.4.0..3.9.0", "--cache", str(cache), "--only-cached", "--json"]
    fix = subprocess.run([gfxhound_bin, "bisect", "eaa29264", "--fix", "--corpus", str(corpus), *common],
                         capture_output=True, text=True, timeout=900)
    assert fix.returncode == 0, fix.stderr[-2000:]
    record = json.loads(fix.stdout)
    assert (record["mode"], record["first_new"], record["last_old"]) == ("fix", "3.9.0", "3.4.0")
    saved = json.loads((corpus / "eaa292644627f3a9" / "bisect.json").read_text())
    assert saved["first_new"] == "3.9.0" and not saved["repro"].startswith("/")
    regression = subprocess.run([gfxhound_bin, "bisect", "--repro",
                                 str(ROOT / "corpus" / "03cc1f52451e1522" / "minimal.py"), *common],
                                capture_output=True, text=True, timeout=900)
    assert regression.returncode == 0, regression.stderr[-2000:]
    record = json.loads(regression.stdout)
    assert (record["first_new"], record["last_old"]) == ("3.9.0", "3.4.0")
    assert [p["outcome"] for p in record["probes"]] == ["absent", "present"]
    # the same script as a "fix" is refused in one line: 3.9.0, the end that should be fixed, is not
    wrong = subprocess.run([gfxhound_bin, "bisect", "--repro", str(ROOT / "corpus" / "03cc1f52451e1522" /
                                                                   "minimal.py"), "--fix", *common],
                           capture_output=True, text=True, timeout=900)
    last = wrong.stderr.strip().splitlines()[-1]
    assert wrong.returncode == 2 and last.startswith("gfxhound: 3.9.0") and "absent" in last


def test_an_interrupted_bisection_resumes_from_its_saved_probes(tmp_path, gfxhound_bin):
    """The saved probes of an interrupted run are reused: here the repro cannot run at all (its interpreter is a
    stub), so only the saved probes can give the answer."""
    cache = tmp_path / "venvs"
    for version in ("3.4.0", "3.9.0"):
        entry = cache / f"triton-{version}" / "bin"
        entry.mkdir(parents=True)
        (entry / "python").write_text("#!/bin/sh\nexit 125\n")  # any probe run now would say "cannot test"
        (entry / "python").chmod(0o755)
        (entry.parent / ".complete").write_text(version)
    script = tmp_path / "repro.py"
    script.write_text("import sys\nsys.exit(1)\n")
    args = [gfxhound_bin, "bisect", "--repro", str(script), "--triton", "3.4.0..3.9.0", "--cache", str(cache),
            "--only-cached", "--json"]
    first = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert first.returncode == 2  # the stub cannot test the bad end
    state = next(cache.glob("bisect-state-*.json"))
    state.write_text(json.dumps({"probes": [
        {"candidate": "3.9.0", "outcome": "present", "runs": ["present"], "seconds": 1.0, "detail": "saved"},
        {"candidate": "3.4.0", "outcome": "absent", "runs": ["absent"], "seconds": 1.0, "detail": "saved"}]}))
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    record = json.loads(again.stdout)
    assert (record["first_new"], record["last_old"]) == ("3.9.0", "3.4.0") and "resuming: 2 probes" in again.stderr
    assert not list(cache.glob("bisect-state-*.json"))  # a finished bisection leaves no state behind


def _stub_cache(tmp_path, exits: dict):
    """Release venvs whose `python` only exits as told (0 absent, 1 present, 125 cannot test), whatever it runs."""
    cache = tmp_path / "venvs"
    for version, code in exits.items():
        entry = cache / f"triton-{version}" / "bin"
        entry.mkdir(parents=True)
        (entry / "python").write_text(f"#!/bin/sh\nexit {code}\n")
        (entry / "python").chmod(0o755)
        (entry.parent / ".complete").write_text(version)
    return cache


def test_a_release_that_cannot_run_the_repro_moves_the_end_inward(tmp_path, gfxhound_bin):
    """3.4.0 cannot run the repro (an API it lacks, say): the good end moves to 3.5.0, and the record says so; when
    3.5.0 already has the bug, the answer is "present in every testable release"."""
    script = tmp_path / "repro.py"
    script.write_text("import sys\nsys.exit(1)\n")
    for exits, verdict in (({"3.4.0": 125, "3.5.0": 0, "3.9.0": 1}, "boundary"),
                           ({"3.4.0": 125, "3.5.0": 1, "3.9.0": 1}, "present-throughout")):
        cache = _stub_cache(tmp_path / verdict, exits)
        proc = subprocess.run([gfxhound_bin, "bisect", "--repro", str(script), "--triton", "3.4.0..3.9.0", "--cache",
                               str(cache), "--only-cached", "--json"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        record = json.loads(proc.stdout)
        assert record["verdict"] == verdict and record["testable"] == ["3.5.0", "3.9.0"]
        assert [(m["end"], m["from"], m["to"], list(m["why"])) for m in record["ends_moved"]] == [
            ("old", "3.4.0", "3.5.0", ["3.4.0"])]
        if verdict == "boundary":
            assert (record["first_new"], record["last_old"]) == ("3.9.0", "3.5.0")


def test_versions_sort_with_pre_releases_before_their_release():
    assert sorted(["3.10.0", "3.5.0", "3.5.0rc1", "3.4.0"], key=version_key) == ["3.4.0", "3.5.0rc1", "3.5.0",
                                                                                  "3.10.0"]


def test_a_repro_given_by_a_relative_path_runs(tmp_path, monkeypatch):
    """The default corpus is `corpus`, a relative path: the probe must not look for it from the script's folder."""
    from gfxhound.protocol import run_repro
    (tmp_path / "corpus" / "x").mkdir(parents=True)
    (tmp_path / "corpus" / "x" / "repro.py").write_text("import sys\nsys.exit(1)\n")
    monkeypatch.chdir(tmp_path)
    assert run_repro(Path(sys.executable), Path("corpus/x/repro.py"), 60)[0] == "present"


def test_a_bad_expect_is_one_line(gfxhound_bin, tmp_path):
    script = tmp_path / "r.py"
    script.write_text("print('x')\n")
    for expect, message in (("(", "not a regular expression"), ("x?", "matches empty output")):
        proc = subprocess.run([gfxhound_bin, "bisect", "--repro", str(script), "--expect", expect, "--triton",
                               "3.4.0..3.9.0"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
