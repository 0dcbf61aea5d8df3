"""Triton releases as bisection candidates: one cached virtual environment per release, and the probe that runs a
repro script in it under the repro protocol (docs/design.md: exit 0 absent, 1 present, 125 cannot test).

Why our own venv cache and not `pip install` per probe: a Triton wheel is hundreds of MB, and a second bisection
over the same range (another repro, or the same one after a fix) must cost only the repro runs. Each release's venv
is built once, under a lock, into `<cache>/triton-<version>`, and marked complete only when pip finished.
"""
from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gfxhound import procgroup

PIP_TIMEOUT_S = 1800


class ReleaseError(Exception):
    """A one-line problem with the release range or the cache."""


def version_key(version: str):
    """3.4.0 < 3.5.0rc1 < 3.5.0 < 3.5.1 < 3.10.0."""
    found = re.match(r"(\d+(?:\.\d+)*)(.*)", version)
    if not found:
        return ((), 0, version)
    numbers = tuple(int(x) for x in found.group(1).split("."))
    return (numbers, 0 if found.group(2) else 1, found.group(2))


def available_versions(python: str = sys.executable, package: str = "triton", timeout: float = 120) -> list:
    """Every version of `package` on the package index (pip's own query), oldest first."""
    try:
        proc = subprocess.run([python, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReleaseError("pip index versions timed out: is the package index reachable?") from None
    found = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if not found:
        raise ReleaseError(f"cannot list {package} releases: {(proc.stderr or proc.stdout).strip()[-200:]}")
    return sorted((v.strip() for v in found.group(1).split(",") if v.strip()), key=version_key)


def release_range(text: str, versions: list) -> list:
    """'3.4.0..3.9.0' -> the final releases between them, both ends included (pre-releases left out)."""
    if ".." not in text:
        raise ReleaseError(f"--triton {text!r}: give a range OLD..NEW, e.g. 3.4.0..3.9.0")
    old, new = (part.strip() for part in text.split("..", 1))
    finals = [v for v in versions if re.fullmatch(r"\d+(\.\d+)*", v)]
    for end in (old, new):
        if end not in finals:
            raise ReleaseError(f"--triton: {end} is not a published release (known: {', '.join(finals[-12:])})")
    if version_key(old) >= version_key(new):
        raise ReleaseError(f"--triton {text}: the first release must be older than the second")
    return [v for v in finals if version_key(old) <= version_key(v) <= version_key(new)]


class VenvCache:
    """`<root>/triton-<version>/` venvs, each created once (a `.complete` marker after pip succeeded)."""

    def __init__(self, root: Path, base_python: str = sys.executable):
        self.root = Path(root)
        self.base_python = base_python
        self.built = []  # versions built by this process (the rest were cache hits)
        self.build_seconds = 0.0

    def path(self, version: str) -> Path:
        return self.root / f"triton-{version}"

    def python(self, version: str) -> Path:
        return self.path(version) / "bin" / "python"

    def ready(self, version: str) -> bool:
        return (self.path(version) / ".complete").exists()

    def ensure(self, version: str, log=None) -> Path:
        if self.ready(version):
            return self.python(version)
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f".lock-{version}", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two bisections may want the same release
            if self.ready(version):
                return self.python(version)
            target = self.path(version)
            shutil.rmtree(target, ignore_errors=True)  # a half-built one from an interrupted run
            if log:
                log(f"building the venv for triton {version} (once; cached in {self.root})")
            start = time.time()
            try:
                # venv's ensurepip child and pip's build children die with them on a timeout (procgroup)
                procgroup.run([self.base_python, "-m", "venv", str(target)], check=True, timeout=300,
                              capture_output=True)
                proc = procgroup.run([str(target / "bin" / "python"), "-m", "pip", "install", "-q",
                                      "--disable-pip-version-check", f"triton=={version}"],
                                     capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
                shutil.rmtree(target, ignore_errors=True)
                raise ReleaseError(f"cannot build the venv for triton {version}: {str(exc)[:200]}") from None
            if proc.returncode != 0:
                shutil.rmtree(target, ignore_errors=True)
                raise ReleaseError(f"pip could not install triton {version}: {proc.stderr.strip()[-300:]}")
            (target / ".complete").write_text(version + "\n")
            self.built.append(version)
            self.build_seconds += time.time() - start
        return self.python(version)

    def cached(self) -> list:
        """The releases whose venvs are complete here, oldest first."""
        found = [p.name[len("triton-"):] for p in self.root.glob("triton-*") if (p / ".complete").exists()]
        return sorted(found, key=version_key)

    def wait_idle(self):
        """Wait for every build in progress (a prefetch in the background) to finish."""
        for lock_path in sorted(self.root.glob(".lock-*")):
            with open(lock_path) as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)

    def clear(self):
        """Delete the venvs and saved probes, holding every build lock meanwhile (a build or prefetch running
        finishes first; none can start)."""
        if not self.root.exists():
            return
        locks = []
        try:
            for lock_path in sorted(self.root.glob(".lock-*")):
                lock = open(lock_path)
                fcntl.flock(lock, fcntl.LOCK_EX)
                locks.append(lock)
            for entry in list(self.root.glob("triton-*")) + list(self.root.glob("bisect-state-*.json")):
                shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)
        finally:
            for lock in locks:
                lock.close()


class Prefetcher:
    """Builds the venvs of the releases the next step may probe (both answers) while the current probe runs, in a
    detached process (`python -m gfxhound.bisect.releases ROOT VERSION`), one at a time: the bisection rarely
    waits for pip, and the cache is warm for the next bisection over the same range. The build takes the cache's
    lock, so a probe that needs that release waits for it, and it outlives this process: nothing is left
    half-built, and nothing here waits for a build nobody asked for."""

    def __init__(self, cache: VenvCache, log=None, python: str = sys.executable):
        self.cache, self.log, self.python = cache, log, python
        self.pending, self.asked, self.running = [], set(), None

    def __call__(self, versions: list):
        for version in versions:
            if version not in self.asked and not self.cache.ready(version):
                self.asked.add(version)
                self.pending.append(version)
        if self.running is not None and self.running.poll() is None:
            return  # one at a time: the probes need the other core
        while self.pending:
            version = self.pending.pop(0)
            if self.cache.ready(version):
                continue
            if self.log:
                self.log(f"building the venv for triton {version} ahead, in the background")
            self.cache.root.mkdir(parents=True, exist_ok=True)
            self.running = subprocess.Popen([self.python, "-m", "gfxhound.bisect.releases", str(self.cache.root),
                                             version], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            start_new_session=True)
            return



if __name__ == "__main__":  # the prefetch of one release: python -m gfxhound.bisect.releases ROOT VERSION
    try:
        VenvCache(Path(sys.argv[1])).ensure(sys.argv[2])
    except ReleaseError:
        sys.exit(1)
