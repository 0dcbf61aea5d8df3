#!/usr/bin/env python3
"""A local dry run of the GitHub workflows in .github/workflows: every job's `run:` steps run with bash, as the
runner would run them, in a fresh copy of this working tree, night after night; the steps that cannot run here are
named with the reason.

Why: a workflow is otherwise first run by GitHub, at night, and a step that cannot work (a path the next step does
not find, an apt-get without sudo, a history that never comes back) shows up a day later. Here the shell steps run
for real against the gfxhound of this checkout, with short budgets, and the actions' effects that later steps
need are simulated: the cache (restore-keys prefix, newest first; a saved key is never overwritten), artifacts
(upload, then download into <path>/<name>/), the checkouts (a copy of the working tree; `--no-corpus-branch`
makes the corpus branch missing). What cannot run here, and so is only reported:
  - `uses:` actions (GitHub's code, GitHub's services): simulated as above, or only reported;
  - `make setup`: `make -q tools` checks the Debian tools, and the venv of this checkout is reused (no pip);
  - the ROCm runner's own venv (system ROCm torch): the venv of this checkout is reused;
  - the previous Triton's venv (pip install from PyPI, minutes): not made; PREVIOUS_TRITON and PREVIOUS_PYTHON
    are unset, so the night neither bisects nor measures perf against it;
  - `--backend device` (needs an AMD GPU): BACKEND=compile;
  - budgets: BUDGET becomes --budget (20s), REPRODUCTIONS 1, REDUCE_SECONDS 0 (no reduction).
`sudo` is dropped when running as root without sudo (this machine). Every substitution is printed.

    .venv/bin/python ci/dry-run.py                        # both workflows, one night
    .venv/bin/python ci/dry-run.py nightly-matrix --nights 2 --shards 2 --keep /tmp/dry
Exit 0 when every step that ran passed, 1 when one failed, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import glob
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


class UsageError(Exception):
    """A problem with how the dry run was asked for: one line, no traceback."""


def load_yaml(path: Path):
    """ruamel.yaml comes with check-jsonschema (the test extras); it reads `on:` as a string, as GitHub does."""
    try:
        from ruamel.yaml import YAML
        return YAML(typ="safe", pure=True).load(path.read_text())
    except ImportError:
        pass
    try:
        import yaml
    except ImportError:
        raise UsageError("needs ruamel.yaml or PyYAML: run it with .venv/bin/python (make setup)") from None
    data = yaml.safe_load(path.read_text())
    if True in data and "on" not in data:  # PyYAML reads YAML 1.1: the key `on` becomes True
        data["on"] = data.pop(True)
    return data


# --- GitHub expressions: the subset these workflows use --------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||<=|>=|[!()<>,])"
                    r"|(?P<path>[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*))")
_FUNCS = {"always", "success", "failure", "cancelled", "contains", "startsWith", "endsWith", "format", "fromJSON",
          "toJSON"}


class Expressions:
    """Evaluates `${{ }}` against contexts (dicts): a missing property is '' as on GitHub."""

    def __init__(self, contexts: dict, status=lambda: True):
        self.contexts = contexts
        self.status = status  # True while no earlier step (or needed job) failed

    def _get(self, path: str):
        value = self.contexts
        for part in re.findall(r"[\w-]+", path):
            if isinstance(value, dict):
                value = value.get(part, "")
            elif isinstance(value, list) and part.isdigit():
                value = value[int(part)] if int(part) < len(value) else ""
            else:
                return ""
        return value

    def evaluate(self, expr: str):
        src, pos, expr = [], 0, expr.strip()
        while pos < len(expr):
            m = _TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                raise UsageError(f"cannot read the expression {expr!r} at {expr[pos:]!r}")
            pos = m.end()
            if m["str"]:
                src.append(repr(m["str"][1:-1].replace("''", "'")))
            elif m["num"]:
                src.append(m["num"])
            elif m["op"]:
                src.append({"&&": " and ", "||": " or ", "!": " not "}.get(m["op"], m["op"]))
            elif m["path"] in ("true", "false", "null"):
                src.append({"true": "True", "false": "False", "null": "None"}[m["path"]])
            elif m["path"] in _FUNCS and expr[pos:].lstrip().startswith("("):
                src.append(f"_{m['path']}")
            else:
                src.append(f"_get({m['path']!r})")
        names = {"_get": self._get, "_always": lambda: True, "_success": self.status,
                 "_failure": lambda: not self.status(), "_cancelled": lambda: False,
                 "_contains": lambda a, b: str(b).lower() in (a if isinstance(a, list) else str(a).lower()),
                 "_startsWith": lambda a, b: str(a).lower().startswith(str(b).lower()),
                 "_endsWith": lambda a, b: str(a).lower().endswith(str(b).lower()),
                 "_format": lambda f, *a: re.sub(r"\{(\d+)\}", lambda g: _text(a[int(g[1])]), f),
                 "_fromJSON": json.loads, "_toJSON": json.dumps}
        return eval("".join(src), {"__builtins__": {}}, names)  # noqa: S307 -- tokens above, nothing else

    def condition(self, expr) -> bool:
        """A step's or job's `if:`; without a status function it means `success() && (...)`, as on GitHub."""
        if expr is None:
            return self.status()
        text = str(expr).strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2]
        if not re.search(r"\b(always|success|failure|cancelled)\s*\(", text):
            text = f"success() && ({text})"
        return bool(self.evaluate(text))

    def interpolate(self, value):
        if isinstance(value, str):
            return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _text(self.evaluate(m[1])), value)
        if isinstance(value, dict):
            return {k: self.interpolate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.interpolate(v) for v in value]
        return value


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


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


# --- the simulated services ------------------------------------------------------------------------------------
class Services:
    """The cache and the artifacts, kept in the dry run's state directory across jobs (and nights: the cache)."""

    def __init__(self, state: Path):
        self.cache = state / "cache"
        self.artifacts = state / "artifacts"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.artifacts.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _paths(text: str) -> list:
        return [line.strip() for line in str(text).splitlines() if line.strip()]

    def cache_save(self, ws: Path, inputs: dict) -> str:
        key = inputs["key"]
        entry = self.cache / key
        if entry.exists():
            return f"cache key {key} exists already: not saved (entries are immutable)"
        saved = []
        for p in self._paths(inputs["path"]):
            if p.startswith("!"):
                raise UsageError(f"cache path {p}: exclusions are not supported (nor by actions/cache)")
            src = ws / p.rstrip("/")
            if src.exists():
                _copy(src, entry / "files" / p.rstrip("/"))
                saved.append(p)
        if not saved:
            return "cache: none of the paths exist, nothing saved"
        (entry / "created").write_text(str(time.time_ns()))
        return f"cache saved as {key}: {', '.join(saved)}"

    def cache_restore(self, ws: Path, inputs: dict, outputs: dict) -> str:
        key, prefixes = inputs["key"], self._paths(inputs.get("restore-keys", ""))
        entries = sorted((e for e in self.cache.iterdir() if (e / "created").exists()),
                         key=lambda e: int((e / "created").read_text()), reverse=True)
        found = next((e for e in entries if e.name == key), None)
        for prefix in prefixes:
            found = found or next((e for e in entries if e.name.startswith(prefix)), None)
        outputs.update({"cache-hit": "true" if found and found.name == key else "false",
                        "cache-primary-key": key, "cache-matched-key": found.name if found else ""})
        if not found:
            return f"cache: nothing for {key} nor the prefixes {prefixes} (a first night)"
        for p in self._paths(inputs["path"]):
            src = found / "files" / p.rstrip("/")
            if src.exists():
                _copy(src, ws / p.rstrip("/"))
        return f"cache restored from {found.name}"

    def upload(self, ws: Path, run_key: str, inputs: dict) -> str:
        """run_key: <workflow>/<run id>: artifacts belong to one run of one workflow."""
        patterns = self._paths(inputs["path"])
        matched = [Path(m) for p in patterns for m in glob.glob(str(ws / p.rstrip("/")))]
        if not matched:
            return f"artifact {inputs['name']}: no files found for {patterns} (warning, as on GitHub)"
        root = matched[0] if len(matched) == 1 and matched[0].is_dir() else Path(os.path.commonpath(
            [m if m.is_dir() and len(matched) > 1 else m.parent for m in matched]))
        dest = self.artifacts / run_key / inputs["name"]
        if dest.exists():
            raise UsageError(f"artifact {inputs['name']} uploaded twice in run {run_key}")
        for m in matched:
            _copy(m, dest / m.relative_to(root) if m != root else dest)
        files = sum(1 for f in dest.rglob("*") if f.is_file())
        return f"artifact {inputs['name']}: {files} files from {root.relative_to(ws) if root != ws else '.'}/"

    def download(self, ws: Path, run_key: str, inputs: dict) -> str:
        base = self.artifacts / run_key
        names = sorted(d.name for d in base.iterdir()) if base.exists() else []
        if inputs.get("pattern"):
            names = [n for n in names if fnmatch.fnmatch(n, inputs["pattern"])]
        elif inputs.get("name"):
            names = [n for n in names if n == inputs["name"]]
        dest = ws / inputs.get("path", ".")
        for n in names:
            single = inputs.get("name") and not inputs.get("pattern")
            _copy(base / n, dest if single or inputs.get("merge-multiple") in (True, "true") else dest / n)
        return f"artifacts {names or 'none'} into {inputs.get('path', '.')}/"


def _copy(src: Path, dest: Path):
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
    else:
        shutil.copy2(src, dest)


# --- the repository a checkout gives -----------------------------------------------------------------------------
def snapshot(dest: Path, empty_corpus: bool) -> Path:
    """This working tree as a one-commit repository (tracked files and untracked ones git does not ignore, less
    scratch/): what a checkout of it would give once committed."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, check=True).stdout
    for name in sorted(set(filter(None, listing.split("\0")))):
        src = ROOT / name
        if name.startswith("scratch/") or not src.is_file() and not src.is_symlink():
            continue
        if empty_corpus and name.startswith("corpus/") and name.count("/") > 1 and "/perfset/" not in name:
            continue  # the findings (their replay takes minutes every night); triage.json and README stay
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name, follow_symlinks=False)
    git = ["git", "-c", "user.name=dry run", "-c", "user.email=dry-run@localhost", "-c", "init.defaultBranch=main"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the working tree, for the dry run"]):
        subprocess.run(git + argv, cwd=dest, check=True, capture_output=True, timeout=120)
    return dest


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
        if ws.exists():
            shutil.rmtree(ws)
        ws.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", str(self.repo), str(ws)], check=True, capture_output=True,
                       timeout=120)
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
            dest = ws / where
            if dest.exists():
                shutil.rmtree(dest)
            subprocess.run(["git", "clone", "-q", str(self.repo), str(dest)], check=True, capture_output=True,
                           timeout=120)
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
        with open(log, "w") as out:
            rc = _run_group(argv, cwd, full, out, self.args.step_timeout)
        outputs.update(_key_values(files["GITHUB_OUTPUT"].read_text()))
        persisted.update(_key_values(files["GITHUB_ENV"].read_text()))
        tail = log.read_text(errors="replace").strip().splitlines()[-12 if rc else -3:]
        detail = f"{time.time() - start:.0f} s" + ("" if rc is not None else
                                                  f", killed after {self.args.step_timeout} s")
        detail += "".join(f"\n| {line[:200]}" for line in tail)
        return rc == 0, "replaced" if replaced else "ran", "; ".join(notes), detail


def _run_group(argv, cwd, env, out, timeout: float):
    """A step in its own process group: on a timeout (or Ctrl-C) the whole group goes, as a runner ends a step,
    SIGTERM first (gfxhound writes its summary), SIGKILL 30 s later. The exit status, or None after a timeout."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end_group(proc)
        return None
    except BaseException:
        _end_group(proc)
        raise


def _end_group(proc):
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


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


def _junit(ws: Path, patterns: str) -> str:
    files = sorted(f for p in Services._paths(patterns) for f in glob.glob(str(ws / p)))
    if not files:
        return f"no JUnit report matches {patterns!r} (the action warns)"
    tests = failures = 0
    for f in files:
        root = ET.parse(f).getroot()
        for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
            tests += int(suite.get("tests", 0))
            failures += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return f"{len(files)} report(s), {tests} tests, {failures} failing (published as a check run on GitHub)"


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workflows", nargs="*", help="workflow names (nightly-matrix, nightly-rocm); default: all")
    p.add_argument("--nights", type=int, default=1, help="nights in a row (the cache carries between them)")
    p.add_argument("--first-night", default="2026-01-01", help="the first night's date (inputs.night)")
    p.add_argument("--shards", type=int, default=1, help="matrix combinations run per job (in turn)")
    p.add_argument("--budget", default="20s", help="BUDGET, each campaign's (90m and 3h in the workflows)")
    p.add_argument("--step-timeout", type=float, default=900, help="seconds a step may run")
    p.add_argument("--empty-corpus", action="store_true",
                   help="check out a corpus without the findings (keeps triage.json): the night's replay of every "
                        "open finding takes minutes")
    p.add_argument("--no-corpus-branch", action="store_true", help="the ROCm workflow's corpus branch is missing")
    p.add_argument("--venv", default=str(ROOT / ".venv"), help="the venv reused for make setup")
    p.add_argument("--keep", help="a directory for the workspaces, cache and artifacts, kept (default: removed)")
    p.add_argument("--json", help="write the per-step report here")
    args = p.parse_args(argv)
    try:
        if not (Path(args.venv) / ".installed").exists():
            raise UsageError(f"{args.venv}: no venv made by `make setup` (run it first)")
        if args.nights < 1 or args.shards < 1:
            raise UsageError("--nights and --shards must be 1 or more")
        names = args.workflows or sorted(w.stem for w in WORKFLOWS.glob("*.yml"))
        paths = []
        for n in names:
            path = WORKFLOWS / (n if n.endswith(".yml") else f"{n}.yml")
            if not path.exists():
                raise UsageError(f"no workflow {path.relative_to(ROOT)}")
            paths.append(path)
        first = dt.date.fromisoformat(args.first_night)
        state = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="gfxhound-dry-run-"))
        if args.keep and state.exists() and any(state.iterdir()):
            raise UsageError(f"--keep {args.keep}: not empty")
        state.mkdir(parents=True, exist_ok=True)
        try:
            run = DryRun(args, state)
            for night in range(1, args.nights + 1):
                date = (first + dt.timedelta(days=night - 1)).isoformat()
                for path in paths:
                    run.night(path, night, date)
            code = run.report.summary()
            if args.json:
                Path(args.json).write_text(json.dumps(run.report.jobs, indent=1) + "\n")
        finally:
            if not args.keep:
                shutil.rmtree(state, ignore_errors=True)
        if args.keep:
            print(f"  workspaces, cache and artifacts: {state}")
        return code
    except UsageError as exc:
        print(f"dry-run: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
