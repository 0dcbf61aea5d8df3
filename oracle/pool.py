"""A pool of warm compile workers, each with its own Triton cache; a crash or hang costs one worker, not the run.

Why pebble: workers stay warm across tasks (a fresh process costs ~0.6 s before its first compile), a task past its
timeout has its worker killed and replaced, and a worker that dies (SIGABRT from LLVM, SIGSEGV in a pass)
surfaces as ProcessExpired with its exit code, after which pebble starts a new one.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import shutil
import sys
import tempfile
import threading
import time
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


def quiet_worker(log_dir: str | None):
    """A worker's own output (what it prints outside any task: warnings, Triton's notices) goes to its log file,
    and never to the CLI's stdout; a task's output goes to the task's file (compile_task._Fd2Redirect), which is
    the finding's record. With no log dir (--verbose) it stays on the console's stderr."""
    if log_dir is None:
        os.dup2(2, 1)
        return
    fd = os.open(str(Path(log_dir) / f"worker-{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def worker_output(log_dir: Path) -> dict:
    """What the workers printed outside their tasks: line count and the last lines, for the summary."""
    lines = []
    for log in sorted(log_dir.glob("worker-*.log")) if log_dir.is_dir() else []:
        lines += [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return {"lines": len(lines), "last": lines[-5:]}


def _worker_init(root: str, env: dict, shared_cache: bool = False, log_dir: str | None = None,
                 warm: tuple = ("gfxhound.oracle.compile_task",)):
    # Ctrl-C reaches the whole process group: the campaign handles it and closes the pool; a worker that died of
    # it would break the pool under the campaign's feet first
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet_worker(log_dir)
    dump_stacks_on_sigusr1()
    single_threaded()
    os.environ.update(env)
    cache = Path(root) / "cache" / ("shared" if shared_cache else str(os.getpid()))
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    import triton.compiler  # noqa: F401  - warm up before the first task's clock starts
    # the task functions' modules (torch among their imports) too: pebble unpickles a task while it holds the lock
    # every worker needs to fetch one, so a worker importing them on its first task kept all the others waiting;
    # 15 workers of a 16-core GPU machine became ready one at a time, 4.4 s apart (bench/device_throughput.py)
    for module in warm:
        importlib.import_module(module)
    mark_ready(Path(root) / "ready")


class CompilePool:
    def __init__(self, workers: int, timeout: float, env: dict | None = None, root: str | None = None,
                 max_tasks: int = 400, llc: str | None = None, shared_cache: bool = False, verbose: bool = True,
                 warm: tuple = ("gfxhound.oracle.compile_task",), backend: str | None = None):
        self.llc = llc
        self.backend = backend or ("interpret" if (env or {}).get("TRITON_INTERPRET") == "1" else (
            "device" if shared_cache else "compile"))
        self.root = Path(root or tempfile.mkdtemp(prefix="gfxhound-pool-"))
        (self.root / "ready").mkdir(parents=True, exist_ok=True)
        self.log_dir = None if verbose else self.root / "logs"
        if self.log_dir is not None:
            self.log_dir.mkdir(exist_ok=True)
        self.worker_output = {"lines": 0, "last": []}  # filled by close()
        self.timeout = timeout
        self.counter = 0
        self._lock = threading.Lock()  # reductions submit from several threads (reduce_spec's jobs)
        self.settings = dict(max_workers=workers, max_tasks=max_tasks, initializer=_worker_init,
                             initargs=(str(self.root), dict(env or {}), shared_cache,
                                       None if self.log_dir is None else str(self.log_dir), tuple(warm)),
                             context=multiprocessing.get_context("spawn"))
        self.pool = ProcessPool(**self.settings)

    def wait_ready(self, limit: float) -> float:
        """Wait (at most `limit` seconds) until every worker has started and imported what its tasks need; returns
        the seconds waited. A campaign's kernels/s then measure compiling, not start-up (a fresh worker imports
        Triton and torch: seconds each, all at once)."""
        return wait_ready([self.pool], self.root / "ready", self.settings["max_workers"], limit)

    def healthy(self) -> bool:
        """False once pebble has given up on the pool (its status ERROR: nothing more can be scheduled)."""
        return self.pool.active

    def restart(self):
        """A fresh pebble pool with the same workers' set-up, after the old one broke (see Campaign.restart)."""
        close_pool(self.pool, cancel=True, wait=10)
        self.pool = ProcessPool(**self.settings)

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
                "stderr_path": str(task_dir / "stderr.txt"), "llc": self.llc, "timeout": timeout or self.timeout,
                "submitted": time.time(), **(extra or {})}
        future = self.pool.schedule(fn, args=(task,), timeout=task["timeout"])
        return task, future

    def outcome(self, task, future) -> dict:
        """What happened to one task, as plain data: status ok|exception|harness|died|timeout, plus text."""
        try:
            result = future.result()
        except FutureTimeout:
            result = {"status": "timeout", "duration": task.get("timeout", self.timeout)}
        except ProcessExpired as exc:
            code = exc.exitcode
            result = {"status": "died", "ended": f"signal:{-code}" if code and code < 0 else f"exit:{code}"}
        except Exception as exc:  # noqa: BLE001 - pickling or pool errors are the harness's
            result = {"status": "harness", "text": f"{type(exc).__name__}: {exc}"}
        stderr = Path(task["stderr_path"])
        native = stderr.read_text(errors="replace") if stderr.exists() else ""
        if result.get("status") != "unmodelled":  # an executor's "cannot judge" names its construct, not the
            # warnings the compile printed before it (a reason that read "UserWarning: kpack is deprecated" hid 391)
            result["text"] = "\n".join(part for part in (native.rstrip("\n"), result.get("text", "")) if part)
        result["ir_dir"] = str(Path(task["task_dir"]) / "ir")
        return result

    def discard(self, task):
        shutil.rmtree(task["task_dir"], ignore_errors=True)

    def of(self, arch: str) -> "CompilePool":
        """The pool whose workers take `arch`'s kernels: this one (see TargetPools)."""
        return self

    def has_room(self, arch: str, in_flight: int) -> bool:
        """Whether a kernel for `arch` may be submitted with `in_flight` of the campaign's kernels for it pending:
        a single pool takes every target's, and the campaign bounds the total itself."""
        return True

    def close(self, cancel=False, wait: float = 30.0):
        """Stop the pool within `wait` seconds whatever its workers do. pebble's join() after stop() has no
        timeout, and a worker it has not terminated outlives the campaign: Python's exit joins every
        multiprocessing child, so one compile that ignores SIGTERM long enough kept a finished campaign from
        exiting. The join runs in a thread we stop waiting for; what is still alive after it is killed."""
        close_pool(self.pool, cancel, wait)
        if self.log_dir is not None:
            self.worker_output = worker_output(self.log_dir)
            if self.worker_output["lines"]:  # kept for whoever wants to read them; the summary says where
                kept = Path(tempfile.mkdtemp(prefix="gfxhound-worker-logs-"))
                for log in self.log_dir.glob("worker-*.log"):
                    shutil.move(str(log), kept / log.name)
                self.worker_output["kept_in"] = str(kept)
        shutil.rmtree(self.root, ignore_errors=True)


class TargetPools:
    """One CompilePool per target, so that a worker process compiles for one target only.

    Why: a compiler may keep process-wide state from the first kernel it lowers for one target and use it for
    another target's. Triton 3.5 and 3.6 do: the fp8 conversion table of the AMD backend's FpToFp lowering is a
    function-local `static` filled with the first compile's ISA family, so in a process that first lowered an fp8
    cast for gfx942, gfx950 kernels decode fp8e4b8/fp8e5b16 with gfx942's conversion instructions (which gfx950
    reads as the OCP formats: values 2x, NaN as -0) or trip an assertion (`v.size() == 4`), and gfx942 kernels
    get gfx950's software converters the other way round. A worker that interleaved the two targets recorded
    those as findings no repro could show: the repro runs the kernel alone, in a fresh process.

    The same interface as CompilePool: `submit` sends a kernel to its target's pool; `of(arch)` is that pool."""

    def __init__(self, targets, workers: int, timeout: float, env: dict | None = None, root: str | None = None,
                 **kwargs):
        targets = list(dict.fromkeys(targets))
        self.root = Path(root or tempfile.mkdtemp(prefix="gfxhound-pool-"))
        self.timeout = timeout
        self.workers = split_workers(workers, len(targets))
        self.pools = {arch: CompilePool(n, timeout, env, root=str(self.root / arch), **kwargs)
                      for arch, n in zip(targets, self.workers)}
        first = next(iter(self.pools.values()))
        self.backend, self.llc, self.log_dir = first.backend, first.llc, first.log_dir
        self.worker_output = {"lines": 0, "last": []}  # filled by close()

    def of(self, arch: str) -> CompilePool:
        return self.pools[arch]

    def has_room(self, arch: str, in_flight: int) -> bool:
        """A target's kernels wait in its own pool: at most twice its workers pending, so a slow target's queue
        does not keep the other target's workers idle."""
        return in_flight < 2 * self.pools[arch].settings["max_workers"]

    def submit(self, spec_json: dict, caps_json: dict, arch: str, **kwargs):
        return self.pools[arch].submit(spec_json, caps_json, arch, **kwargs)

    def outcome(self, task, future) -> dict:
        return next(iter(self.pools.values())).outcome(task, future)

    def discard(self, task):
        shutil.rmtree(task["task_dir"], ignore_errors=True)

    def wait_ready(self, limit: float) -> float:
        began = time.time()
        for pool in self.pools.values():
            pool.wait_ready(max(0.0, limit - (time.time() - began)))
        return time.time() - began

    def healthy(self) -> bool:
        return all(pool.healthy() for pool in self.pools.values())

    def restart(self):
        """Every target's pool: the campaign submits again whatever was in flight (Campaign.restart)."""
        for pool in self.pools.values():
            pool.restart()

    def close(self, cancel=False, wait: float = 30.0):
        """All pools at once (each in its own thread): the time budget's promise holds for the whole."""
        closers = [threading.Thread(target=pool.close, args=(cancel, wait), name="gfxhound-pool-close",
                                    daemon=True) for pool in self.pools.values()]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join(wait + 15)
        lines, last = 0, []
        for pool in self.pools.values():
            lines += pool.worker_output["lines"]
            last += pool.worker_output["last"]
        self.worker_output = {"lines": lines, "last": last[-5:]}
        kept = [pool.worker_output["kept_in"] for pool in self.pools.values() if "kept_in" in pool.worker_output]
        if kept:
            self.worker_output["kept_in"] = ", ".join(kept)
        shutil.rmtree(self.root, ignore_errors=True)


def split_workers(workers: int, parts: int) -> list:
    """`workers` over `parts` pools as evenly as can be, at least two each: pebble gives up on a pool whose only
    worker dies while it has no task ("All workers expired"), and a campaign of two targets on two workers lost
    kernels to it (38 of 42 judged)."""
    return [max(2, workers // parts + (i < workers % parts)) for i in range(parts)]


def mark_ready(ready_dir: Path):
    """Called by a worker at the end of its start-up: `wait_ready` counts these files."""
    (ready_dir / str(os.getpid())).touch()


def wait_ready(pools: list, ready_dir: Path, count: int, limit: float) -> float:
    """Wait (at most `limit` seconds) until `count` live workers of `pools` have marked themselves ready (a worker
    replaced since left its file behind: only live ones count); returns the seconds waited. Starts the pools
    (pebble starts one at its first task otherwise)."""
    def started(pool) -> bool:
        try:
            return pool.active
        except RuntimeError:  # pebble gave up on it ("Unexpected error within the Pool"): the loop restarts it
            return False
    began = time.time()
    while time.time() - began < limit and all(started(pool) for pool in pools):
        live = {str(p.pid) for pool in pools for p in pebble_workers(pool)}
        if len(live & set(os.listdir(ready_dir))) >= count:
            break
        time.sleep(0.05)
    return time.time() - began


def close_pool(pool, cancel: bool, wait: float):
    """Close (finish queued work) or stop (drop it) a pebble pool, then make sure its workers are gone. Its
    workers are asked for before and after, so a replacement started in between is not missed."""
    before = pebble_workers(pool)
    if cancel:  # pebble stops its workers one by one (SIGTERM, a wait, SIGKILL): 8.5 s for 15 busy workers
        for process in before:
            if process.is_alive():
                process.kill()
        pool.stop()
    else:
        pool.close()

    def join():
        try:
            pool.join(timeout=wait)
        except Exception:  # noqa: BLE001 - still running after `wait`: stop it; its workers are killed below
            pool.stop()
    joiner = threading.Thread(target=join, name="gfxhound-pool-join", daemon=True)
    joiner.start()
    joiner.join(wait + 5)
    for process in before + [p for p in pebble_workers(pool) if p not in before]:
        if process.is_alive():
            process.kill()
            process.join(2)


def pebble_workers(pool) -> list:
    """A pebble pool's worker processes now (kept by its worker manager; pebble has no public accessor)."""
    manager = getattr(getattr(pool, "_pool_manager", None), "worker_manager", None)
    return list(getattr(manager, "workers", {}).values())
