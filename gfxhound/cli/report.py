"""`gfxhound report`: an issue draft for a finding, unless the public trackers already know the bug. `verify`,
`perf` and `nightly` live in their own modules; they are re-exported here, where the top-level parser finds them.

One root cause, one draft: a finding whose bug another finding's draft reports (an assertion and a wrong code from
the same missing guard) keeps a pointer to it (corpus_store/drafted_with.py, written with `--with ID --why TEXT`);
reporting it then names that draft in one line instead of writing a second, and the draft it points at lists the
targets and upstream searches of both.

Exit codes mean one thing each: 0 the draft is written and its reproducer showed the bug here (or cannot run
here, which stdout says), or there is nothing to draft because the bug is known upstream or already in another
finding's draft; 1 a draft was written that must not be filed as it is (it did not reproduce, or it still names
gfxhound's internals); 2 the user's mistake (a finding that does not exist, an interpreter without Triton, a bug
fixed upstream)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from .common import UserError, cache_dir, check_python, default_lld, existing_corpus, need_triton, newest_llc
from .jsonout import emit
from .nightly import add_nightly  # noqa: F401 - re-exported for build_parser
from .options import corpus_option, json_option, timeout_option, triage_option
from .perf import add_perf  # noqa: F401 - re-exported for build_parser
from .verify import add_verify  # noqa: F401 - re-exported for build_parser

EXIT_CODES = """exit codes: 0 drafted and reproduced here (or its repro cannot run here: stdout says so), or
not drafted because it is known upstream or drafted with another finding (--with; 0 for recording that too); 1
drafted, but not to file as it is: the repro did not show the bug, or the draft still names gfxhound's internals; 2
a usage error (one line says which). With --check: 0 the draft is ready, 1 it is not (the reasons are printed), 2
a usage error (no draft yet, a wheel missing from the wheelhouse)."""

DRAFTED_VERDICTS = ("ice", "unsupported", "timeout", "miscompile", "runtime_fault", "nondeterministic")


def add_report(sub):
    rep = sub.add_parser("report", help="write an issue draft for a finding (never filed automatically)",
                         epilog=EXIT_CODES)
    rep.add_argument("id", help="the finding (its id or a unique prefix); with --check also a folder holding a "
                                "draft.md (`gfxhound emulate FILE.ll --draft DIR` writes one)")
    rep.add_argument("--upstream", choices=["triton", "llvm"],
                     help="the project the draft is for (default: llvm when a reduced .ll shows the bug in LLVM code "
                          "generation: an llc crash, or a memory-model defect through Triton's code generator)")
    rep.add_argument("--out", metavar="DIR", help="where the draft goes (default: <corpus>/<id>/draft)")
    corpus_option(rep, "the corpus that holds the finding")
    triage_option(rep)
    rep.add_argument("--force", action="store_true",
                     help="draft even when a known issue covers the finding, or when it is drafted with another")
    merge = rep.add_argument_group("one root cause, one draft")
    merge.add_argument("--with", dest="draft_with", metavar="ID",
                       help="record that this finding's bug is reported in ID's draft (the same root cause) and "
                            "write no draft of its own: `report ID` drafts both, this one then names ID's draft")
    merge.add_argument("--why", metavar="TEXT", help="with --with: why it is the same root cause, one line")
    timeout_option(rep, 600, "seconds the reproduction check may take")
    rep.add_argument("--python", default=sys.executable, metavar="PY",
                     help="check the reproducer under this interpreter (a venv with the Triton that has the bug)")
    json_option(rep, "report", "what was drafted (with --check: the check, docs/schemas/report-check.json)")
    check = rep.add_argument_group("checking the existing draft in a maintainer's sandbox (docs/sandbox.md)")
    check.add_argument("--check", action="store_true",
                       help="run every block of the finding's draft as pasted, in a venv holding only what the draft "
                            "says to install, without network or project files; exit 0 ready, 1 not ready. ID may "
                            "be a folder holding draft.md: its other files are the attachments, with no bisection")
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
    if finding.verdict == "hazard":  # its witness is the machine's run of the llc output, not a Triton program
        raise UserError(f"{finding.signature} is a hazard in LLVM's machine code: draft it from the kernel's LLVM IR "
                        "with `gfxhound emulate FILE.ll --launch SPEC --draft DIR --witness REGEX`")
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
    if (args.draft_with is None) != (args.why is None):
        raise UserError("--with ID and --why TEXT go together: the draft that reports this bug, and why")
    if args.draft_with is not None:
        if args.check or args.force:
            raise UserError(f"--with records a pointer; give it without {'--check' if args.check else '--force'}")
        return _record_with(args)
    if args.check:
        return cmd_check(args)
    if _draft_folder(args.id):
        raise UserError(f"{args.id} is a draft's folder, not a finding: give --check to run it in the sandbox")
    from gfxhound.cli.triage import open_triage
    from gfxhound.report import drafts
    python = check_python(args.python)
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    pointer = corpus.drafted_with(finding.signature)
    if pointer and not args.force:
        return _pointed(args, corpus, finding, pointer)
    triage = open_triage(args)
    known = _known(args, finding, triage)
    if known:
        return _not_drafted(args, finding, known)
    upstream = _upstream(args, corpus, finding)
    need_triton(python, "--python")  # else the check "does not reproduce" and the draft says so
    env = {"TRITON_HIP_LLD_PATH": default_lld()} if default_lld() else {}
    finding, known_lines = _with_pointers(corpus, finding, triage)
    draft = drafts.build(corpus, finding, upstream, python=python, timeout=args.timeout, env=env,
                         llc=newest_llc(), known_upstream=known_lines, newest=sys.executable)
    if draft.newest and draft.newest["reproduced"] is False and draft.reproduced and not args.force:
        raise UserError(f"{finding.signature[:8]} fails with {finding.toolchains[-1]} but not with "
                        f"{draft.newest['toolchain']} (this gfxhound's): fixed since, not a bug to file as new; "
                        f"`gfxhound bisect {finding.signature[:8]} --fix` names the release that fixed it (--force "
                        "drafts it anyway)")
    path = drafts.write(draft, Path(args.out) if args.out else corpus.draft_dir(finding.signature))
    _drafted(args, finding, draft, path)
    return 0 if draft.reproduced is not False and not draft.leaks else 1


def _record_with(args):
    """`report ID --with OTHER --why TEXT`: the pointer, written; one line says so."""
    corpus = existing_corpus(args.corpus)
    finding, draft = corpus.get(args.id), corpus.get(args.draft_with)
    corpus.write_drafted_with(finding.signature, draft.signature, args.why)
    own = corpus.draft_dir(finding.signature) / "draft.md"
    if args.json:
        emit("report", {"signature": finding.signature, "drafted": False,
                        "drafted_with": _pointer_json(corpus, corpus.drafted_with(finding.signature))})
    else:
        print(f"{finding.signature}: now drafted with {draft.signature} ({' '.join(args.why.split())})"
              + (f"; its own draft {own.parent} is superseded: remove it" if own.is_file() else ""))
    return 0


def _pointer_json(corpus, pointer) -> dict:
    draft = corpus.draft_dir(pointer.draft) / "draft.md"
    return {"draft": pointer.draft, "why": pointer.why, "path": str(draft) if draft.is_file() else None}


def _pointed(args, corpus, finding, pointer):
    """A finding whose bug another finding's draft reports: no second draft (--force writes one)."""
    said = _pointer_json(corpus, pointer)
    if args.json:
        emit("report", {"signature": finding.signature, "drafted": False, "drafted_with": said})
    elif said["path"]:
        print(f"{finding.signature}: drafted with {pointer.draft} ({pointer.why}): {said['path']}; no draft of its "
              "own (--force writes one)")
    else:
        print(f"{finding.signature}: drafted with {pointer.draft} ({pointer.why}), which has no draft yet: "
              f"`gfxhound report {pointer.draft[:8]}` writes it")
    return 0


def _with_pointers(corpus, finding, triage):
    """The finding as its draft describes it, and the draft's "Known upstream" lines: where other findings are
    drafted with it, their targets and their trackers' searches too (a related issue named once)."""
    from dataclasses import replace
    others = [corpus.get(sig) for sig in corpus.drafted_here(finding.signature)]
    lines, refs = [], set()
    for one in [finding, *others]:
        for line in triage.draft_lines(one):
            related = re.match(r"Related but not the same bug: ([^:]+):", line)
            if line in lines or (related and related.group(1) in refs):
                continue
            refs |= {related.group(1)} if related else set()
            lines.append(line)
    targets = sorted({t for one in [finding, *others] for t in one.targets})
    return (replace(finding, targets=targets) if others else finding), lines


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


def _draft_folder(argument: str) -> "Path | None":
    """The folder `argument` names when it holds a draft.md (a draft outside the corpus: `emulate --draft DIR`)."""
    folder = Path(argument)
    return folder if folder.is_dir() and (folder / "draft.md").is_file() else None


def cmd_check(args):
    """`gfxhound report ID --check`: the finding's existing draft, run in the sandbox (report/sandbox.py); or
    `gfxhound report DIR --check`: DIR/draft.md, its other files as attachments, no bisection."""
    from gfxhound.report import sandbox
    folder = _draft_folder(args.id)
    if folder is not None:
        if args.out:
            raise UserError(f"--out names a finding's draft folder; {args.id} is one already: drop --out")
        return _check(args, sandbox, folder, None, [], _checkout())
    corpus = existing_corpus(args.corpus)
    finding = corpus.get(args.id)
    pointer = corpus.drafted_with(finding.signature)
    if pointer and not args.out and not (corpus.draft_dir(finding.signature) / "draft.md").is_file():
        print(f"gfxhound: {finding.signature[:8]} is drafted with {pointer.draft[:8]}: checking that draft",
              file=sys.stderr)
        finding = corpus.get(pointer.draft)
    folder = Path(args.out) if args.out else corpus.draft_dir(finding.signature)
    draft = folder / "draft.md"
    if not draft.is_file():
        raise UserError(f"{finding.signature[:8]} has no draft at {draft}: run `gfxhound report "
                        f"{finding.signature[:8]}` first")
    return _check(args, sandbox, folder, finding.signature, corpus.bisections(finding.signature),
                  _checkout() + [corpus.root.resolve()])


def _checkout() -> list:
    """The project a block must not see: this checkout (not the site-packages of an installed gfxhound)."""
    import gfxhound
    checkout = Path(gfxhound.__file__).resolve().parent.parent
    return [checkout] if (checkout / "pyproject.toml").exists() else []


def _check(args, sandbox, folder, signature, bisections, hide):
    """The sandbox's run of folder/draft.md (the other files beside it: its attachments), printed; 0 ready, 1 not."""
    import json
    draft = folder / "draft.md"
    cache = Path(cache_dir())
    wheelhouse = Path(args.wheelhouse) if args.wheelhouse else cache / "wheelhouse"
    markdown = draft.read_text()
    log = (lambda line: print(f"gfxhound: {line}", file=sys.stderr))
    if args.fetch_wheels:
        try:
            for requirements in sandbox.requirement_sets(markdown, bisections):
                sandbox.sandbox_env.fetch(wheelhouse, requirements, log=log)
        except sandbox.SandboxError as exc:
            raise UserError(str(exc)) from None
    settings = sandbox.Settings(wheelhouse=wheelhouse, cache=cache / "sandbox", timeout=args.timeout,
                                hide=hide, lld=default_lld(), log=log)
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
        print(json.dumps({"format": sandbox.FORMAT, "signature": signature, **result.to_json()}, indent=1))
    else:
        print(f"{signature or folder}: {draft}")
        print("\n".join(sandbox.lines(result)))
    return 0 if result.ready else 1
