"""llvm/llvm-project drafts: a crash of `llc` on a reduced .ll here; a fault only the AMDGPU code generator that
Triton ships shows is draft_codegen.py's.

Why: LLVM's maintainers read LLVM IR and a command, never a Python kernel. When plain `llc` shows the bug, that
command is the reproducer, run before the draft is written.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL
from gfxhound.report.draft_codegen import through_triton
from gfxhound.report.draft_parts import BANNER, LLVM, Draft, bisection, related, run_tool
from gfxhound.report.draft_text import actual, headline
from gfxhound.signature import normalise


def llvm_draft(corpus, finding, python, timeout, llc: str = "") -> Draft:
    """The draft for a finding whose LLVM IR reduction exists: through `llc`, or through Triton's code generator
    (run with `python`'s Triton, and compared with `llc`, this machine's newest, when given)."""
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    if (reduced.record.get("codegen") or {}).get("kind") == "triton":
        return through_triton(corpus, finding, python, timeout, llc)
    return _by_llc(corpus, finding, timeout)


def stock_llc(path: str) -> str:
    """The name a reader types for the llc that ran: `llc-N` for a distribution's LLVM N (Debian's, Ubuntu's and
    apt.llvm.org's packages install /usr/lib/llvm-N/bin/llc as /usr/bin/llc-N), else `llc`. The draft runs that very
    name from PATH, so its command block is the command that ran."""
    major = re.search(r"llvm-(\d+)/bin/llc$", path or "")
    for name in ([f"llc-{major.group(1)}"] if major else []) + ["llc"]:
        if shutil.which(name) and Path(shutil.which(name)).resolve() == Path(path).resolve():
            return name
    return f"llc-{major.group(1)}" if major and shutil.which(f"llc-{major.group(1)}") else "llc"


def _ended(rc, ended: str) -> str:
    """How a command ended, in the words of a shell: its exit code, or the signal that ended it."""
    if rc is None:
        return "did not finish" if ended == "timeout" else ended
    return f"was killed by signal {-rc} (a shell reports exit {128 - rc})" if rc < 0 else f"exited {rc}"


def _by_llc(corpus, finding, timeout) -> Draft:
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    ll, info = reduced.ll.read_text(), reduced.record
    command = list(info["command"])
    llc = stock_llc(command[0])
    flags = [a for a in command[1:-1]]
    arch = next((a.split("=", 1)[1] for a in flags if a.startswith("-mcpu=")), finding.targets[0])
    shown = " ".join([llc, *flags, REDUCED_LL])
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        (Path(tmp) / REDUCED_LL).write_text(ll)
        rc, out, ended = run_tool([llc, *flags, REDUCED_LL], tmp, timeout)  # the command as shown, from PATH
        version = run_tool([llc, "--version"], tmp, 60)[1]
    first = next((line for line in out.splitlines() if "LLVM ERROR" in line or "Assertion" in line), "")
    reproduced = bool(rc != 0 and first and normalise(first.strip()) in finding.normalised)
    check = f"`{shown}` {_ended(rc, ended)}: {first.strip()[:200] or 'no crash'}"
    llvm_version = re.search(r"LLVM version (\S+)", version)
    title = f"[AMDGPU] {headline(first.strip() or finding.normalised)} ({arch})"
    body = "\n".join([
        BANNER, "",
        f"`llc` crashes on the IR below for `{arch}`. The IR was produced by Triton's AMD backend for a "
        f"fuzzer-generated kernel and reduced with `llvm-reduce`, keeping the same failure.", "",
        "## Test case", f"```llvm\n{ll.rstrip()}\n```", "",
        "## Command",
        f"Set-up: `{llc}` (LLVM {llvm_version.group(1) if llvm_version else 'with the AMDGPU target'}), and the test "
        f"case above saved as `{REDUCED_LL}`.",
        f"```sh\n{shown}\n```",
        f"<!-- checked before this draft was written: {check} -->" if reproduced else
        f"**Did not reproduce when this draft was written ({check}): check by hand.**", "",
        "## Output", actual(out, shown, lead="Output"), "",
        "## Bisection", bisection(corpus.bisections(finding.signature)), "",
        "## Environment",
        f"- llc: {('LLVM ' + llvm_version.group(1)) if llvm_version else 'unknown'} "
        f"({'assertions on' if 'Optimized build with assertions' in version else 'release build'})",
        f"- Seen through: {', '.join(finding.toolchains)}", *[f"- {line}" for line in related(corpus, finding)], "",
        "## How this was found",
        f"Found by a fuzzer (gfxhound) on Triton-generated AMDGPU IR; reduced automatically ({info.get('lines_before')}"
        f" -> {info.get('lines_after')} lines) with `llvm-reduce`. Not yet checked against llvm-project main."])
    return Draft(LLVM, title, body, reproduced, check, {REDUCED_LL: ll})
