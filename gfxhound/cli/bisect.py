"""`gfxhound bisect`: the three kinds of candidates (Triton releases, llc versions, commits built from source) behind
one command, one progress line format and one record (bisect.json). The bisection itself is bisect/core.py."""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
import shutil
import sys
from pathlib import Path


def add_bisect(sub):
    bis = sub.add_parser("bisect", help="since when does a finding (or your repro) fail: Triton releases, llc "
                                        "versions, or commits built from source")
    add_arguments(bis)
    bis.set_defaults(func=cmd_bisect)


def add_arguments(bis):
    bis.add_argument("id", nargs="?", help="a finding (a prefix of its signature)")
    bis.add_argument("--repro", help="your own script instead of a finding (exit 0 absent, 1 present, 125 cannot "
                                     "test; or any script with --expect)")
    bis.add_argument("--expect", help="the bug is present when the output matches this regex")
    bis.add_argument("--fix", action="store_true", help="find where the bug went away (OLD has it, NEW not)")
    bis.add_argument("--repeat", type=int, default=1, help="runs per probe (flaky repros: the majority decides)")
    bis.add_argument("--timeout", type=float, default=600, help="seconds one probe run may take")
    bis.add_argument("--cache", help="where venvs, builds and worktrees live (default: $GFXHOUND_CACHE)")
    bis.add_argument("--clear", action="store_true", help="delete this kind's cache first")
    bis.add_argument("--corpus", default="corpus")
    bis.add_argument("--json", action="store_true")
    rel = bis.add_argument_group("Triton releases")
    rel.add_argument("--triton", help="the release range, OLD..NEW (e.g. 3.4.0..3.9.0)")
    rel.add_argument("--only-cached", dest="only_cached", action="store_true",
                     help="bisect over the releases whose venvs are already cached (no downloads)")
    rel.add_argument("--no-prefetch", dest="prefetch", action="store_false",
                     help="do not build the venvs the next step may need while a probe runs")
    llvm = bis.add_argument_group("LLVM releases (llc)")
    llvm.add_argument("--llc", help="llc versions: installed majors OLD..NEW (15..22) or llc paths a,b,c oldest "
                                    "first")
    llvm.add_argument("--ll", help="the LLVM IR to compile (default: the finding's reduced/llvm-ir/reduced.ll); "
                                   "with --commits, the input of the hand-off into llvm-project")
    llvm.add_argument("--llc-args", dest="llc_args", help="llc's flags (default: the finding's reducing command, "
                                                          "else -mtriple=amdgcn-amd-amdhsa -mcpu=MCPU -O2)")
    llvm.add_argument("--mcpu", default="gfx942")
    com = bis.add_argument_group("commits built from source")
    com.add_argument("--commits", help="OLD..NEW: commits (hashes, tags, branches) of --repo")
    com.add_argument("--repo", help="your clone (never checked out: builds happen in a worktree in the cache)")
    com.add_argument("--recipe", help="llvm | llvm-mlir | triton | a recipe file (JSON)")
    com.add_argument("--input", help="what the probe runs on (default: the finding's repro, or --repro, or --ll)")
    com.add_argument("--dep-repo", dest="dep_repo", help="the pinned dependency's clone (Triton: llvm-project); "
                     "needed to build, and for the hand-off")
    com.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                     help="a recipe placeholder, e.g. --define mcpu=gfx950")
    com.add_argument("--jobs", type=int, default=os.cpu_count() or 1)


def cmd_bisect(args):
    """Since when (or, with --fix, until when) does a finding's repro, or a repro of the user's, fail?"""
    from gfxhound.cli.common import UserError
    kinds = [k for k in ("triton", "llc", "commits") if getattr(args, k)]
    if len(kinds) != 1:
        raise UserError("say what to bisect over, once: --triton OLD..NEW (releases), --llc 15..22 (llc "
                        "versions) or --commits OLD..NEW --repo PATH (commits built from source)")
    if args.repeat < 1:
        raise UserError("--repeat: give 1 or more runs per probe")
    if args.expect is not None:
        import re
        try:
            if re.search(args.expect, ""):
                raise UserError(f"--expect {args.expect!r} matches empty output: give what the failure prints")
        except re.error as exc:
            raise UserError(f"--expect {args.expect!r} is not a regular expression ({exc})") from None
    from gfxhound.bisect.core import BisectError
    try:
        return {"triton": _releases, "llc": _llc_versions, "commits": _commits}[kinds[0]](args)
    except BisectError as exc:
        raise UserError(str(exc)) from None


def _cache(args, kind: str) -> Path:
    from gfxhound.cli.common import cache_dir
    return Path(os.path.abspath(Path(args.cache).expanduser())) if args.cache else Path(cache_dir()) / kind


def _finding(args):
    from gfxhound.cli.common import UserError
    if args.id and args.repro:
        raise UserError("name one thing to bisect: a finding (gfxhound bisect ID) or a script (--repro FILE)")
    if not args.id:
        return None, None
    from gfxhound.corpus_store import Corpus
    corpus = Corpus(args.corpus)
    return corpus, corpus.get(args.id)


def _existing(path: str, what: str) -> Path:
    from gfxhound.cli.common import UserError
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise UserError(f"{what} {path}: no such file")
    return p


class Progress:
    """`step k (of about N): candidate: outcome [runs] - detail`, on stderr."""

    def __init__(self, n: int, label=lambda c: c):
        self.steps = math.ceil(math.log2(max(2, n))) + 2  # both ends, then the halvings
        self.label = label

    def __call__(self, p, step, title=""):
        runs = f" [{', '.join(p.runs)}]" if len(p.runs) > 1 else ""
        print(f"  step {step} (of about {self.steps}): {self.label(p.candidate)}{(' ' + title[:60]) if title else ''}"
              f": {p.outcome}{runs} - {p.detail[:120]}", file=sys.stderr)


def _resumable(root: Path, parts: list):
    from gfxhound.bisect.core import ProbeLog
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]
    log = ProbeLog(root / f"bisect-state-{key}.json")
    saved = log.load()
    if saved:
        print(f"  resuming: {len(saved)} probes from {log.path}", file=sys.stderr)
    return log, saved


def _finish(args, result, record, corpus, finding, noun):
    if finding:
        corpus.write_bisect(finding.signature, record)
    if args.json:
        print(json.dumps(record, indent=1))
        return 0
    mode = result["mode"]
    print(f"first {noun} {'with' if mode == 'regression' else 'without'} the bug: {result['first_new_label']} "
          f"(last {'good' if mode == 'regression' else 'bad'}: {result['last_old_label']}); "
          f"{len(result['probes'])} probes for {len(result['candidates'])} candidates; "
          f"confidence {result['confidence']:.2f}"
          + (f"; untested between: {', '.join(result['untested_between'])}" if result["untested_between"] else ""))
    for warning in record.get("warnings", []):
        print(f"warning: {warning}")
    return 0


# --- Triton releases ------------------------------------------------------------------------------------------

def _releases(args):
    from gfxhound.bisect.core import PRESENT, Probe, bisect
    from gfxhound.bisect.releases import ReleaseError, VenvCache, available_versions, release_range
    from gfxhound.protocol import run_repro
    from gfxhound.cli.common import UserError, default_lld

    cache = VenvCache(_cache(args, "venvs"))
    if args.clear:
        cache.clear()
        print(f"cleared {cache.root}", file=sys.stderr)
    corpus, finding = _finding(args)
    if not finding and not args.repro:
        if args.clear:
            return 0
        raise UserError("name one thing to bisect: a finding (gfxhound bisect ID) or a script (--repro FILE)")
    script = _existing(args.repro, "--repro") if args.repro else None
    try:
        versions = cache.cached() if args.only_cached else available_versions()  # --only-cached: offline
        candidates = release_range(args.triton, versions)
    except ReleaseError as exc:
        raise UserError(str(exc)) from None
    if args.only_cached:  # offline, or to spend no downloads: bisect over the releases already built
        candidates = [v for v in candidates if cache.ready(v)]
        ends = [e.strip() for e in args.triton.split("..")]
        if len(candidates) < 2 or [candidates[0], candidates[-1]] != ends:
            raise UserError(f"--only-cached: the cache at {cache.root} lacks an end of {args.triton} "
                            f"(has: {', '.join(candidates) or 'none'})")
    env = {"PYTHONWARNINGS": "ignore"}
    if default_lld():
        env["TRITON_HIP_LLD_PATH"] = default_lld()

    def probe_script(version, path):
        try:
            python = cache.ensure(version, log=lambda line: print(f"  {line}", file=sys.stderr))
        except ReleaseError as exc:
            return "skip", str(exc)
        return run_repro(python, path, args.timeout, args.expect, env)

    mode = "fix" if args.fix else "regression"
    known = {}
    if finding:  # the example whose repro shows the bug at the end of the range that must have it
        end = candidates[-1] if mode == "regression" else candidates[0]
        tried = []
        for example in corpus.example_dirs(finding.signature):
            outcome, detail = probe_script(end, example / "repro.py")
            tried.append(f"{example.name}: {outcome}")
            if outcome == PRESENT:
                script = example / "repro.py"
                known[end] = Probe(end, outcome, [outcome], 0.0, detail)
                break
        else:
            raise UserError(f"no example of {finding.signature} shows the bug under triton {end} ({'; '.join(tried)}"
                            f"); it was seen with {', '.join(finding.toolchains)}: start the range there")
    log, saved = _resumable(cache.root, [script.read_text(), candidates, mode, args.expect, args.timeout,
                                         args.repeat])
    known.update(saved)
    progress = Progress(len(candidates), lambda v: f"triton {v}")

    def save_state(p, step):
        progress(p, step)
        known[p.candidate] = p
        log.save(known)

    from gfxhound.bisect.releases import Prefetcher
    ahead = Prefetcher(cache, log=lambda line: print(f"  {line} [ahead]", file=sys.stderr)) \
        if args.prefetch and not args.only_cached else None
    result = bisect(candidates, lambda v: probe_script(v, script), mode=mode, on_probe=save_state,
                    repeat=args.repeat, known=known, ahead=ahead)
    log.done()  # finished: the record below replaces the saved probes
    shown = str(script.relative_to(corpus.path(finding.signature))) if finding else script.name  # no local paths
    data = result.to_json()
    record = dict(data, kind="triton-releases", range=args.triton, repro=shown, expect=args.expect,
                  venvs_built=cache.built,
                  venv_seconds=round(cache.build_seconds, 1), signature=finding.signature if finding else None)
    return _finish(args, dict(data, first_new_label=f"triton {result.first_new}",
                              last_old_label=f"triton {result.last_old}"), record, corpus, finding, "release")


# --- llc versions ---------------------------------------------------------------------------------------------

def _llc_versions(args):
    from gfxhound.bisect.core import bisect
    from gfxhound.bisect.llvm_releases import LlcError, expected_failure, llc_candidates, llc_probe
    from gfxhound.cli.common import UserError

    corpus, finding = _finding(args)
    if args.repro:
        raise UserError("--llc bisects a .ll (--ll FILE, or a finding with an LLVM IR reduction), not a script")
    reduce_info = {}
    if finding:
        reduced = corpus.path(finding.signature) / "reduced" / "llvm-ir"
        if not args.ll and not (reduced / "reduced.ll").exists():
            raise UserError(f"{finding.signature} has no LLVM IR reduction: run `gfxhound reduce "
                            f"{finding.signature[:8]} --level llvm-ir` first, or give --ll FILE")
        if (reduced / "reduce.json").exists():
            reduce_info = json.loads((reduced / "reduce.json").read_text())
        ll = _existing(args.ll, "--ll") if args.ll else (reduced / "reduced.ll").resolve()
    elif args.ll:
        ll = _existing(args.ll, "--ll")
    else:
        raise UserError("give the IR: --ll FILE, or a finding whose LLVM IR was reduced")
    command = reduce_info.get("command") or []
    if args.llc_args:
        llc_args = shlex.split(args.llc_args)
    elif command:
        llc_args = command[1:-1]  # the reducing command, without its llc and its input
    else:
        llc_args = ["-mtriple=amdgcn-amd-amdhsa", f"-mcpu={args.mcpu}", "-O2", "-filetype=null"]
    try:
        candidates = llc_candidates(args.llc)
    except LlcError as exc:
        raise UserError(str(exc)) from None
    paths = dict(candidates)
    labels = [label for label, _ in candidates]
    expect = args.expect
    if expect is None and command and Path(command[0]).exists():
        expect = expected_failure(command[0], llc_args, ll, args.timeout)  # the crash the finding is known by
    mode = "fix" if args.fix else "regression"
    log, known = _resumable(_cache(args, "llc"), [ll.read_text(), labels, list(paths.values()), llc_args, expect,
                                                  mode, args.timeout, args.repeat])
    progress = Progress(len(labels), lambda v: f"llc {v}")

    def save_state(p, step):
        progress(p, step)
        known[p.candidate] = p
        log.save(known)

    result = bisect(labels, lambda label: llc_probe(paths[label], llc_args, ll, args.timeout, expect), mode=mode,
                    repeat=args.repeat, known=known, on_probe=save_state)
    log.done()
    data = result.to_json()
    shown = ll.name if not finding else str(ll.relative_to(corpus.path(finding.signature))) \
        if ll.is_relative_to(corpus.path(finding.signature)) else ll.name
    record = dict(data, kind="llvm-releases", llc={label: paths[label] for label in labels},
                  llc_args=llc_args, input=shown, expect=expect,
                  signature=finding.signature if finding else None)
    return _finish(args, dict(data, first_new_label=f"llc {result.first_new}",
                              last_old_label=f"llc {result.last_old}"), record, corpus, finding, "llc")


# --- commits built from source --------------------------------------------------------------------------------

def _commits(args):
    from gfxhound.bisect.builds import RecipeError, load_recipe
    from gfxhound.bisect.commits import CommitJob, run
    from gfxhound.bisect.git_repo import GitError, GitRepo
    from gfxhound.cli.common import UserError, default_lld

    if not args.repo or not args.recipe:
        raise UserError("--commits needs the clone (--repo PATH) and how to build it (--recipe llvm|llvm-mlir|"
                        "triton|FILE.json)")
    if ".." not in args.commits:
        raise UserError(f"--commits {args.commits!r}: give a range OLD..NEW")
    old, new = (part.strip() for part in args.commits.split("..", 1))
    try:
        recipe = load_recipe(args.recipe)
        repo = GitRepo(args.repo)
        dep_repo = GitRepo(args.dep_repo) if args.dep_repo else None
    except (RecipeError, GitError) as exc:
        raise UserError(str(exc)) from None
    cache = _cache(args, "commits")
    if args.clear:
        for r in (repo, dep_repo):
            if r:
                r.worktree(cache / "worktrees").remove()
        for part in ("builds", "worktrees", "state"):  # only what commit bisection keeps there
            shutil.rmtree(cache / part, ignore_errors=True)
        print(f"cleared the builds, worktrees and saved probes in {cache}", file=sys.stderr)
    corpus, finding = _finding(args)
    ll = _existing(args.ll, "--ll") if args.ll else None
    if finding and ll is None and (corpus.path(finding.signature) / "reduced" / "llvm-ir" / "reduced.ll").exists():
        ll = (corpus.path(finding.signature) / "reduced" / "llvm-ir" / "reduced.ll").resolve()
    if args.input:
        probe_input = _existing(args.input, "--input")
    elif args.repro:
        probe_input = _existing(args.repro, "--repro")
    elif finding and recipe.name.startswith("triton"):
        probe_input = next((e / "repro.py" for e in corpus.example_dirs(finding.signature)), None)
    else:
        probe_input = ll
    if probe_input is None:
        raise UserError("nothing to probe: give --input FILE (or --repro FILE, or --ll FILE for llc recipes)")
    defines = {"mcpu": args.mcpu, "opt": "2"}
    handoff_expect = None
    reduce_json = corpus.path(finding.signature) / "reduced" / "llvm-ir" / "reduce.json" if finding else None
    if reduce_json is not None and reduce_json.exists() and ll is not None:
        # llc as the finding's reduction ran it: its processor and level, and the crash it is known by
        from gfxhound.bisect.llvm_releases import expected_failure
        command = json.loads(reduce_json.read_text()).get("command") or []
        for flag in command[1:-1]:
            if flag.startswith("-mcpu="):
                defines["mcpu"] = flag.split("=", 1)[1]
            elif re.fullmatch(r"-O[0-3]", flag):
                defines["opt"] = flag[2:]
        if command and Path(command[0]).exists():
            handoff_expect = expected_failure(command[0], command[1:-1], ll, args.timeout)
    for item in args.define:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise UserError(f"--define {item!r}: give NAME=VALUE")
        defines[name] = value
    env = {"PYTHONWARNINGS": "ignore"}
    if default_lld():
        env["TRITON_HIP_LLD_PATH"] = default_lld()
    job = CommitJob(repo, old, new, recipe, probe_input, cache, "fix" if args.fix else "regression", args.expect,
                    args.timeout, args.repeat, args.jobs, defines, env, dep_repo, ll, args.expect or handoff_expect)
    if recipe.name.startswith("llvm") and args.expect is None and handoff_expect:
        job.expect = handoff_expect  # bisecting llvm-project itself: the same crash, not any crash
    try:
        n = len(repo.commits_between(old, new))
    except GitError as exc:
        raise UserError(str(exc)) from None
    print(f"bisecting {n} commits of {repo.path.name} ({old}..{new}) with the {recipe.name} recipe; builds are "
          f"cached in {cache}", file=sys.stderr)
    progress = Progress(n, lambda sha: sha[:12])
    import git
    try:
        record = run(job, log=lambda line: print(f"  {line}", file=sys.stderr), on_probe=progress)
    except (RecipeError, GitError) as exc:
        raise UserError(str(exc)) from None
    except git.GitCommandError as exc:
        raise UserError(f"git failed: {' '.join(map(str, exc.command))[:150]}: "
                        f"{(exc.stderr or '').strip()[:200]}") from None
    record["signature"] = finding.signature if finding else None
    culprit, last = record["culprit"], record["last_old_commit"]
    if finding:
        corpus.write_bisect(finding.signature, record)
    if args.json:
        print(json.dumps(record, indent=1))
        return 0
    verb = "first bad commit" if job.mode == "regression" else "first fixed commit"
    print(f"{verb}: {culprit['hash'][:12]} {culprit['title']} ({culprit['date'][:10]})"
          + (f" {culprit['link']}" if culprit.get("link") else "")
          + f"\n  last {'good' if job.mode == 'regression' else 'bad'}: {last['hash'][:12]} {last['title']}; "
          f"{len(record['probes'])} probes for {n} commits, {record['builds_built']} builds; "
          f"confidence {record['confidence']:.2f}"
          + (f"; untested between: {', '.join(c[:12] for c in record['untested_between'])}"
             if record["untested_between"] else ""))
    warnings = list(record["warnings"])
    for handoff in record.get("handoff", []):
        if handoff.get("result"):
            sub = handoff["result"]["culprit"]
            print(f"  it moved {handoff['pin_file']}: in {Path(handoff['result']['repo']).name}, {verb}: "
                  f"{sub['hash'][:12]} {sub['title']}" + (f" {sub['link']}" if sub.get("link") else ""))
            warnings += handoff["result"]["warnings"]
        else:
            print(f"  it moved {handoff['pin_file']}; no hand-off: {handoff.get('error') or handoff.get('skipped')}")
    for warning in warnings:
        print(f"warning: {warning}")
    return 0
