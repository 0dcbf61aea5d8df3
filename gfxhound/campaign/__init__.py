"""A fuzz campaign: generate specs, compile them in the worker pool, judge, record findings.

This is the one place (with the CLI) that wires the stages together: fuzz -> oracle -> corpus. Split by concern:
config (what a campaign is asked), probe (what the toolchain can do), this loop, record (judging and recording one
kernel), stats (what it counts and the summary).
"""
from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, wait

from gfxhound.corpus_store import Corpus
from gfxhound.fuzz.capabilities import Capabilities
from gfxhound.fuzz.generate import spec_stream
from gfxhound.oracle.pool import CompilePool

from .config import CampaignConfig, CampaignError, parse_budget  # noqa: F401 - the package's public names
from .probe import Probing
from .record import Recording
from .stats import Stats, features_of, summary_json  # noqa: F401

DRAIN_GRACE_S = 60  # see Campaign.drain_expired


class Campaign(Probing, Recording):
    def __init__(self, config: CampaignConfig, on_progress=None, task_fn=None, specs=None, caps=None):
        self.config = config
        self.given_caps = dict(caps or {})  # arch -> Capabilities to use instead of probing (replaying stored specs)
        self.fixed_specs = specs  # a given list of specs instead of the generator (benchmarks, replays)
        self.task_fn = task_fn  # what a worker runs per kernel (tests inject faults around the real compile)
        self.on_progress = on_progress or (lambda stats: None)
        self.stats = Stats()
        self.corpus = Corpus(config.corpus)
        self.caps: dict[str, Capabilities] = {}
        self.toolchain = ""
        self.toolchain_detail = {}

    # --- the loop ------------------------------------------------------------------------------------------------
    def budget_left(self):
        if self.config.kernels is not None and self.stats.kernels >= self.config.kernels:
            return False
        if self.config.seconds is not None and time.time() - self.stats.started >= self.config.seconds:
            return False
        return True

    def run(self) -> Stats:
        cfg = self.config
        env = dict(cfg.worker_env)
        if cfg.backend == "interpret":
            env["TRITON_INTERPRET"] = "1"  # read when triton is imported: the worker's first import sees it
        if self.task_fn is None and cfg.backend != "compile":
            self.task_fn = self._probe_fn()
        pool = CompilePool(cfg.workers, cfg.timeout, env, llc=cfg.llc,
                           shared_cache=cfg.backend == "device")
        if cfg.backend == "device":
            from gfxhound.oracle.gpu_pool import GpuPool
            self.gpus = GpuPool(pool.root / "cache" / "shared", env, cfg.timeout)
        cancel = True
        try:
            self.probe(pool)
            self.stats.started = time.time()
            self.loop(pool)
            cancel = self.stats.unfinished > 0
        except KeyboardInterrupt:
            self.stats.interrupted = True
        except RuntimeError as exc:  # pebble's pool broke: a Ctrl-C that killed a starting worker does that
            if "Unexpected error within the Pool" not in str(exc):
                raise
            try:
                time.sleep(1.0)  # the same Ctrl-C reaches this process too: let it arrive
            except KeyboardInterrupt:
                self.stats.interrupted = True
            else:
                raise
        except Exception as exc:
            if cfg.backend == "device":
                from gfxhound.oracle.gpu_pool import DeviceWedged
                if isinstance(exc, DeviceWedged):
                    raise CampaignError(str(exc)) from None
            raise
        finally:
            if getattr(self, "gpus", None) is not None:
                self.gpus_busy = self.gpus.busy_seconds
                self.gpus.close()
            pool.close(cancel=cancel)
        return self.stats

    def loop(self, pool):
        cfg = self.config
        def stream_for(i, arch):
            if self.fixed_specs is not None:
                return iter(self.fixed_specs)
            if cfg.plant:
                from gfxhound.oracle.planted import spec_stream as planted_stream
                return planted_stream(cfg.plant, cfg.seed * 1000 + i)
            return spec_stream(self.caps[arch], cfg.seed * 1000 + i, cfg.max_ops, cfg.family, cfg.collective)
        streams = [(arch, stream_for(i, arch)) for i, arch in enumerate(cfg.targets)]
        extra = {"plant": cfg.plant} if cfg.plant else {}
        if cfg.backend == "device":
            extra["device_kind"] = self.gpus.kind
        caps_json = {arch: caps.to_json() for arch, caps in self.caps.items()}  # serialised once, sent per task
        in_flight, turn, submitted = [], 0, 0
        self.drain_deadline = None
        self.gpu_queue, self.gpu_running = [], []  # device: prepared kernels waiting for / running on a GPU
        while True:
            while len(in_flight) < cfg.workers * 2 and len(self.gpu_queue) < 8 and self.budget_left() and (
                    cfg.kernels is None or submitted < cfg.kernels):
                arch, stream = streams[turn % len(streams)]
                turn += 1
                spec = next(stream, None)
                if spec is None:
                    break
                task, future = pool.submit(spec.to_json(), caps_json[arch], arch, extra=extra,
                                           **({"fn": self.task_fn} if self.task_fn else {}))
                in_flight.append((spec, arch, task, future))
                submitted += 1
            self.dispatch_gpus()
            if not in_flight and not self.gpu_queue and not self.gpu_running:
                return
            wait([item[3] for item in in_flight] + [item[-1] for item in self.gpu_running], timeout=1.0,
                 return_when=FIRST_COMPLETED)
            for item in [item for item in in_flight if item[3].done()]:
                in_flight.remove(item)
                self.finish_one(pool, *item)
            for item in [item for item in self.gpu_running if item[-1].done()]:
                self.gpu_running.remove(item)
                spec, arch, task, prepared, index, future = item
                launched = self.gpus.collect(index, task, future)
                self.complete(pool, spec, arch, task, self.merge_launch(prepared, launched))
            self.on_progress(self.stats)
            if self.drain_expired():
                self.stats.unfinished = len(in_flight) + len(self.gpu_queue) + len(self.gpu_running)
                return

    def drain_expired(self) -> bool:
        """Once no more kernels are submitted, what is in flight gets one task timeout (each task has its own) plus
        a grace period: a campaign with a time budget ends close to it even if something hangs past its timeout."""
        if self.budget_left():
            return False
        if self.drain_deadline is None:
            self.drain_deadline = time.time() + self.config.timeout + DRAIN_GRACE_S
        return time.time() > self.drain_deadline

    def dispatch_gpus(self):
        """Keep every GPU busy with one kernel at a time (a fault must be seen before the next launch)."""
        for index in self.gpus.idle() if self.gpu_queue else []:
            if not self.gpu_queue:
                break
            spec, arch, task, prepared = self.gpu_queue.pop(0)
            future = self.gpus.submit(index, dict(task, kernel_hash=prepared.get("kernel_hash")),
                                      prepared.pop("expected"))
            self.gpu_running.append((spec, arch, task, prepared, index, future))

    def merge_launch(self, prepared, launched):
        ex = self.stats.execution
        ex["prepare_ms"] += int(1000 * prepared.get("duration", 0))
        ex["launch_ms"] += int(1000 * launched.get("duration", 0))
        ex["first_run_ms"] += int(1000 * launched.get("first_run_s", 0))
        ex["launched"] += 1
        ex["launch_recompiles"] += bool(launched.get("recompiled"))  # should stay 0: see run_task.launch_device
        return dict(launched, features=prepared.get("features"),
                    duration=prepared.get("duration", 0) + launched.get("duration", 0))
