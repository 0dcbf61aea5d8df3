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
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gfxhound.corpus_store.layout import REDUCED_LL, REPRO_FILE
from gfxhound.atomic import write_atomic
from gfxhound.protocol import ABSENT, PRESENT, outcome
from gfxhound.report.draft_text import constants as _constants, headline, kernel_source as _kernel_source, \
    prune_unused, tail as _tail, triton_snippet
from gfxhound.report.scrub import Scrubber
from gfxhound.signature import MEMORY_MODEL_STAGE, normalise, summarise

TRITON, LLVM = "triton-lang/triton", "llvm/llvm-project"
BANNER = ("> **Draft for a person to review: not filed, and not yet verified on upstream's main branch.**\n"
          "> Written by gfxhound, an automated fuzzer, from finding `{sig}`; check it reproduces on a current "
          "build and edit freely before filing.")
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


@dataclass
class Draft:
    upstream: str
    title: str
    body: str
    reproduced: bool | None  # None: could not be checked on this machine (needs a GPU)
    check: str  # what was run to check it, and what came out
    attachments: dict = field(default_factory=dict)  # file name -> text
    leaks: list = field(default_factory=list)  # what of this machine survived the scrubber (should be none)
    newest: dict | None = None  # the same check with the newest Triton at hand: {python, toolchain, reproduced}

    def markdown(self) -> str:
        return f"<!-- upstream: {self.upstream} -->\n# {self.title}\n\n{self.body}"


def choose_upstream(corpus, finding) -> str:
    """LLVM when the bug reproduces with plain llc on a reduced .ll (the AMDGPU backend alone), else Triton."""
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    by_llc = (reduced.record.get("codegen") or {}).get("kind", "llc") == "llc"  # not Triton's own code generator
    return LLVM if reduced.ll.exists() and by_llc and finding.verdict == "ice" else TRITON


def _run(argv, cwd, timeout, env=None):
    run_env = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=run_env,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", "timeout"
    except OSError as exc:
        return None, f"cannot run {argv[0]}: {exc.strerror}", "error"
    ended = (f"signal:{-proc.returncode}" if proc.returncode < 0 else "exception"
             if "Traceback (most recent call last)" in proc.stderr else f"exit:{proc.returncode}")
    return proc.returncode, proc.stdout + proc.stderr, ended


def _bisection(newest_first: "list[dict]") -> str:
    records, kinds = [], set()
    for record in newest_first:
        if record.get("kind") not in kinds:  # the newest of each kind; older ones were superseded
            kinds.add(record.get("kind"))
            records.append(record)
    if not records:
        return "Not bisected yet."
    out = []
    for r in records:
        verb = "first release with the bug" if r.get("mode") == "regression" else "first release without the bug"
        if r.get("kind") == "commits":
            c = r["culprit"]
            out.append(f"- Commits ({r['range']}): first {'bad' if r['mode'] == 'regression' else 'fixed'} commit "
                       f"{c.get('link') or c['hash']} \"{c['title']}\" ({c['date'][:10]}); confidence "
                       f"{r['confidence']:.2f}.")
            for h in r.get("handoff", []):
                if h.get("result"):
                    s = h["result"]["culprit"]
                    out.append(f"  - It moved the LLVM pin ({h['pin_file']}); in llvm-project: "
                               f"{s.get('link') or s['hash']} \"{s['title']}\".")
        else:
            what = {"triton-releases": "Triton releases", "llvm-releases": "LLVM releases (llc)"}.get(r.get("kind"),
                                                                                                  r.get("kind"))
            span = r.get("range") or ", ".join(r["candidates"])
            if r.get("first_new") is None:  # the same state at every release that can test it
                out.append(f"- {what} ({span}): **{r['verdict'].split('-')[0]} in every testable release** "
                           + (f"({r['testable'][0]} to {r['testable'][1]})" if r["testable"][0] != r["testable"][1]
                              else f"(only {r['testable'][0]} can test it)")
                           + f"; {len(r['probes'])} probes, confidence {r['confidence']:.2f}.")
            else:
                out.append(f"- {what} ({span}): {verb}: **{r['first_new']}** "
                           f"(last {'good' if r.get('mode') == 'regression' else 'bad'}: {r['last_old']}); "
                           f"{len(r['probes'])} probes, confidence {r['confidence']:.2f}"
                           + (f"; untested between: {', '.join(r['untested_between'])}" if r.get("untested_between")
                              else "") + ".")
            for m in r.get("ends_moved", []):
                out.append(f"  - The {'newer' if m['end'] == 'new' else 'older'} end moved from {m['from']} to "
                           f"{m['to']}: {', '.join(m['why'])} cannot test it.")
    return "\n".join(out)


def _environment(corpus, finding, extra: list) -> str:
    rows = []
    for ident in finding.toolchains:
        detail = corpus.toolchain(ident) or {}
        codegen = (detail.get("amd_codegen") or {}).get("revision")
        rows.append(f"- {ident}" + (f" ({detail.get('source')})" if detail.get("source") else "")
                    + (f", commit {detail['commit']}" if detail.get("commit") else "")
                    + (f", AMD code generator {codegen}" if codegen else ""))
    rows.append(f"- Targets: {', '.join(finding.targets)}")
    rows += [f"- {line}" for line in extra]
    return "\n".join(rows)


def _related(corpus, finding) -> list:
    """Environment lines: a forced configuration, and the other signatures of the finding's family (the same
    failure with another element type, format or cache modifier), so the maintainer sees the bug's reach."""
    from gfxhound.families import family_of
    lines = []
    if finding.configuration != "default":
        knob = finding.configuration.removeprefix("forced: ")
        lines.append(f"Configuration: only seen with an environment knob that forces a feature ({knob}); not in a "
                     "default configuration")
    family = family_of(finding)
    for other in corpus.findings():
        if other.signature != finding.signature and family_of(other) == family:
            lines.append(f"Same failure with another type or format: `{other.signature}` "
                         f"({headline(other.message, 120)}; {', '.join(other.targets)})")
    return lines


def build(corpus, finding, upstream: str | None = None, python: str = sys.executable, timeout: float = 600,
          env: dict | None = None, known_upstream: list | None = None, newest: str | None = None) -> Draft:
    """`known_upstream`: what the triage file says of the public trackers (Triage.draft_lines), a section of its
    own before the environment when there is anything. `newest`: an interpreter with a newer Triton than
    `python`'s: the reproducer is checked there too (Draft.newest), and a bug it no longer shows is not new."""
    upstream = upstream or choose_upstream(corpus, finding)
    scrub = Scrubber({corpus.root: "corpus"})
    if upstream == TRITON:
        env = dict(env or {}, GFXHOUND_CHECKED_WITH=_triton_version(python))
    draft = (_llvm if upstream == LLVM else _triton)(corpus, finding, python, timeout, env or {})
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
    rc, out, _ = _run([python, "-c", "import triton; print(triton.__version__)"], None, 120)
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
        code_rc, out, _ = _run(argv, check_script.parent, timeout, env)
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
                rc, out, ended = _run([python, "snippet.py"], tmp, timeout, env)
            got = summarise(out, ended) if ended != "exit:0" else {"normalised": "", "verdict": "pass"}
            reproduced = bool(rc != 0 and got["normalised"] and got["normalised"] == finding.normalised)
            if reproduced:
                break
        check = (f"`python snippet.py` with {env['GFXHOUND_CHECKED_WITH']} ended {ended}; normalised failure: "
                 f"{got['normalised'][:200] or 'none'}")
        stage = STAGE_NAMES.get(finding.stage, finding.stage)
        title = f"[AMD][{arch}] {'compile hang' if finding.verdict == 'timeout' else 'internal compiler error'} " \
                f"in {stage}: {headline(finding.message or finding.normalised)}"
        summary = (f"Compiling the kernel below for `{arch}` fails with an internal compiler error in {stage}, "
                   f"not a diagnostic about the kernel.")
        command = "python snippet.py   # the reproducer above, saved as snippet.py"
        expected = ("Expected: the kernel compiles, or is rejected with an error that names what is wrong with it."
                    f"\n\nActual:\n```\n{_tail(out)}\n```")
        lang, ub = "python", ""
        attachments["snippet.py"] = code
    body = "\n".join([
        BANNER.format(sig=finding.signature), "",
        "## Summary", summary, "",
        "## Reproducer", f"```{lang}\n{code.rstrip()}\n```", "",
        "## Command", f"```sh\n{command}\n```",
        f"Checked before this draft was written: {check}" + ("" if reproduced else
                                                              " **(did not reproduce here: check by hand)**"), "",
        "## Expected vs actual", expected, ub, *_reduced_ir(corpus, finding),
        "## Bisection", _bisection(corpus.bisections(finding.signature)), "",
        "## Environment", _environment(corpus, finding, [f"Python {sys.version.split()[0]}, "
                                                         f"{sys.platform}", *_related(corpus, finding)]), "",
        "## How this was found",
        f"Found by a fuzzer (gfxhound: random valid Triton kernels, compiled for AMD targets and compared with a "
        f"PyTorch reference); {finding.count} occurrence(s) across {len(examples)} kernel(s) since "
        f"{finding.first_seen[:10]}. {_how_reduced(reduced)} Signature `{finding.signature}`."])
    return Draft(TRITON, title, body, reproduced, check, attachments)


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


def _llvm(corpus, finding, python, timeout, env) -> Draft:
    reduced = corpus.reduction(finding.signature, "llvm-ir")
    ll, info = reduced.ll.read_text(), reduced.record
    command = list(info["command"])
    llc = command[0] if Path(command[0]).exists() else "llc"
    flags = [a for a in command[1:-1]]
    arch = next((a.split("=", 1)[1] for a in flags if a.startswith("-mcpu=")), finding.targets[0])
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        (Path(tmp) / REDUCED_LL).write_text(ll)
        rc, out, ended = _run([llc, *flags, REDUCED_LL], tmp, timeout)
        version = _run([llc, "--version"], tmp, 60)[1]
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
        "## Bisection", _bisection(corpus.bisections(finding.signature)), "",
        "## Environment",
        f"- llc: {('LLVM ' + llvm_version.group(1)) if llvm_version else 'unknown'} "
        f"({'assertions on' if 'Optimized build with assertions' in version else 'release build'})",
        f"- Seen through: {', '.join(finding.toolchains)}", *[f"- {line}" for line in _related(corpus, finding)], "",
        "## How this was found",
        f"Found by a fuzzer (gfxhound) on Triton-generated AMDGPU IR; reduced automatically ({info.get('lines_before')}"
        f" -> {info.get('lines_after')} lines) with `llvm-reduce`. Not yet checked against llvm-project main."])
    return Draft(LLVM, title, body, reproduced, check, {REDUCED_LL: ll})


def write(draft: Draft, out_dir: Path) -> Path:
    """<out>/draft.md plus its attachments, each written atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    files = {"draft.md": draft.markdown() + f"\n\n<!-- drafted {stamp}; reproduced: {draft.reproduced} -->\n",
             **draft.attachments}
    for name, text in files.items():
        write_atomic(out_dir / name, text)
    return out_dir / "draft.md"
