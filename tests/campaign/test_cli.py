"""The command line: real short campaigns, user errors as one line with a non-zero exit, interruption."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gfxhound.corpus_store import Corpus


def run_cli(gfxhound_bin, *args, timeout=600, **kw):
    return subprocess.run([gfxhound_bin, *args], capture_output=True, text=True, timeout=timeout, **kw)


def test_short_campaign_summary_and_coverage(gfxhound_bin, tmp_path):
    proc = run_cli(gfxhound_bin, "fuzz", "--target", "gfx942,gfx1100", "--budget", "24", "--workers", "2",
                   "--corpus", str(tmp_path / "c"), "--json", "--seed", "7")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "fuzz-summary.json").read_text())
    jsonschema.validate(summary, schema)
    assert summary["kernels"] == 24
    assert sum(summary["verdicts"].values()) == 24
    assert summary["verdicts"].get("unresolved", 0) == 0, summary["unresolved"]
    assert summary["toolchain"].startswith("triton-3.")
    cov = summary["coverage"]
    assert cov["target:gfx942"]["kernels"] == 12 and cov["target:gfx1100"]["kernels"] == 12
    assert any(key.startswith("op:dot") for key in cov)
    assert "control:for" in cov and "control:if" in cov
    reach = summary["reach"]  # the reach matrix of both targets (docs/reach.md), each unreached cell with a reason
    assert reach["targets"] == ["gfx942", "gfx1100"] and 0 < reach["reached"] <= reach["supported"]
    assert all(cell["floor"] or cell["why"] for cell in reach["unreached"])
    res = summary["resources"]
    # every kernel that compiled has its resources counted: the passes, and the static memory-model violations
    # (Triton 3.9 meets them on gfx942: docs/collectives.md), the only miscompiles a compile campaign can report
    compiled = summary["verdicts"].get("pass", 0) + summary["verdicts"].get("miscompile", 0)
    assert res["kernels"] == compiled and res["max_vgpr"] > 0
    assert all(f["stage"] == "memory-model" for f in summary["findings"] if f["verdict"] == "miscompile")


@pytest.mark.parametrize("args, words", [
    (["fuzz", "--target", "gfx9999", "--budget", "1"], "unknown target"),
    (["fuzz", "--budget", "soon"], "--budget"),
    (["fuzz", "--family", "collectives", "--patterns", "all_to_some", "--budget", "1"], "unknown pattern"),
    (["fuzz", "--patterns", "put_signal", "--budget", "1"], "need --family collectives"),
    (["fuzz", "--family", "collectives", "--controls", "2", "--budget", "1"], "from 0 to 1"),
    (["fuzz", "--backend", "interpret", "--plant", "lost-signal", "--budget", "1"], "needs a GPU"),
    (["fuzz", "--backend", "device", "--budget", "1"], "found no GPU"),
    (["fuzz", "--backend", "interpret", "--llc", "auto", "--budget", "1"], "--llc checks compiled code"),
    (["fuzz", "--backend", "interpret", "--plant", "missing-barrier", "--budget", "1"], "needs a GPU"),
    (["fuzz", "--timeout", "0", "--budget", "1"], "--timeout"),
    (["fuzz", "--workers", "0", "--budget", "1"], "--workers"),
    (["fuzz", "--gpu-workers", "0", "--budget", "1"], "--gpu-workers"),
    (["fuzz", "--shape", "attention,gemv", "--budget", "1"], "unknown shape 'gemv'"),
    (["fuzz", "--shape", "attention", "--family", "collectives", "--budget", "1"], "--shape draws single-rank"),
    (["corpus", "show", "feedbeef"], "no corpus at"),  # a corpus that does not exist is not an empty one
])
def test_user_errors_are_one_line(gfxhound_bin, tmp_path, args, words):
    proc = run_cli(gfxhound_bin, *args, "--corpus", str(tmp_path / "c"))
    assert proc.returncode == 2
    assert words in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words", [
    ([], "say what to bisect over, once"),
    (["--llc", "14..22"], "give the IR"),
    (["--ll", "missing.ll", "--llc", "14..22"], "--ll missing.ll: no such file"),
    (["feedbeef", "--llc", "14..22"], "no finding matches"),
    (["feedbeef", "--repro", "r.py", "--llc", "14..22"], "name one thing to bisect"),
    (["--repro", "r.py", "--llc", "14..22"], "bisects a .ll"),
    (["--triton", "3.4.0..3.9.0", "--repeat", "0"], "--repeat"),
    (["--triton", "3.4.0..3.9.0", "--expect", "("], "not a regular expression"),
    (["--commits", "main", "--repo", ".", "--recipe", "llvm"], "give a range OLD..NEW"),
])
def test_bisect_user_errors_are_one_line(gfxhound_bin, tmp_path, args, words):
    """The command line parses; bisect/run.py says what is wrong with the request (one line, exit 2)."""
    test_user_errors_are_one_line(gfxhound_bin, tmp_path, ["bisect", *args], words)


def test_corrupt_corpus_entry_is_a_clear_error(gfxhound_bin, tmp_path):
    bad = tmp_path / "c" / "0123456789abcdef"
    bad.mkdir(parents=True)
    (bad / "finding.json").write_text("{ not json")
    proc = run_cli(gfxhound_bin, "corpus", "list", "--corpus", str(tmp_path / "c"))
    assert proc.returncode == 2 and "corrupt" in proc.stderr and "Traceback" not in proc.stderr


def _wait_for_findings(root: Path, deadline):
    while time.time() < deadline:
        if root.exists() and any((d / "finding.json").exists() for d in root.iterdir() if d.is_dir()):
            return True
        time.sleep(0.2)
    return False


def test_campaign_killed_mid_write_leaves_a_loadable_corpus(gfxhound_bin, tmp_path):
    """SIGKILL the whole campaign while it records (a tiny compile timeout makes findings frequent)."""
    root = tmp_path / "c"
    proc = subprocess.Popen([gfxhound_bin, "fuzz", "--budget", "400", "--workers", "2", "--timeout", "0.2",
                             "--corpus", str(root), "--quiet", "--seed", "9"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _wait_for_findings(root, time.time() + 240), "no finding was recorded"
        time.sleep(1.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    findings = Corpus(root).findings()
    assert findings
    for finding in findings:
        assert finding.count >= 1
        for example in Corpus(root).example_dirs(finding.signature):
            json.loads((example / "spec.json").read_text())
            json.loads((example / "run.json").read_text())
    listed = run_cli(gfxhound_bin, "corpus", "list", "--corpus", str(root), "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)["findings"]) == len(findings)


def _stop_mid_campaign(gfxhound_bin, root, sig, *extra):
    proc = subprocess.Popen([gfxhound_bin, "fuzz", "--budget", "400", "--workers", "2", "--timeout", "0.2",
                             "--corpus", str(root), "--json", "--seed", "9", *extra], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert _wait_for_findings(root, time.time() + 240)
    os.killpg(proc.pid, sig)  # the whole group, as a terminal's Ctrl-C and a CI runner's cancel do
    signalled = time.time()
    out, err = proc.communicate(timeout=120)
    return proc, time.time() - signalled, out, err


def test_ctrl_c_keeps_what_was_found(gfxhound_bin, tmp_path):
    root = tmp_path / "c"
    proc, took, out, err = _stop_mid_campaign(gfxhound_bin, root, signal.SIGINT)
    assert proc.returncode == 130, err[-2000:]  # what a shell reports for a Ctrl-C; the summary is still written
    summary = json.loads(out)
    assert summary["interrupted"] is True and summary["stopped_by"] == "interrupt"
    assert "Ctrl-C: no new kernels" in err
    assert len(Corpus(root).findings()) >= 1
    assert took < 30 + 20, took  # the grace, then the pools' stop


def test_sigterm_writes_the_summary_within_the_grace(gfxhound_bin, tmp_path):
    """CI cancels a job with SIGTERM to the whole process group: the workers die of it too (never a crash
    finding), and the campaign still writes its summary and keeps its corpus."""
    root = tmp_path / "c"
    proc, took, out, err = _stop_mid_campaign(gfxhound_bin, root, signal.SIGTERM, "--grace", "5")
    assert proc.returncode == 143, err[-2000:]  # 128 + SIGTERM: CI tells a cancelled job from a finished one
    summary = json.loads(out)
    assert summary["stopped_by"] == "terminate" and summary["interrupted"] is True
    assert took < 5 + 20, took
    assert not any("signal:15" in f["first_error_line"] for f in summary["findings"])
    assert len(Corpus(root).findings()) >= 1


@pytest.mark.slow
def test_no_linker_for_an_old_release_stops_with_one_line(old_python, tmp_path):
    """Triton < 3.9 links with an external ld.lld: without one, say what to install instead of 'finding' bugs."""
    script = ("import sys\nfrom gfxhound.campaign import Campaign, CampaignConfig, CampaignError\n"
              "if __name__ == '__main__':\n"
              f"    cfg = CampaignConfig(targets=['gfx942'], corpus={str(tmp_path / 'c')!r}, kernels=4, workers=1,\n"
              "                         worker_env={'TRITON_HIP_LLD_PATH': '/nonexistent/ld.lld'})\n"
              "    try:\n        Campaign(cfg).run()\n    except CampaignError as exc:\n"
              "        print('ERR', exc); sys.exit(2)\n")
    (tmp_path / "run.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_HIP_LLD_PATH"}
    proc = subprocess.run([old_python, "-P", str(tmp_path / "run.py")], capture_output=True, text=True,
                          timeout=600, env=env)
    if "ERR" not in proc.stdout and Path("/usr/bin/ld.lld").exists():
        pytest.skip("this machine has /usr/bin/ld.lld, which Triton finds by itself")
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert "lld-22" in proc.stdout and "TRITON_HIP_LLD_PATH" in proc.stdout
    assert not (tmp_path / "c").exists() or not Corpus(tmp_path / "c").findings()


def test_an_unwritable_corpus_is_one_line(gfxhound_bin):
    proc = run_cli(gfxhound_bin, "fuzz", "--target", "gfx942", "--budget", "1", "--corpus", "/proc/gfxhound-corpus")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("gfxhound: cannot write the corpus at /proc/gfxhound-corpus (No such file or "
                                   "directory); give a writable --corpus")


def test_a_triton_that_does_not_import_is_one_line_before_any_worker(tmp_path):
    """A broken install (its shared library missing) is found once, in the main process; no worker starts."""
    shim = tmp_path / "shim" / "triton"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('libtriton.so: cannot open shared object file')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "shim"))
    proc = subprocess.run([sys.executable, "-m", "gfxhound", "fuzz", "--target", "gfx942", "--budget", "1",
                           "--corpus", str(tmp_path / "c")], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("gfxhound: Triton is installed but does not import (ImportError: libtriton.so: "
                                   "cannot open shared object file); reinstall it")
    assert not (tmp_path / "c").exists()


def test_fail_on_new_and_a_summary_a_ci_log_can_use(gfxhound_bin, tmp_path):
    """--fail-on-new exits 1 when the campaign found what the corpus did not have, 0 when it found only known
    findings; the summary is on stdout, and in a log (not a terminal) every id is whole and every first error line
    complete, however long."""
    args = ["fuzz", "--target", "gfx942", "--budget", "8", "--workers", "2", "--corpus", str(tmp_path / "c"),
            "--seed", "3", "--quiet", "--fail-on-new", "--known", "none"]  # seed 3 meets caad2c44, drafted in corpus/
    first = run_cli(gfxhound_bin, *args)
    ids = [f.signature for f in Corpus(tmp_path / "c").findings()]
    assert ids, "seed 3's first 8 kernels on gfx942 have findings (Triton 3.9.0's memory-model rule)"
    assert first.returncode == 1, first.stderr[-2000:]
    assert first.stderr.strip() == "", first.stderr  # --quiet: no progress; the summary is stdout's
    for signature in ids:
        assert signature in first.stdout.split(), first.stdout  # a whole word: never cut by a column width
    for finding in Corpus(tmp_path / "c").findings():
        from gfxhound.signature import headline
        assert headline(finding.message) in first.stdout
    again = run_cli(gfxhound_bin, *args)
    assert again.returncode == 0, again.stdout + again.stderr[-2000:]  # the same kernels: nothing new
