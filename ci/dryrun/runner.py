"""The dry run itself: a workflow's jobs in `needs` order, a matrix's first combinations, each job's steps in a
fresh checkout (`run:` with bash, `uses:` simulated or reported), and the report of what ran and what did not."""
from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from gfxhound import procgroup

from .expressions import Expressions, UsageError, _text, load_yaml
from .services import Services, _junit, checkout, snapshot


# --- what cannot run here, and what the dry run does instead ----------------------------------------------------
# (pattern on a `run:` script, what to do, why): "line" replaces the matching line, "step" the whole script (both
# with `{venv}`: this checkout's venv), "skip" does not run the step.
REPLACE = [
    (re.compile(r"^[ \t]*make setup[ \t]*$", re.M), "line",
     "make -q tools || { echo 'dry run: the Debian tools are missing: run make tools' >&2; exit 1; }\n"
     "ln -sfn {venv} .venv",
     "make setup: `make -q tools` checks the Debian tools, and this checkout's venv is reused (no pip)"),
    (re.compile(r"python3 -m venv --system-site-packages \.venv\b"), "step", "ln -sfn {venv} .venv\n",
     "the ROCm runner's venv (its system ROCm torch): this checkout's venv is reused"),
    (re.compile(r"\.venv-previous/bin/pip install"), "skip", None,
     "installs the previous Triton from PyPI (minutes, hundreds of MB): PREVIOUS_TRITON and PREVIOUS_PYTHON are "
     "unset instead, so the night neither bisects nor measures perf against it"),
]


def overrides(args) -> dict:
    """Environment settings that make a night minutes long and GPU-free; value None unsets."""
    return {"BUDGET": args.budget, "REPRODUCTIONS": "1", "REDUCE_SECONDS": "0", "PREVIOUS_TRITON": None,
            "PREVIOUS_PYTHON": None}


class Report:
    def __init__(self):
        self.jobs = []  # {"workflow", "night", "job", "steps": [{"name", "kind", "status", "why", "detail"}]}

    def job(self, workflow: str, night: int, name: str) -> dict:
        entry = {"workflow": workflow, "night": night, "job": name, "steps": []}
        self.jobs.append(entry)
        print(f"\n== {workflow}, night {night}: job {name}", flush=True)
        return entry

    @staticmethod
    def step(job: dict, name: str, kind: str, status: str, why: str = "", detail: str = ""):
        """kind: ran (as written, the overrides named), replaced, simulated (an action), not run, skipped (if:)."""
        job["steps"].append({"name": name, "kind": kind, "status": status, "why": why, "detail": detail})
        print(f"  {kind:<9} {status:<7} {name}" + "".join(f"\n{'':20}{line}" for line in
                                                         (why + "\n" + detail).strip().splitlines()), flush=True)

    def summary(self) -> int:
        failed = [(j, s) for j in self.jobs for s in j["steps"] if s["kind"] in ("ran", "replaced")
                  and s["status"] == "failed"]
        print("\n== summary")
        for j in self.jobs:
            kinds = {}
            for s in j["steps"]:
                key = f"{s['kind']} {s['status']}"
                kinds[key] = kinds.get(key, 0) + 1
            print(f"  {j['workflow']} night {j['night']} {j['job']}: "
                  + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
        reasons = {}  # (kind, why) -> the steps
        for j in self.jobs:
            for s in j["steps"]:
                if s["kind"] in ("not run", "simulated", "replaced") or s["kind"] == "ran" and s["why"]:
                    names = reasons.setdefault((s["kind"], s["why"]), [])
                    names += [] if s["name"] in names else [s["name"]]
        if reasons:
            print("  not run as written here, and why:")
            for (kind, why), names in reasons.items():
                print(f"    - {kind}: {'; '.join(names)}\n        {why}")
        for j, s in failed:
            print(f"  FAILED: {j['workflow']} night {j['night']} {j['job']}: {s['name']}")
        return 1 if failed else 0


class DryRun:
    def __init__(self, args, state: Path):
        self.args = args
        self.state = state
        self.services = Services(state / "services")
        self.repo = snapshot(state / "repository", args.empty_corpus)
        self.report = Report()
        self.venv = Path(args.venv).resolve()
        self.root_without_sudo = os.geteuid() == 0 and shutil.which("sudo") is None

    def night(self, path: Path, night: int, date: str):
        wf = load_yaml(path)
        run_id = str(10000 + night)
        github = {"run_id": run_id, "run_attempt": "1", "run_number": str(night), "repository": "local/gfxhound",
                  "server_url": "https://github.invalid", "event_name": "workflow_dispatch", "sha": "dry-run",
                  "ref": "refs/heads/main", "ref_name": "main", "token": "dry-run-token", "actor": "dry-run",
                  "event": {"repository": {"default_branch": "main"}, "inputs": {"night": date}}}
        inputs = {"night": date}
        results = {}
        jobs = wf.get("jobs", {})
        for name in _job_order(jobs):
            job = jobs[name]
            needs = [job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", [])
            needs_ok = all(results.get(n) == "success" for n in needs)
            base = Expressions({"github": github, "inputs": inputs, "needs": {n: {"result": results.get(n)}
                                                                               for n in needs}},
                               status=lambda ok=needs_ok: ok)
            if not base.condition(job.get("if")):
                entry = self.report.job(path.stem, night, name)
                Report.step(entry, "(the job)", "skipped", "-", f"if: {job.get('if')} is false (needs: {needs})")
                results[name] = "skipped"
                continue
            combos = _matrix(job.get("strategy", {}).get("matrix"), self.args.shards)
            outcome = "success"
            for index, combo in enumerate(combos):
                label = name + (" (" + ", ".join(f"{k}={v}" for k, v in combo.items()) + ")" if combo else "")
                strategy = {"job-index": index, "job-total": len(combos)}
                ok = self.job(path, wf, job, label, night, run_id, github, inputs, combo, strategy)
                outcome = outcome if ok else "failure"
            results[name] = outcome

    def job(self, path, wf, job, label, night, run_id, github, inputs, matrix, strategy) -> bool:
        entry = self.report.job(path.stem, night, label)
        ws = self.state / f"night-{night}" / path.stem / re.sub(r"[^\w.-]+", "-", label).strip("-")
        checkout(self.repo, ws)
        temp = ws.parent / (ws.name + ".runner-temp")
        temp.mkdir(exist_ok=True)
        steps_ctx, failed = {}, [False]
        ctx = {"github": dict(github, workspace=str(ws)), "inputs": inputs, "matrix": matrix,
               "strategy": strategy, "runner": {"os": "Linux", "arch": "X64", "temp": str(temp)},
               "steps": steps_ctx, "env": {}}
        exprs = Expressions(ctx, status=lambda: not failed[0])
        env = {}
        for scope in (wf.get("env") or {}, job.get("env") or {}):
            for k, v in scope.items():
                ctx["env"] = dict(env)
                env[k] = _text(exprs.interpolate(v))
        shell_default = ((job.get("defaults") or wf.get("defaults") or {}).get("run") or {}).get("shell")
        persisted = {}  # GITHUB_ENV
        for number, step in enumerate(job.get("steps", []), 1):
            step_env = dict(env, **persisted)
            ctx["env"] = step_env
            name = _text(exprs.interpolate(step.get("name") or (f"uses {step['uses'].split('@')[0]}" if "uses" in
                                                               step else str(step["run"]).strip().splitlines()[0])))
            sid = step.get("id") or f"__step{number}"
            if not exprs.condition(step.get("if")):
                Report.step(entry, name, "skipped", "-", f"if: {step.get('if')} is false")
                steps_ctx[sid] = {"outcome": "skipped", "conclusion": "skipped", "outputs": {}}
                continue
            for k, v in (step.get("env") or {}).items():
                step_env[k] = _text(exprs.interpolate(v))
            outputs = {}
            if "uses" in step:
                ok, kind, why, detail = self.action(step, exprs, ws, f"{path.stem}/{run_id}", outputs)
            else:
                ok, kind, why, detail = self.shell(step, exprs, ws, temp, step_env, shell_default, outputs, persisted)
            outcome = "success" if ok else "failure"
            tolerated = step.get("continue-on-error") in (True, "true")
            if not ok and tolerated:
                detail += "\ncontinue-on-error: the job goes on"
            Report.step(entry, name, kind, "passed" if ok else "failed", why, detail)
            steps_ctx[sid] = {"outcome": outcome, "conclusion": "success" if tolerated else outcome,
                              "outputs": outputs}
            if not ok and not tolerated:
                failed[0] = True
        return not failed[0]

    # --- `uses:` ---------------------------------------------------------------------------------------------
    def action(self, step, exprs, ws: Path, run_key: str, outputs: dict):
        """GitHub's code and services: simulated where a later step needs the effect, else only reported."""
        action = step["uses"].split("@")[0]
        inputs = {k: _text(v) for k, v in exprs.interpolate(step.get("with") or {}).items()}
        s = self.services
        why = f"{action} is GitHub's code: simulated"
        if action == "actions/checkout":
            if inputs.get("ref") == "corpus" and self.args.no_corpus_branch:
                return False, "simulated", why, "ref corpus does not exist (--no-corpus-branch)"
            where = inputs.get("path")
            if not where:
                return True, "simulated", why, "the job's workspace is a copy of the working tree"
            checkout(self.repo, ws / where)
            return True, "simulated", why, (f"{where}/ is a copy of the working tree"
                                            + (f" (as branch {inputs['ref']})" if inputs.get("ref") else ""))
        if action == "actions/cache/restore":
            return True, "simulated", why, s.cache_restore(ws, inputs, outputs)
        if action == "actions/cache/save":
            return True, "simulated", why, s.cache_save(ws, inputs)
        if action == "actions/upload-artifact":
            return True, "simulated", why, s.upload(ws, run_key, inputs)
        if action == "actions/download-artifact":
            return True, "simulated", why, s.download(ws, run_key, inputs)
        if action == "mikepenz/action-junit-report":
            return True, "simulated", f"{why} (the check run is not made)", _junit(ws, inputs.get("report_paths", ""))
        if action == "peter-evans/create-pull-request":
            repo = ws / inputs.get("path", ".")
            paths = Services._paths(inputs.get("add-paths", ""))
            changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", *paths],
                                     cwd=repo, capture_output=True, text=True, timeout=60).stdout.splitlines()
            return True, "not run", f"{action} needs GitHub's API", (
                f"it would open or update {inputs.get('branch')} -> {inputs.get('base')} with {len(changed)} "
                f"changed files under {', '.join(paths)}")
        return True, "not run", f"{action} is GitHub's code (no simulation)", ""

    # --- `run:` ----------------------------------------------------------------------------------------------
    def shell(self, step, exprs, ws: Path, temp: Path, env: dict, shell_default, outputs: dict, persisted: dict):
        script = _text(exprs.interpolate(step["run"]))
        notes, replaced = [], False
        for pattern, what, replacement, why in REPLACE:
            if pattern.search(script):
                if what == "skip":
                    return True, "not run", why, ""
                text = replacement.replace("{venv}", str(self.venv))
                script = pattern.sub(lambda _: text, script) if what == "line" else text
                notes.append(why)
                replaced = True
        if self.root_without_sudo and re.search(r"(^|[;&|(]\s*)sudo\s", script, re.M):
            script = re.sub(r"(^|[;&|(]\s*)sudo\s+", r"\1", script, flags=re.M)
            notes.append("sudo dropped (root here, no sudo)")
        reads = script + "".join((ws / m).read_text() for m in set(re.findall(r"\bci/[\w.-]+\.sh\b", script))
                                 if (ws / m).is_file())  # the variables a step reads: its own, its ci/ scripts'
        for k, v in overrides(self.args).items():
            if k in env and env[k] != v and re.search(rf"\b{k}\b", reads):
                notes.append(f"{k}={v if v is not None else '(unset)'} instead of {env[k]}")
            if v is None:
                env.pop(k, None)
            elif k in env:
                env[k] = v
        if env.get("BACKEND") == "device":
            env["BACKEND"] = "compile"
            notes.append("BACKEND=compile instead of device (no AMD GPU here)")
        files = {n: temp / f"{n.lower()}-{time.time_ns()}" for n in ("GITHUB_OUTPUT", "GITHUB_ENV",
                                                                      "GITHUB_STEP_SUMMARY")}
        for f in files.values():
            f.write_text("")
        script_file = temp / f"step-{time.time_ns()}.sh"
        script_file.write_text(script)
        shell = step.get("shell") or shell_default
        argv = (["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)] if shell == "bash"
                else ["bash", "-e", str(script_file)])
        base = {k: v for k, v in os.environ.items() if k not in env and k not in overrides(self.args)
                and not k.startswith(("GITHUB_", "RUNNER_", "VIRTUAL_ENV"))}  # a runner has a full environment
        full = dict(base, **env, **{k: str(v) for k, v in files.items()}, GITHUB_WORKSPACE=str(ws),
                    RUNNER_TEMP=str(temp), GITHUB_RUN_ID=exprs.contexts["github"]["run_id"])
        cwd = ws / step.get("working-directory", ".")
        log = temp / f"step-{time.time_ns()}.log"
        start = time.time()
        with open(log, "w") as out:  # a step in a session of its own: on a timeout (or Ctrl-C) all it started goes,
            try:  # as a runner ends a step: SIGTERM first (gfxhound writes its summary), SIGKILL 30 s later
                rc = procgroup.run(argv, self.args.step_timeout, cwd=cwd, env=full, stdout=out,
                                   stderr=subprocess.STDOUT, grace=30).returncode
            except subprocess.TimeoutExpired:
                rc = None  # killed
        outputs.update(_key_values(files["GITHUB_OUTPUT"].read_text()))
        persisted.update(_key_values(files["GITHUB_ENV"].read_text()))
        tail = log.read_text(errors="replace").strip().splitlines()[-12 if rc else -3:]
        detail = f"{time.time() - start:.0f} s" + ("" if rc is not None else
                                                  f", killed after {self.args.step_timeout} s")
        detail += "".join(f"\n| {line[:200]}" for line in tail)
        return rc == 0, "replaced" if replaced else "ran", "; ".join(notes), detail


def _key_values(text: str) -> dict:
    """GITHUB_OUTPUT / GITHUB_ENV: NAME=value lines and NAME<<EOF blocks."""
    found, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            key, marker = line.split("<<", 1)
            found[key] = "\n".join(itertools.takewhile(lambda l, m=marker: l != m, lines))
        elif "=" in line:
            key, value = line.split("=", 1)
            found[key] = value
    return found


def _job_order(jobs: dict) -> list:
    order, seen = [], set()

    def visit(name, trail=()):
        if name in seen:
            return
        if name in trail:
            raise UsageError(f"jobs need each other: {' -> '.join(trail + (name,))}")
        needs = jobs[name].get("needs", [])
        for n in [needs] if isinstance(needs, str) else needs:
            visit(n, trail + (name,))
        seen.add(name)
        order.append(name)

    for name in jobs:
        visit(name)
    return order


def _matrix(matrix, limit: int) -> list:
    """The first `limit` combinations of a matrix (every key's values crossed), or one run without a matrix."""
    if not matrix:
        return [{}]
    keys = [k for k in matrix if k not in ("include", "exclude")]
    combos = [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]
    return combos[:limit]
