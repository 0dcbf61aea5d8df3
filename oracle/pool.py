"""A pool of warm compile workers, each with its own Triton cache; a crash or hang costs one worker, not the run.

Why pebble: workers stay warm across tasks (a fresh process costs ~0.6 s before its first compile), a task past its
timeout has its worker killed and replaced, and a worker that dies (SIGABRT from LLVM, SIGSEGV in a pass)
surfaces as ProcessExpired with its exit code, after which pebble starts a new one.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import shutil
import sys
import tempfile
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from pebble import ProcessExpired, ProcessPool

from gfxhound.stacks import dump_stacks_on_sigusr1

from .compile_task import run_compile


# One thread per worker for torch's and OpenMP's pools: a campaign already runs one worker per core, and torch's
# default (a thread per core in every worker) oversubscribed a 16-core GPU machine 15-fold, which slowed the GPU
# worker's own host-side work (inputs, canaries, comparison) from ~15 ms to ~800 ms a kernel.
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def single_threaded():
    """Before torch is imported the environment does it; once it is (its OpenMP read the environment at load),
    only torch.set_num_threads does."""
    os.environ.update(SINGLE_THREADED)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _worker_init(root: str, env: dict, shared_cache: bool = False):
    # Ctrl-C reaches the whole process group: the campaign handles it and closes the pool; a worker that died of
    # it would break the pool under the campaign's feet first
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.dup2(2, 1)  # what a worker prints (Triton's "Overriding kernel ...") must not mix with the CLI's stdout
    dump_stacks_on_sigusr1()
    single_threaded()
    os.environ.update(env)
    cache = Path(root) / "cache" / ("shared" if shared_cache else str(os.getpid()))
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    import triton.compiler  # noqa: F401  - warm up before the first task's clock starts


class CompilePool:
    def __init__(self, workers: int, timeout: float, env: dict | None = None, root: str | None = None,
                 max_tasks: int = 400, llc: str | None = None, shared_cache: bool = False):
        self.llc = llc
        self.backend = "interpret" if (env or {}).get("TRITON_INTERPRET") == "1" else (
            "device" if shared_cache else "compile")
        self.root = Path(root or tempfile.mkdtemp(prefix="gfxhound-pool-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        self.counter = 0
        self._lock = threading.Lock()  # reductions submit from several threads (reduce_spec's jobs)
        self.pool = ProcessPool(max_workers=workers, max_tasks=max_tasks, initializer=_worker_init,
                                initargs=(str(self.root), dict(env or {}), shared_cache),
                                context=multiprocessing.get_context("spawn"))

    def submit(self, spec_json: dict, caps_json: dict, arch: str, fn=None, timeout: float | None = None,
               extra: dict | None = None):
        fn = fn or run_compile
        with self._lock:
            self.counter += 1
            number = self.counter
        task_dir = self.root / "tasks" / f"t{number}"
        task_dir.mkdir(parents=True, exist_ok=True)
        task = {"spec": spec_json, "caps": caps_json, "arch": arch, "task_dir": str(task_dir),
                "empty_cache": True, "backend": self.backend,
                "stderr_path": str(task_dir / "stderr.txt"), "llc": self.llc, **(extra or {})}
        future = self.pool.schedule(fn, args=(task,), timeout=timeout or self.timeout)
        return task, future

    def outcome(self, task, future) -> dict:
        """What happened to one task, as plain data: status ok|exception|harness|died|timeout, plus text."""
        try:
            result = future.result()
        except FutureTimeout:
            result = {"status": "timeout", "duration": self.timeout}
        except ProcessExpired as exc:
            code = exc.exitcode
            result = {"status": "died", "ended": f"signal:{-code}" if code and code < 0 else f"exit:{code}"}
        except Exception as exc:  # noqa: BLE001 - pickling or pool errors are the harness's
            result = {"status": "harness", "text": f"{type(exc).__name__}: {exc}"}
        stderr = Path(task["stderr_path"])
        native = stderr.read_text(errors="replace") if stderr.exists() else ""
        result["text"] = native + ("\n" + result["text"] if result.get("text") else "")
        result["ir_dir"] = str(Path(task["task_dir"]) / "ir")
        return result

    def discard(self, task):
        shutil.rmtree(task["task_dir"], ignore_errors=True)

    def close(self, cancel=False):
        if cancel:
            self.pool.stop()
        else:
            self.pool.close()
        self.pool.join(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)
