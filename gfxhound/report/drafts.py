"""Issue drafts: a finding written up the way triton-lang/triton and llvm/llvm-project (AMDGPU) expect a bug report,
for a person to review and paste. Never filed automatically.

What makes a draft trustworthy: the reproducer inlined is the one that was just run (the Triton snippet or the
`llc` command is executed before the draft is written, and the draft says what it did), the environment is the
toolchain the finding names, and nothing of this machine survives (gfxhound/report/scrub.py).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL, REPRO_FILE
from gfxhound.atomic import write_atomic
from gfxhound.protocol import ABSENT, PRESENT, outcome
from gfxhound.report.draft_llvm import llvm_draft
from gfxhound.report.draft_parts import BANNER, LLVM, TRITON, Draft, bisection, environment, related, run_tool
from gfxhound.report.draft_text import constants as _constants, headline, kernel_source as _kernel_source, \
    prune_unused, tail as _tail, triton_snippet
from gfxhound.report.scrub import Scrubber
from gfxhound.compat import warp_size
from gfxhound.signature import MEMORY_MODEL_STAGE, summarise

NO_UB = ("The kernel has no undefined behaviour: the generator never emits integer division by zero or "
         "`INT_MIN / -1`, shifts by the bit width or more, out-of-range float-to-int casts, unmasked out-of-bounds "
         "accesses or data races, and the oracle checked every unmasked address against the buffer bounds before "
         "judging the result. The reference is PyTorch on the CPU with an error bound per operation (exact for "
         "integer ops); FMA contraction and reassociation are allowed by that bound.")
NOT_REDUCED = ("**Not reduced:** the reproducer is the fuzzer's generated kernel as it was found; run "
               "`gfxhound reduce` on the finding before filing.")
STAGE_NAMES = {"ttir": "Triton IR", "ttgir": "TritonGPU IR", "llir": "LLVM IR translation", "amdgcn":
               "AMDGCN code generation", "hsaco": "linking", "llc-verify": "LLVM code generation (llc)",
               "run": "execution"}


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
    upstream = upstream or choose_upstream(corpus, finding)
    scrub = Scrubber({corpus.root: "corpus"})
    if upstream == TRITON:
        env = dict(env or {}, GFXHOUND_CHECKED_WITH=_triton_version(python))
    draft = llvm_draft(corpus, finding, python, timeout, llc) if upstream == LLVM else \
        _triton(corpus, finding, python, timeout, env or {})
    if upstream == TRITON and newest and os.path.abspath(newest) != os.path.abspath(python):  # a venv is its path
        # is it still a bug? the same check with the newest Triton this machine has
        version = _triton_version(newest)
        latest = _triton(corpus, finding, newest, timeout, dict(env, GFXHOUND_CHECKED_WITH=version))
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
    draft.leaks = scrub.leaks(draft.markdown() + "".join(draft.attachments.values()))
    return draft


def _triton_version(python: str) -> str:
    rc, out, _ = run_tool([python, "-c", "import triton; print(triton.__version__)"], None, 120)
    return f"triton {out.strip().splitlines()[-1]}" if rc == 0 and out.strip() else "triton (version unknown)"


def _how_reduced(reduced) -> str:
    """What the draft may say of the reproducer's size: only what the reduction record shows."""
    record = reduced.record if reduced.repro.exists() else {}
    if record.get("body_lines_before") and record.get("body_lines_after"):
        return (f"`gfxhound reduce` shrank the generated kernel's body from {record['body_lines_before']} to "
                f"{record['body_lines_after']} lines, checking after each step that the failure stays the same.")
    return NOT_REDUCED


def _triton(corpus, finding, python, timeout, env) -> Draft:
    examples = corpus.examples(finding.signature)
    reduced = corpus.reduction(finding.signature, "spec")
    repro_path = reduced.repro if reduced.repro.exists() else examples[0].repro
    repro_text = repro_path.read_text()
    consts = _constants(repro_text)
    arch = consts.get("ARCH") or finding.targets[0]
    minimal = corpus.minimal(finding.signature)
    attachments = {REPRO_FILE: repro_text}
    if finding.verdict in ("miscompile", "runtime_fault", "nondeterministic"):
        code = minimal.read_text() if minimal.exists() else reduced.kernel.read_text() \
            if reduced.kernel.exists() else consts.get("KERNEL") or _kernel_source(repro_text)
        interpret = "interpret" in json.dumps(examples[0].run.get("backend", ""))
        check_script = minimal if minimal.exists() else repro_path
        argv = [python, check_script.name] + (["--interpret"] if interpret and not minimal.exists() else [])
        code_rc, out, _ = run_tool(argv, check_script.parent, timeout, env)
        reproduced = {PRESENT: True, ABSENT: False}.get(outcome(code_rc))  # None: could not test here
        check = f"`python {check_script.name}{' --interpret' if len(argv) > 2 else ''}` with " \
                f"{env['GFXHOUND_CHECKED_WITH']} exited {code_rc}: {_tail(out, 3)}"
        what = {"miscompile": "wrong result", "runtime_fault": "runtime fault",
                "nondeterministic": "nondeterministic result"}[finding.verdict]
        title = f"[{arch}] {what}: {headline(finding.message)}"
        summary = (f"A kernel compiled for `{arch}` gives a {what} when it runs: {finding.message}. The reference "
                   f"is PyTorch on the CPU.")
        command = (f"python {check_script.name}" + (" --interpret" if len(argv) > 2 else "")
                   + "   # exit 1 = the bug is present, 0 = absent, 125 = cannot test here")
        wanted = "the kernel runs" + ("" if what == "runtime fault" else " and returns the reference's values")
        expected = f"Expected: {wanted}.\n\nActual:\n```\n{_tail(out, 12)}\n```"
        lang = "python"
        ub = f"\n## No undefined behaviour\n{NO_UB}\n"
        if finding.stage == MEMORY_MODEL_STAGE:  # found in the compiled code by oracle/memory_model.py, not run
            title = f"[AMD][{arch}] memory-model violation: {headline(finding.message)}"
            summary = (f"Compiling the kernel below for `{arch}` gives AMDGCN whose code sequence around an atomic "
                       f"departs from LLVM's AMDGPU memory model (AMDGPUUsage, memory-model code sequences for "
                       f"`{arch}`): {finding.message}. Found statically in the compiled code; not run on AMD "
                       "hardware.")
            command = (f"python {check_script.name}   # compiles, checks the AMDGCN with the embedded checker; "
                       "exit 1 = the violation is present, 0 = absent, 125 = cannot test here")
            expected = ("Expected: every wait, writeback and invalidate the table lists for the atomic's ordering "
                        f"and scope.\n\nActual:\n```\n{_tail(out, 12)}\n```")
            ub = ""
    else:
        kernel = reduced.kernel.read_text() if reduced.kernel.exists() \
            else _kernel_source(repro_text)
        for candidate in dict.fromkeys([prune_unused(kernel), kernel]):  # the pruned kernel, if it still fails
            code = triton_snippet(candidate, consts)
            with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
                (Path(tmp) / "snippet.py").write_text(code)
                rc, out, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
            got = summarise(out, ended) if ended != "exit:0" else {"normalised": "", "verdict": "pass"}
            reproduced = bool(rc != 0 and got["normalised"] and got["normalised"] == finding.normalised)
            if reproduced:
                break
        check = (f"`python snippet.py` with {env['GFXHOUND_CHECKED_WITH']} ended {ended}; normalised failure: "
                 f"{got['normalised'][:200] or 'none'}")
        reach = _reach(code, arch, python, timeout, env, finding.normalised) if reproduced else {}
        if len(reach.get("same", [])) > 1:  # every target it reaches; none named when it reaches all
            arch = "/".join(reach["same"]) if set(reach["same"]) != set(REACH_TARGETS) else ""
        stage = STAGE_NAMES.get(finding.stage, finding.stage)
        title = f"[AMD]{f'[{arch}]' if arch else ''} " \
                f"{'compile hang' if finding.verdict == 'timeout' else 'internal compiler error'} " \
                f"in {stage}: {headline(finding.message or finding.normalised)}"
        summary = (f"Compiling the kernel below for {f'`{arch}`' if arch else 'any AMD target'} fails with an "
                   f"internal compiler error in {stage}, not a diagnostic about the kernel.")
        command = "python snippet.py   # the reproducer above, saved as snippet.py"
        expected = ("Expected: the kernel compiles, or is rejected with an error that names what is wrong with it."
                    f"\n\nActual:\n```\n{_tail(out)}\n```")
        lang, ub = "python", ""
        attachments["snippet.py"] = code
        if reach:
            expected += "\n\n" + _reach_text(reach, _formats(code, python, timeout, env, finding.normalised))
    body = "\n".join([
        BANNER.format(sig=finding.signature), "",
        "## Summary", summary, "",
        "## Reproducer", f"```{lang}\n{code.rstrip()}\n```", "",
        "## Command", f"```sh\n{command}\n```",
        f"Checked before this draft was written: {check}" + ("" if reproduced else
                                                              " **(did not reproduce here: check by hand)**"), "",
        "## Expected vs actual", expected, ub, *_reduced_ir(corpus, finding),
        "## Bisection", bisection(corpus.bisections(finding.signature)), "",
        "## Environment", environment(corpus, finding, [f"Python {sys.version.split()[0]}, "
                                                         f"{sys.platform}", *related(corpus, finding)]), "",
        "## How this was found",
        f"Found by a fuzzer (gfxhound: random valid Triton kernels, compiled for AMD targets and compared with a "
        f"PyTorch reference); {finding.count} occurrence(s) across {len(examples)} kernel(s) since "
        f"{finding.first_seen[:10]}. {_how_reduced(reduced)} Signature `{finding.signature}`."])
    return Draft(TRITON, title, body, reproduced, check, attachments)


REACH_TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250")


def _reach(code, arch, python, timeout, env, normalised) -> dict:
    """The reproducer compiled for each AMD target: {"same": [...], "compiles": [...], "other": {target: line}}.
    Measured, so the draft names every target the bug reaches, not only the one the fuzzer happened to use."""
    out = {"same": [], "compiles": [], "other": {}}
    for target in REACH_TARGETS:
        text = code.replace(f"GPUTarget(\"hip\", {arch!r}, {warp_size(arch)})",
                            f"GPUTarget(\"hip\", {target!r}, {warp_size(target)})")
        with tempfile.TemporaryDirectory(prefix="gfxhound-reach-") as tmp:
            (Path(tmp) / "snippet.py").write_text(text)
            rc, output, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
        got = summarise(output, ended) if ended != "exit:0" else None
        if got is None:
            out["compiles"].append(target)
        elif got["normalised"] == normalised:
            out["same"].append(target)
        else:
            out["other"][target] = got["message"].splitlines()[0][:200] if got["message"] else ended
    return out


FP8 = ("tl.float8e5", "tl.float8e4nv", "tl.float8e5b16", "tl.float8e4b8", "tl.float8e4b15")


def _formats(code, python, timeout, env, normalised) -> dict:
    """The reproducer with each other fp8 format in place of the one it uses (when it uses one): the formats the
    same failure reaches, those that compile, and what the others do (a sibling failure is named, not hidden)."""
    used = [f for f in FP8 if re.search(re.escape(f) + r"\b", code)]
    if len(used) != 1:
        return {}
    out = {"used": used[0], "same": [], "compiles": [], "other": {}}
    for other in FP8:
        if other == used[0]:
            continue
        text = re.sub(re.escape(used[0]) + r"\b", other, code)
        with tempfile.TemporaryDirectory(prefix="gfxhound-reach-") as tmp:
            (Path(tmp) / "snippet.py").write_text(text)
            rc, output, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
        got = summarise(output, ended) if ended != "exit:0" else None
        if got is None:
            out["compiles"].append(other)
        elif got["normalised"] == normalised:
            out["same"].append(other)
        else:
            out["other"][other] = headline(got["message"] or ended, 160).rstrip(".")
    return out


def _reach_text(reach, formats=None) -> str:
    lines = [f"Fails the same way for: {', '.join(reach['same'])}."]
    if reach["compiles"]:
        lines.append(f"Compiles for: {', '.join(reach['compiles'])}.")
    lines += [f"For {t}: `{line}`." for t, line in reach["other"].items()]
    if formats:
        lines.append(f"\n\nWith another fp8 format in place of `{formats['used']}`:")
        if formats["same"]:
            lines.append(f"the same failure with {', '.join(f'`{f}`' for f in formats['same'])};")
        lines += [f"with `{f}`: {line};" for f, line in formats["other"].items()]
        if formats["compiles"]:
            lines.append(f"it compiles with {', '.join(f'`{f}`' for f in formats['compiles'])}.")
    return " ".join(lines).replace(" \n\n", "\n\n").rstrip(";") + ("" if lines[-1].endswith(".") else ".")


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
    """<out>/draft.md plus its attachments, each written atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    files = {"draft.md": draft.markdown() + f"\n\n<!-- drafted {stamp}; reproduced: {draft.reproduced} -->\n",
             **draft.attachments}
    for name, text in files.items():
        write_atomic(out_dir / name, text)
    return out_dir / "draft.md"
