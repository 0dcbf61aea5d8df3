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
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL
from gfxhound.oracle.repro.snippet import CHECK_TIMEOUT_S
from gfxhound.protocol import PRESENT, outcome
from gfxhound.codegen import CodegenError, llc_codegen, triton_codegen
from gfxhound.reduce.through import shows, what_it_shows
from gfxhound.report.codegen_snippet import SCRIPT, EXITS, codegen_script
from gfxhound.report.draft_check import run_pasted
from gfxhound.report.draft_parts import BANNER, LLVM, NOT_BISECTED, Draft, cause, reduced_ir_text, related
from gfxhound.report.draft_text import headline, kernel_body, tail

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
        f"```python\n{script.rstrip()}\n```", "",
        "## Command",
        f"Set-up, a virtual environment with that Triton: `python -m venv venv && . venv/bin/activate && pip install "
        f"triton=={version}`; the test case above saved as `{REDUCED_LL}` and the script above saved as `{SCRIPT}`.",
        f"```sh\npython {SCRIPT} {REDUCED_LL}   # {EXITS}\n```",
        f"<!-- checked before this draft was written: {said} -->" if reproduced else
        f"**Did not reproduce when this draft was written ({said}): check by hand.**",
        "",
        "## Output", f"```{parts['lang']}\n{parts['output']}\n```", "",
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
             f"`llc -mtriple=amdgcn-amd-amdhsa -mcpu={arch} -O3 {REDUCED_LL} -o -` with {plain.name} {verdict}."]
    if memory and run.status == "ok":
        lines.append(f"```asm\n{kernel_body(run.asm)}\n```")
    return lines + [""]


def _last_good(corpus, finding) -> str:
    """The LLVM range from the release bisection's survey of the reduced IR (bisect/codegens.py)."""
    found = next((r["reduced_ir"] for r in corpus.bisections(finding.signature) if r.get("reduced_ir")), None)
    return reduced_ir_text(found) + ". Not bisected within LLVM." if found else NOT_BISECTED
