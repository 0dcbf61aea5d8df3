"""Judging one finished kernel and recording what it found: counts, coverage, and the corpus entry with its repro.
"""
from __future__ import annotations

from pathlib import Path

from gfxhound.fuzz.program import Features
from gfxhound.fuzz.render import launch_options, render
from gfxhound.fuzz.repro import render_repro
from gfxhound.oracle.judge import defects, judge_compile, judge_execute
from gfxhound.signature import MEMORY_MODEL_STAGE, environment_reason, family_key

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
                from gfxhound.oracle.memory_model import standalone_source
                checker = standalone_source()
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
