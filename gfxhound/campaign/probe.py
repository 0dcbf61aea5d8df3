"""Capabilities: what the installed Triton can compile for each target, probed once (in the worker pool, since a
probe can crash) and cached per release, backend and table version."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gfxhound.atomic import write_atomic
from gfxhound.fuzz.capabilities import Capabilities, finish, introspect, probe_specs
from gfxhound.oracle.judge import judge_compile, judge_execute
from gfxhound.oracle.limitations import excluded_features
from gfxhound.oracle.pool import CompilePool

from .config import CampaignError

PROBE_TIMEOUT_S = 300


def _introspect_task(arch):
    return introspect(arch).to_json()


def _toolchain_task():
    from gfxhound.toolchain import describe
    return describe()


class Probing:
    """The capability half of a Campaign (mixed in): fills self.caps, self.toolchain, self.toolchain_detail."""

    # --- capabilities --------------------------------------------------------------------------------------------
    def probe(self, pool: CompilePool):
        for arch in self.config.targets:
            if arch in self.given_caps:
                self.caps[arch] = self.given_caps[arch]
                self.toolchain = f"triton-{self.caps[arch].triton_version}"
                continue
            workers = pool.of(arch).pool  # the target's own workers (oracle/pool.py TargetPools)
            base = Capabilities.from_json(workers.schedule(_introspect_task, args=(arch,), timeout=120).result())
            if not self.toolchain_detail:  # what is under test: wheel, local build, custom AMD code generator
                self.toolchain_detail = workers.schedule(_toolchain_task, timeout=120).result()
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
        if self.config.backend == "emulate":
            from gfxhound.oracle.emulate_task import run_emulate
            return run_emulate
        from gfxhound.oracle.run_task import prepare_device, run_interpret
        return {"interpret": run_interpret, "device": prepare_device}[self.config.backend]

    def _probe_verdict(self, outcome, arch):
        if self.config.backend == "compile":
            return judge_compile(outcome, "probe", arch, self.toolchain, {})
        if self.config.backend == "device":  # the probe compiled through the JIT: judge the compile
            outcome = dict(outcome, status="ok") if outcome["status"] == "ok" else outcome
            return judge_compile(outcome, "probe", arch, self.toolchain, {})
        if self.config.backend == "emulate":  # probing asks what compiles; what the executor models is per kernel
            compiled_ok = outcome["status"] in ("ok", "unmodelled") or outcome.get("phase") == "run"
            outcome = dict(outcome, status="ok") if compiled_ok else outcome
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
