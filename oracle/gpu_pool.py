"""Launch workers ("lanes"), `per_gpu` of them on each GPU, pinned with CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES;
a fault costs one worker.

One lane per GPU is the default: its turn is mostly CPU work (rendering, loading the kernel's module, the JIT's
cache lookup, buffers, comparing) around a launch of milliseconds, ~55 ms in all with the hand-over on an H100,
so it keeps up with ~18 kernels/s, more than 15 compile workers deliver; more lanes only took CPU from the
compiles (bench/device_throughput.py --gpu-workers 1,2,4). They help where compiles outrun one lane. Each lane
is its own process with its own context: a fault is sticky for that context only, so other lanes stay good.

CUDA and HIP errors are sticky: after a fault or a timeout the worker's context is unusable, so the worker is
replaced and a known-good kernel runs on the new one before the campaign goes on. If that fails too, the device
is wedged and the campaign stops with a message that says so.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from pebble import ProcessExpired, ProcessPool

from gfxhound.stacks import dump_stacks_on_sigusr1

from .pool import close_pool, mark_ready, quiet_worker, single_threaded, wait_ready
from .run_task import known_good, launch_device


KNOWN_GOOD_TIMEOUT_S = 120  # a fresh worker's imports, CUDA/HIP context and one tiny kernel


class DeviceWedged(Exception):
    """The GPU does not run a known-good kernel after its worker was replaced."""


def _gpu_init(env: dict, index: int, cache: str, log_dir: str | None = None, ready: str | None = None):
    quiet_worker(log_dir)  # what a worker prints outside a task must not mix with the CLI's output
    dump_stacks_on_sigusr1()
    single_threaded()  # the compile workers hold the other cores (see oracle/pool.py)
    os.environ.update(env)
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["HIP_VISIBLE_DEVICES"] = str(index)
    os.environ["TRITON_CACHE_DIR"] = cache
    import torch  # noqa: F401 - the CUDA/HIP context is created by the first task
    from . import run_task  # noqa: F401 - the launch task's module, at start-up (oracle/pool.py says why)
    if ready:
        mark_ready(Path(ready))


def gpu_count() -> int:
    import torch
    return torch.cuda.device_count()


class GpuPool:
    def __init__(self, cache: Path, env: dict, timeout: float, gpus: int | None = None,
                 log_dir: Path | None = None, per_gpu: int = 1):
        Path(cache).mkdir(parents=True, exist_ok=True)
        self.log_dir = None if log_dir is None else str(log_dir)
        self.timeout = timeout
        self.gpus = gpus or max(1, gpu_count())
        self.count = self.gpus * max(1, per_gpu)  # lanes; lane i runs on GPU i % gpus
        self.env, self.cache = dict(env), str(cache)
        self.ready = Path(cache).parent / "gpu-ready"
        self.ready.mkdir(parents=True, exist_ok=True)
        self.pools = [self._new_pool(i) for i in range(self.count)]
        # reading `active` starts a pebble pool (it waits for a first task otherwise): the launch workers start
        # now, alongside the compile workers, and the campaign waits for both (wait_ready)
        self.started = [pool.active for pool in self.pools]
        import torch
        self.kind = "hip" if getattr(torch.version, "hip", None) else "cuda"  # picks the tolerance table
        self.running = set()
        self.replaced = 0
        self.busy_seconds = 0.0

    def _new_pool(self, lane: int) -> ProcessPool:
        return ProcessPool(max_workers=1, initializer=_gpu_init,
                           initargs=(self.env, lane % self.gpus, self.cache, self.log_dir, str(self.ready)),
                           context=multiprocessing.get_context("spawn"))

    def wait_ready(self, limit: float) -> float:
        """Start the launch workers and wait until each has its imports done (oracle/pool.wait_ready)."""
        return wait_ready(self.pools, self.ready, self.count, limit)

    def idle(self) -> list:
        return [i for i in range(self.count) if i not in self.running]

    def submit(self, index: int, task: dict, expected):
        future = self.pools[index].schedule(launch_device, args=(dict(task, expected=expected),),
                                            timeout=self.timeout)
        self.running.add(index)
        return future

    def collect(self, index: int, task: dict, future) -> dict:
        self.running.discard(index)
        try:
            result = future.result()
        except FutureTimeout:
            result = {"status": "timeout", "phase": "run", "duration": self.timeout, "fatal": True}
        except ProcessExpired as exc:
            code = exc.exitcode
            result = {"status": "died", "phase": "run", "fatal": True,
                      "ended": f"signal:{-code}" if code and code < 0 else f"exit:{code}"}
        self.busy_seconds += result.get("duration", 0.0)
        stderr = Path(task["stderr_path"])
        native = stderr.read_text(errors="replace") if stderr.exists() else ""
        result["text"] = native + ("\n" + result["text"] if result.get("text") else "")
        if result.get("fatal"):
            self.replace(index)
        return result

    def replace(self, index: int):
        """Retire the worker of lane `index` and prove its device still works.

        The whole pool is replaced: asking pebble's worker to exit (a task calling os._exit) raced with pebble's
        bookkeeping on the device machine and left the future unresolved forever, which hung the campaign."""
        self.replaced += 1
        close_pool(self.pools[index], cancel=True, wait=30)
        self.pools[index] = self._new_pool(index)
        try:
            future = self.pools[index].schedule(known_good, args=({},), timeout=KNOWN_GOOD_TIMEOUT_S)
            check = future.result(timeout=KNOWN_GOOD_TIMEOUT_S + 60)
        except Exception as exc:  # noqa: BLE001
            check = {"status": "exception", "text": f"{type(exc).__name__}: {exc}"}
        if check.get("status") != "ok":
            raise DeviceWedged(f"GPU {index % self.gpus} did not run a known-good kernel after a worker was "
                               f"replaced ({check.get('text', '')[:200]}); reset the device and start again")

    def close(self, wait: float = 10.0):
        for pool in self.pools:
            close_pool(pool, cancel=True, wait=wait)
