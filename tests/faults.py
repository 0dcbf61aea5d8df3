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


def quick_ok(task):
    """No compile at all: an instant success, so a test can run hundreds of kernels around one planted fault."""
    import time
    time.sleep(0.05)
    return {"status": "ok", "duration": 0.05}


def blowup(task, index):
    """The kernel numbered `index` compiles for ten minutes (a compile-time blow-up), every other one at once.
    (Bind `index` with functools.partial: a pool pickles its task function.)"""
    import time
    if task["spec"].get("meta", {}).get("index") == index:
        time.sleep(600)
    return quick_ok(task)


def hang_from(task, index):
    """From kernel `index` on, every compile hangs and ignores SIGTERM (only SIGKILL ends it): what a deadline
    must survive."""
    import time
    if task["spec"].get("meta", {}).get("index", 0) >= index:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    return quick_ok(task)


def noisy(task):
    """Prints on the worker's own stderr outside any task's capture, then compiles for real."""
    os.write(2, b"gfxhound-test: noise from a worker\n")
    return quick_ok(task)


def slow(task, index, seconds):
    """The kernel numbered `index` takes `seconds` (more than its first run's limit, less than its second's)."""
    import time
    if task["spec"].get("meta", {}).get("index") == index:
        time.sleep(seconds)
    return quick_ok(task)


def die_after_returning(task):
    """Returns its result, then its worker dies (SIGSEGV) while idle: pebble then gives up on the whole pool."""
    import threading
    import time

    def later():
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGSEGV)
    threading.Thread(target=later, daemon=True).start()
    return {"status": "ok", "duration": 0.0}
