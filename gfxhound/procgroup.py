"""Run a child whose own children must die with it: `run` is `subprocess.run` that never leaves orphans.

Why: `subprocess.run(argv, timeout=...)` kills only the direct child on a timeout, a Ctrl-C or an exception. The
tools we time out have children of their own: C-Vise (a pebble pool of workers, each running the interestingness
test, which runs a repro, which runs a compile), llvm-reduce (its `-j` test processes), a repro script (its
`--child` compile), a build step (ninja's compilers), pip. Those were orphaned: a fresh-clone `make test` left a
`cvise --n 2` worker running for 29 minutes after the suite ended, eating both cores.

How: the child starts a session of its own (`start_new_session=True`, so it also leads a process group) and gets
a token appended to GFXHOUND_PROCGROUP in its environment. On a timeout, KeyboardInterrupt or any other exception,
everything that belongs to it is stopped (SIGSTOP: a pool that restarts dead workers cannot restart them), sent
SIGTERM, given `grace` seconds, then SIGKILL; the child is reaped and the exception re-raised. After a normal exit,
whatever it left running (a process that still carries the token) is ended the same way.

"Belongs to it", from /proc (Linux; elsewhere only the process group): the members of its session and process
group (a process re-parented to init when its parent died stays in the session), every process whose environment
carries the token (one that called setsid and lost its parent too: C-Vise's test started a repro in a session of
its own through a nested `run`, the repro started a child and died; only the environment still ties that child to
us), and every descendant of those.

C-Vise 2.7 itself creates no sessions or groups: its main process, its pebble workers, the Manager process, the
test scripts and their children share cvise's process group and session (`ps -o pid,pgid,sid,cmd`). Killing only
cvise (what subprocess.run does) re-parents the workers and tests to init, still running.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time

GRACE_S = 2.0
TOKENS = "GFXHOUND_PROCGROUP"  # space-separated: one token per `run` between the process and the suite


def run(argv, timeout: float | None, *, input=None, capture_output: bool = False, check: bool = False,
        grace: float = GRACE_S, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(argv, timeout=timeout, ...)` in a session of its own; what it started dies with it.

    The same keyword arguments (stdout/stderr to PIPE or a file, text, cwd, env, errors...) and the same results:
    a CompletedProcess, `subprocess.TimeoutExpired` (with the output read so far) after `timeout` seconds,
    CalledProcessError with `check`, OSError when `argv[0]` cannot run."""
    if capture_output:
        if kwargs.get("stdout") is not None or kwargs.get("stderr") is not None:
            raise ValueError("stdout and stderr arguments may not be used with capture_output.")
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        if kwargs.get("stdin") is not None:
            raise ValueError("stdin and input arguments may not both be used.")
        kwargs["stdin"] = subprocess.PIPE
    kwargs.pop("start_new_session", None)
    token = f"{os.getpid()}-{secrets.token_hex(6)}"
    env = dict(os.environ if kwargs.get("env") is None else kwargs["env"])
    env[TOKENS] = f"{env.get(TOKENS, '')} {token}".strip()  # appended: an outer run still finds what we start
    kwargs["env"] = env
    with subprocess.Popen(argv, start_new_session=True, **kwargs) as proc:
        try:
            stdout, stderr = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            kill_group(proc.pid, grace, token)
            exc.stdout, exc.stderr = _rest(proc, grace)
            raise
        except BaseException:  # KeyboardInterrupt, SystemExit, a broken pipe: nothing may outlive us
            kill_group(proc.pid, grace, token)
            try:  # reaped here: Popen's own exit skips the wait after a KeyboardInterrupt
                proc.wait(timeout=grace + 5)
            except subprocess.TimeoutExpired:
                pass
            raise
    kill_group(None, grace, token)  # what it left running (the child is reaped: its pid may name another now)
    completed = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed


def _rest(proc: subprocess.Popen, grace: float):
    """The output the killed child (and its killed children) left in the pipes."""
    try:
        return proc.communicate(timeout=grace + 5)
    except subprocess.TimeoutExpired:  # something we could not see still holds a pipe: stop reading
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait(timeout=grace + 5)
        return None, None


def kill_group(leader: int | None, grace: float = GRACE_S, token: str | None = None) -> list:
    """Stop, terminate and then kill the session and process group led by `leader`, every process that carries
    `token`, and every descendant of theirs; returns the pids signalled. Pass `leader` only before it is reaped
    (its pid then names nothing else)."""
    seen = {}  # pid -> start time (a pid reused after the process died is not ours)
    for _ in range(5):  # stopped processes fork no more; a few rounds catch those forked while we stopped the rest
        found = {pid: start for pid, start in _belonging(leader, token).items() if pid not in seen}
        if not found:
            break
        seen.update(found)
        _signal(found, signal.SIGSTOP)
    if not seen and leader is None:
        return []  # the common case after a normal exit: nothing left
    _group(leader, signal.SIGTERM)
    _signal(seen, signal.SIGTERM)
    _signal(seen, signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
    _group(leader, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        seen.update(_belonging(leader, token))
        if not _alive(seen):
            break
        time.sleep(0.05)
    seen.update(_belonging(leader, token))
    _group(leader, signal.SIGKILL)
    _signal(seen, signal.SIGKILL)
    return sorted(seen)


def _belonging(leader: int | None, token: str | None) -> dict:
    """{pid: start time} of the live members of the leader's session and group, the carriers of the token, and
    all their descendants."""
    table = _processes()
    if table is None:
        return {}
    mine = {pid for pid, (ppid, pgrp, sid, state, start) in table.items()
            if leader is not None and leader in (pid, sid, pgrp)}
    if token:
        mine |= {pid for pid in table if pid not in mine and _carries(pid, token)}
    children = {}
    for pid, stat in table.items():
        children.setdefault(stat[0], []).append(pid)
    todo = list(mine)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in mine:
                mine.add(child)
                todo.append(child)
    mine.discard(os.getpid())  # never ourselves
    return {pid: table[pid][4] for pid in mine if table[pid][3] not in "ZX"}  # zombies are dead already


def _processes():
    """{pid: (ppid, pgrp, session, state, start time)} from /proc, or None where there is no /proc."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table = {}
    for name in names:
        if name.isdigit():
            stat = _stat(int(name))
            if stat is not None:
                table[int(name)] = stat
    return table


def _stat(pid: int):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:  # gone meanwhile
        return None
    fields = raw[raw.rfind(")") + 2:].split()  # after "pid (comm) ": the name may hold spaces and parentheses
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[0], int(fields[19])


def _carries(pid: int, token: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:  # gone, or another user's
        return False
    prefix = TOKENS.encode() + b"="
    return any(entry.startswith(prefix) and token.encode() in entry[len(prefix):].split()
               for entry in environ.split(b"\0"))


def _alive(procs: dict) -> dict:
    """The processes of `procs` still running (same pid and start time, not a zombie)."""
    out = {}
    for pid, start in procs.items():
        stat = _stat(pid)
        if stat is not None and stat[4] == start and stat[3] not in "ZX":
            out[pid] = start
    return out


def _signal(procs: dict, sig):
    for pid in _alive(procs):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _group(leader: int | None, sig):
    if leader is None:
        return
    try:
        os.killpg(leader, sig)
    except (ProcessLookupError, PermissionError):
        pass
