"""`gfxhound verify`: replay open findings on one toolchain (a published release, or an interpreter with a local
build) and record which are fixed, still failing, or cannot be tested there; name the release that fixed each."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .output import progress, table
from .common import UserError, cache_dir, check_python, default_lld, existing_corpus, need_triton
from .jsonout import emit
from .options import corpus_option, json_option, timeout_option


def add_verify(sub):
    ver = sub.add_parser("verify", help="replay open findings on a toolchain: fixed / still failing / cannot test")
    ver.add_argument("ids", nargs="*", help="findings (ids or unique prefixes; default: every open one)")
    ver.add_argument("--triton", metavar="X.Y.Z",
                     help="a published release to verify on (its venv comes from the bisect cache)")
    ver.add_argument("--python", metavar="PY", help="or an interpreter with the Triton to verify (a local build)")
    ver.add_argument("--no-bisect", dest="bisect", action="store_false",
                     help="do not bisect the releases to name where a fixed finding was fixed")
    ver.add_argument("--cache", metavar="DIR", help="the venv cache (default: $GFXHOUND_CACHE/venvs)")
    ver.add_argument("--only-cached", dest="only_cached", action="store_true",
                     help="bisect only over releases whose venvs are cached (no downloads)")
    timeout_option(ver, 600, "seconds one repro run may take")
    corpus_option(ver, "the corpus whose findings are verified (verify.json and statuses are written there)")
    json_option(ver, "verify", "the results")
    ver.set_defaults(func=cmd_verify)


def _log(line):
    print(f"  {line}", file=sys.stderr)


def _release(args, cache):
    """--triton: the release's interpreter (from the venv cache), its toolchain name, and the releases to bisect."""
    from gfxhound.bisect.releases import ReleaseError, available_versions, version_key
    versions = []
    try:
        versions = [v for v in available_versions() if re.fullmatch(r"\d+(\.\d+)*", v)]
    except ReleaseError as exc:
        if not args.only_cached:
            raise UserError(str(exc)) from None
    if args.only_cached:
        versions = sorted({p.name[len("triton-"):] for p in cache.root.glob("triton-*") if
                           cache.ready(p.name[len("triton-"):])}, key=version_key)
    if args.triton not in versions:
        raise UserError(f"--triton {args.triton}: not a published release"
                        + (" in the cache (--only-cached)" if args.only_cached else ""))
    try:
        python = cache.ensure(args.triton, log=_log)
    except ReleaseError as exc:
        raise UserError(str(exc)) from None
    return python, f"triton-{args.triton}", versions


def _local(args):
    """--python: the interpreter (checked: it exists and imports Triton) and its toolchain name."""
    python = check_python(args.python)
    need_triton(python, "--python")
    from gfxhound.protocol import run_probe
    outcome, version = run_probe([python, "-c", "import triton; print(triton.__version__)"], 120)
    return Path(python), f"triton-{version}" if outcome == "absent" else f"python {args.python}", []


def cmd_verify(args):
    from gfxhound.bisect.releases import VenvCache
    from gfxhound.report import verify
    if bool(args.triton) == bool(args.python):
        raise UserError("verify on one toolchain: --triton X.Y.Z (a release) or --python PATH (e.g. a local build)")
    corpus = existing_corpus(args.corpus)
    findings = [corpus.get(i) for i in args.ids] if args.ids else verify.open_findings(corpus)
    cache = VenvCache(Path(os.path.abspath(Path(args.cache).expanduser())) if args.cache
                      else Path(cache_dir()) / "venvs")
    python, toolchain, versions = _release(args, cache) if args.triton else _local(args)
    env = {"PYTHONWARNINGS": "ignore"}
    if default_lld():
        env["TRITON_HIP_LLD_PATH"] = default_lld()
    results, shown = [], progress("verified")
    for finding in findings:
        results.append(_verify_one(args, corpus, finding, python, toolchain, versions, cache, env))
        shown(len(results), len(findings))
    counts = {o: sum(r.outcome == o for r in results) for o in (verify.FIXED, verify.STILL, verify.CANNOT)}
    if args.json:
        emit("verify", {"toolchain": toolchain, "counts": counts,
                        "results": [dict(r.entry(), signature=r.signature) for r in results]})
        return 0
    by_id = {f.signature: f for f in findings}
    _table(results, by_id)
    print(f"{toolchain}: " + ", ".join(f"{n} {o}" for o, n in counts.items()))
    return 0


def _verify_one(args, corpus, finding, python, toolchain, versions, cache, env):
    """One finding: its repros on the toolchain; a fixed one's fix bisected over the releases (with --triton)."""
    from gfxhound.bisect.core import BisectError
    from gfxhound.bisect.releases import ReleaseError
    from gfxhound.report import verify
    result = verify.check(corpus, finding, python, toolchain, args.timeout, env)
    if result.outcome == verify.FIXED and args.triton and args.bisect:
        try:
            result.bisect = verify.name_the_fix(
                corpus, finding, args.triton, versions, lambda v: cache.ensure(v, log=_log), args.timeout, env)
            result.fixed_in = result.bisect["first_new"]
            corpus.write_bisect(finding.signature, result.bisect)
        except (BisectError, ReleaseError) as exc:
            _log(f"{finding.signature}: fixed, but the fix cannot be bisected: {exc}")
    status = {verify.FIXED: "fixed", verify.STILL: "open"}.get(result.outcome)
    corpus.write_verify(finding.signature, result.entry(), status)
    return result


def _table(results, by_id):
    from gfxhound.signature import headline
    rows = [[r.signature, by_id[r.signature].verdict, r.outcome, r.fixed_in and f"triton {r.fixed_in}" or "-",
             headline(by_id[r.signature].message)] for r in results]
    table(["id", "verdict", "outcome", "fixed in", "first error line"], rows,
          keep=("id", "verdict", "outcome", "fixed in"))
