"""Issue drafts: a finding written up the way triton-lang/triton and llvm/llvm-project (AMDGPU) expect a bug report,
for a person to review and paste. Never filed automatically.

What makes a draft trustworthy: the reproducer inlined is the one that was just run (the Triton snippet or the
`llc` command is executed before the draft is written, and the draft says what it did), the environment is the
toolchain the finding names, and nothing of this machine survives (gfxhound/report/scrub.py), nor of the harness
(gfxhound/report/upstream_lint.py: no ids, project paths, internal file names or harness commands). The pasted
snippet ends in a check that speaks the repro protocol (exit 1 only for the described failure, 0 when the kernel
compiles, 125 otherwise: oracle/repro/snippet.py `with_check`), and the hidden comment states the exit it gave;
a person's script that speaks the protocol itself (`checks_itself`) is pasted as it is.
"""
from __future__ import annotations

import ast
import os
import re
import shlex
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL, REPRO_FILE
from gfxhound.atomic import write_atomic
from gfxhound.protocol import ABSENT, PRESENT, describe, outcome
from gfxhound.report.draft_check import bug_parts, run_pasted, without_diagnostic
from gfxhound.report.draft_llvm import llvm_draft
from gfxhound.report.draft_prose import NO_UB, STAGE_NAMES, by_hand as docstring_parts, found_by, \
    how_reduced, kernel_name, user_note
from gfxhound.report.draft_reach import REACH_TARGETS, formats, reach, reach_text, simpler
from gfxhound.report.draft_parts import BANNER, LLVM, TRITON, Draft, bisection_section, cause, checked_targets, \
    environment, related, run_tool, setup
from gfxhound.oracle.repro.snippet import CHECK_TIMEOUT_S, user_module, with_check
from gfxhound.report.draft_text import constants as _constants, headline, kernel_source as _kernel_source, \
    actual, prune_unused, tail as _tail, triton_snippet
from gfxhound.report.scrub import Scrubber
from gfxhound.report.upstream_lint import lint
from gfxhound.signature import CAST_TABLE_STAGE as CAST_STAGE, MEMORY_MODEL_STAGE, identity, summarise

EXITS = "exit 1 = the bug is present, 0 = absent, 125 = cannot test here"  # the repro protocol, in one line


def choose_upstream(corpus, finding) -> str:
    """LLVM when a reduced .ll shows the bug in LLVM's code generation: a crash of plain llc, or a memory-model
    defect (waits, writebacks, invalidates are the memory legalizer's and waitcnt insertion's) that survived
    reduction through Triton's own code generator. Else Triton: a crash only Triton's code generator shows may be
    Triton asking for what the target lacks (triage decides; `--upstream llvm` overrides)."""
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    kind = (reduced.record.get("codegen") or {}).get("kind", "llc")
    if not reduced.ll.exists():
        return TRITON
    if kind == "triton":
        return LLVM if finding.stage == MEMORY_MODEL_STAGE else TRITON
    return LLVM if finding.verdict == "ice" else TRITON


def build(corpus, finding, upstream: str | None = None, python: str = sys.executable, timeout: float = 600,
          env: dict | None = None, known_upstream: list | None = None, newest: str | None = None,
          llc: str = "") -> Draft:
    """`known_upstream`: what the triage file says of the public trackers (Triage.draft_lines), a section of its
    own before the environment when there is anything. `llc`: this machine's newest, which an LLVM draft compares
    with. `newest`: an interpreter with a newer Triton than
    `python`'s: the reproducer is checked there too (Draft.newest), and a bug it no longer shows is not new."""
    python = _as_typed(python)
    upstream = upstream or choose_upstream(corpus, finding)
    scrub = Scrubber({corpus.root: "corpus"})
    if upstream == TRITON:
        env = dict(env or {}, GFXHOUND_CHECKED_WITH=_triton_version(python))
    if finding.stage == CAST_STAGE:  # a conversion-table finding: its own shape (report/draft_casts.py)
        from gfxhound.report.draft_casts import cast_draft  # needs torch: only for these findings
        upstream = TRITON
        draft = cast_draft(corpus, finding, python, timeout, env)
    else:
        draft = llvm_draft(corpus, finding, python, timeout, llc) if upstream == LLVM else \
            _triton(corpus, finding, python, timeout, env or {})
    # a venv is its path (python and python3 in it are one: a second run would only say 3.9.0 twice)
    if upstream == TRITON and newest and os.path.abspath(_as_typed(newest)) != os.path.abspath(python):
        # is it still a bug? the same check with the newest Triton this machine has
        version = _triton_version(newest)
        if version == env["GFXHOUND_CHECKED_WITH"]:  # another venv of the same release: nothing new to say
            newest = None
    if upstream == TRITON and newest and os.path.abspath(_as_typed(newest)) != os.path.abspath(python):
        if finding.stage == CAST_STAGE:
            from gfxhound.report.draft_casts import cast_draft as again
        else:
            again = _triton
        latest = again(corpus, finding, newest, timeout, dict(env, GFXHOUND_CHECKED_WITH=version))
        draft.newest = {"python": newest, "toolchain": version, "reproduced": latest.reproduced}
        if latest.reproduced:
            draft.body = draft.body.replace("\n## Expected vs actual", f"Also fails the same way with "
                                            f"{draft.newest['toolchain']}.\n\n## Expected vs actual", 1)
    if known_upstream:
        section = "## Known upstream\n" + "\n".join(f"- {line}" for line in known_upstream) + "\n\n"
        draft.body = draft.body.replace("## Environment", section + "## Environment", 1)
        if any(line.startswith("Regression:") for line in known_upstream):
            draft.title = f"[regression] {draft.title}"
    draft.title, draft.body, draft.check = scrub(draft.title), scrub(draft.body), scrub(draft.check)
    draft.attachments = {k: scrub(v) for k, v in draft.attachments.items()}
    draft.leaks = scrub.leaks(draft.markdown() + "".join(draft.attachments.values())) + \
        lint(draft.title, draft.body, draft.attachments)
    return draft


def _as_typed(python: str) -> str:
    """The interpreter as a reader types it: `python snippet.py`. An assertion's first word is the program's name
    (`python3: .../File.cpp:N: ...`), so a draft checked with `python3` quotes a line the reader never sees."""
    typed = Path(python).with_name("python")
    return str(typed) if Path(python).name != "python" and typed.exists() else python


def _triton_version(python: str) -> str:
    rc, out, _ = run_tool([python, "-c", "import triton; print(triton.__version__)"], None, 120)
    return f"triton {out.strip().splitlines()[-1]}" if rc == 0 and out.strip() else "triton (version unknown)"


def _first_reproducing(candidates, python, timeout, env, normalised):
    """The first of `candidates` ((snippet, kind), best first) that fails here with this normalised message:
    (snippet, kind, its output), or (None, None, "") when none does."""
    for code, kind in candidates:
        with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
            (Path(tmp) / "snippet.py").write_text(code)
            rc, out, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
        if rc != 0 and summarise(out, ended)["normalised"] == normalised:
            return code, kind, out
    return None, None, ""


def _pasted(code, finding, output, python, env):
    """The snippet as pasted, ending in its check (oracle/repro/snippet.py `with_check`), and its one run as the
    reader will run it: (code, Checked), or (code as it was, None) when it has no compile to check."""
    bug = None if finding.verdict == "timeout" else bug_parts(finding.message, output)
    pasted = with_check(code, bug, alone=without_diagnostic(finding.message)) if bug is None or bug else None
    if pasted is None:
        return code, None
    return pasted, run_pasted({"snippet.py": pasted}, [python, "snippet.py"], CHECK_TIMEOUT_S + 60, env)


def _judged(checked, env) -> tuple:
    """(reproduced, check): the pasted snippet's exit read by the repro protocol, and what the hidden comment says
    of it (the exit code it really gave)."""
    reproduced = {PRESENT: True, ABSENT: False}.get(outcome(checked.rc)) if checked.rc is not None else None
    return reproduced, checked.said("python snippet.py", env["GFXHOUND_CHECKED_WITH"])


def _exited(rc) -> str:
    """A script's exit as a draft's check states it: the code it really gave, and what the protocol reads."""
    return "did not finish" if rc is None else f"exited {rc} ({describe(rc)})"


def _actual(checked, out, command: str = "") -> str:
    """The Actual block and its lead: all the command prints (the compile's failure, then the check's own
    stdout), abridged only where draft_text.abridge says, and saying so."""
    if checked is None:
        return actual(out, command)
    return actual(f"{checked.stderr.rstrip()}\n{checked.stdout.strip()}", command)


def _triton(corpus, finding, python, timeout, env) -> Draft:
    examples = corpus.examples(finding.signature)
    reduced = corpus.reduction(finding.signature, "spec")
    repro_path = reduced.repro if reduced.repro.exists() else examples[0].repro
    repro_text = repro_path.read_text()
    consts = _constants(repro_text)
    arch = consts.get("ARCH") or finding.targets[0]
    minimal = corpus.minimal(finding.signature)
    by_hand = False  # the reproducer is a person's hand-minimised script (corpus/<id>/minimal.py)
    source_record = None  # a kernel file's source-level reduction (reduce/user_source.py), when the draft uses it
    attachments = {REPRO_FILE: repro_text}
    user = examples[0].spec.get("user")  # a user's own kernel (gfxhound fuzz --kernel)
    version = env["GFXHOUND_CHECKED_WITH"].removeprefix("triton ")
    runs = None  # ({name: text}, argv) of the reproducer as pasted: run again where the bisection could not test
    targets = ""  # the Environment's line of the targets checked ("": the fuzzer's)
    attached = False  # the command runs an attached file, not the reproducer pasted above
    if finding.verdict in ("miscompile", "runtime_fault", "nondeterministic"):
        code = minimal.read_text() if minimal.exists() else reduced.kernel.read_text() \
            if reduced.kernel.exists() else consts.get("KERNEL") or _kernel_source(repro_text)
        if user and not minimal.exists():
            code = user["source"]
        interpret_run = examples[0].run.get("backend") == "interpret"
        interpret = interpret_run and not user
        check_script = minimal if minimal.exists() else repro_path
        argv = [python, check_script.name] + (["--interpret"] if interpret and not minimal.exists() else [])
        hand = docstring_parts(code) if minimal.exists() and not user else None
        if minimal.exists() and not user:  # the script as pasted (its docstring trimmed): what the reader runs
            code = hand.code if hand else code
            ran = run_pasted({check_script.name: code}, argv, timeout, env)
            code_rc, out = ran.rc, ran.stdout + ran.stderr
        else:
            code_rc, out, _ = run_tool(argv, check_script.parent, timeout, env)
            attached = True
        reproduced = {PRESENT: True, ABSENT: False}.get(outcome(code_rc))  # None: could not test here
        check = f"`python {check_script.name}{' --interpret' if len(argv) > 2 else ''}` with " \
                f"{env['GFXHOUND_CHECKED_WITH']} {_exited(code_rc)}: {_tail(out, 3)}"
        what = {"miscompile": "wrong result", "runtime_fault": "runtime fault",
                "nondeterministic": "nondeterministic result"}[finding.verdict]
        title = f"[{arch}] {what}: {headline(finding.message)}"
        if user and interpret_run:
            title = f"[interpreter] {what} in {user['fn']}: {headline(finding.message)}"
        summary = (f"A kernel compiled for `{arch}` gives a {what} when it runs: {finding.message}. The reference "
                   f"is PyTorch on the CPU.")
        if examples[0].run.get("backend") == "emulate":  # run by gfxhound's CPU executor, not on AMD hardware
            summary = (f"A kernel compiled for `{arch}` gives a {what}: {finding.message}. Its LLVM IR was run by "
                       "the fuzzer's CPU executor for AMD LLVM IR (no AMD GPU was used; `repro.py` embeds the executor "
                       "and launches on an AMD GPU instead when there is one); the reference is PyTorch on the CPU. "
                       "The error is in Triton's lowering or before it: the executor runs the IR Triton hands to "
                       "LLVM's AMDGPU backend.")
        command = f"python {check_script.name}" + (" --interpret" if len(argv) > 2 else "") + f"   # {EXITS}"
        wanted = "the kernel runs" + ("" if what == "runtime fault" else " and returns the reference's values")
        expected = f"Expected: {wanted}.\n\n{actual(out)}"
        lang = "python"
        ub = f"\n## No undefined behaviour\n{NO_UB}\n"
        if user:
            where = "in Triton's interpreter" if examples[0].run.get("backend") == "interpret" else \
                f"compiled for `{arch}`"
            summary = (f"{kernel_name(user)} gives a {what} {where} at one launch: {finding.message}. "
                       f"`{REPRO_FILE}` (attached) replays that launch.")
            if examples[0].run.get("backend") == "interpret":  # no compiler ran: not the AMD backend's doing
                summary += (" The interpreter runs no compiler: a wrong result there is the kernel's or the "
                            "interpreter's, so check the kernel before filing.")
            command = f"python {check_script.name}   # {EXITS}"
            note = user_note(user)
            ub = f"\n## {'No undefined behaviour' if user.get('template') else 'The kernel'}\n{note}\n" if note else ""
        if minimal.exists() and not user:  # a person's minimised script: its docstring says what it shows
            if hand:  # no generator boilerplate about undefined behaviour: the kernel is short enough to read
                title, summary, ub = hand.title, hand.summary, ""
            attachments = {}  # the script is the report; the fuzzer's harness repro would only be noise
            expected = (f"{hand.expected}\n\n" if hand and hand.expected else "") + \
                actual(out, f"python {check_script.name}")
            by_hand = True
            runs = ({check_script.name: code}, argv)
            targets = checked_targets(code, finding)
        if finding.stage == MEMORY_MODEL_STAGE:  # found in the compiled code by oracle/memory_model.py, not run
            title = f"[AMD][{arch}] memory-model violation: {headline(finding.message)}"
            summary = (f"Compiling the kernel below for `{arch}` gives AMDGCN whose code sequence around an atomic "
                       f"departs from LLVM's AMDGPU memory model (AMDGPUUsage, memory-model code sequences for "
                       f"`{arch}`): {finding.message}. Found statically in the compiled code; not run on AMD "
                       "hardware.")
            command = (f"python {check_script.name}   # compiles, checks the AMDGCN with the embedded checker; "
                       "exit 1 = the violation is present, 0 = absent, 125 = cannot test here")
            expected = ("Expected: every wait, writeback and invalidate the table lists for the atomic's ordering "
                        f"and scope.\n\n{actual(out)}")
            ub = ""
    elif user:  # a user's kernel that fails to compile: its repro compiles the file at the launch that failed
        # the reproducer: a person's hand-minimised snippet, else the kernel file gfxhound's reducer shrank, else the
        # whole file, each followed by the compile the runtime would do at the failing launch; the first that fails
        # the same way here
        source_reduction = corpus.reduction(finding.signature, "source")
        candidates = ([(minimal.read_text(), "hand")] if minimal.exists() else []) + (
            [(triton_snippet(source_reduction.kernel.read_text(), consts), "reduced")]
            if source_reduction.kernel.exists() else []) + [(triton_snippet(user_module(user), consts), "file")]
        code, kind, snippet_out = _first_reproducing(candidates, python, timeout, env, finding.normalised)
        snippet_ok, by_hand = kind is not None, kind == "hand"
        reduced_used = kind in ("hand", "reduced") and source_reduction.kernel.exists()
        code = code if snippet_ok else user["source"]
        stage = STAGE_NAMES.get(finding.stage, finding.stage)
        what = "compile hang" if finding.verdict == "timeout" else "internal compiler error"
        # the pass that failed, from the snippet's output where it ran (Triton names it there)
        failed_pass = re.search(r"\[pass ([^,\]]+)", f"{identity(snippet_out)} {finding.message}")
        said = headline(finding.message or finding.normalised)
        title = f"[AMD][{arch}] {failed_pass.group(1) if failed_pass else f'{what} in {stage}'}" + \
            (f" {said}" if said.startswith("fails ") else f": {said}")
        shown = [f"{a['name']}={a['value']!r}" for a in user["args"] if a["kind"] != "tensor"] + \
            [f"{a['name']}: {a['dtype']}{a['shape']}" for a in user["args"] if a["kind"] == "tensor"]
        options = ", ".join(f"{k}={v!r}" for k, v in {**(consts.get("OPTIONS") or {}),
                                                        **(consts.get("ENV_KNOBS") or {})}.items())
        summary = (f"Compiling {kernel_name(user)} for `{arch}` at one launch fails with an {what} in {stage}, not "
                   f"a diagnostic about the kernel. The launch: {', '.join(shown)}; {options}. `{REPRO_FILE}` "
                   "(attached) compiles the file at that launch, its arguments specialised as the Triton runtime "
                   "would; no GPU needed.")
        if reduced_used:  # the reduced kernel is the report; the launch that found it is provenance
            record = source_record = source_reduction.record
            it = "It was" if user.get("template") else f"It is {kernel_name(user)},"
            summary = (f"Compiling the kernel below for `{arch}` fails with an {what} in {stage}, not a diagnostic "
                       f"about the kernel; no GPU needed. {it} reduced from {record.get('lines_before')} to "
                       f"{record.get('lines_after')} lines by the fuzzer's reducer{', then by hand' if by_hand else ''}"
                       ", and is compiled as the Triton runtime would at the launch that failed (its arguments "
                       "specialised the same way).")
        if snippet_ok:  # the file with a compile call at its end fails the same way: the reproducer as pasted
            if not by_hand:  # without options it does not need (a hand-minimised one is as its author left it)
                code = simpler(code, python, timeout, env, finding.normalised)
            reached = reach(code, arch, python, timeout, env, finding.normalised) if kind != "file" else {}
            if len(reached.get("same", [])) > 1:  # every target a reduced kernel reaches (a whole file: too slow)
                title = title.replace(f"[AMD][{arch}]", f"[AMD][{'/'.join(reached['same'])}]" if set(
                    reached["same"]) != set(REACH_TARGETS) else "[AMD]", 1)
            targets = "Targets checked: " + ", ".join(REACH_TARGETS if reached else [arch])
            hand = docstring_parts(code) if by_hand else None
            if hand:  # a person's words for what the reproducer shows; the script keeps what it does
                code, title, summary = hand.code, hand.title, hand.summary
            code, checked = _pasted(code, finding, snippet_out, python, env)
            attachments = {"snippet.py": code}  # the generated harness would only be noise (and the harness's)
            summary = summary.replace(f" `{REPRO_FILE}` (attached) compiles the file at that launch, its arguments "
                                      "specialised as the Triton runtime would; no GPU needed.", " No GPU needed.")
            command = f"python snippet.py   # {EXITS}"
            out = snippet_out
            runs = ({"snippet.py": code}, [python, "snippet.py"]) if checked else None
        if not snippet_ok or checked is None:  # only the generated repro shows it: the harness is the check
            rc, out, _ = run_tool([python, repro_path.name], repro_path.parent, timeout, env)
            checked, attachments[REPRO_FILE] = None, repro_text
            command, attached, runs = f"python {REPRO_FILE}   # {EXITS}", True, None
            reproduced = {PRESENT: True, ABSENT: False}.get(outcome(rc))
            check = f"`python {REPRO_FILE}` with {env['GFXHOUND_CHECKED_WITH']} {_exited(rc)}: {_tail(out, 3)}"
        else:
            reproduced, check = _judged(checked, env)
        expected = ("Expected: the kernel compiles, or is rejected with an error that names what is wrong with it."
                    f"\n\n{_actual(checked, out, 'python snippet.py' if snippet_ok else '')}")
        note = user_note(user, ran=False)
        lang, ub = "python", f"\n## The kernel\n{note}\n" if note else ""
    elif minimal.exists() and checks_itself(minimal.read_text()):  # a person's script that judges several casts
        hand = docstring_parts(minimal.read_text())
        code = hand.code if hand else minimal.read_text()
        checked = run_pasted({"snippet.py": code}, [python, "snippet.py"], CHECK_TIMEOUT_S + 60, env)
        reproduced, check = _judged(checked, env)
        title = f"[AMD] {'compile hang' if finding.verdict == 'timeout' else 'internal compiler error'}: " \
                f"{headline(finding.message or finding.normalised)}"
        title, summary, ub = (hand.title, hand.summary, "") if hand else (title, "The reproducer below shows it.", "")
        command = f"python snippet.py   # {EXITS}"
        runs = ({"snippet.py": code}, [python, "snippet.py"])
        targets = checked_targets(code, finding)
        expected = ((hand.expected if hand and hand.expected else "Expected: the kernels compile to correct code, or "
                     "are rejected with an error that names what is wrong with them.") + "\n\n"
                    + _actual(checked, "", "python snippet.py"))
        lang, attachments, by_hand = "python", {"snippet.py": code}, True
    else:
        kernel = reduced.kernel.read_text() if reduced.kernel.exists() \
            else _kernel_source(repro_text)
        # a person's hand-minimised script first; else the pruned reduced kernel, if it still fails, else the kernel
        snippets = ([minimal.read_text()] if minimal.exists() else []) + [
            triton_snippet(candidate, consts) for candidate in dict.fromkeys([prune_unused(kernel), kernel])]
        for code in snippets:
            with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
                (Path(tmp) / "snippet.py").write_text(code)
                rc, out, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
            got = summarise(out, ended) if ended != "exit:0" else {"normalised": "", "verdict": "pass"}
            reproduced = bool(rc != 0 and got["normalised"] and got["normalised"] == finding.normalised)
            if reproduced:
                break
        by_hand = reproduced and minimal.exists() and code is snippets[0]
        if reproduced:
            code = simpler(code, python, timeout, env, finding.normalised)
        reached = reach(code, arch, python, timeout, env, finding.normalised) if reproduced else {}
        if len(reached.get("same", [])) > 1:  # every target it reaches; none named when it reaches all
            arch = "/".join(reached["same"]) if set(reached["same"]) != set(REACH_TARGETS) else ""
        stage = STAGE_NAMES.get(finding.stage, finding.stage)
        failed_pass = re.search(r"\bpass ([^,\]]+)", identity(out))  # the pass the pipeline failed in, if named
        where = failed_pass.group(1) if failed_pass else \
            f"{'compile hang' if finding.verdict == 'timeout' else 'internal compiler error'} in {stage}"
        said = headline(finding.message or finding.normalised)
        needed = re.search(r", options=(\{.*?\})\)\s*$", code, re.S)  # the options simpler() found it needs
        trigger = (" with " + ", ".join(f"{k}={v}" for k, v in ast.literal_eval(needed.group(1)).items())
                   if needed else "")
        title = f"[AMD]{f'[{arch}]' if arch else ''} {where}" + \
            (f" {said}{trigger}" if said.startswith("fails ") else f": {said}{trigger}")
        summary = (f"Compiling the kernel below for {f'`{arch}`' if arch else 'any AMD target'} fails with an "
                   f"internal compiler error in {stage}, not a diagnostic about the kernel.")
        fp8 = formats(code, python, timeout, env, finding.normalised) if reached else None
        targets = "Targets checked: " + ", ".join(REACH_TARGETS) if reached else checked_targets(code, finding)
        hand = docstring_parts(code) if by_hand else None
        if hand:  # a person's words for what the reproducer shows; the script keeps what it does
            code, title, summary = hand.code, hand.title, hand.summary
        code, checked = _pasted(code, finding, out if reproduced else "", python, env)
        reproduced, check = _judged(checked, env) if checked else (False, "the snippet has no compile to check")
        command = "python snippet.py" + (f"   # {EXITS}" if checked else "")
        runs = ({"snippet.py": code}, [python, "snippet.py"]) if checked else None
        expected = ("Expected: the kernel compiles, or is rejected with an error that names what is wrong with it."
                    f"\n\n{_actual(checked, out, 'python snippet.py' if checked else '')}")
        lang, ub = "python", ""
        attachments = {"snippet.py": code}  # only the generated harness remains when the snippet does not show it
        if reached:
            expected += "\n\n" + reach_text(reached, fp8)
        elif not reproduced:
            attachments[REPRO_FILE] = repro_text
    emulated = examples[0].run.get("backend") == "emulate"
    name = re.match(r"python (\S+)", command).group(1)
    records = corpus.bisections(finding.signature)
    body = "\n".join([
        BANNER, "",
        "## Summary", summary, "",
        "## Reproducer", f"```{lang}\n{code.rstrip()}\n```", "",
        "## Command", setup(version, attachments.get(name, code), name, attached=attached), f"```sh\n{command}\n```",
        f"<!-- checked before this draft was written: {check} -->" if reproduced else
        f"**Did not reproduce when this draft was written ({check}): check by hand.**", "",
        "## Expected vs actual", expected, ub, *_reduced_ir(corpus, finding), *cause(corpus, finding),
        "## Bisection", bisection_section(records, runs, env, CHECK_TIMEOUT_S + 60), "",
        "## Environment", environment(corpus, finding, [
            f"Python {sys.version.split()[0]}, {sys.platform}",
            *(["No GPU needed: the reproducer only compiles (`triton.compile`)"] if lang == "python" and
              finding.verdict in ("ice", "timeout") else []),
            "Not yet checked on Triton's main branch", *related(corpus, finding)], targets), "",
        "## How this was found", found_by(emulated, how_reduced(reduced, user, source_record), by_hand)])
    return Draft(TRITON, title, body, reproduced, check, attachments)


def checks_itself(code: str) -> bool:
    """A hand-minimised script that speaks the repro protocol itself: it says "cannot test" on its own
    (`sys.exit(125)`, which a bare kernel-and-compile snippet never does), so `with_check` must not wrap it. Why it
    is pasted as it is: one root cause can show as several failures (two assertions and a wrong code from one
    missing guard), and only the script knows which of its outcomes are the bug, and that an old release's clean
    refusal means the bug is absent."""
    from gfxhound.protocol import EXIT_CANNOT_TEST
    return any(isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "exit" and
               any(isinstance(a, ast.Constant) and a.value == EXIT_CANNOT_TEST for a in node.args)
               for node in ast.walk(ast.parse(code)))


def _reduced_ir(corpus, finding) -> list:
    """The LLVM IR reduced through Triton's own code generator (reduce/through.py), and the call that shows the
    bug on it: the lines of a draft section, or none."""
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    info = reduced.record
    codegen = info.get("codegen") or {}
    if codegen.get("kind") != "triton" or not reduced.ll.exists():
        return []
    command = shlex.join(["python", "-c", codegen["code"], REDUCED_LL])
    return ["## Reduced LLVM IR", f"The kernel's LLVM IR, reduced with `llvm-reduce` ({info.get('lines_before')} -> "
            f"{info.get('lines_after')} lines) while {codegen['name']} still showed the bug on it:",
            f"```llvm\n{reduced.ll.read_text().rstrip()}\n```", f"```sh\n{command}\n```", ""]



def write(draft: Draft, out_dir: Path) -> Path:
    """<out>/draft.md plus its attachments, each written atomically. An attachment of an earlier draft in the same
    folder that this one does not have is removed: a reader of the folder takes every file in it as part of the
    report (a regenerated draft left a 1,029-line harness beside a snippet that no longer needed it). Only files a
    draft wrote are ever removed (DRAFT_FILES lists them; --out may name a folder that holds the user's own)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    files = {"draft.md": draft.markdown() + f"\n\n<!-- drafted {stamp}; reproduced: {draft.reproduced} -->\n",
             **draft.attachments}
    for name, text in files.items():
        write_atomic(out_dir / name, text)
    for stale in set(DRAFT_FILES) - set(files):
        (out_dir / stale).unlink(missing_ok=True)
    return out_dir / "draft.md"


# every attachment a draft can have: what a regenerated draft without one of them removes from its folder
DRAFT_FILES = ("snippet.py", "repro.py", "reduced.ll", "codegen.py", "kernel.py")
