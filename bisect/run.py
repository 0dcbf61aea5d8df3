"""The bisection workflows behind `gfxhound bisect`: Triton releases, llc versions and commits built from source,
each from a request to a record (bisect.json) and the lines that summarise it.

Why a module of its own: the command line (gfxhound/cli/bisect.py) only reads argv and the environment; what a
bisection of each kind needs (the finding's repro or reduced IR, the cache, resuming, the record) is here, where
it can be run and tested without argv. Problems a user can cause are a BisectError (one line).
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gfxhound.corpus_store import Corpus
from gfxhound.protocol import run_repro

from .core import PRESENT, BisectError, Probe, ProbeLog, bisect
from .summary import Progress, commit_lines, release_lines


def _stderr(line: str):
    print(line, file=sys.stderr)


@dataclass
class Request:
    """What to bisect, as the command line said it: the CLI fills it from argv and the environment."""
    cache: Path  # this kind's cache (venvs, llc probes, or builds and worktrees)
    finding: str | None = None  # a prefix of a finding's signature
    corpus: str = "corpus"
    repro: str | None = None  # the user's own script instead of a finding
    expect: str | None = None
    fix: bool = False
    repeat: int = 1
    timeout: float = 600
    clear: bool = False
    lld: str = ""  # the linker the probes' Triton uses (TRITON_HIP_LLD_PATH); "" leaves it to Triton
    log: object = _stderr  # progress, on stderr
    triton: str | None = None  # Triton releases OLD..NEW
    only_cached: bool = False
    prefetch: bool = True
    llc: str | None = None  # llc versions: majors OLD..NEW or paths a,b,c
    ll: str | None = None
    llc_args: str | None = None
    mcpu: str = "gfx942"
    commits: str | None = None  # commits OLD..NEW of repo
    repo: str | None = None
    recipe: str | None = None
    input: str | None = None
    dep_repo: str | None = None
    define: list = field(default_factory=list)  # NAME=VALUE
    jobs: int = 1

    @property
    def mode(self) -> str:
        return "fix" if self.fix else "regression"


@dataclass
class Outcome:
    """The record (None when there was nothing to bisect, e.g. only --clear) and its summary, one line each."""
    record: dict | None
    lines: list = field(default_factory=list)


# --- where the corpus keeps what a bisection reads ------------------------------------------------------------

def _llc_command(reduce_info: dict) -> list:
    """The llc command a finding's LLVM IR reduction ran ([] when it ran Triton's own code generator: its
    `python -c` call is no llc command line)."""
    if (reduce_info.get("codegen") or {}).get("kind", "llc") != "llc":
        return []
    return list(reduce_info.get("command") or [])


# --- shared -----------------------------------------------------------------------------------------------------

def _finding(req: Request):
    if req.finding and req.repro:
        raise BisectError("name one thing to bisect: a finding (gfxhound bisect ID) or a script (--repro FILE)")
    if not req.finding:
        return None, None
    corpus = Corpus(req.corpus)
    return corpus, corpus.get(req.finding)


def _existing(path: str, what: str) -> Path:
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise BisectError(f"{what} {path}: no such file")
    return p


def _resumable(req: Request, root: Path, parts: list):
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]
    log = ProbeLog(root / f"bisect-state-{key}.json")
    saved = log.load()
    if saved:
        req.log(f"  resuming: {len(saved)} probes from {log.path}")
    return log, saved


def _probe_env(req: Request) -> dict:
    env = {"PYTHONWARNINGS": "ignore"}
    if req.lld:
        env["TRITON_HIP_LLD_PATH"] = req.lld
    return env


def _saving(known: dict, log: ProbeLog, progress: Progress):
    def save_state(p, step):
        progress(p, step)
        known[p.candidate] = p
        log.save(known)
    return save_state


# --- Triton releases ------------------------------------------------------------------------------------------

def releases(req: Request) -> Outcome:
    """Bisect the Triton releases of req.triton, each probed in its own cached venv."""
    from .releases import Prefetcher, ReleaseError, VenvCache, available_versions, release_range

    cache = VenvCache(req.cache)
    if req.clear:
        cache.clear()
        req.log(f"cleared {cache.root}")
    corpus, finding = _finding(req)
    if not finding and not req.repro:
        if req.clear:
            return Outcome(None)
        raise BisectError("name one thing to bisect: a finding (gfxhound bisect ID) or a script (--repro FILE)")
    script = _existing(req.repro, "--repro") if req.repro else None
    try:
        versions = cache.cached() if req.only_cached else available_versions()  # --only-cached: offline
        candidates = release_range(req.triton, versions)
    except ReleaseError as exc:
        raise BisectError(str(exc)) from None
    if req.only_cached:  # offline, or to spend no downloads: bisect over the releases already built
        candidates = [v for v in candidates if cache.ready(v)]
        ends = [e.strip() for e in req.triton.split("..")]
        if len(candidates) < 2 or [candidates[0], candidates[-1]] != ends:
            raise BisectError(f"--only-cached: the cache at {cache.root} lacks an end of {req.triton} "
                              f"(has: {', '.join(candidates) or 'none'})")
    env = _probe_env(req)

    def probe_script(version, path):
        try:
            python = cache.ensure(version, log=lambda line: req.log(f"  {line}"))
        except ReleaseError as exc:
            return "skip", str(exc)
        return run_repro(python, path, req.timeout, req.expect, env)

    mode = req.mode
    known = {}
    if finding:  # the repro that shows the bug at the end of the range that must have it: the reduced one first
        end = candidates[-1] if mode == "regression" else candidates[0]
        tried = []
        reduced = corpus.reduction(finding.signature, "spec").repro
        scripts = ([("reduced", reduced)] if reduced.exists() else []) + [
            (example.name, example.repro) for example in corpus.examples(finding.signature)]
        for name, repro in scripts:
            outcome, detail = probe_script(end, repro)
            tried.append(f"{name}: {outcome}")
            if outcome == PRESENT:
                script = repro
                known[end] = Probe(end, outcome, [outcome], 0.0, detail)
                break
        else:
            raise BisectError(f"no example of {finding.signature} shows the bug under triton {end} "
                              f"({'; '.join(tried)}); it was seen with {', '.join(finding.toolchains)}: start the "
                              f"range there")
    log, saved = _resumable(req, cache.root, [script.read_text(), candidates, mode, req.expect, req.timeout,
                                              req.repeat])
    known.update(saved)
    progress = Progress(len(candidates), req.log, lambda v: f"triton {v}")
    ahead = Prefetcher(cache, log=lambda line: req.log(f"  {line} [ahead]")) \
        if req.prefetch and not req.only_cached else None
    result = bisect(candidates, lambda v: probe_script(v, script), mode=mode, on_probe=_saving(known, log, progress),
                    repeat=req.repeat, known=known, ahead=ahead, move_ends=True)
    log.done()  # finished: the record below replaces the saved probes
    shown = str(script.relative_to(corpus.path(finding.signature))) if finding else script.name  # no local paths
    data = result.to_json()
    record = dict(data, kind="triton-releases", range=req.triton, repro=shown, expect=req.expect,
                  venvs_built=cache.built,
                  venv_seconds=round(cache.build_seconds, 1), signature=finding.signature if finding else None)
    lines = release_lines(record, "release", "triton")
    if finding:  # the fault in LLVM's code generation: the reduced IR through each release's, as LLVM revisions
        from .codegens import survey
        found = survey(corpus.reduction(finding.signature, "llvm-ir"), candidates,
                       lambda v: cache.ensure(v) if cache.ready(v) else None, log=req.log)
        if found:
            record["reduced_ir"] = found
            lines.append(reduced_ir_line(found))
    return _finish(record, corpus, finding, lines)


def reduced_ir_line(found: dict) -> str:
    span = found["range"]
    if not span:
        states = ", ".join(f"{r['version']}: {_state(r['present'])}" for r in found["rows"])
        return f"reduced IR through each release's code generator: {states}"
    return (f"reduced IR: absent with triton {span['good']['version']} (LLVM {span['good']['llvm'][:12]}), present "
            f"with triton {span['bad']['version']} (LLVM {span['bad']['llvm'][:12]}): {span['compare']}")


def _state(present) -> str:
    return {True: "present", False: "absent"}.get(present, "cannot test")


def _finish(record: dict, corpus, finding, lines: list) -> Outcome:
    if finding:
        corpus.write_bisect(finding.signature, record)
    return Outcome(record, lines)


# --- llc versions ---------------------------------------------------------------------------------------------

def llc_versions(req: Request) -> Outcome:
    """Bisect the llc binaries of req.llc on a .ll: the user's, or the finding's LLVM IR reduction."""
    from .llvm_releases import LlcError, expected_failure, llc_candidates, llc_probe

    corpus, finding = _finding(req)
    if req.repro:
        raise BisectError("--llc bisects a .ll (--ll FILE, or a finding with an LLVM IR reduction), not a script")
    reduce_info = {}
    if finding:
        reduced = corpus.reduction(finding.signature, "llvm-ir").ll
        if not req.ll and not reduced.exists():
            raise BisectError(f"{finding.signature} has no LLVM IR reduction: run `gfxhound reduce "
                              f"{finding.signature[:8]} --level llvm-ir` first, or give --ll FILE")
        reduce_info = corpus.reduction(finding.signature, "llvm-ir").record
        ll = _existing(req.ll, "--ll") if req.ll else reduced.resolve()
    elif req.ll:
        ll = _existing(req.ll, "--ll")
    else:
        raise BisectError("give the IR: --ll FILE, or a finding whose LLVM IR was reduced")
    command = _llc_command(reduce_info)
    if req.llc_args:
        llc_args = shlex.split(req.llc_args)
    elif command:
        llc_args = command[1:-1]  # the reducing command, without its llc and its input
    else:
        llc_args = ["-mtriple=amdgcn-amd-amdhsa", f"-mcpu={req.mcpu}", "-O2", "-filetype=null"]
    try:
        candidates = llc_candidates(req.llc)
    except LlcError as exc:
        raise BisectError(str(exc)) from None
    paths = dict(candidates)
    labels = [label for label, _ in candidates]
    expect = req.expect
    if expect is None and command and Path(command[0]).exists():
        expect = expected_failure(command[0], llc_args, ll, req.timeout)  # the crash the finding is known by
    log, known = _resumable(req, req.cache, [ll.read_text(), labels, list(paths.values()), llc_args, expect,
                                             req.mode, req.timeout, req.repeat])
    progress = Progress(len(labels), req.log, lambda v: f"llc {v}")
    result = bisect(labels, lambda label: llc_probe(paths[label], llc_args, ll, req.timeout, expect), mode=req.mode,
                    repeat=req.repeat, known=known, on_probe=_saving(known, log, progress), move_ends=True)
    log.done()
    data = result.to_json()
    shown = ll.name if not finding else str(ll.relative_to(corpus.path(finding.signature))) \
        if ll.is_relative_to(corpus.path(finding.signature)) else ll.name
    record = dict(data, kind="llvm-releases", llc={label: paths[label] for label in labels},
                  llc_args=llc_args, input=shown, expect=expect,
                  signature=finding.signature if finding else None)
    return _finish(record, corpus, finding, release_lines(record, "llc", "llc"))


# --- commits built from source --------------------------------------------------------------------------------

def commits(req: Request) -> Outcome:
    """Bisect the commits of req.repo between the ends of req.commits, each built by req.recipe."""
    import git

    from .builds import RecipeError, load_recipe
    from .commits import CommitJob, run
    from .git_repo import GitError, GitRepo

    if not req.repo or not req.recipe:
        raise BisectError("--commits needs the clone (--repo PATH) and how to build it (--recipe llvm|llvm-mlir|"
                          "triton|FILE.json)")
    if ".." not in req.commits:
        raise BisectError(f"--commits {req.commits!r}: give a range OLD..NEW")
    old, new = (part.strip() for part in req.commits.split("..", 1))
    try:
        recipe = load_recipe(req.recipe)
        repo = GitRepo(req.repo)
        dep_repo = GitRepo(req.dep_repo) if req.dep_repo else None
    except (RecipeError, GitError) as exc:
        raise BisectError(str(exc)) from None
    cache = req.cache
    if req.clear:
        for r in (repo, dep_repo):
            if r:
                r.worktree(cache / "worktrees").remove()
        for part in ("builds", "worktrees", "state"):  # only what commit bisection keeps there
            shutil.rmtree(cache / part, ignore_errors=True)
        req.log(f"cleared the builds, worktrees and saved probes in {cache}")
    corpus, finding = _finding(req)
    ll = _existing(req.ll, "--ll") if req.ll else None
    if finding and ll is None and corpus.reduction(finding.signature, "llvm-ir").ll.exists():
        ll = corpus.reduction(finding.signature, "llvm-ir").ll.resolve()
    if req.input:
        probe_input = _existing(req.input, "--input")
    elif req.repro:
        probe_input = _existing(req.repro, "--repro")
    elif finding and recipe.name.startswith("triton"):
        probe_input = next((e.repro for e in corpus.examples(finding.signature)), None)
    else:
        probe_input = ll
    if probe_input is None:
        raise BisectError("nothing to probe: give --input FILE (or --repro FILE, or --ll FILE for llc recipes)")
    defines = {"mcpu": req.mcpu, "opt": "2"}
    handoff_expect = None
    reduction = corpus.reduction(finding.signature, "llvm-ir") if finding else None
    if reduction is not None and reduction.record and ll is not None:
        # llc as the finding's reduction ran it: its processor and level, and the crash it is known by
        from .llvm_releases import expected_failure
        command = _llc_command(reduction.record)
        for flag in command[1:-1]:
            if flag.startswith("-mcpu="):
                defines["mcpu"] = flag.split("=", 1)[1]
            elif re.fullmatch(r"-O[0-3]", flag):
                defines["opt"] = flag[2:]
        if command and Path(command[0]).exists():
            handoff_expect = expected_failure(command[0], command[1:-1], ll, req.timeout)
    for item in req.define:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise BisectError(f"--define {item!r}: give NAME=VALUE")
        defines[name] = value
    job = CommitJob(repo, old, new, recipe, probe_input, cache, req.mode, req.expect, req.timeout, req.repeat,
                    req.jobs, defines, _probe_env(req), dep_repo, ll, req.expect or handoff_expect)
    if recipe.name.startswith("llvm") and req.expect is None and handoff_expect:
        job.expect = handoff_expect  # bisecting llvm-project itself: the same crash, not any crash
    try:
        n = len(repo.commits_between(old, new))
    except GitError as exc:
        raise BisectError(str(exc)) from None
    req.log(f"bisecting {n} commits of {repo.path.name} ({old}..{new}) with the {recipe.name} recipe; builds are "
            f"cached in {cache}")
    progress = Progress(n, req.log, lambda sha: sha[:12])
    try:
        record = run(job, log=lambda line: req.log(f"  {line}"), on_probe=progress)
    except (RecipeError, GitError) as exc:
        raise BisectError(str(exc)) from None
    except git.GitCommandError as exc:
        raise BisectError(f"git failed: {' '.join(map(str, exc.command))[:150]}: "
                          f"{(exc.stderr or '').strip()[:200]}") from None
    record["signature"] = finding.signature if finding else None
    return _finish(record, corpus, finding, commit_lines(record, job.mode, n))
