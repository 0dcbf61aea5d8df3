"""Judging one finished kernel and recording what it found: counts, coverage, and the corpus entry with its repro.
"""
from __future__ import annotations

import time
from pathlib import Path

from gfxhound.fuzz.features import Features
from gfxhound.fuzz.render import launch_options, render
from gfxhound.oracle.judge import defects, judge_compile, judge_execute
from gfxhound.oracle.repro import write_repro
from gfxhound.corpus_store.layout import example_files
from gfxhound.signature import environment_reason, family_key, headline

from .config import CampaignError
from .stats import features_of

OUTPUT_CAP = 64 * 1024  # bytes of a failing compile's output kept with its example (the end: where it failed)


class Recording:
    """The judging and recording half of a Campaign (mixed in)."""

    def judge(self, spec, arch, outcome):
        """The verdict of one kernel (a device outcome already holds its GPU launch: see merge_launch)."""
        backend = self.config.backend
        if backend == "compile":
            return judge_compile(outcome, spec.spec_hash(), arch, self.toolchain, launch_options(spec))
        counts = (outcome.get("features") or {}).get("ops") or render(spec, self.caps[arch]).features.ops
        ops = [name for name, count in sorted(counts.items()) for _ in range(count)]
        return judge_execute(outcome, spec.spec_hash(), arch, self.toolchain, launch_options(spec), backend, ops,
                             spec.family, spec=spec, caps=self.caps[arch])

    def finish_one(self, pool, spec, arch, task, future):
        outcome = pool.outcome(task, future)
        span = outcome.pop("span", None)  # began and ended in the worker: where kernels wait (benchmarks)
        if span and self.trace is not None:
            self.trace.append((task["submitted"], span[0], span[1], time.time(), span[2]))
        if outcome["status"] in ("ok", "exception") and not task.get("first_limit"):
            self.limits.observe(arch, outcome.get("duration", 0))
        if self.suspected(pool, spec, arch, task, outcome) or self.killed_from_outside(pool, task, outcome):
            return
        if self.config.backend == "device" and outcome["status"] == "ok" and "expected" in outcome:
            self.gpu_queue.append((spec, arch, task, outcome))  # compiled, reference ready: to a GPU next
            return
        self.complete(pool, spec, arch, task, outcome)

    def killed_from_outside(self, pool, task, outcome) -> bool:
        """A worker that died of SIGTERM or SIGINT was killed by someone else (CI cancelling the job signals the
        whole process group; no compiler raises them): never a crash finding. Counted unfinished while the
        campaign stops, unresolved otherwise."""
        if outcome["status"] != "died" or outcome.get("ended") not in ("signal:15", "signal:2"):
            return False
        if self.stats.stopped_by:
            self.stats.killed_while_stopping += 1
        else:
            self.stats.kernels += 1
            self.stats.verdicts["unresolved"] += 1
            self.stats.unresolved[f"a worker was killed from outside the campaign ({outcome['ended']})"] += 1
        pool.discard(task)
        return True

    def suspected(self, pool, spec, arch, task, outcome) -> bool:
        """A first run past its adaptive limit waits for its second run (timeouts.py); a second run that ran out
        too is a timeout whose message gives both limits."""
        counts, limit = self.limits.counts, task["timeout"]
        first = task.get("first_limit")
        if outcome["status"] != "timeout":
            counts["cleared"] += bool(first)
            return False
        if first:
            counts["confirmed"] += 1
            counts["seconds_on_blowups"] += first + limit
            outcome["message"] = self.limits.message(arch, first, limit)
            return False
        if self.limits.confirm_limit(limit) is None:
            counts["seconds_on_blowups"] += limit
            return False
        counts["suspected"] += 1
        self.confirm_queue.append((spec, arch, limit))
        pool.discard(task)
        return True

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
        stats.seconds_of[execution.spec_hash] = execution.duration_s
        stats.compile_seconds += execution.duration_s
        # the worker reports what the kernel exercised; render here only when the worker died before it could
        features = (Features.from_json(outcome["features"]) if "features" in outcome
                    else render(spec, caps).features)
        stats.coverage.update(features_of(spec, features, arch))
        if features.steered:
            stats.execution["kernels_steered"] += 1
        for key in ("compared", "undetermined", "mismatches"):
            stats.execution[key] += execution.checks.get(key, 0)
        if "machine" in execution.checks:  # --backend emulate on a target the machine-code executor models
            count_machine(stats, execution, spec)
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
            if isinstance(status, str) and check not in ("machine_detail",):  # a status, not a count or a text
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

    def _repro_timeout(self, execution, task) -> int:
        """A blow-up's repro waits as long as the run that confirmed it (it must time out where the campaign's
        did); any other repro gets twice the ceiling, so a slow machine does not turn its failure into a hang."""
        if execution.verdict == "timeout" and task.get("first_limit"):
            return max(1, int(task["timeout"]))
        return int(self.config.timeout * 2)

    def record(self, execution, spec, rendered, caps, task):
        from gfxhound.fuzz.forced import forced
        label = forced(spec.launch.env, execution.target)
        if label:  # a knob forced a feature onto a target without it: real, but apart (fuzz/forced.py)
            execution.checks["forced"] = label
        mutated = Path(task["task_dir"]) / "ir" / "kernel.mutated.ttgir"
        ttgir = mutated.read_text() if (spec.pair or {}).get("kind") == "layout" and mutated.exists() else None
        repro = write_repro(execution, spec, rendered, caps, backend=self.config.backend, toolchain=self.toolchain,
                            timeout_s=self._repro_timeout(execution, task), lld=self.config.lld, llc=self.config.llc,
                            ttgir=ttgir, device_kind=self.gpus.kind if getattr(self, "gpus", None) else "")
        output = Path(task.get("stderr_path", ""))  # what the compiler printed: the record, not the console
        files = example_files(spec.dumps(), execution.dumps(), caps.dumps(), repro,
                              output.read_bytes()[-OUTPUT_CAP:] if output.is_file() else None)
        finding, is_new = self.corpus.record(execution.to_json(), files, Path(task["task_dir"]) / "ir")
        if is_new:
            self.stats.new_signatures += 1
        self.stats.findings[finding.signature] = {
            "id": finding.signature, "signature": finding.signature, "verdict": finding.verdict,
            "stage": finding.stage, "normalised": finding.normalised,
            "first_error_line": headline(finding.message),
            "target": execution.target, "configuration": finding.configuration,
            "family": family_key(finding.verdict, finding.stage, finding.normalised),
            "count_this_run": self.stats.findings.get(
                finding.signature, {}).get("count_this_run", 0) + 1, "new": is_new or self.stats.findings.get(
                finding.signature, {}).get("new", False)}


HAZARD_KERNELS_KEPT = 20
RATIOS_KEPT = 100_000  # executors' seconds over the compile's, a kernel each (the median goes in the summary)


def count_machine(stats, execution, spec) -> None:
    """The machine-code run's counts (--backend emulate), and the spec of each kernel whose IR was right and whose
    machine run read a register no s_waitcnt retired or broke a wait-state row (the first HAZARD_KERNELS_KEPT): such
    a kernel's verdict is `hazard`, a finding keyed by its instruction pair; the list shows every kernel behind
    the few findings in the summary itself."""
    machine = execution.checks["machine"]
    stats.execution["machine_code_runs"] += 1
    stats.execution["machine_code_judged"] += machine in ("agree", "disagree", "hazard")
    stats.execution["machine_code_hazards"] += machine == "hazard"
    stats.execution["machine_code_ms"] += int(1000 * execution.checks.get("machine_s", 0))
    if "compile_s" in execution.checks and len(stats.executor_ratios) < RATIOS_KEPT:
        checks = execution.checks
        stats.executor_ratios.append((checks["compile_s"], checks["ir_s"] + checks.get("machine_s", 0)))
    if machine == "unresolved":
        stats.machine_unresolved[_construct(execution.checks.get("machine_detail", ""))] += 1
    elif machine == "hazard" and len(stats.machine_hazards) < HAZARD_KERNELS_KEPT:
        stats.machine_hazards.append({"spec_hash": execution.spec_hash, "target": execution.target,
                                      "verdict": execution.verdict,
                                      "detail": execution.checks.get("machine_detail", ""),
                                      "spec": spec.to_json() if spec is not None else None})


def _construct(text: str) -> str:
    """What stopped the machine-code run, without the operands: the mnemonic and the construct it named."""
    import re
    return re.sub(r"0x[0-9a-f]+|\b\d+\b|(?<=_)\d+\b", "N", text.split("\n")[0])[:160] or "?"
