"""No process outlives its test: gfxhound.procgroup.run kills a timed-out or interrupted child's whole tree
(grandchildren included, even one re-parented to init or in a session of its own), C-Vise's workers die with a
stopped reduction, and tests/leftovers.py (run by .ci/run after the suite) finds and kills whatever still carries
the suite's marker."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from gfxhound import procgroup

ROOT = Path(__file__).resolve().parents[2]

# a child that starts a grandchild (`sleep 300`), writes the grandchild's pid to argv[1], says so, and waits
# (argv[3] == "exit": exits instead); argv[2]: "child" (a plain child), "orphan" (its shell parent exits:
# re-parented to init, still in our session), "setsid" (a session of its own: outside our group and session),
# "lost" (both: a session of its own, its parent gone; only its environment is still ours)
PARENT = textwrap.dedent("""
    import subprocess, sys, time
    how = sys.argv[2]
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if how == "orphan":
        subprocess.run(["sh", "-c", 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$0"', sys.argv[1]])
    elif how == "lost":
        subprocess.run([sys.executable, "-c", "import subprocess, sys; open(sys.argv[1], 'w').write(str("
                        "subprocess.Popen(['sleep', '300'], start_new_session=True, stdin=-3, stdout=-3, "
                        "stderr=-3).pid))", sys.argv[1]])
    else:
        child = subprocess.Popen(["sleep", "300"], start_new_session=how == "setsid", **quiet)
        open(sys.argv[1], "w").write(str(child.pid))
    print("started", flush=True)
    if sys.argv[3:] != ["exit"]:
        time.sleep(300)
""")


def running(pid: int) -> bool:
    """The process exists and has not ended (a zombie waiting for init's reaping has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return False
    return raw[raw.rfind(")") + 2] not in "ZX"


def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def grandchild(pid_file: Path, within: float = 10.0) -> int:
    deadline = time.monotonic() + within
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the child never started its grandchild"
        time.sleep(0.05)
    return int(pid_file.read_text())


def kill_if_running(pid):
    if pid and running(pid):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["child", "orphan", "setsid", "lost"])
def test_a_timeout_kills_the_grandchild_too(tmp_path, how):
    pid_file = tmp_path / "grandchild.pid"
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        procgroup.run([sys.executable, "-c", PARENT, str(pid_file), how], timeout=1, capture_output=True,
                      text=True)
    pid = grandchild(pid_file)
    try:
        assert gone(pid), f"the grandchild {pid} ({how}) outlived the timeout"
        assert time.monotonic() - start < procgroup.GRACE_S + 10
        assert caught.value.timeout == 1 and caught.value.stdout == "started\n"  # the output so far, as run's
    finally:
        kill_if_running(pid)


@pytest.mark.parametrize("how", ["orphan", "lost"])
def test_what_a_child_that_exits_normally_left_running_is_ended(tmp_path, how):
    pid_file = tmp_path / "grandchild.pid"
    done = procgroup.run([sys.executable, "-c", PARENT, str(pid_file), how, "exit"], timeout=60,
                         capture_output=True, text=True)
    pid = grandchild(pid_file)
    try:
        assert (done.returncode, done.stdout) == (0, "started\n")
        assert gone(pid, within=1), f"the grandchild {pid} ({how}) outlived its parent's normal exit"
    finally:
        kill_if_running(pid)


def test_plain_subprocess_run_leaves_the_grandchild_this_is_what_procgroup_prevents(tmp_path):
    """The scenario above is real: subprocess.run kills only its direct child (we clean up after it here)."""
    pid_file = tmp_path / "grandchild.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", PARENT, str(pid_file), "child"], timeout=1, capture_output=True)
    pid = grandchild(pid_file)
    try:
        assert not gone(pid, within=0.5)
    finally:
        kill_if_running(pid)


def test_an_interrupt_while_waiting_kills_the_tree_and_is_re_raised(tmp_path, monkeypatch):
    pid_file = tmp_path / "grandchild.pid"
    waiting = subprocess.Popen.communicate

    def interrupted(self, input=None, timeout=None):  # Ctrl-C once the grandchild runs
        grandchild(pid_file)
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        procgroup.run([sys.executable, "-c", PARENT, str(pid_file), "child"], timeout=60, capture_output=True)
    monkeypatch.setattr(subprocess.Popen, "communicate", waiting)
    pid = grandchild(pid_file)
    try:
        assert gone(pid), "the grandchild outlived the interrupt"
    finally:
        kill_if_running(pid)


def test_results_are_subprocess_runs(tmp_path):
    """Same CompletedProcess, same errors, output to pipes or to a file."""
    argv = ["sh", "-c", "echo out; echo err >&2; exit 3"]
    mine, theirs = (run(argv, timeout=30, capture_output=True, text=True) for run in (procgroup.run, subprocess.run))
    assert (mine.args, mine.returncode, mine.stdout, mine.stderr) == (theirs.args, 3, "out\n", "err\n")
    with open(tmp_path / "log", "w") as log:
        done = procgroup.run(argv, timeout=30, stdout=log, stderr=subprocess.STDOUT)
    assert done.returncode == 3 and done.stdout is None and (tmp_path / "log").read_text() == "out\nerr\n"
    assert procgroup.run(["cat"], timeout=30, input=b"in", capture_output=True).stdout == b"in"
    with pytest.raises(subprocess.CalledProcessError) as failed:
        procgroup.run(argv, timeout=30, check=True, capture_output=True)
    assert failed.value.returncode == 3 and failed.value.stdout == b"out\n"
    with pytest.raises(OSError):
        procgroup.run([str(tmp_path / "no-such-tool")], timeout=30)


def test_a_timed_out_probe_leaves_no_grandchild(tmp_path):
    """protocol.run_probe (every repro run: bisection, verification, the nightly) kills the repro's children."""
    from gfxhound.protocol import SKIP, run_probe
    pid_file = tmp_path / "grandchild.pid"
    outcome, detail = run_probe([sys.executable, "-c", PARENT, pid_file, "child"], timeout=1)
    pid = grandchild(pid_file)
    try:
        assert (outcome, detail) == (SKIP, "did not finish in 1 s")
        assert gone(pid), "the repro's child outlived the probe's timeout"
    finally:
        kill_if_running(pid)


def test_a_timed_out_llvm_reduce_leaves_no_test_process(tmp_path):
    """run_llvm_reduce stopped by its timeout: its test processes die with it (a stand-in for llvm-reduce here)."""
    from gfxhound.reduce.llvm_ir import run_llvm_reduce
    pid_file = tmp_path / "grandchild.pid"
    run_llvm_reduce([sys.executable, "-c", PARENT, str(pid_file), "child"], tmp_path / "reduce.log", 1)
    pid = grandchild(pid_file)
    try:
        assert "stopped after 1 s" in (tmp_path / "reduce.log").read_text()
        assert gone(pid), "llvm-reduce's test process outlived the timeout"
    finally:
        kill_if_running(pid)


USER_SCRIPT = """\
import os, subprocess, sys, time
a = 1
b = 2
c = 3
if len(open(__file__).read().splitlines()) == {lines}:  # the whole script: prints the marker at once
    print("MARKER" + "-procgroup")  # spelled apart: a traceback quoting this line must not match
    sys.exit(0)
child = subprocess.Popen(["sleep", "300"])  # any candidate C-Vise makes: a slow test with a child of its own
open(os.path.join({pids!r}, str(child.pid)), "w").close()
time.sleep(300)
"""


def test_a_stopped_cvise_reduction_leaves_no_worker_or_test_behind(tmp_path, monkeypatch):
    """reduce_script (C-Vise) stopped by its timeout while its workers' interestingness tests (and their
    children) run: none of them may outlive it. Before procgroup, the pebble workers and tests were orphaned."""
    cvise = shutil.which("cvise")
    if cvise is None:
        pytest.skip("needs Debian's cvise (make tools installs it)")
    from gfxhound.reduce.source import reduce_script
    pids = tmp_path / "pids"
    pids.mkdir()
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT.format(lines=USER_SCRIPT.count("\n"), pids=str(pids)))
    work = tmp_path / "tmp"  # C-Vise's folders and ours, so that what is left can be told by its paths
    work.mkdir()
    monkeypatch.setenv("TMPDIR", str(work))
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    # C-Vise's start (its pool, the first test of the unchanged script) took over 30 s inside the full suite on 2
    # cores (alone: under 30 s); a stop before any candidate ran proves nothing either way, so it is a skip that
    # says so, never a pass (the plain-grandchild, own-session and llvm-reduce tests above still run)
    result = reduce_script(script, "MARKER-procgroup", cvise=cvise, jobs=2, timeout_s=60, test_timeout=120)
    started = [int(p.name) for p in pids.iterdir()]
    try:
        if not started:
            pytest.skip("C-Vise started no candidate test within 60 s on this machine: nothing to check")
        assert [pid for pid in started if not gone(pid)] == []
        assert ours(tmp_path) == []
        assert result.lines_after == result.lines_before  # no candidate was interesting; the script is kept
    finally:
        for pid in started:
            kill_if_running(pid)


def ours(folder: Path) -> list:
    """(pid, command line) of every live process (but this one) with `folder` in its working folder or arguments."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid() or not running(int(name)):
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            with open(f"/proc/{name}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(folder)) or str(folder) in command:
            found.append((int(name), command))
    return found


def test_leftovers_reports_and_kills_a_process_left_with_the_suite_marker():
    """.ci/run's check: a process that still carries GFXHOUND_SUITE_RUN after the suite (here a planted `sleep`
    in a session of its own) is printed and killed, and the check fails; its own parents carry the marker too and
    are left alone; without leftovers it passes."""
    marker = f"test-{uuid.uuid4().hex}"
    env = dict(os.environ, GFXHOUND_SUITE_RUN=marker)
    planted = subprocess.Popen(["sleep", "300"], env=env, start_new_session=True)
    try:
        check = [sys.executable, str(ROOT / "tests" / "leftovers.py"), "--settle", "0.5"]
        proc = subprocess.run(["sh", "-c", '"$@"; echo "exit $?"', "sh", *check], env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.stdout.splitlines()[-1] == "exit 1", proc.stdout + proc.stderr
        reported = [line for line in proc.stdout.splitlines() if line.startswith("  pid ")]
        assert len(reported) == 1 and f"pid {planted.pid}," in reported[0] and "sleep 300" in reported[0]
        assert planted.wait(timeout=10) == -signal.SIGKILL
        again = subprocess.run(check, env=env, capture_output=True, text=True, timeout=60)
        assert again.returncode == 0, again.stdout + again.stderr
    finally:
        if planted.poll() is None:
            planted.kill()
            planted.wait(timeout=10)


@pytest.mark.parametrize("suite_exit, plant, expect", [(0, True, 1), (3, True, 2), (0, False, 0)])  # make: 2
def test_ci_run_fails_on_a_leftover_and_keeps_the_suite_status(tmp_path, suite_exit, plant, expect):
    """.ci/run against a stand-in `make test` (a Makefile here) that may leave a `sleep` running: the leftover is
    reported and killed, and the exit is the suite's when it failed, else the leftover check's."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    shutil.copy(ROOT / "tests" / "leftovers.py", tmp_path / "tests" / "leftovers.py")
    pid_file = tmp_path / "leftover.pid"
    recipe = f"sleep 300 </dev/null >/dev/null 2>&1 & echo $$! > {pid_file}; " if plant else ""
    (tmp_path / "Makefile").write_text(f"test:\n\t@{recipe}exit {suite_exit}\n")
    proc = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True, text=True, timeout=120)
    pid = int(pid_file.read_text()) if plant else None
    try:
        assert proc.returncode == expect, proc.stdout + proc.stderr
        if plant:
            assert f"pid {pid}," in proc.stdout and "sleep 300" in proc.stdout
            assert gone(pid)
        else:
            assert "no process outlived the suite" in proc.stdout
    finally:
        kill_if_running(pid)
