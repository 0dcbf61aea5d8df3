"""Task functions that wrap the real compile with real faults, for the isolation tests.

They run inside spawned pool workers (which import this module by name, from the tests directory).
"""
import os
import signal

from gfxhound.oracle.compile_task import run_compile

KILL_INDEX = 2
HANG_INDEX = 4


def _die_entering_llir():
    from triton.backends.amd.compiler import HIPBackend
    original = HIPBackend.make_llir

    def make_llir(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGSEGV)
        return original(*args, **kwargs)
    HIPBackend.make_llir = staticmethod(make_llir)


def _hang_in_amdgcn():
    """Stand-in for an LLVM code-generation loop that never ends (the pool must kill and replace the worker)."""
    import time

    from triton.backends.amd.compiler import HIPBackend

    def make_amdgcn(*args, **kwargs):
        while True:
            time.sleep(1)
    HIPBackend.make_amdgcn = staticmethod(make_amdgcn)


def kill_and_hang(task):
    index = task["spec"].get("meta", {}).get("index")
    if index == KILL_INDEX:
        _die_entering_llir()  # this worker dies with SIGSEGV in the middle of the compile
    elif index == HANG_INDEX:
        _hang_in_amdgcn()
    return run_compile(task)


def die_in_pair(task):
    """The second compile of a task (its metamorphic pair's) kills the worker with SIGSEGV."""
    from gfxhound import compat
    original = compat.compile_for_amd
    calls = []

    def compile_for_amd(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGSEGV)
        return original(*args, **kwargs)
    compat.compile_for_amd = compile_for_amd
    try:
        return run_compile(task)
    finally:
        compat.compile_for_amd = original
