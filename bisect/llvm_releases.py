"""LLVM releases as bisection candidates: the `llc` binaries a user has (Debian's llvm-N packages, or a list of
paths), probed on a reduced .ll.

An `llc` that cannot parse the IR (newer intrinsics, attributes or syntax) or does not know the processor is
"skip", never "bad": only the expected failure, or a clean compile, says anything about the bug. llc runs on a copy
of the .ll in a temp dir, so what it writes (x.s, or a relative -o) never lands beside the user's file.
"""
from __future__ import annotations

import glob
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from gfxhound.protocol import run_probe

CRASH = r"LLVM ERROR|Assertion .* failed|Stack dump|PLEASE submit a bug report|Segmentation fault"
NOT_THIS_CPU = [r"is not a recognized processor for this target"]


class LlcError(Exception):
    """A one-line problem with the llc list or range."""


def llc_version(path: str, timeout: float = 30) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LlcError(f"{path}: cannot run it ({exc})") from None
    found = re.search(r"LLVM version (\S+)", out)
    if not found:
        raise LlcError(f"{path}: not an llc (no 'LLVM version' in its --version)")
    return found.group(1)


def installed(pattern: str = "/usr/lib/llvm-*/bin/llc") -> list:
    """[(major, path)] of Debian's llvm-N packages, oldest first."""
    found = []
    for path in glob.glob(pattern):
        major = re.search(r"llvm-(\d+)", path)
        if major:
            found.append((int(major.group(1)), path))
    return sorted(found)


def llc_candidates(spec: str, pattern: str = "/usr/lib/llvm-*/bin/llc") -> list:
    """'15..22' -> the installed majors between them; 'a,b,c' -> those paths, in the order given (oldest first).
    Returns [(label, path)]: the label is the version llc reports."""
    if ".." in spec and "," not in spec and not Path(spec).exists():
        lo, hi = (s.strip() for s in spec.split("..", 1))
        if not (lo.isdigit() and hi.isdigit()):
            raise LlcError(f"--llc {spec}: give majors OLD..NEW (15..22) or a comma-separated list of llc paths")
        have = installed(pattern)
        chosen = [(m, p) for m, p in have if int(lo) <= m <= int(hi)]
        majors = [m for m, _ in chosen]
        for end in (int(lo), int(hi)):
            if end not in majors:
                raise LlcError(f"--llc {spec}: no llc {end} here (installed: "
                               f"{', '.join(str(m) for m, _ in have) or 'none'}; apt-get install llvm-{end})")
        if len(chosen) < 2:
            raise LlcError(f"--llc {spec}: the range holds fewer than two llc versions")
        paths = [p for _, p in chosen]
    else:
        paths = [p.strip() for p in spec.split(",") if p.strip()]
        if len(paths) < 2:
            raise LlcError("--llc: give at least two llc paths, oldest first, or a range of majors (15..22)")
    labels = [llc_version(p) for p in paths]
    if len(set(labels)) < len(labels):
        labels = [f"{label} ({path})" for label, path in zip(labels, paths)]
    return list(zip(labels, paths))


@contextmanager
def _scratch(ll: Path):
    """A copy of the .ll, under its own name, in a temp dir that is gone afterwards: llc's cwd."""
    with tempfile.TemporaryDirectory(prefix="gfxhound-llc-") as tmp:
        copy = Path(tmp) / ll.name
        shutil.copyfile(ll, copy)
        yield copy


def llc_probe(path: str, args: list, ll: Path, timeout: float, expect: str | None):
    """Run one llc on the .ll with the reproducing flags (all but the binary and the input)."""
    with _scratch(ll) as copy:
        return run_probe([path, *args, copy.name], timeout, expect if expect is not None else CRASH,
                         cwd=copy.parent, skip_patterns=NOT_THIS_CPU)


def expected_failure(path: str, args: list, ll: Path, timeout: float) -> str | None:
    """The failure the bug is known by: the first crash line of the reproducing llc, numbers generalised, as a
    regular expression (so an older llc crashing differently is a skip, not the same bug)."""
    try:
        with _scratch(ll) as copy:
            proc = subprocess.run([path, *args, copy.name], capture_output=True, text=True, timeout=timeout,
                                  cwd=copy.parent, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None  # then any crash counts
    for line in (proc.stdout + proc.stderr).splitlines():
        if re.search(CRASH, line) and not line.startswith(("Stack dump", "PLEASE")):
            text = re.sub(r"^.*?(LLVM ERROR|Assertion)", r"\1", line.strip())
            text = re.sub(r"(0x[0-9a-f]+|\d+)", "\0", text)
            return re.escape(text).replace("\0", r"(?:0x[0-9a-f]+|\d+)")
    return None
