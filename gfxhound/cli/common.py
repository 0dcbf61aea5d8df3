"""What every command shares: the one-line error a user can cause, and what the environment says (only the CLI
reads argv and the environment)."""
from __future__ import annotations

import os
import shutil
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


def cache_dir():
    return os.environ.get("GFXHOUND_CACHE") or str(Path.home() / ".cache" / "gfxhound")


def need_module(name, hint):
    import importlib.util
    if importlib.util.find_spec(name) is None:
        raise UserError(hint)
