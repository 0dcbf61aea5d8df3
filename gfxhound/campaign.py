"""A fuzz campaign: generate specs, compile them in the worker pool, judge, record findings.

This is the one place (with the CLI) that wires the stages together: fuzz -> oracle -> corpus.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from pathlib import Path

from gfxhound.atomic import write_atomic
from gfxhound.corpus_store import Corpus
from gfxhound.families import headline
from gfxhound.fuzz.capabilities import Capabilities, finish, introspect, probe_specs
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.program import Features
from gfxhound.fuzz.render import launch_options, render
from gfxhound.fuzz.repro import render_repro
from gfxhound.oracle.judge import defects, judge_compile, judge_execute
from gfxhound.oracle.limitations import excluded_features
from gfxhound.oracle.pool import CompilePool
from gfxhound.signature import MEMORY_MODEL_STAGE, environment_reason, family_key


PROBE_TIMEOUT_S = 300
DRAIN_GRACE_S = 60  # see Campaign.drain_expired
OUTPUT_CAP = 64 * 1024  # bytes of a failing compile's output kept with its example (the end: where it failed)


class CampaignError(Exception):
    """A problem the user can fix (unknown target, unusable corpus...): one line, no traceback."""


@dataclass
class CampaignConfig:
    targets: list
    corpus: str
    backend: str = "compile"
    seconds: float | None = None
    kernels: int | None = None
    workers: int = 2
    seed: int = 0
    timeout: float = 60.0
    max_ops: int = 24
    worker_env: dict = field(default_factory=dict)
    caps_cache: str | None = None
    lld: str = "/usr/lib/llvm-22/bin/ld.lld"
    llc: str | None = None  # run `llc -verify-machineinstrs` on each kernel's LLVM IR when set
    plant: str | None = None  # a planted bug (oracle/planted.py): its kernel family, mutated; nothing is recorded
    family: str = "kernels"  # or "collectives": communication patterns (fuzz/collective/)
    collective: dict = field(default_factory=dict)  # collectives: patterns, controls (negative-control share)


@dataclass
class Stats:
    kernels: int = 0
    verdicts: Counter = field(default_factory=Counter)
    new_signatures: int = 0
    findings: dict = field(default_factory=dict)  # signature -> summary row
    user_errors: Counter = field(default_factory=Counter)
    unresolved: Counter = field(default_factory=Counter)
    coverage: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.time)
    interrupted: bool = False
    unfinished: int = 0  # kernels still in flight when the drain after the budget ran out of time
    compile_seconds: float = 0.0
    verdict_of: dict = field(default_factory=dict)  # spec hash -> verdict, for this run
    resources: Counter = field(default_factory=Counter)  # static facts of the kernels that compiled
    execution: Counter = field(default_factory=Counter)  # interpret/device: compared and undetermined elements
    planted: Counter = field(default_factory=Counter)  # --plant: runs, flagged, and the verdicts of the rest

    def rate(self):
        return self.kernels / max(1e-9, time.time() - self.started)


def _introspect_task(arch):
    return introspect(arch).to_json()


def _toolchain_task():
    from gfxhound.toolchain import describe
    return describe()


def features_of(spec, features, arch):
    feats = {f"op:{name}" for name in features.ops}
    feats |= {f"dtype:{d}" for d in features.dtypes}
    feats |= {f"control:{c}" for c in features.control}
    feats |= {f"detail:{d}" for d in features.details}
    feats |= {f"knob:num_warps={spec.launch.num_warps}", f"knob:num_stages={spec.launch.num_stages}",
              f"target:{arch}", f"grid:{spec.grid}"}
    feats |= {f"knob:{k}={v}" for k, v in spec.launch.options.items()}
    feats |= {f"env:{k}={v}" for k, v in spec.launch.env.items()}
    if spec.pair:
        feats.add(f"pair:{spec.pair.get('kind')}")
    return feats


class Campaign:
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

    # --- capabilities --------------------------------------------------------------------------------------------
    def probe(self, pool: CompilePool):
        for arch in self.config.targets:
            if arch in self.given_caps:
                self.caps[arch] = self.given_caps[arch]
                self.toolchain = f"triton-{self.caps[arch].triton_version}"
                continue
            base = Capabilities.from_json(pool.pool.schedule(_introspect_task, args=(arch,), timeout=120).result())
            if not self.toolchain_detail:  # what is under test: wheel, local build, custom AMD code generator
                self.toolchain_detail = pool.pool.schedule(_toolchain_task, timeout=120).result()
                self.corpus.write_toolchain(self.toolchain_detail)
            self.toolchain = self.toolchain_detail["id"]
            if not base.has("target"):
                raise CampaignError(f"target {arch} is not supported by triton {base.triton_version}; "
                                    "pick another --target")
            cached = self._cached_caps(base)
            if cached is not None:
                self.caps[arch] = cached
                continue
            if self.config.backend != "compile":
                base = self._steer(base)
            submitted = {name: pool.submit(spec.to_json(), base.to_json(), arch, fn=self._probe_fn(),
                                           timeout=max(PROBE_TIMEOUT_S, self.config.timeout))
                         for name, spec in probe_specs(base).items()}
            verdicts = {}
            for name, (task, future) in submitted.items():
                outcome = pool.outcome(task, future)
                execution = self._probe_verdict(outcome, arch)
                verdicts[name] = execution.verdict
                pool.discard(task)
                if execution.verdict == "unresolved":  # the machine cannot compile at all: say so, stop
                    raise CampaignError(f"cannot compile for {arch} with {self.toolchain}: "
                                        f"{execution.reason or execution.message.strip().splitlines()[-1]}")
            self.caps[arch] = finish(base, verdicts)
            if all(v in ("pass", "user_error", "ice") for v in verdicts.values()):  # a slow machine is no fact
                self._store_caps(self.caps[arch])

    def _probe_fn(self):
        """What a worker runs per kernel; the execution backends' tasks need torch, a compile campaign never."""
        if self.config.backend == "compile":
            from gfxhound.oracle.compile_task import run_compile
            return run_compile
        from gfxhound.oracle.run_task import prepare_device, run_interpret
        return {"interpret": run_interpret, "device": prepare_device}[self.config.backend]

    def _probe_verdict(self, outcome, arch):
        if self.config.backend == "compile":
            return judge_compile(outcome, "probe", arch, self.toolchain, {})
        if self.config.backend == "device":  # the probe compiled through the JIT: judge the compile
            outcome = dict(outcome, status="ok") if outcome["status"] == "ok" else outcome
            return judge_compile(outcome, "probe", arch, self.toolchain, {})
        execution = judge_execute(outcome, "probe", arch, self.toolchain, {}, "interpret")
        if execution.verdict == "unresolved" and "undefined behaviour" not in execution.reason \
                and outcome["status"] != "harness":
            execution.verdict = "user_error"  # the interpreter cannot run it: the feature is absent here
        return execution

    def _steer(self, caps):
        """Remove what the execution backend cannot run faithfully (oracle/limitations.py)."""
        data = caps.to_json()
        data["features"] = sorted(set(data["features"]) | set(excluded_features(self.config.backend)))
        if self.config.backend == "interpret":
            from gfxhound.oracle.limitations import INTERPRETER_PRECISIONS
            data["input_precisions"] = [p for p in data["input_precisions"] if p in INTERPRETER_PRECISIONS]
        return Capabilities.from_json(data)

    def _caps_path(self, caps):
        if not self.config.caps_cache:
            return None
        from gfxhound.fuzz.ops import REGISTRY_VERSION
        from gfxhound.signature import USER_ERROR_PATTERNS
        # what probing and steering read: the user-error table and the backend's limitations
        table = hashlib.sha256(repr((USER_ERROR_PATTERNS, excluded_features(self.config.backend))).encode()
                               ).hexdigest()[:8]
        name = (f"caps-{caps.triton_version}-{caps.arch}-{self.config.backend}-r{REGISTRY_VERSION}-c{caps.version}"
                f"-u{table}.json")
        return Path(self.config.caps_cache) / name

    def _cached_caps(self, base):
        path = self._caps_path(base)
        if path is None or not path.exists():
            return None
        try:
            caps = Capabilities.from_json(json.loads(path.read_text()))
        except (ValueError, TypeError):
            return None
        return caps if caps.version == base.version else None

    def _store_caps(self, caps):
        path = self._caps_path(caps)
        if path is None:
            return
        write_atomic(path, caps.dumps())

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

    def judge(self, spec, arch, outcome):
        """The verdict of one kernel (a device outcome already holds its GPU launch: see merge_launch)."""
        backend = self.config.backend
        if backend == "compile":
            return judge_compile(outcome, spec.spec_hash(), arch, self.toolchain, launch_options(spec))
        counts = (outcome.get("features") or {}).get("ops") or render(spec, self.caps[arch]).features.ops
        ops = [name for name, count in sorted(counts.items()) for _ in range(count)]
        family = "collectives" if spec.collective else "kernels"
        return judge_execute(outcome, spec.spec_hash(), arch, self.toolchain, launch_options(spec), backend, ops,
                             family)

    def finish_one(self, pool, spec, arch, task, future):
        outcome = pool.outcome(task, future)
        if self.config.backend == "device" and outcome["status"] == "ok" and "expected" in outcome:
            self.gpu_queue.append((spec, arch, task, outcome))  # compiled, reference ready: to a GPU next
            return
        self.complete(pool, spec, arch, task, outcome)

    def complete(self, pool, spec, arch, task, outcome):
        caps = self.caps[arch]
        pair = outcome.get("pair")
        first = (spec, arch, outcome)
        spec, arch, outcome = self._member_to_judge(spec, arch, task, outcome)
        execution = self.judge(spec, arch, outcome)
        if pair:
            status = "rejected" if pair.get("rejected") else pair["status"]
            if spec is not first[0] and execution.verdict == "user_error":
                # the second member rejected as the user's error (tf32 off gfx942, too many warps for a tile):
                # another target or launch may rightly refuse what the first accepts; the spec itself compiled
                status = "rejected"
                spec, arch, outcome = first
                execution = self.judge(spec, arch, outcome)
            self.stats.coverage[f"pair:{pair['kind']}={status}"] += 1
            if status == "harness":  # our pair machinery failed: counted like any harness failure
                lines = pair.get("text", "").strip().splitlines() or ["?"]
                self.stats.unresolved[f"pair {pair['kind']}: {lines[-1][:200]}"] += 1
        stats = self.stats
        stats.kernels += 1
        stats.verdicts[execution.verdict] += 1
        stats.verdict_of[execution.spec_hash] = execution.verdict
        stats.compile_seconds += execution.duration_s
        # the worker reports what the kernel exercised; render here only when the worker died before it could
        features = (Features.from_json(outcome["features"]) if "features" in outcome
                    else render(spec, caps).features)
        stats.coverage.update(features_of(spec, features, arch))
        if features.steered:
            stats.execution["kernels_steered"] += 1
        for key in ("compared", "undetermined", "mismatches"):
            stats.execution[key] += execution.checks.get(key, 0)
        if execution.reason.startswith("limitation "):
            stats.execution["kernels_meeting_a_limitation"] += 1
        res = execution.resources
        if res:
            stats.resources["kernels"] += 1
            stats.resources["with_vgpr_spills"] += res.get("vgpr_spill_count", 0) > 0
            stats.resources["with_sgpr_spills"] += res.get("sgpr_spill_count", 0) > 0
            stats.resources["with_scratch"] += res.get("private_segment_fixed_size", 0) > 0
            stats.resources["occupancy_1"] += res.get("occupancy") == 1
            for key, name in (("vgpr_count", "max_vgpr"), ("agpr_count", "max_agpr"), ("lds", "max_lds_bytes")):
                stats.resources[name] = max(stats.resources[name], res.get(key, 0))
        for check, status in execution.checks.items():
            stats.coverage[f"check:{check}={status}"] += 1
        if self.config.plant:
            from gfxhound.oracle.planted import FLAGGED, PLANTS
            flagged = PLANTS[self.config.plant].flagged or FLAGGED  # what this plant's defect should show as
            stats.planted["runs"] += 1
            ran = execution.verdict in flagged or execution.verdict == "pass" or execution.stage == "run"
            # a kernel that did not compile says nothing about the oracle: counted apart, not as a miss
            stats.planted["flagged" if execution.verdict in flagged else
                          f"missed:{execution.verdict}" if ran else f"not_run:{execution.verdict}"] += 1
            if execution.verdict not in flagged and execution.verdict != "pass":
                stats.unresolved[(execution.reason or execution.message)[:200]] += 1
            pool.discard(task)
            return
        if execution.verdict == "user_error":
            stats.user_errors[f"{execution.reason}: {execution.message.splitlines()[0][:160]}"] += 1
        elif execution.verdict == "unresolved":
            stats.unresolved[execution.reason[:200]] += 1
            if environment_reason(outcome.get("text", "")):  # it will not go away by itself: stop and say so
                pool.discard(task)
                raise CampaignError(f"cannot compile for {arch} with {self.toolchain}: {execution.reason}")
        elif execution.is_bug:
            rendered = render(spec, caps)
            for one in defects(execution):  # a kernel with two memory-model defects shows two bugs
                self.record(one, spec, rendered, caps, task)
        pool.discard(task)

    @staticmethod
    def _member_to_judge(spec, arch, task, outcome):
        """The spec, or its metamorphic pair's second member where that one failed (fuzz/pairs.py): a crash of
        the second member is its own finding, recorded as the spec that reproduces it alone. A mutated layout
        the compiler's verifier rejected is our mutation's fault, not a finding (counted as `rejected`)."""
        from gfxhound.fuzz.pairs import variant
        from gfxhound.oracle.compile_task import PAIR_MARK
        pair = outcome.get("pair") or {}
        failed = outcome["status"] == "ok" and pair.get("status") in ("exception", "mismatch") and \
            not pair.get("rejected")
        died = outcome["status"] in ("died", "timeout") and (Path(task["task_dir"]) / PAIR_MARK).exists()
        if not (failed or died):
            return spec, arch, outcome
        second, second_arch = variant(spec, arch)
        if pair.get("status") == "mismatch":  # a device run of the second member was wrong
            outcome = dict(pair, status="ok", text=outcome.get("text", ""))
        elif failed:
            outcome = {"status": "exception", "text": outcome.get("text", ""), "duration": pair.get("duration", 0),
                       "ir_dir": outcome.get("ir_dir"), **({"phase": "run"} if "fatal" in pair else {})}
        return second, second_arch, outcome

    def record(self, execution, spec, rendered, caps, task):
        from gfxhound.fuzz.forced import forced
        label = forced(spec.launch.env, execution.target)
        if label:  # a knob forced a feature onto a target without it: real, but apart (fuzz/forced.py)
            execution.checks["forced"] = label
        if spec.collective and execution.stage == "run":
            repro = self._collective_repro(execution, spec, rendered)
        elif execution.stage != MEMORY_MODEL_STAGE and (execution.verdict in ("miscompile", "nondeterministic") or (
                execution.verdict == "runtime_fault" and self.config.backend != "compile")):
            repro = self._exec_repro(execution, spec, rendered, caps)
        else:
            llc = self.config.llc if execution.stage == "llc-verify" else None
            mutated = Path(task["task_dir"]) / "ir" / "kernel.mutated.ttgir"
            ttgir = mutated.read_text() if (spec.pair or {}).get("kind") == "layout" and mutated.exists() else None
            checker = None
            if execution.stage == MEMORY_MODEL_STAGE:
                import inspect

                from gfxhound.oracle import memory_model
                checker = inspect.getsource(memory_model)
            repro = render_repro(rendered, execution.target, execution.to_json(), self.toolchain,
                                 execution.spec_hash, timeout_s=int(self.config.timeout * 2), lld=self.config.lld,
                                 llc=llc, ttgir=ttgir, memory_model_src=checker)
        files = {"spec.json": spec.dumps(), "run.json": execution.dumps(), "caps.json": caps.dumps(),
                 "repro.py": repro}
        output = Path(task.get("stderr_path", ""))
        if output.is_file():  # what the compiler printed: the finding's record, not the console (capped)
            files["output.txt"] = output.read_bytes()[-OUTPUT_CAP:]
        finding, is_new = self.corpus.record(execution.to_json(), files, Path(task["task_dir"]) / "ir")
        if is_new:
            self.stats.new_signatures += 1
        self.stats.findings[finding.signature] = {
            "id": finding.signature, "signature": finding.signature, "verdict": finding.verdict,
            "stage": finding.stage, "normalised": finding.normalised,
            "first_error_line": finding.message.splitlines()[0][:300] if finding.message else "",
            "target": execution.target, "configuration": finding.configuration,
            "family": family_key(finding.verdict, finding.stage, finding.normalised),
            "count_this_run": self.stats.findings.get(
                finding.signature, {}).get("count_this_run", 0) + 1, "new": is_new or self.stats.findings.get(
                finding.signature, {}).get("new", False)}


    def _collective_repro(self, execution, spec, rendered):
        """A collective's wrong result, lost signal or hang: the kernel, the case and the heap judge, standalone."""
        from gfxhound.fuzz.collective.render import MAX_SPIN
        from gfxhound.oracle.collective import case_of
        from gfxhound.oracle.collective_repro import render_collective_repro
        return render_collective_repro(rendered, spec, case_of(spec), execution.to_json(), MAX_SPIN,
                                       timeout_s=int(self.config.timeout * 2))

    def _exec_repro(self, execution, spec, rendered, caps):
        """A wrong result's repro embeds the inputs and the reference's expected values (recomputed here: the
        reference is deterministic and cheap next to a finding)."""
        from gfxhound.oracle.exec_repro import render_exec_repro
        from gfxhound.oracle.inputs import make_inputs
        from gfxhound.oracle.run_task import reference
        kind = self.gpus.kind if getattr(self, "gpus", None) is not None else ""
        expected = reference(spec, caps, execution.backend, kind)
        return render_exec_repro(rendered, spec, make_inputs(spec), expected, execution.to_json(),
                                 timeout_s=int(self.config.timeout * 2))


def parse_budget(text: str):
    """'10m', '90s', '2h' -> (seconds, None); '5000' -> (None, 5000)."""
    text = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        if text and text[-1] in units:
            return float(text[:-1]) * units[text[-1]], None
        return None, int(text)
    except ValueError:
        raise CampaignError(f"--budget {text!r} is neither a duration (10m, 90s, 2h) nor a kernel count") from None


def summary_json(stats: Stats, config: CampaignConfig, toolchain: str) -> dict:
    duration = time.time() - stats.started
    n = max(1, stats.kernels)
    summary = {
        "toolchain": toolchain, "targets": config.targets, "backend": config.backend, "seed": config.seed,
        "kernels": stats.kernels, "duration_s": round(duration, 2), "kernels_per_s": round(stats.kernels / max(
            duration, 1e-9), 3), "interrupted": stats.interrupted, "unfinished": stats.unfinished,
        "verdicts": dict(stats.verdicts),
        "user_error_share": round(stats.verdicts.get("user_error", 0) / n, 4),
        "new_signatures": stats.new_signatures, "findings": sorted(stats.findings.values(), key=lambda f: f["signature"]),
        "findings_headline": headline(list(stats.findings.values())),
        "resources": dict(stats.resources),
        "execution": _execution_summary(stats, n, config.backend) if config.backend != "compile" else {},
        "planted": _planted_summary(stats.planted, config.plant) if config.plant else {},
        "user_errors": dict(stats.user_errors.most_common(20)), "unresolved": dict(stats.unresolved.most_common(20)),
        "coverage": {k: {"kernels": v, "share": round(v / n, 4)} for k, v in sorted(stats.coverage.items())},
    }
    from gfxhound.fuzz.floors import check
    summary["coverage_floors"] = check(summary["coverage"], stats.kernels, summary["user_error_share"],
                                       excluded_features(config.backend) if config.backend != "compile" else ())
    return summary


def _planted_summary(planted, name) -> dict:
    """flagged_share counts the runs that ran: a kernel the compiler could not build tests nothing."""
    not_run = sum(v for k, v in planted.items() if k.startswith("not_run:"))
    ran = planted.get("runs", 0) - not_run
    return dict(planted, name=name, ran=ran, flagged_share=round(planted.get("flagged", 0) / max(1, ran), 4))


def _execution_summary(stats: Stats, n: int, backend: str) -> dict:
    ex = dict(stats.execution)
    ex["excluded_features"] = excluded_features(backend)
    ex["steered_share"] = round((ex.get("kernels_steered", 0) + ex.get("kernels_meeting_a_limitation", 0)) / n, 4)
    ex["undetermined_share"] = round(ex.get("undetermined", 0) / max(1, ex.get("compared", 0)
                                                                     + ex.get("undetermined", 0)), 4)
    return ex
