"""`gfxhound bisect`: the three kinds of candidates (Triton releases, llc versions, commits built from source) behind
one command. This module only reads argv and the environment; the workflows are bisect/run.py, the bisection
itself bisect/core.py."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .common import FlagsValue, cache_dir, default_lld, positive
from .jsonout import emit
from .options import corpus_option, json_option, timeout_option


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
    bis.add_argument("--repeat", type=positive(int), default=1,
                     help="runs per probe (flaky repros: the majority decides)")
    timeout_option(bis, 600, "seconds one probe run may take")
    bis.add_argument("--cache", help="where venvs, builds and worktrees live (default: $GFXHOUND_CACHE)")
    bis.add_argument("--clear", action="store_true", help="delete this kind's cache first")
    corpus_option(bis, "the corpus that holds the finding (the record is written there as bisect.json)")
    json_option(bis, "bisect", "the bisection's record")
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
    llvm.add_argument("--llc-args", dest="llc_args", action=FlagsValue, metavar="FLAGS",
                      help="llc's flags, as typed: --llc-args -mcpu=gfx90a or --llc-args \"-mtriple=... -O2\" "
                           "(default: the finding's reducing command, else -mtriple=amdgcn-amd-amdhsa -mcpu=MCPU "
                           "-O2)")
    llvm.add_argument("--mcpu", default="gfx942", help="the processor llc compiles for, when --llc-args names none")
    com = bis.add_argument_group("commits built from source")
    com.add_argument("--commits", help="OLD..NEW: commits (hashes, tags, branches) of --repo")
    com.add_argument("--repo", help="your clone (never checked out: builds happen in a worktree in the cache)")
    com.add_argument("--recipe", help="llvm | llvm-mlir | triton | a recipe file (JSON)")
    com.add_argument("--input", help="what the probe runs on (default: the finding's repro, or --repro, or --ll)")
    com.add_argument("--dep-repo", dest="dep_repo", help="the pinned dependency's clone (Triton: llvm-project); "
                     "needed to build, and for the hand-off")
    com.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                     help="a recipe placeholder, e.g. --define mcpu=gfx950")
    com.add_argument("--jobs", type=positive(int), default=os.cpu_count() or 1,
                     help="parallel build jobs of a commit (the recipe's {jobs})")


def cmd_bisect(args):
    """Since when (or, with --fix, until when) does a finding's repro, or a repro of the user's, fail?"""
    from gfxhound.cli.common import UserError
    kinds = [k for k in ("triton", "llc", "commits") if getattr(args, k)]
    if len(kinds) != 1:
        raise UserError("say what to bisect over, once: --triton OLD..NEW (releases), --llc 15..22 (llc "
                        "versions) or --commits OLD..NEW --repo PATH (commits built from source)")
    if args.expect is not None:
        try:
            if re.search(args.expect, ""):
                raise UserError(f"--expect {args.expect!r} matches empty output: give what the failure prints")
        except re.error as exc:
            raise UserError(f"--expect {args.expect!r} is not a regular expression ({exc})") from None
    from gfxhound.bisect import run
    from gfxhound.bisect.core import BisectError
    request = run.Request(cache=_cache(args, {"triton": "venvs", "llc": "llc", "commits": "commits"}[kinds[0]]),
                          finding=args.id, lld=default_lld(), log=lambda line: print(line, file=sys.stderr),
                          **{name: getattr(args, name) for name in _PASSED})
    try:
        outcome = {"triton": run.releases, "llc": run.llc_versions, "commits": run.commits}[kinds[0]](request)
    except BisectError as exc:
        raise UserError(str(exc)) from None
    if outcome.record is None:  # only --clear: nothing was bisected
        if args.json:
            emit("bisect", {"kind": None, "cleared": True})
        return 0
    if args.json:
        emit("bisect", outcome.record)
        return 0
    for line in outcome.lines:
        print(line)
    return 0


# the options bisect/run.py's Request takes as they are
_PASSED = ("corpus", "repro", "expect", "fix", "repeat", "timeout", "clear", "triton", "only_cached", "prefetch",
           "llc", "ll", "llc_args", "mcpu", "commits", "repo", "recipe", "input", "dep_repo", "define", "jobs")


def _cache(args, kind: str) -> Path:
    return Path(os.path.abspath(Path(args.cache).expanduser())) if args.cache else Path(cache_dir()) / kind
