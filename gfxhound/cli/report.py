"""`gfxhound report`: an issue draft for a finding, unless the public trackers already know the bug. `verify`,
`perf` and `nightly` live in their own modules; they are re-exported here, where the top-level parser finds them.

Exit codes mean one thing each: 0 the draft is written and its reproducer showed the bug here (or cannot run
here, which stdout says), or there is nothing to draft because the bug is known upstream; 1 a draft was written
that must not be filed as it is (it did not reproduce, or it still names gfxhound's internals); 2 the user's
mistake (a finding that does not exist, an interpreter without Triton, a bug fixed upstream)."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import UserError, cache_dir, check_python, default_lld, existing_corpus, need_triton, newest_llc
from .jsonout import emit
from .nightly import add_nightly  # noqa: F401 - re-exported for build_parser
from .options import corpus_option, json_option, timeout_option, triage_option
from .perf import add_perf  # noqa: F401 - re-exported for build_parser
from .verify import add_verify  # noqa: F401 - re-exported for build_parser

EXIT_CODES = """exit codes: 0 drafted and reproduced here (or its repro cannot run here: stdout says so), or
known upstream and not drafted; 1 drafted, but not to file as it is: the repro did not show the bug, or the draft
still names gfxhound's internals; 2 a usage error (one line says which). With --check: 0 the draft is ready, 1 it
is not (the reasons are printed), 2 a usage error (no draft yet, a wheel missing from the wheelhouse)."""

DRAFTED_VERDICTS = ("ice", "unsupported", "timeout", "miscompile", "runtime_fault", "nondeterministic")


def add_report(sub):
    rep = sub.add_parser("report", help="write an issue draft for a finding (never filed automatically)",
                         epilog=EXIT_CODES)
    rep.add_argument("id", help="the finding (its id or a unique prefix)")
    rep.add_argument("--upstream", choices=["triton", "llvm"],
                     help="the project the draft is for (default: llvm when a reduced .ll shows the bug in LLVM code "
                          "generation: an llc crash, or a memory-model defect through Triton's code generator)")
    rep.add_argument("--out", metavar="DIR", help="where the draft goes (default: <corpus>/<id>/draft)")
    corpus_option(rep, "the corpus that holds the finding")
    triage_option(rep)
    rep.add_argument("--force", action="store_true", help="draft even when a known issue covers the finding")
    timeout_option(rep, 600, "seconds the reproduction check may take")
    rep.add_argument("--python", default=sys.executable, metavar="PY",
                     help="check the reproducer under this interpreter (a venv with the Triton that has the bug)")
    json_option(rep, "report", "what was drafted (with --check: the check, docs/schemas/report-check.json)")
    check = rep.add_argument_group("checking the existing draft in a maintainer's sandbox (docs/sandbox.md)")
    check.add_argument("--check", action="store_true",
                       help="run every block of the finding's draft as pasted, in a venv holding only what the draft "
                            "says to install, without network or project files; exit 0 ready, 1 not ready")
    check.add_argument("--wheelhouse", metavar="DIR",
                       help="the local wheels the sandbox installs from with pip --no-index (default: "
                            "$GFXHOUND_CACHE/wheelhouse)")
    check.add_argument("--fetch-wheels", action="store_true",
                       help="first pip download the wheels the check needs into the wheelhouse (the only step that "
                            "uses the network)")
    rep.set_defaults(func=cmd_report)


def _known(args, finding, triage):
    """The known issue that means no draft, or None (with --force, or when none covers the finding)."""
    known = triage.known(finding)
    if not known or args.force:
        return None
    if known.state == "fixed":  # not a new bug: the trackers have it, fixed (a regression is not `known`)
        raise UserError(f"{finding.signature[:8]} is known and fixed upstream: {known.ref} ({known.kind}, fixed "
                        f"in {known.fixed_in or 'a release not recorded'}, {known.url}); not drafted as new "
                        f"(--force drafts it)")
    return known


def _upstream(args, corpus, finding):
    from gfxhound.report import drafts
    if finding.verdict not in DRAFTED_VERDICTS:
        raise UserError(f"{finding.signature} is {finding.verdict}: only compiler bugs get drafts")
    upstream = {"triton": drafts.TRITON, "llvm": drafts.LLVM}.get(args.upstream)
    reduced_ll = corpus.reduction(finding.signature, "llvm-ir").ll.exists()
    if finding.stage == "llc-verify" and not reduced_ll:  # its repro runs llc on IR: there is no kernel to paste
        raise UserError(f"{finding.signature} is an llc failure, drafted from its reduced LLVM IR: run `gfxhound "
                        f"reduce {finding.signature[:8]} --level llvm-ir` first")
    if upstream == drafts.LLVM and not reduced_ll:
        raise UserError(f"{finding.signature} has no reduced LLVM IR: run `gfxhound reduce {finding.signature[:8]} "
                        f"--level llvm-ir` first, or draft for Triton")
    return upstream


def cmd_report(args):
    if args.check:
        return cmd_check(args)
    from gfxhound.cli.triage import open_triage
    from gfxhound.report import drafts
    python = check_python(args.python)
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    triage = open_triage(args)
    known = _known(args, finding, triage)
    if known:
        return _not_drafted(args, finding, known)
    upstream = _upstream(args, corpus, finding)
    need_triton(python, "--python")  # else the check "does not reproduce" and the draft says so
    env = {"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {}
    draft = drafts.build(corpus, finding, upstream, python=python, timeout=args.timeout, env=env,
                         llc=newest_llc(), known_upstream=triage.draft_lines(finding), newest=sys.executable)
    if draft.newest and draft.newest["reproduced"] is False and draft.reproduced and not args.force:
        raise UserError(f"{finding.signature[:8]} fails with {finding.toolchains[-1]} but not with "
                        f"{draft.newest['toolchain']} (this gfxhound's): fixed since, not a bug to file as new; "
                        f"`gfxhound bisect {finding.signature[:8]} --fix` names the release that fixed it (--force "
                        "drafts it anyway)")
    path = drafts.write(draft, Path(args.out) if args.out else corpus.draft_dir(finding.signature))
    _drafted(args, finding, draft, path)
    return 0 if draft.reproduced is not False and not draft.leaks else 1


def _not_drafted(args, finding, known):
    if args.json:
        emit("report", {"signature": finding.signature, "drafted": False,
                        "known_upstream": {"ref": known.ref, "url": known.url, "state": known.state}})
    else:
        print(f"{finding.signature}: known upstream as {known.url} ({known.state}): no draft (--force writes one)")
    return 0


def _drafted(args, finding, draft, path):
    check = (draft.check or "").strip().splitlines()
    if args.json:
        emit("report", {"signature": finding.signature, "drafted": True, "upstream": draft.upstream,
                        "title": draft.title, "reproduced": draft.reproduced, "check": draft.check,
                        "draft": str(path), "attachments": sorted(draft.attachments), "leaks": list(draft.leaks),
                        "newest": draft.newest})
    else:
        state = {True: "reproduced", False: "DID NOT REPRODUCE", None: "not checked here"}[draft.reproduced]
        print(f"{draft.upstream}: {draft.title}\n  {state}: {check[0] if check else '-'}\n  {path}")
    if draft.leaks:
        print(f"gfxhound: the draft still names {', '.join(draft.leaks)}: edit it before filing", file=sys.stderr)


def cmd_check(args):
    """`gfxhound report ID --check`: the finding's existing draft, run in the sandbox (report/sandbox.py)."""
    import json
    import gfxhound
    from gfxhound.report import sandbox
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    folder = Path(args.out) if args.out else corpus.draft_dir(finding.signature)
    draft = folder / "draft.md"
    if not draft.is_file():
        raise UserError(f"{finding.signature[:8]} has no draft at {draft}: run `gfxhound report "
                        f"{finding.signature[:8]}` first")
    cache = Path(cache_dir())
    wheelhouse = Path(args.wheelhouse) if args.wheelhouse else cache / "wheelhouse"
    markdown = draft.read_text()
    bisections = corpus.bisections(finding.signature)
    log = (lambda line: print(f"gfxhound: {line}", file=sys.stderr))
    if args.fetch_wheels:
        try:
            for requirements in sandbox.requirement_sets(markdown, bisections):
                sandbox.sandbox_env.fetch(wheelhouse, requirements, log=log)
        except sandbox.SandboxError as exc:
            raise UserError(str(exc)) from None
    checkout = Path(gfxhound.__file__).resolve().parent.parent  # the project a block must not see
    hide = [checkout] if (checkout / "pyproject.toml").exists() else []  # not site-packages of an installed one
    settings = sandbox.Settings(wheelhouse=wheelhouse, cache=cache / "sandbox", timeout=args.timeout,
                                hide=hide + [corpus.root.resolve()], lld=default_lld(), log=log)
    attachments = {p.name: p.read_text(errors="replace") for p in sorted(folder.iterdir())
                   if p.is_file() and p.name != "draft.md"}
    try:
        result = sandbox.check(markdown, settings, attachments, bisections, draft=str(draft))
    except sandbox.WheelMissing as exc:
        raise UserError(f"{exc}: run again with --fetch-wheels (it downloads them from the package index), or "
                        f"give --wheelhouse DIR") from None
    except sandbox.SandboxError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps({"format": sandbox.FORMAT, "signature": finding.signature, **result.to_json()}, indent=1))
    else:
        print(f"{finding.signature}: {draft}")
        print("\n".join(sandbox.lines(result)))
    return 0 if result.ready else 1
