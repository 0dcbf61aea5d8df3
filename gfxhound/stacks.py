"""`kill -USR1 <pid>` prints every thread's Python stack of a gfxhound process (the CLI or any of its workers).

A campaign that seems stuck is diagnosed without a debugger: the dump goes to the stderr the process started with,
also while a task has redirected file descriptor 2 into its own log. With GFXHOUND_STACKS_DIR set, each process
writes to its own `<pid>.txt` there instead, so the dumps of many workers do not interleave.
"""
from __future__ import annotations

import faulthandler
import os
import signal

_STREAM = None


def dump_stacks_on_sigusr1():
    global _STREAM
    if not hasattr(signal, "SIGUSR1"):
        return
    if _STREAM is None:
        folder = os.environ.get("GFXHOUND_STACKS_DIR")
        if folder:
            os.makedirs(folder, exist_ok=True)
            _STREAM = open(os.path.join(folder, f"{os.getpid()}.txt"), "w")  # noqa: SIM115 - open for life
        else:
            _STREAM = os.fdopen(os.dup(2), "w")
    faulthandler.register(signal.SIGUSR1, file=_STREAM, all_threads=True)
