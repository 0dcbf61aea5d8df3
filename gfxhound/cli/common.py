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
    pass


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


class Parser(argparse.ArgumentParser):
    """argparse takes a word that starts with '-' for an option, so `--llc-args -mtriple=amdgcn-amd-amdhsa` (one
    flag, no space to tell it apart) would stop with "expected one argument". A FlagsValue option takes the next
    word as its value, as `--llc-args=WORD` does, unless that word is one of the command's own options (then the
    value was forgotten, and argparse says so)."""

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
