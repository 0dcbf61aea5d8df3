"""llvm/llvm-project drafts: a crash of `llc` on a reduced .ll, or a fault of the AMDGPU code generator that Triton
ships (a crash or a memory-model defect), shown on IR reduced through that very code generator.

Why two shapes: LLVM's maintainers read LLVM IR and a command, never a Python kernel. When plain `llc` shows the
bug, that command is the reproducer. When only the code generator Triton pins shows it (Triton 3.9's
`compile_amdgpu` at a revision no LLVM release has), the draft names that revision, gives the one call that runs
it (`pip install triton==X` and `python -c ...`), the `llc` command a maintainer would use at that revision, and
what this machine's `llc` does with the same file. Every sentence comes from a run made while drafting or from a
corpus record.
"""
from __future__ import annotations

import re
import shlex
import tempfile
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL
from gfxhound.reduce.codegen import CodegenError, llc_codegen, triton_codegen
from gfxhound.reduce.through import keeps, what_it_shows
from gfxhound.report.draft_parts import BANNER, LLVM, Draft, bisection, related, run_tool
from gfxhound.report.draft_text import headline, tail as _tail
from gfxhound.signature import normalise


def llvm_draft(corpus, finding, python, timeout, llc: str = "") -> Draft:
    """The draft for a finding whose LLVM IR reduction exists: through `llc`, or through Triton's code generator
    (run with `python`'s Triton, and compared with `llc`, this machine's newest, when given)."""
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    if (reduced.record.get("codegen") or {}).get("kind") == "triton":
        return _through_triton(corpus, finding, python, timeout, llc)
    return _by_llc(corpus, finding, timeout)


def _by_llc(corpus, finding, timeout) -> Draft:
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    ll, info = reduced.ll.read_text(), reduced.record
    command = list(info["command"])
    llc = command[0] if Path(command[0]).exists() else "llc"
    flags = [a for a in command[1:-1]]
    arch = next((a.split("=", 1)[1] for a in flags if a.startswith("-mcpu=")), finding.targets[0])
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        (Path(tmp) / REDUCED_LL).write_text(ll)
        rc, out, ended = run_tool([llc, *flags, REDUCED_LL], tmp, timeout)
        version = run_tool([llc, "--version"], tmp, 60)[1]
    first = next((line for line in out.splitlines() if "LLVM ERROR" in line or "Assertion" in line), "")
    reproduced = bool(rc != 0 and first and normalise(first.strip()) in finding.normalised)
    check = f"`llc {' '.join(flags)} reduced.ll` ended {ended}: {first.strip()[:200] or 'no crash'}"
    llvm_version = re.search(r"LLVM version (\S+)", version)
    title = f"[AMDGPU] {headline(first.strip() or finding.normalised)} ({arch})"
    body = "\n".join([
        BANNER.format(sig=finding.signature), "",
        f"`llc` crashes on the IR below for `{arch}`. The IR was produced by Triton's AMD backend for a "
        f"fuzzer-generated kernel and reduced with `llvm-reduce`, keeping the same failure.", "",
        "## Test case", f"```llvm\n{ll.rstrip()}\n```", "",
        "## Command", f"```sh\nllc {' '.join(flags)} reduced.ll\n```",
        f"Checked before this draft was written: {check}" + ("" if reproduced else
                                                              " **(did not reproduce here: check by hand)**"), "",
        "## Output", f"```\n{_tail(out, 30)}\n```", "",
        "## Bisection", bisection(corpus.bisections(finding.signature)), "",
        "## Environment",
        f"- llc: {('LLVM ' + llvm_version.group(1)) if llvm_version else 'unknown'} "
        f"({'assertions on' if 'Optimized build with assertions' in version else 'release build'})",
        f"- Seen through: {', '.join(finding.toolchains)}", *[f"- {line}" for line in related(corpus, finding)], "",
        "## How this was found",
        f"Found by a fuzzer (gfxhound) on Triton-generated AMDGPU IR; reduced automatically ({info.get('lines_before')}"
        f" -> {info.get('lines_after')} lines) with `llvm-reduce`. Not yet checked against llvm-project main."])
    return Draft(LLVM, title, body, reproduced, check, {REDUCED_LL: ll})


def kernel_body(asm: str) -> str:
    """The instructions of the kernel in an assembly listing: from its label to `s_endpgm`, without directives,
    comments or blank lines (what a maintainer compares)."""
    out, inside = [], False
    for line in asm.splitlines():
        text = line.split(";")[0].rstrip()
        if not inside:
            inside = bool(re.match(r"^[A-Za-z_][\w.$]*:\s*$", text)) and not text.startswith(".")
            if inside:
                out.append(text)
            continue
        if text.strip() and not text.strip().startswith("."):
            out.append(text)
        elif re.match(r"^\.L\w+:", text):
            out.append(text)
        if text.strip() == "s_endpgm":
            break
    return "\n".join(out)


def _violations(asm: str, arch: str, llir: str) -> list:
    from gfxhound.oracle.memory_model import check
    return check(asm, arch, llir).violations


def _through_triton(corpus, finding, python, timeout, llc) -> Draft:
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    ll, info = reduced.ll.read_text(), reduced.record
    recorded, prop = info["codegen"], info["property"]
    arch, extra = recorded["arch"], recorded.get("extra") or {}
    memory = prop.get("kind") == "memory-model"
    try:
        codegen = triton_codegen(python, arch, extra.get("fp_fusion", True), extra.get("schedule_hint", "none"))
    except CodegenError as exc:
        codegen, problem = None, str(exc)
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        path = Path(tmp) / REDUCED_LL
        path.write_text(ll)
        compiled = codegen.run(path, timeout) if codegen else None
        reproduced = bool(compiled and keeps(dict(prop, codegen=codegen.to_json()), compiled, ll))
        shows = what_it_shows(prop, compiled, ll) if compiled else f"cannot test: {problem}"
        plain = llc_codegen(llc, [f"-mcpu={arch}", "-O3"]) if llc else None
        plain_run = plain.run(path, timeout) if plain else None
        plain_has = keeps(dict(prop, codegen=plain.to_json()), plain_run, ll) \
            if plain and plain_run.status in ("ok", "failed") else None
        plain_shows = what_it_shows(prop, plain_run, ll) if plain else ""
    version, revision = recorded.get("version", "?"), (recorded.get("revision") or "").split("-")[0]
    where = f"LLVM revision {revision}, the AMD code generator Triton {version} ships" if revision \
        else f"the LLVM bundled with Triton {version}"
    check = f"the call above with {codegen.name if codegen else 'no Triton'}: {shows}"
    call = shlex.join(["python", "-c", recorded["code"], REDUCED_LL])
    llc_line = f"llc -mtriple=amdgcn-amd-amdhsa -mcpu={arch} -O3 {REDUCED_LL} -o -"
    if memory:
        found = _violations(compiled.asm, arch, ll) if compiled and compiled.status == "ok" else []
        first = found[0] if found else None
        ordering, _, scope = (first.rule.split(":")[0] if first else "").partition("-")
        missing = first.missing if first else finding.message.split("): ")[-1]
        title = f"[AMDGPU] Memory model ({ordering}, {scope} scope): missing {missing} ({arch})" if first \
            else f"[AMDGPU] Memory model: {finding.message.split('): ')[-1]} ({arch})"
        summary = (f"For `{arch}`, the AMDGPU backend at {where}, compiles the IR below without "
                   f"`{missing.split(' before ')[0]}` before `{missing.split(' before ')[-1]}`"
                   + (f" after `{first.instruction}`" if first else "")
                   + f". AMDGPUUsage's memory-model code sequences for `{arch}` require that wait for an "
                   f"{ordering or 'acquire'} at {scope or 'this'} scope: the invalidate must not start before the "
                   "atomic it orders has completed. Found by checking the generated code against that table "
                   "(statically; not run on hardware).")
        output = kernel_body(compiled.asm) if compiled and compiled.status == "ok" else _tail(compiled.text if
                                                                                                compiled else "")
        expected = (f"Expected: `{missing}`" + (f", between `{first.instruction}` and the invalidate that "
                                                 "follows it." if first else "."))
    else:
        line = next((x for x in (compiled.text if compiled else "").splitlines()
                     if "LLVM ERROR" in x or "Assertion" in x), "")
        title = f"[AMDGPU] {headline(line.strip() or finding.normalised)} ({arch})"
        summary = (f"For `{arch}`, the AMDGPU backend at {where}, fails on the IR below: "
                   f"`{normalise(line.strip())[:200] or finding.normalised[:200]}`.")
        output = _tail(compiled.text if compiled else "", 30)
        expected = "Expected: the IR compiles."
    comparison = []
    if plain:
        comparison = ["## With this machine's llc",
                      f"`{llc_line}` with {plain.name}: {plain_shows}"
                      + {True: " (the same defect).", False: " (the defect is absent)."}.get(plain_has, "."),
                      f"```asm\n{kernel_body(plain_run.asm)}\n```" if plain_run.status == "ok" and memory else "",
                      ""]
    body = "\n".join([
        BANNER.format(sig=finding.signature), "",
        "## Summary", summary, "",
        "## Test case", f"```llvm\n{ll.rstrip()}\n```", "",
        "## Command",
        f"With llc at that revision: `{llc_line}`. What was run here is the same code generator as Triton "
        f"{version} calls it (`make_amdgcn`):",
        f"```sh\npip install triton=={version}\n{call}\n```",
        f"Checked before this draft was written: {check}" + ("" if reproduced else
                                                              " **(did not reproduce here: check by hand)**"), "",
        "## Output", f"```asm\n{output}\n```", "", expected, "",
        *comparison,
        "## Bisection", bisection(corpus.bisections(finding.signature)), "",
        "## Environment",
        f"- Code generator: {recorded.get('name', '?')}",
        f"- Targets where the fuzzer saw it: {', '.join(finding.targets)}",
        f"- Seen through: {', '.join(finding.toolchains)}", *[f"- {x}" for x in related(corpus, finding)], "",
        "## How this was found",
        f"Found by a fuzzer (gfxhound) in the code Triton generated for a random kernel; the kernel's LLVM IR was "
        f"reduced with `llvm-reduce` ({info.get('lines_before')} -> {info.get('lines_after')} lines) while this code "
        f"generator still showed the {'defect' if memory else 'failure'}. Not yet checked against llvm-project "
        "main."])
    return Draft(LLVM, title, body, reproduced, check, {REDUCED_LL: ll})
