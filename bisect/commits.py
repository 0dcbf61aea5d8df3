"""Commit bisection from source: build each probed commit in a worktree (cached by commit), run the probe on the
build, and, when the first bad commit only moved a pinned dependency (Triton's cmake/llvm-hash.txt), go on in the
dependency's repository between the old and the new pin (the cross-repo hand-off).

Everything here takes explicit arguments; only the CLI reads argv and the environment.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .builds import BuildCache, Recipe, expand, load_recipe
from .core import SKIP, BisectError, ProbeLog, bisect
from .git_repo import GitError, GitRepo
from gfxhound.protocol import run_probe


@dataclass
class CommitJob:
    """What to bisect and how: the repository, the range, the recipe, and the probe's input."""
    repo: GitRepo
    old: str
    new: str
    recipe: Recipe
    input: Path  # the repro script, the .ll, the program the probe runs on
    cache: Path
    mode: str = "regression"
    expect: str | None = None  # None: the recipe's own, else the repro protocol
    timeout: float = 600.0
    repeat: int = 1
    jobs: int = 1
    defines: dict = field(default_factory=dict)  # extra placeholders ({mcpu}, {opt})
    env: dict = field(default_factory=dict)  # environment of the probe runs
    dep_repo: GitRepo | None = None  # where the pinned dependency lives (llvm-project)
    handoff_input: Path | None = None  # the probe input in the dependency (a reduced .ll)
    handoff_expect: str | None = None


def read_pin(repo: GitRepo, sha: str, pins: list) -> tuple:
    """(pin file, pinned commit) at `sha`: the first pin glob that names a file there. A pin is a hash in a text
    file (cmake/llvm-hash.txt) or the `llvm_hash` of a JSON one (cmake/llvm-info.json since Triton 3.8,
    cmake/amd-llvm-info.json for the separately pinned AMD code generator)."""
    for pattern in pins:
        for path in repo.files_at(sha, pattern):
            text = (repo.file_at(sha, path) or "").strip()
            if path.endswith(".json"):
                try:
                    text = str(json.loads(text).get("llvm_hash") or "")
                except (ValueError, AttributeError):
                    text = ""
            if text:
                return path, text.split()[0]
    return None, None


def run(job: CommitJob, log=print, on_probe=None, probe_override=None) -> dict:
    """The bisection record (bisect.json's "commits" kind). `probe_override(sha, build)` replaces the probe run
    (tests: a fake test environment over real builds)."""
    repo, recipe = job.repo, job.recipe
    try:
        candidates = repo.commits_between(job.old, job.new)
    except GitError as exc:
        raise BisectError(str(exc)) from None
    builds = BuildCache(job.cache / "builds", recipe, job.jobs, job.defines)
    tree = repo.worktree(job.cache / "worktrees")
    dep_builds = dep_tree = None
    if recipe.dependency:
        if job.dep_repo is None:
            raise BisectError(f"the {recipe.name} recipe builds against a pinned {recipe.dependency}: "
                              f"give its repository (--dep-repo PATH)")
        dep_recipe = load_recipe(recipe.dependency)
        dep_builds = BuildCache(job.cache / "builds", dep_recipe, job.jobs, job.defines)
        dep_tree = job.dep_repo.worktree(job.cache / "worktrees")
    expect = job.expect if job.expect is not None else recipe.expect

    def build(sha):
        dep_out = None
        if dep_builds:
            pin_file, pinned = read_pin(repo, sha, recipe.pins)
            if not pinned:
                return None, f"no pin file ({', '.join(recipe.pins)}) at this commit"
            try:
                dep_sha = job.dep_repo.resolve(pinned)
            except GitError as exc:
                return None, str(exc)
            with dep_tree.lock():
                dep = dep_builds.build(dep_sha, dep_tree.checkout, log=log)
            if not dep.ok:
                return None, f"{recipe.dependency} {dep_sha[:12]} ({pin_file}) did not build: {dep.log_tail}"
            dep_out = Path(dep.out)
        with tree.lock():
            result = builds.build(sha, tree.checkout, dep=dep_out, log=log)
        return result, ("" if result.ok else f"build failed: {result.log_tail}")

    def probe(sha):
        result, why = build(sha)
        if result is None or not result.ok:
            return SKIP, why
        if probe_override:
            return probe_override(sha, result)
        argv = expand(recipe.probe, dict(job.defines, out=result.out, input=job.input))
        return run_probe(argv, job.timeout, expect, job.env, cwd=job.input.parent,
                         skip_patterns=recipe.skip_patterns)

    key = hashlib.sha256(json.dumps([str(repo.path), candidates[0], candidates[-1], recipe.fingerprint(),
                                     job.input.read_bytes().hex(), expect, job.mode, job.defines, job.timeout,
                                     job.repeat],
                                    sort_keys=True).encode()).hexdigest()[:16]
    state = ProbeLog(job.cache / "state" / f"commits-{key}.json")
    known = state.load()
    if known:
        log(f"resuming: {len(known)} probes from {state.path}")

    def save(p, step):
        known[p.candidate] = p
        state.save(known)
        if on_probe:
            on_probe(p, step, repo.info(p.candidate)["title"])

    result = bisect(candidates, probe, mode=job.mode, known=known, on_probe=save, repeat=job.repeat)
    state.done()
    record = dict(result.to_json(), kind="commits", repo=str(repo.path), range=f"{job.old}..{job.new}",
                  recipe=recipe.name, input=job.input.name, expect=expect,
                  culprit=repo.info(result.first_new), last_old_commit=repo.info(result.last_old),
                  builds_built=len(builds.built), warnings=[])
    record["probes"] = [dict(p, title=repo.info(p["candidate"])["title"]) for p in record["probes"]]
    if not result.untested_between and repo.parent(result.first_new) == result.last_old:
        new_build, old_build = builds.cached(result.first_new), builds.cached(result.last_old)
        if new_build and old_build and new_build.digest == old_build.digest:
            record["warnings"].append(
                f"the culprit's build is identical to its parent's ({new_build.digest}): the change cannot "
                f"explain the bug; suspect a flaky probe or something outside the build (rerun with --repeat)")
        record["changed_files"] = repo.changed_files(result.first_new)
    if job.dep_repo and not result.untested_between:
        record["handoff"] = [_handoff(job, result, pins, log, on_probe) for pins in _pin_groups(recipe)
                             if _moved(repo, result, pins)]
    return record


def _pin_groups(recipe: Recipe) -> list:
    """Each group pins one dependency: the build's own (recipe.pins), then every other one the hand-off follows
    (Triton 3.9's AMD code generator, cmake/amd-llvm-info.json)."""
    return [g for g in ([recipe.pins] + [[p] for p in recipe.handoff_pins if p not in recipe.pins]) if g]


def _moved(repo: GitRepo, result, pins: list) -> bool:
    return read_pin(repo, result.last_old, pins)[1] != read_pin(repo, result.first_new, pins)[1]


def _handoff(job: CommitJob, result, pins: list, log, on_probe) -> dict:
    """The culprit moved a pin: bisect the dependency between the two pinned commits, with the hand-off recipe
    (for Triton: llc only) and the reduced .ll."""
    repo, recipe = job.repo, job.recipe
    old_file, old_pin = read_pin(repo, result.last_old, pins)
    new_file, new_pin = read_pin(repo, result.first_new, pins)
    changed = repo.changed_files(result.first_new)
    info = {"pin_file": new_file or old_file, "old": old_pin, "new": new_pin,
            "pin_only": set(changed) <= {old_file, new_file}}
    if not old_pin or not new_pin:
        return dict(info, skipped="the pin was added or removed, not moved: no range to bisect")
    if job.handoff_input is None:
        return dict(info, skipped="no probe input for the dependency (give the reduced .ll: --ll FILE)")
    log(f"the culprit moved {new_file} {old_pin[:12]} -> {new_pin[:12]}"
        + ("" if info["pin_only"] else f" (and changed {len(changed) - 1} other files)")
        + f": bisecting {job.dep_repo.path.name} between them")
    sub = CommitJob(job.dep_repo, old_pin, new_pin, load_recipe(recipe.handoff or recipe.dependency),
                    job.handoff_input, job.cache, job.mode, job.handoff_expect, job.timeout, job.repeat, job.jobs,
                    job.defines, job.env)
    try:
        return dict(info, result=run(sub, log, on_probe))
    except BisectError as exc:
        return dict(info, error=str(exc))
