"""The maintainer's machine, as far as one can be made here: a venv holding only what a draft says to install, from
a local wheelhouse, and a run of a block in an empty directory with a minimal environment, no network, the venv
read-only and the project's files out of sight.

Why a wheelhouse and `pip --no-index`: the check must not depend on what an index serves today, and must not
resolve what the draft did not pin (an unpinned torch would be a CUDA build from PyPI). Filling the wheelhouse is
the one step that may use the network (`fetch`), and it is explicit.

Why Linux namespaces (`unshare --net --mount`): a block is a stranger's program. In a network namespace it cannot
download what it lacks; in a mount namespace the venv is bind-mounted read-only (root cannot write it either) and
each hidden directory (the gfxhound checkout, the corpus) is covered by an empty tmpfs, so a path that works only on
the fuzzer's machine fails here as it would on the maintainer's. Where namespaces are not available (not root and
no user namespaces) the run says so (`Isolation.how`) and the venv is only made unwritable (chmod).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gfxhound import procgroup

PIP_TIMEOUT_S = 1800
VENV_TIMEOUT_S = 300
SYSTEM_PATH = "/usr/bin:/bin"
SETUP_FAILED = "gfxhound-sandbox"  # the fence itself failed (exit 222 with this prefix): not the block's doing


class SandboxError(Exception):
    """The sandbox cannot be made (a venv that does not build): one line."""


class WheelMissing(SandboxError):
    """The wheelhouse lacks a wheel a requirement set needs; `fetch` fills it (the network step)."""

    def __init__(self, requirements: dict, detail: str):
        self.requirements = dict(requirements)
        super().__init__(f"the wheelhouse has no wheel for {pins(requirements)} ({detail})")


def pins(requirements: dict) -> str:
    return " ".join(f"{name}=={version}" if version else name for name, version in sorted(requirements.items()))


def _clean_env(extra: dict | None = None) -> dict:
    """pip with no configuration of this machine's (no extra index, no find-links, no constraints)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **(extra or {}))
    return env


def fetch(wheelhouse: Path, requirements: dict, python: str = sys.executable, timeout: float = PIP_TIMEOUT_S,
          log=None) -> bool:
    """`pip download` the requirements (and their dependencies) into the wheelhouse: the only step that may use
    the network, with this machine's pip configuration (its index, its local CPU torch). Every requirement is
    pinned by the caller. A set fetched before (a marker under .fetched/) is not asked for again: returns False
    then, True after a download."""
    marker = wheelhouse / ".fetched" / hashlib.sha256(pins(requirements).encode()).hexdigest()[:16]
    if marker.exists():
        return False
    marker.parent.mkdir(parents=True, exist_ok=True)
    with open(wheelhouse / ".fetched" / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test workers fill the same wheelhouse: one pip writes at a time
        if marker.exists():
            return False
        if log:
            log(f"pip download {pins(requirements)} into {wheelhouse}")
        try:
            proc = procgroup.run([python, "-m", "pip", "download", "--disable-pip-version-check",
                                  "--only-binary=:all:", "--dest", str(wheelhouse), *_specs(requirements)],
                                 timeout=timeout, capture_output=True, text=True)
        except (subprocess.TimeoutExpired, OSError) as exc:
            raise SandboxError(f"pip download {pins(requirements)} failed: {str(exc)[:200]}") from None
        if proc.returncode != 0:
            raise SandboxError(f"pip download {pins(requirements)} failed: {_last(proc.stderr)}")
        marker.write_text(pins(requirements) + "\n")
    return True


def _specs(requirements: dict) -> list:
    return [f"{name}=={version}" if version else name for name, version in sorted(requirements.items())]


def _last(text: str) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"


def venv_key(requirements: dict, python: str = sys.executable) -> str:
    """A venv is named by what it holds: the interpreter's version and the pinned requirement set."""
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, timeout=60).stdout.strip()
    text = json.dumps({"python": version, "requirements": sorted(requirements.items())})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _writable(path: Path, on: bool) -> None:
    """Add or take away write permission everywhere under `path` (links are left alone)."""
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            if os.path.islink(name):
                continue
            mode = os.stat(name).st_mode
            os.chmod(name, mode | stat.S_IWUSR if on else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _remove(path: Path) -> None:
    if path.exists():
        _writable(path, True)
        shutil.rmtree(path, ignore_errors=True)


def ensure_venv(cache: Path, requirements: dict, wheelhouse: Path, python: str = sys.executable,
                log=None) -> Path:
    """The venv for this requirement set, built once (under a lock, from the wheelhouse with `--no-index`),
    then made read-only; returns its directory. Raises WheelMissing when the wheelhouse lacks a wheel."""
    target = Path(cache) / f"venv-{venv_key(requirements, python)}"
    marker = target / ".complete"
    if marker.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".lock-{target.name}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two checks may want the same venv
        if marker.exists():
            return target
        _remove(target)  # a half-built one from an interrupted run
        if requirements:  # a draft that runs no Python (llc and grep) installs nothing
            _resolvable(requirements, wheelhouse, python)
        if log:
            log(f"building the sandbox venv for {pins(requirements) or 'nothing'} (once; cached in {target})")
        start = time.time()
        env = _clean_env()
        try:
            procgroup.run([python, "-m", "venv", str(target)], check=True, timeout=VENV_TIMEOUT_S,
                          capture_output=True, env=env)
            proc = procgroup.run([str(target / "bin" / "python"), "-m", "pip", "install", "--no-index",
                                  "--find-links", str(wheelhouse), "--only-binary=:all:", *_specs(requirements)],
                                 capture_output=True, text=True, timeout=PIP_TIMEOUT_S, env=env) \
                if requirements else subprocess.CompletedProcess([], 0, "", "")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            _remove(target)
            raise SandboxError(f"cannot build the sandbox venv for {pins(requirements)}: {str(exc)[:200]}") from None
        if proc.returncode != 0:
            _remove(target)
            if re.search(r"No matching distribution|Could not find a version", proc.stderr):
                raise WheelMissing(requirements, _last(proc.stderr))
            raise SandboxError(f"pip could not install {pins(requirements)} from {wheelhouse}: {_last(proc.stderr)}")
        freeze = procgroup.run([str(target / "bin" / "python"), "-m", "pip", "freeze", "--all"],
                               capture_output=True, text=True, timeout=120, env=env).stdout
        marker.write_text(json.dumps({"requirements": requirements, "installed": freeze.split(),
                                      "seconds": round(time.time() - start, 1)}, indent=1) + "\n")
        _writable(target, False)
    return target


def _resolvable(requirements: dict, wheelhouse: Path, python: str) -> None:
    """Raise WheelMissing unless pip can resolve the set from the wheelhouse alone: asked before a venv is made
    (a dry run takes a second, a venv ten)."""
    try:
        proc = procgroup.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                              "--no-index", "--find-links", str(wheelhouse), "--only-binary=:all:",
                              *_specs(requirements)], capture_output=True, text=True, timeout=300, env=_clean_env())
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise SandboxError(f"pip could not resolve {pins(requirements)}: {str(exc)[:200]}") from None
    if proc.returncode != 0 and re.search(r"No matching distribution|Could not find a version", proc.stderr):
        raise WheelMissing(requirements, _last(proc.stderr))


def installed(venv: Path) -> list:
    """What the venv holds, as `pip freeze` said when it was built."""
    try:
        return json.loads((venv / ".complete").read_text())["installed"]
    except (OSError, ValueError, KeyError):
        return []


@dataclass(frozen=True)
class Isolation:
    """How a block is fenced in: the argv prefix that does it and, in words, what it achieves."""
    prefix: tuple
    how: str
    network: bool  # True when the block cannot reach the network

    def wrap(self, argv: list, venv: Path, hide: list) -> list:
        if not self.prefix:
            return argv
        # inside the namespaces: the venv read-only, each hidden directory under an empty tmpfs, then the block
        script = (f'v="$1"; shift; n="$1"; shift; fail() {{ echo "{SETUP_FAILED}: $*" >&2; exit 222; }}; '
                  'mount --bind "$v" "$v" && mount -o remount,bind,ro "$v" "$v" || fail "cannot mount $v read-only"; '
                  'while [ "$n" -gt 0 ]; do mount -t tmpfs -o ro,size=4k none "$1" || fail "cannot hide $1"; shift; '
                  'n=$((n-1)); done; exec "$@"')
        return [*self.prefix, "/bin/sh", "-c", script, "sandbox", str(venv), str(len(hide)), *map(str, hide),
                *argv]


_PROBED: dict = {}


def isolation() -> Isolation:
    """The strongest fence this machine allows, probed once: network and mount namespaces as root, else in a user
    namespace, else none (the venv is still unwritable; the run says the network was reachable)."""
    if "found" in _PROBED:
        return _PROBED["found"]
    unshare = shutil.which("unshare") or "/usr/bin/unshare"
    found = Isolation((), "no namespaces (unshare is not permitted here): network reachable, project paths "
                          "visible by absolute path", False)
    for prefix, how in (([unshare, "--net", "--mount", "--propagation", "private"],
                         "network and mount namespaces (unshare as root)"),
                        ([unshare, "--user", "--map-root-user", "--net", "--mount", "--propagation", "private"],
                         "user, network and mount namespaces (unshare --map-root-user)")):
        with tempfile.TemporaryDirectory(prefix="gfxhound-probe-") as folder:
            try:  # what a run needs: a read-only bind mount and a tmpfs over a directory
                probe = subprocess.run([*prefix, "/bin/sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,bind,'
                                        'ro "$0" "$0" && mount -t tmpfs none "$0"', folder], capture_output=True,
                                       timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                continue
        if probe.returncode == 0:
            found = Isolation(tuple(prefix), f"{how}: no network, the venv read-only, project paths hidden", True)
            break
    _PROBED["found"] = found
    return found


def block_env(venv: Path, home: Path, extra: dict | None = None) -> dict:
    """A reader's shell, minimal: the venv first on PATH, a fresh HOME, a UTF-8 locale, pip without an index
    (there is no network); no PYTHONPATH, nothing of this process's environment."""
    env = {"PATH": f"{venv / 'bin'}:{SYSTEM_PATH}", "HOME": str(home), "TMPDIR": str(home / "tmp"),
           "LANG": "C.UTF-8", "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.update(extra or {})
    return env


@dataclass
class Ran:
    """One block's run: exit code (None: timed out), what it printed, the line `bash -e` stopped at."""
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    stopped_at: int | None = None


def run_block(text: str, work: Path, home: Path, scripts: Path, name: str, venv: Path, fence: Isolation,
              hide: list, timeout: float, extra_env: dict | None = None) -> Ran:
    """`bash -e` on the block's text, as pasted, in `work`; the line it stopped at from an ERR trap that writes
    outside `work` (the script's first line: the block's own lines keep their numbers, less one)."""
    script, stop = scripts / f"{name}.sh", scripts / f"{name}.stopped"
    stop.unlink(missing_ok=True)
    script.write_text(f"trap 'echo $LINENO > {stop}' ERR\n{text}")
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    visible = [h for h in hide if Path(h).is_dir() and not _inside(venv, h) and not _inside(work, h)
               and not _inside(script, h)]
    visible = [h for h in visible if not any(o != h and _inside(h, o) for o in visible)]  # covered already
    argv = fence.wrap(["/bin/bash", "-e", str(script)], venv, visible)
    start = time.time()
    try:
        proc = procgroup.run(argv, timeout=timeout, capture_output=True, text=True, errors="replace", cwd=work,
                             env=block_env(venv, home, extra_env))
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, _text(exc.stdout), _text(exc.stderr)
    if rc == 222 and SETUP_FAILED in (err or ""):
        raise SandboxError(_last(err))
    seconds = time.time() - start
    try:
        line = int(stop.read_text().strip()) - 1
    except (OSError, ValueError):
        line = None
    return Ran(rc, out or "", err or "", round(seconds, 2), line)


def _text(data) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def _inside(path, folder) -> bool:
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False
