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
from gfxhound.budget import BudgetError, parse_budget  # noqa: F401 - the package's public names
from gfxhound.oracle.pool import CompilePool, TargetPools

from .config import CampaignConfig, CampaignError  # noqa: F401
from .probe import Probing
from .record import Recording
from .stats import Stats, features_of, summary_json  # noqa: F401
from .timeouts import TimeoutPolicy

HARD_STOP_WAIT_S = 10  # after the grace (or a second Ctrl-C), how long the pools get to go before being killed


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
        self.looping = False  # probing is over and kernels are being submitted
        self.in_flight, self.gpu_queue, self.gpu_running = [], [], []
        self.confirm_queue = []  # suspected blow-ups waiting for their second run (timeouts.py)
        self.drain_deadline = None
        adaptive = config.backend in ("compile", "device")  # compile-time blow-ups; the interpreter keeps its limit
        self.limits = TimeoutPolicy(config.timeout, floor=config.timeout_floor,
                                    factor=config.timeout_factor if adaptive else None)
        self.worker_output = {"lines": 0, "last": []}
        self.trace = None  # a list to fill: (submitted, began, ended, seen, pid) of each device kernel (benchmarks)
        self.budget_end = float("inf")  # set when the loop starts (run)

    # --- stopping ------------------------------------------------------------------------------------------------
    def request_stop(self, reason: str, grace: float | None = None) -> bool:
        """A first Ctrl-C or SIGTERM (the CLI's signal handler calls this): no new kernels, and what is in flight
        gets `grace` seconds (the configured grace unless given). Returns False when the caller should stop at
        once instead: a second signal, or one that came while the campaign was still probing (nothing in
        flight worth waiting for)."""
        if self.stats.stopped_by or not self.looping:
            return False
        self.stats.stopped_by = reason
        self.stats.interrupted = True
        self.drain_deadline = time.time() + (self.config.grace if grace is None else grace)
        return True

    def budget_left(self):
        if self.stats.stopped_by:
            return False
        if self.config.kernels is not None and self.stats.kernels >= self.config.kernels:
            return False
        if self.config.seconds is not None and time.time() >= self.budget_end:
            return False
        return True

    def drain_expired(self) -> bool:
        """Once no more kernels are submitted (the budget is spent, or a stop was asked), what is in flight gets
        the grace, then the campaign ends and its pools are stopped: a time budget is a promise."""
        if self.budget_left():
            return False
        if self.drain_deadline is None:
            self.drain_deadline = time.time() + self.config.grace
        return time.time() > self.drain_deadline

    def pending(self) -> int:
        return len(self.in_flight) + len(self.gpu_queue) + len(self.gpu_running) + len(self.confirm_queue)

    # --- the loop ------------------------------------------------------------------------------------------------
    def run(self) -> Stats:
        cfg = self.config
        env = dict(cfg.worker_env)
        if cfg.backend == "interpret":
            env["TRITON_INTERPRET"] = "1"  # read when triton is imported: the worker's first import sees it
        if self.task_fn is None and cfg.backend != "compile":
            self.task_fn = self._probe_fn()
        # what the workers import at start-up (oracle/pool.py): the task function's module (a partial's too)
        warm = {"gfxhound.oracle.compile_task", getattr(self.task_fn, "func", self.task_fn).__module__} \
            if self.task_fn else {"gfxhound.oracle.compile_task"}
        settings = dict(llc=cfg.llc, warm=tuple(sorted(warm)), shared_cache=cfg.backend == "device",
                        verbose=cfg.verbose, backend="emulate" if cfg.backend == "emulate" else None)
        if cfg.backend in ("compile", "emulate") and len(set(cfg.targets)) > 1:
            # a worker compiles for one target only: a compiler's process-wide state from one target's kernels
            # must not reach another's (oracle/pool.py TargetPools: Triton 3.5/3.6's fp8 conversion table)
            pool = TargetPools(cfg.targets, cfg.workers, cfg.timeout, env, **settings)
        else:
            pool = CompilePool(cfg.workers, cfg.timeout, env, **settings)
        if cfg.backend == "device":
            from gfxhound.oracle.gpu_pool import GpuPool
            self.gpus = GpuPool(pool.root / "cache" / "shared", env, cfg.timeout, log_dir=pool.log_dir,
                                per_gpu=cfg.gpu_workers)
        cancel = True
        began = self.config.clock_start or time.time()
        try:
            self.probe(pool)
            # the kernels' clock starts with warm workers (a budget still counts from the start, see below)
            for workers in (pool, getattr(self, "gpus", None)):
                if workers is not None:
                    workers.wait_ready(max(0.0, min(60.0, began + (cfg.seconds or 60.0) - time.time())))
            self.stats.started = time.time()
            self.stats.phases["startup"] = self.stats.started - began
            # a time budget is the command's: it counts from the start, probing included, but a probe that took
            # (nearly) all of it still leaves the kernels min(budget, 10 s)
            if cfg.seconds is not None:
                self.budget_end = max(began + cfg.seconds, self.stats.started + min(cfg.seconds, 10.0))
            self.looping = True
            self.loop(pool)
            cancel = self.pending() > 0
        except KeyboardInterrupt:  # a second Ctrl-C, or one while probing: stop now, keep what was found
            self.stats.interrupted = True
            self.stats.stopped_by = self.stats.stopped_by or "interrupt"
        except RuntimeError as exc:  # pebble's pool broke: a Ctrl-C that killed a starting worker does that
            if "Unexpected error within the Pool" not in str(exc):
                raise
            if self.stats.stopped_by:  # the signal that broke it was handled already (the CLI's handler)
                self.stats.interrupted = True
                return self.stats
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
            stopping = time.time()
            self.stats.unfinished = (self.pending() + self.stats.killed_while_stopping) if self.looping else 0
            if getattr(self, "gpus", None) is not None:
                self.gpus_busy = self.gpus.busy_seconds
                self.stats.phases["gpu_busy"] = self.gpus.busy_seconds
                self.gpus.close(wait=HARD_STOP_WAIT_S)
            pool.close(cancel=cancel, wait=HARD_STOP_WAIT_S if cancel else 30.0)
            self.worker_output = pool.worker_output
            self.stats.timeouts = self.limits.summary()
            self.stats.phases["stop"] = time.time() - stopping
        return self.stats

    def loop(self, pool):
        cfg = self.config
        def stream_for(i, arch):
            if self.fixed_specs is not None:
                return iter(self.fixed_specs)
            if cfg.plant:
                from gfxhound.oracle.planted import spec_stream as planted_stream
                return planted_stream(cfg.plant, cfg.seed * 1000 + i)
            return spec_stream(self.caps[arch], cfg.seed * 1000 + i, cfg.max_ops, cfg.family, cfg.collective,
                               cfg.shapes, cfg.user)
        streams = [(arch, stream_for(i, arch)) for i, arch in enumerate(cfg.targets)]
        extra = {"plant": cfg.plant} if cfg.plant else {}
        if cfg.backend == "emulate":
            extra["machine_code"] = cfg.machine_code
        if cfg.backend == "device":
            extra["device_kind"] = self.gpus.kind
        self.caps_json = {arch: caps.to_json() for arch, caps in self.caps.items()}  # serialised once
        self.extra = extra
        turn, submitted = 0, 0
        phases = self.stats.phases
        while True:
            mark = time.perf_counter()
            self.submit_confirmations(pool)
            while len(self.in_flight) < cfg.workers * 2 and len(self.gpu_queue) < 8 and self.budget_left() and (
                    cfg.kernels is None or submitted < cfg.kernels):
                arch, stream = streams[turn % len(streams)]
                if not pool.has_room(arch, sum(item[1] == arch for item in self.in_flight)):
                    # this target's workers have enough waiting (TargetPools): another target's turn, if any
                    if not any(pool.has_room(a, sum(item[1] == a for item in self.in_flight)) for a, _ in streams):
                        break
                    turn += 1
                    continue
                turn += 1
                spec = next(stream, None)
                if spec is None:
                    break
                self.submit(pool, spec, arch, self.limits.first_limit(arch))
                submitted += 1
            self.dispatch_gpus()
            phases["generate"] += time.perf_counter() - mark
            if not self.pending():
                return
            mark = time.perf_counter()
            # launch workers with nothing to run while the compile workers work: the GPU waits on them (a queue
            # held full means the opposite: the compile workers wait on the launches)
            starved = len(self.gpus.idle()) if cfg.backend == "device" and not self.gpu_queue else 0
            wait([item[3] for item in self.in_flight] + [item[-1] for item in self.gpu_running], timeout=1.0,
                 return_when=FIRST_COMPLETED)
            phases["wait"] += time.perf_counter() - mark
            if cfg.backend == "device":
                phases["gpu_lanes_starved"] += starved * (time.perf_counter() - mark)
            mark = time.perf_counter()
            if not pool.healthy():  # before judging: what the broken pool failed is submitted again, not judged
                self.restart(pool)
            for item in [item for item in self.in_flight if item[3].done()]:
                self.in_flight.remove(item)
                self.finish_one(pool, *item)
            for item in [item for item in self.gpu_running if item[-1].done()]:
                self.gpu_running.remove(item)
                spec, arch, task, prepared, index, future = item
                # a GPU worker's whole turn (hand-over, set-up, launch, compare): gpu_busy counts only the launch
                phases["gpu_worker"] += time.perf_counter() - prepared.pop("dispatched")
                handed_over = time.time() - prepared.pop("dispatched_at")  # before collect: it may replace a lane
                launched = self.gpus.collect(index, task, future)
                self.count_turn(launched.get("timings"), handed_over)
                self.complete(pool, spec, arch, task, self.merge_launch(prepared, launched))
            phases["record"] += time.perf_counter() - mark
            self.on_progress(self.stats)
            if self.drain_expired():
                return

    def submit(self, pool, spec, arch, limit, confirm_of=None):
        extra = dict(self.extra, first_limit=confirm_of) if confirm_of else self.extra
        for attempt in (1, 2):
            try:
                task, future = pool.submit(spec.to_json(), self.caps_json[arch], arch, extra=extra, timeout=limit,
                                           **({"fn": self.task_fn} if self.task_fn else {}))
                break
            except RuntimeError:
                if attempt == 2 or pool.healthy():
                    raise
                self.restart(pool)
        self.in_flight.append((spec, arch, task, future))

    def restart(self, pool):
        """pebble gives up on its whole pool when a worker dies while no task is running (a worker that crashes
        on its way out after a task, say): every pending task fails with BrokenProcessPool and nothing more can
        be scheduled. That is pebble's bookkeeping, not a kernel's doing: start a fresh pool and submit again
        what was in flight and not finished (each kernel once more; counted in the summary)."""
        from concurrent.futures.process import BrokenProcessPool
        self.stats.pool_restarts += 1
        pool.restart()
        again = []
        for item in self.in_flight:
            future = item[3]
            if not future.done() or isinstance(future.exception(), (BrokenProcessPool, RuntimeError)):
                again.append(item)
        for item in again:
            self.in_flight.remove(item)
        for spec, arch, task, _ in again:
            pool.discard(task)
            self.submit(pool, spec, arch, task["timeout"], confirm_of=task.get("first_limit"))

    def submit_confirmations(self, pool):
        """A suspected blow-up runs again with a longer limit, one at a time: the confirmation must not take
        the workers the campaign's new kernels need (timeouts.py). Not after the budget: counted unfinished."""
        confirming = sum(1 for item in self.in_flight if item[2].get("first_limit"))
        if self.confirm_queue and not confirming and self.budget_left():
            spec, arch, first = self.confirm_queue.pop(0)
            self.submit(pool, spec, arch, self.limits.confirm_limit(first), confirm_of=first)

    def dispatch_gpus(self):
        """Keep every GPU busy with one kernel at a time (a fault must be seen before the next launch)."""
        for index in self.gpus.idle() if self.gpu_queue else []:
            if not self.gpu_queue:
                break
            spec, arch, task, prepared = self.gpu_queue.pop(0)
            future = self.gpus.submit(index, dict(task, kernel_hash=prepared.get("kernel_hash")),
                                      prepared.pop("expected"))
            prepared["dispatched"], prepared["dispatched_at"] = time.perf_counter(), time.time()
            self.gpu_running.append((spec, arch, task, prepared, index, future))

    def count_turn(self, timings, seconds):
        """Where a launch worker's turn went (run_task.launch_device's timings; the collective family's tasks
        give none), and the hand-over around it: of the `seconds` from dispatch until this loop saw the result,
        what the worker did not spend on its turn."""
        if not timings:
            return
        ex = self.stats.execution
        for key in ("setup_s", "load_s", "inputs_s", "buffers_s", "launch_s", "read_s", "compare_s", "turn_s"):
            ex[f"turn_{key[:-2]}_ms"] += int(1000 * timings.get(key, 0))
        ex["turn_handover_ms"] += int(1000 * max(0.0, seconds - timings.get("turn_s", 0)))

    def merge_launch(self, prepared, launched):
        ex = self.stats.execution
        ex["prepare_ms"] += int(1000 * prepared.get("duration", 0))
        ex["setup_ms"] += int(1000 * prepared.get("setup_s", 0))
        ex["reference_ms"] += int(1000 * prepared.get("reference_s", 0))
        ex["launch_ms"] += int(1000 * launched.get("duration", 0))
        ex["first_run_ms"] += int(1000 * launched.get("first_run_s", 0))
        ex["launched"] += 1
        ex["launch_recompiles"] += bool(launched.get("recompiled"))  # should stay 0: see run_task.launch_device
        return dict(launched, features=prepared.get("features"),
                    duration=prepared.get("duration", 0) + launched.get("duration", 0))
