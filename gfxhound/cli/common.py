"""What every command shares: the one-line error a user can cause, and what the environment says (only the CLI
reads argv and the environment)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

KNOWN_ARCHS = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1150", "gfx1151", "gfx1200",
               "gfx1201", "gfx1250")


class UserError(Exception):
    """A mistake the user can fix: the top-level handler prints it as one line and exits 2 (no traceback)."""


def check_python(path: str, flag: str = "--python") -> str:
    """An interpreter named on the command line: it exists and runs; its absolute path (repros run elsewhere)."""
    resolved = shutil.which(path) if os.sep not in path else path
    if not resolved or not Path(resolved).is_file():
        raise UserError(f"{flag} {path}: no such interpreter; give the python of a venv with Triton installed")
    if not os.access(resolved, os.X_OK):
        raise UserError(f"{flag} {path}: not executable; give a python interpreter")
    return os.path.abspath(resolved)


def need_triton(python: str = "", flag: str = "") -> None:
    """Triton imports under `python` (default: this one), checked in a child process (a campaign forks workers,
    and a parent that imported Triton and its threads forks badly). One line when it does not."""
    import subprocess
    python = python or sys.executable
    where = f"{flag} {python}" if flag else "this Python"
    code = "import triton\nfrom triton.backends.compiler import GPUTarget"
    try:
        run = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise UserError(f"importing Triton under {python} did not finish in 300 s; check the installation") from None
    except OSError as exc:
        raise UserError(f"cannot run {python} ({exc.strerror})") from None
    if run.returncode != 0:
        lines = [ln for ln in run.stderr.strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit {run.returncode}"
        if "No module named 'triton'" in last:
            raise UserError(f"no Triton is importable by {where}: pip install triton (or pytorch-triton-rocm, or "
                            "your own build's python/ directory)")
        under = f" under {flag} {python}" if flag else ""
        raise UserError(f"Triton is installed{under} but does not import ({last}); reinstall it")


def check_llc(path: str, flag: str = "--llc") -> str:
    """An llc named on the command line: an executable file that says it is LLVM's static compiler."""
    import subprocess
    if not Path(path).is_file():
        raise UserError(f"{flag} {path}: no such file; give the path of LLVM's llc (e.g. /usr/lib/llvm-22/bin/llc)")
    if not os.access(path, os.X_OK):
        raise UserError(f"{flag} {path}: not executable; give the path of LLVM's llc")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"{flag} {path}: `{path} --version` failed ({exc}); give the path of LLVM's llc") from None
    if "LLVM" not in out.stdout + out.stderr:
        raise UserError(f"{flag} {path}: not an llc (its --version does not name LLVM)")
    return path


def existing_corpus(path: str):
    """A corpus to read (list, show, replay, report, ...): it must exist; writing commands create theirs."""
    from gfxhound.corpus_store import Corpus
    if not Path(path).is_dir():
        raise UserError(f"no corpus at {path}: give --corpus DIR (a directory a campaign wrote)")
    return Corpus(path)


def parse_date(text: str, flag: str) -> str:
    """A calendar date as YYYY-MM-DD, checked (2026-13-45 is refused, not stored)."""
    import re
    from datetime import date
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(text)
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise UserError(f"{flag} {text!r}: give a date as YYYY-MM-DD") from None


def positive(kind=float, least=None, name=""):
    """An argparse type: a number at least `least` (exclusive of 0 when None): bad values stop at the parser."""
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}")
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if (least is None and value <= 0) or (least is not None and value < least):
            raise argparse.ArgumentTypeError(f"{text!r}: must be {'positive' if least is None else f'at least {least}'}")
        return value
    convert.__name__ = name or ("integer" if kind is int else "number")
    return convert


def default_lld():
    for path in (os.environ.get("TRITON_HIP_LLD_PATH"), "/usr/lib/llvm-22/bin/ld.lld", shutil.which("ld.lld")):
        if path and Path(path).exists():
            return path
    return ""


def newest_llc() -> str:
    """The newest llc this machine has (Debian installs each major under /usr/lib/llvm-N), else the one on PATH."""
    import re
    found = sorted(Path("/usr/lib").glob("llvm-*/bin/llc"), key=lambda p: int(re.sub(r"\D", "", p.parts[-3]) or 0))
    return str(found[-1]) if found else shutil.which("llc") or ""


def cache_dir():
    return os.environ.get("GFXHOUND_CACHE") or str(Path.home() / ".cache" / "gfxhound")


def need_module(name, hint):
    import importlib.util
    if importlib.util.find_spec(name) is None:
        raise UserError(hint)


class FlagsValue(argparse.Action):
    """An option whose value is itself flags of another tool (`--llc-args -mtriple=amdgcn-amd-amdhsa`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Help that shows each option's default (not "(default: None)" where there is none), and descriptions as written."""

    def _get_help_string(self, action):
        if action.default in (None, False, "", [], argparse.SUPPRESS) or "%(default)" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """Every parser of the command line: help with defaults, and a usage error as one line (argparse prints the
    whole usage first, which buries the reason in a CI log).

    argparse takes a word that starts with '-' for an option, so `--llc-args -mtriple=amdgcn-amd-amdhsa` (one
    flag, no space to tell it apart) would stop with "expected one argument". A FlagsValue option takes the next
    word as its value, as `--llc-args=WORD` does, unless that word is one of the command's own options (then the
    value was forgotten, and argparse says so)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        flags = {s for a in self._actions if isinstance(a, FlagsValue) for s in a.option_strings}
        own = set(self._option_string_actions)
        glued, i = [], 0
        while i < len(args):
            word = args[i]
            if word == "--":  # the rest is positional
                glued += args[i:]
                break
            if word in flags and i + 1 < len(args) and args[i + 1].split("=", 1)[0] not in own:
                glued.append(f"{word}={args[i + 1]}")
                i += 2
                continue
            glued.append(word)
            i += 1
        return super().parse_known_args(glued, namespace)
