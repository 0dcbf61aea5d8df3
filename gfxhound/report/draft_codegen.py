"""llvm/llvm-project drafts of a fault only the AMDGPU code generator that Triton ships shows (Triton 3.9's
`compile_amdgpu` at an LLVM revision no release has), on IR reduced through that very code generator.

Why its own shape: the maintainer needs the revision, the `llc` command they would run at it, the assembly, what
the IR needs to show the fault, the targets it reaches and the last good revision. No llc build of the revision is
at hand here, so the runnable command is the one call that runs it (`pip install triton==X`, `python -c ...`), and
everything else is measured while drafting: each line of the function removed in turn, the same IR for each
target the fuzzer saw, this machine's newest `llc` on the same file. A cold review of the buffer_inv draft as an
AMDGPU maintainer asked for each of these; every sentence comes from such a run or from a corpus record.
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL
from gfxhound.oracle.repro.snippet import CHECK_TIMEOUT_S
from gfxhound.protocol import PRESENT, outcome
from gfxhound.codegen import CodegenError, llc_codegen, llc_version, triton_codegen
from gfxhound.reduce.through import shows, what_it_shows
from gfxhound.report.codegen_snippet import SCRIPT, EXITS, codegen_script
from gfxhound.report.draft_check import run_pasted
from gfxhound.report.draft_parts import BANNER, LLVM, NOT_BISECTED, Draft, cause, reduced_ir_text, related, \
    run_tool
from gfxhound.report.draft_text import actual, headline, kernel_body, tail

TABLE_TITLES = {"gfx942": "Memory Model GFX942", "gfx90a": "Memory Model GFX90A"}


class _Trial:
    """Compile candidate texts with one code generator in one scratch folder, judged by the reduction's property."""

    def __init__(self, folder: Path, prop: dict, timeout: float):
        self.folder, self.prop, self.timeout = folder, prop, timeout

    def run(self, codegen, text: str, name: str = REDUCED_LL):
        path = self.folder / name
        path.write_text(text)
        compiled = codegen.run(path, self.timeout)
        return compiled, shows(self.prop, codegen, compiled, text)


def function_lines(text: str) -> list:
    """The instruction lines of the module's first function whose removal leaves valid IR: not `ret`, not a
    label, and not defining a value used elsewhere."""
    found = re.search(r"^define\b.*\{\n(.*?)^\}", text, re.M | re.S)
    if not found:
        return []
    out = []
    for line in found.group(1).splitlines():
        body = line.strip()
        if not body or body.endswith(":") or body.startswith(("ret", "br ", "unreachable")):
            continue
        name = re.match(r"(%[\w.]+) = ", body)
        if name and len(re.findall(re.escape(name.group(1)) + r"\b", text)) > 1:
            continue
        out.append(line)
    return out


def needed(text: str, present) -> list:
    """(line, whether the fault is gone without it) for each removable line of the function."""
    return [(line, present(text.replace(line + "\n", "", 1)) is False) for line in function_lines(text)]


def _with_triple(text: str, triple: str) -> str:
    return re.sub(r'^target triple = ".*"$', f'target triple = "{triple}"', text, flags=re.M)


def through_triton(corpus, finding, python, timeout, llc) -> Draft:
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    ll, info = reduced.ll.read_text(), reduced.record
    recorded, prop = info["codegen"], info["property"]
    arch, extra = recorded["arch"], recorded.get("extra") or {}
    memory = prop.get("kind") == "memory-model"
    make = lambda target: triton_codegen(python, target, extra.get("fp_fusion", True),  # noqa: E731
                                         extra.get("schedule_hint", "none"))
    try:
        codegen = make(arch)
    except CodegenError as exc:
        return Draft(LLVM, f"[AMDGPU] {finding.message[:100]} ({arch})", str(exc), False, f"cannot test: {exc}")
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        trial = _Trial(Path(tmp), prop, timeout)
        compiled, reproduced = trial.run(codegen, ll)
        lines = needed(ll, lambda text: trial.run(codegen, text, "without.ll")[1]) if reproduced else []
        also = []
        for target in [t for t in finding.targets if t != arch]:
            try:
                other = make(target)
            except CodegenError:
                continue
            if trial.run(other, _with_triple(ll, other.extra.get("triple", "")), "other.ll")[1]:
                also.append(target)
        plain = llc_codegen(llc, ["-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-O3"]) if llc else None
        plain_run, plain_shows = trial.run(plain, ll, "llc.ll") if plain else (None, None)
        triple_text = _generic_triple(trial, codegen, ll, llc, _violation(finding, compiled, arch, ll, memory)) \
            if reproduced else ""
    shown = what_it_shows(prop, compiled, ll)
    parts = (_memory_parts if memory else _crash_parts)(finding, compiled, arch, ll)
    targets = "/".join([arch, *also])
    version, revision = recorded.get("version", "?"), (recorded.get("revision") or "").split("-")[0]
    where = f"LLVM {revision}" if revision else f"the LLVM that Triton {version} bundles"
    script = codegen_script(recorded, where, parts.get("violation"), finding.message, compiled.text)
    checked = run_pasted({SCRIPT: script, REDUCED_LL: ll}, [python, SCRIPT, REDUCED_LL], CHECK_TIMEOUT_S + 60)
    said = checked.said(f"python {SCRIPT} {REDUCED_LL}", codegen.name)
    reproduced = bool(reproduced) and outcome(checked.rc) == PRESENT
    release = {True: f"{plain.name} shows it too (below)", False: f"{plain.name} does not show it (below)"}.get(
        plain_shows, "no LLVM release was tried") if plain else "no LLVM release was tried"
    body = [
        BANNER, "",
        f"For {targets}, the AMDGPU backend at {where} {parts['summary']}", "",
        *([_needs_text(lines), ""] if lines else []),
        "## Test case", f"```llvm\n{ll.rstrip()}\n```", "",
        "## Reproducer",
        f"The fault shows through the AMDGPU code generator that Triton {version} bundles ({where}); {release}. "
        "No `llc` built at that revision was run here: the script below makes the call Triton makes into that code "
        f"generator (`compile_amdgpu`) on the test case saved as `{REDUCED_LL}`, prints the assembly and checks it "
        "(with Triton 3.4 to 3.8 it makes that release's call, `llvm.translate_to_asm` of the LLVM it bundles, so "
        "the same script tests a release without the fault). The output below is that call's.",
        f"```python\n{script.rstrip()}\n```", *([triple_text, ""] if triple_text else [""]),
        "## Command",
        f"Set-up, a virtual environment with that Triton: `python -m venv venv && . venv/bin/activate && pip install "
        f"triton=={version}`; the test case above saved as `{REDUCED_LL}` and the script above saved as `{SCRIPT}`.",
        f"```sh\npython {SCRIPT} {REDUCED_LL}   # {EXITS}\n```",
        f"<!-- checked before this draft was written: {said} -->" if reproduced else
        f"**Did not reproduce when this draft was written ({said}): check by hand.**",
        "",
        "## Output", *_output(parts, checked), "",
        "## Expected", parts["expected"], "",
        *(_llc_section(plain, plain_run, plain_shows, arch, memory) if plain else []),
        *cause(corpus, finding),
        "## Last good revision", _last_good(corpus, finding), "",
        "## Environment",
        *([f"- triton-{version}"] if version not in ("", "?") else []),  # what the reader installs to run codegen.py
        f"- Code generator: {where}" + (f" (Triton {version}'s AMD code generator, `compile_amdgpu`)" if revision
                                        else ""),
        f"- Targets checked: {', '.join([arch, *also])}" + (
            f" (and {', '.join(sorted(set(finding.targets) - {arch, *also}))}, where this IR does not show it)"
            if set(finding.targets) - {arch, *also} else ""),
        *[f"- {x}" for x in related(corpus, finding)], "",
        "## How this was found",
        f"A fuzzer (gfxhound) generated a Triton kernel whose code from Triton {version} "
        + ("failed the AMDGPUUsage memory-model check (static; not run on hardware)" if memory else "crashed")
        + f"; its LLVM IR was reduced with `llvm-reduce` ({info.get('lines_before')} -> {info.get('lines_after')} "
        "lines) with this code generator. Not yet checked on llvm-project main."]
    title = f"[AMDGPU] {targets}: {parts['title']}"
    return Draft(LLVM, title, "\n".join(body), reproduced, f"with {codegen.name}: {shown}; {said}",
                 {REDUCED_LL: ll, SCRIPT: script})


def _violation(finding, compiled, arch, ll, memory):
    """The first memory-model violation in the compiled code, or None (a crash, or none found)."""
    return _memory_parts(finding, compiled, arch, ll).get("violation") if memory else None


def _needs_text(lines: list) -> str:
    kept = [f"`{line.strip()}`" for line, gone in lines if gone]
    spare = [f"`{line.strip()}`" for line, gone in lines if not gone]
    text = ""
    if kept:
        text = (f"{'Each of ' if len(kept) > 1 else ''}{', '.join(kept)} is needed: without "
                f"{'any one of them' if len(kept) > 1 else 'it'}, the same call gives code without the fault.")
    if spare:
        text += f" Without {', '.join(spare)} the fault stays."
    return text.strip()


def _memory_parts(finding, compiled, arch, ll) -> dict:
    from gfxhound.oracle.memory_model import check
    from gfxhound.oracle.memory_model_tables import TABLES
    found = check(compiled.asm, arch, ll).violations if compiled.status == "ok" else []
    first = found[0] if found else None
    if first is None:
        message = finding.message.split("): ")[-1]
        return {"title": message, "summary": f"compiles the IR below with this defect: {message}.", "lang": "",
                "output": tail(compiled.text), "expected": "Code that the memory model allows."}
    ordering, _, scope = first.rule.split(":")[0].partition("-")
    wait, _, before = first.missing.partition(" before ")
    atomic = first.instruction.split()[0]
    table = TABLE_TITLES.get(TABLES.get(arch, ""), "Memory Model")
    return {
        "violation": first,
        "title": f"missing {wait} between `{atomic}` and `{before}` ({ordering}, {scope} scope)",
        "summary": (f"compiles the IR below without `{wait}` between `{first.instruction}` and the `{before}` that "
                    f"follows it, so the cache can be invalidated before the atomic has completed."),
        "lang": "asm", "output": kernel_body(compiled.asm),
        "expected": (f"AMDGPUUsage, \"{table}\", code sequence for an {ordering} at {scope} scope: the `{wait}` "
                     f"\"Must happen before following {before.split()[0]}\".\n```asm\n{first.instruction}\n{wait}\n"
                     f"{before}\n```")}


def _crash_parts(finding, compiled, arch, ll) -> dict:
    line = next((x for x in compiled.text.splitlines() if "LLVM ERROR" in x or "Assertion" in x), "")
    return {"title": headline(line.strip() or finding.normalised), "summary": f"fails on the IR below: `{line.strip()}`.",
            "lang": "", "output": tail(compiled.text, 30), "expected": "The IR compiles."}


def _llc_section(plain, run, present, arch, memory) -> list:
    verdict = {True: "shows the same fault", False: "does not show it"}.get(present, "cannot test it")
    lines = ["## With an LLVM release",
             f"`llc -mtriple=amdgcn-amd-amdhsa -mcpu={arch} -O3 {REDUCED_LL} -o -` with {plain.name} {verdict}"
             + ("; the kernel's instructions and labels it prints (abridged as above):" if memory and
                run.status == "ok" else ".")]
    if memory and run.status == "ok":
        lines.append(f"```asm\n{kernel_body(run.asm)}\n```")
    return lines + [""]


GENERIC_TRIPLE = "amdgcn-amd-amdhsa"


def _generic_triple(trial, codegen, ll: str, llc: str, violation=None) -> str:
    """Whether the fault also shows with the triple an LLVM developer reaches for first, `amdgcn-amd-amdhsa`, in
    the file and as the call's triple: a sentence, or "" where the test case already has it or it does not show.
    Why: Triton 3.9 passes a subarch triple (`amdgpu9.42-amd-amdhsa`) that LLVM 22's llc rejects; a reader of the
    test case would otherwise swap the triple and wonder whether the fault depends on it (a cold review checked
    it by hand). Measured here: the same call with that triple, and this machine's llc on the file as it is."""
    triple = codegen.extra.get("triple", "")
    if not triple or triple == GENERIC_TRIPLE or f'"{triple}"' not in codegen.code:
        return ""
    generic = replace(codegen, code=codegen.code.replace(f'"{triple}"', f'"{GENERIC_TRIPLE}"'),
                      extra=dict(codegen.extra, triple=GENERIC_TRIPLE))
    _, shows_it = trial.run(generic, _with_triple(ll, GENERIC_TRIPLE), "generic.ll")
    if not shows_it:
        return ""
    _, printed, _ = run_tool(generic.command("generic.ll"), trial.folder, trial.timeout)  # its warnings too
    warned = re.search(r"warning: (codegen with no subarch in the target triple is deprecated)", printed or "")
    said = ""
    if llc:  # the test case as it is, its own triple, no -mtriple: what the reader's llc says of it
        (trial.folder / "as-is.ll").write_text(ll)
        _, out, _ = run_tool([llc, f"-mcpu={codegen.arch}", "-O3", "as-is.ll", "-o", "-"], trial.folder,
                             trial.timeout)
        error = re.search(r"error: (unable to get target for '[^']+')", out or "")
        try:
            name = f"llc ({llc_version(llc)})"
        except CodegenError:
            name = "llc"
        said = f"; {name} rejects it (`{error.group(1)}`)" if error else ""
    fault = "the same fault"
    if violation is not None:
        wait, _, before = violation.missing.partition(" before ")
        fault = f"the same fault (no `{wait}` between `{violation.instruction.split()[0]}` and `{before}`)"
    return (f"The test case keeps the triple Triton passes{said}. With `{GENERIC_TRIPLE}` instead, as `target "
            f"triple = \"{GENERIC_TRIPLE}\"` in `{REDUCED_LL}` and in place of `\"{triple}\"` in the call above, the "
            f"same code generator shows {fault}" + (f"; it warns that {warned.group(1)}" if warned else "") + ".")


def _output(parts: dict, checked) -> list:
    """The Output section: the lead and block of what `python codegen.py reduced.ll` printed (`checked`). For a
    memory-model fault, the kernel's instructions and labels and the script's verdict, and the lead says what is
    left out (the assembler's directives and metadata, some 200 lines); for a crash, draft_text.actual's rule."""
    printed = f"{checked.stdout.rstrip()}"
    if parts["lang"] != "asm" or not printed:
        return [actual(f"{checked.stderr.rstrip()}\n{printed}", f"python {SCRIPT} {REDUCED_LL}", lead="Output")]
    lines = printed.splitlines()
    verdict = checked.verdict
    listing = lines[:-1] if lines and lines[-1].strip() == verdict else lines
    body = kernel_body("\n".join(listing)).splitlines()
    label = next((i for i, line in enumerate(listing) if body and line.split(";")[0].rstrip() == body[0]), 0)
    end = next((i for i, line in enumerate(listing) if line.split(";")[0].strip() == "s_endpgm"), len(listing) - 1)
    before, after = label, len(listing) - end - 1
    note = (f"abridged: the kernel's instructions and labels, from `{body[0] if body else ''}` to `s_endpgm`, "
            "without the assembler's directives and `;` comments; "
            + " and ".join(x for x in (f"{before} lines before them" if before else "",
                                       f"{after} lines of directives and metadata after them" if after else "") if x)
            + (" omitted, each at a `...`" if before and after else " omitted, at the `...`"))
    block = (["..."] if before else []) + body + (["..."] if after else []) + ([verdict] if verdict else [])
    return [f"Output (`python {SCRIPT} {REDUCED_LL}`; {note}):", "```asm\n" + "\n".join(block) + "\n```"]


def _last_good(corpus, finding) -> str:
    """The LLVM range from the release bisection's survey of the reduced IR (bisect/codegens.py)."""
    found = next((r["reduced_ir"] for r in corpus.bisections(finding.signature) if r.get("reduced_ir")), None)
    return reduced_ir_text(found) + ". Not bisected within LLVM." if found else NOT_BISECTED
