"""Keep a Triton code generator warm for llvm-reduce: a fork server in the release's own interpreter.

Why: llvm-reduce runs its interestingness test once per candidate, each a fresh process. A fresh Python that
imports Triton and loads its code generator costs about 0.6 s before the first compile (FACTS.md), ten times the
compile of a reduced candidate. The server imports the release and loads its code generator once; each request
forks a child that makes the very call `python -c PROGRAM FILE.ll` would make (Codegen.code), with its fd 1/2 in
files and a timeout, so an LLVM abort kills only that child.

Why hand-written and not pebble or multiprocessing: those run functions of *this* interpreter in workers of the
same interpreter; the code generator must run under the finding's Triton (another venv, stdlib + triton only), and
its clients are llvm-reduce's test processes, not this one. The server is ~60 lines of stdlib; `Client.run`
falls back to the plain child process whenever the server cannot answer, and a reduction's result is always
re-checked with the plain command (workflow and CLI), so the server can only make a reduction faster.
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from gfxhound import procgroup

from gfxhound.codegen import Codegen, Compiled, child_env

SERVER = r'''
import json, os, signal, socket, sys, time, traceback
sock_path, code = sys.argv[1], sys.argv[2]
exec(compile(sys.argv[3], "<warm-up>", "exec"), {"__name__": "__warm__"})

def child(request):
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.argv = ["-c", request["input"]]
    status = 0
    try:
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

def serve(conn):
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    data = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    request = json.loads(data)
    pid = os.fork()
    if pid == 0:
        child(request)
    deadline, status = time.monotonic() + request["timeout"], None
    while status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            break
        else:
            time.sleep(0.002)
    conn.sendall(json.dumps({"returncode": status, "timeout": status is None}).encode())
    conn.close()

server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sock_path)
server.listen(64)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped by the kernel
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    if os.fork() == 0:
        server.close()
        try:
            serve(conn)
        finally:
            os._exit(0)
    conn.close()
'''


def warm_up(codegen: Codegen) -> str:
    """What the server runs once: the imports of the call, and loading the code generator it calls."""
    if codegen.revision:
        return "import triton.backends.amd.compiler as c\nc.get_amd_codegen_revision()\n"
    return "from triton._C.libtriton import llvm\nllvm.init_targets()\n"


class Server:
    """A running fork server for one Triton code generator; `with Server(codegen) as socket_path: ...`."""

    def __init__(self, codegen: Codegen, start_timeout: float = 120):
        self.codegen, self.start_timeout = codegen, start_timeout
        self.dir = self.proc = self.log = None

    def __enter__(self) -> str | None:
        """The socket's path, or None when the server did not start (then every run is a plain child)."""
        if self.codegen.kind != "triton":
            return None
        self.dir = Path(tempfile.mkdtemp(prefix="gfxhound-cg-"))  # short: a socket path has ~100 bytes
        path = self.dir / "s"
        self.log = open(self.dir / "server.log", "w")
        self.proc = subprocess.Popen([self.codegen.program, "-c", SERVER, str(path), self.codegen.code,
                                      warm_up(self.codegen)], stdout=subprocess.PIPE,
                                     stderr=self.log, text=True,
                                     env=child_env(), start_new_session=True)  # its forked compiles: one session
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline and self.proc.poll() is None and not path.exists():
            time.sleep(0.05)
        if self.proc.poll() is not None or not path.exists():
            return None
        return str(path)

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.returncode is None:  # not reaped yet: its pid is still its own
            procgroup.kill_group(self.proc.pid, grace=0)  # the server we started and the compiles it forked
            self.proc.wait(timeout=30)
        if self.log is not None:
            self.log.close()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)


def run(codegen: Codegen, ll: Path, timeout: float, server: str | None = None) -> Compiled:
    """Compile `ll` through the warm server at `server` when it answers, else in a plain child process."""
    if not server or codegen.kind != "triton":
        return codegen.run(ll, timeout)
    with tempfile.TemporaryDirectory(prefix="gfxhound-cg-run-") as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        request = {"input": str(Path(ll).resolve()), "timeout": timeout, "stdout": str(out), "stderr": str(err)}
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(timeout + 60)
                conn.connect(server)
                conn.sendall(json.dumps(request).encode())
                conn.shutdown(socket.SHUT_WR)
                reply = b""
                while chunk := conn.recv(65536):
                    reply += chunk
            answer = json.loads(reply)
        except (OSError, ValueError):
            return codegen.run(ll, timeout)  # the server is gone or said nothing: the plain way
        if answer["timeout"]:
            return codegen.timed_out(timeout)
        read = lambda p: p.read_text(errors="replace") if p.exists() else ""  # noqa: E731
        return codegen.judge_exit(answer["returncode"], read(out), read(err))
