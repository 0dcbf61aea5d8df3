"""llvm/llvm-project drafts for a wrong code found without an AMD GPU: `llc`'s machine code for a module computes
something other than what the module's own semantics give (`gfxhound emulate FILE.ll --draft DIR --witness RE`).

Why a module of its own: a crash draft (draft_llvm.py) pastes the command and its error, which speak for themselves.
A wrong code found by two executors cannot be pasted as such: the maintainer has `llc`, not our executors, and no
GPU either. So the evidence upstream can run is stock `llc`'s assembly: the command, a `grep` of the instructions
that compute the wrong value, and a witness, a regular expression a person chose after reading them, whose match is
the bug (the block exits 1 while it matches, 0 once llc emits something else; `report DIR --check` runs it as
pasted). What the values are comes from the executors and is stated as such, never as a run the reader can repeat:
the IR executor's values (the reference: every code generator may share one bug, so never the vote) against the
machine code's, for each -O level and for gfx942 and gfx950. The part of LLVM at fault is llvm_layer.py's answer,
given as the llc commands it ran, each with whether the witness matches its assembly.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from gfxhound.corpus_store.layout import REDUCED_LL
from gfxhound.report.draft_llvm import stock_llc
from gfxhound.report.draft_parts import BANNER, LLVM, Draft, run_tool
from gfxhound.report.scrub import Scrubber
from gfxhound.report.upstream_lint import lint

TARGETS = ("gfx942", "gfx950")  # the CDNA targets a draft always says it was compared on
QUIET = {"s_nop", "s_waitcnt", "s_endpgm"}  # never what computes a value: left out of the grep
TRIPLE = "-mtriple=amdgcn-amd-amdhsa"
SHOWN = 4  # differing elements listed per output


class NothingToDraft(ValueError):
    """llc's code computes what the IR executor does (or the IR itself cannot be run): one line, why."""


def wrong_levels(comparison) -> dict:
    """{label: Run} of the llc runs whose outputs differ from the IR executor's (a fault counts as different);
    raises NothingToDraft when the IR run gives no reference."""
    from gfxhound.oracle.crosscheck import IR_LABEL
    runs = {r.label: r for r in comparison.runs}
    ir = runs.get(IR_LABEL)
    if ir is None or ir.unresolved or ir.fault:
        raise NothingToDraft(f"the IR executor gives no reference: {ir.unresolved or ir.fault if ir else 'no run'}")
    wrong = {}
    for label, asm in comparison.assemblies.items():
        run = runs.get(label)
        if asm.source != "llc" or run is None or run.unresolved:
            continue
        if run.fault or not all(_same(run.outputs[k], ir.outputs[k]) for k in ir.outputs if k in run.outputs):
            wrong[label] = run
    return wrong


def _differ(a, b):
    """Where two flat arrays of one dtype differ (any NaN equals any NaN; floats compared bit for bit)."""
    if a.dtype.kind == "f":
        return ~((np.isnan(a) & np.isnan(b)) | (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")))
    return a != b


def _same(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and not _differ(a.reshape(-1), b.reshape(-1)).any()


def _value(x, dtype) -> str:
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, int):
        bits = np.dtype(dtype).itemsize * 8
        return str(x) if -256 < x < 256 else f"{x} (0x{x & ((1 << bits) - 1):x})"
    return repr(x)


def _arguments(launch) -> str:
    parts = []
    for name, arg in zip(launch.names, launch.args):
        if isinstance(arg, np.ndarray):
            role = launch.roles.get(name, "in")
            kind = {"f": "f", "u": "u"}.get(arg.dtype.kind, "i") + str(arg.dtype.itemsize * 8)  # u32, f16, i64
            what = f"`{name}`: {arg.size} x {kind}"
            what += ", zero-filled, written by the kernel" if role == "out" else \
                f" holding [{', '.join(_value(v, arg.dtype) for v in arg.reshape(-1)[:8])}" + \
                (", ...]" if arg.size > 8 else "]")
            parts.append(what)
        else:
            parts.append(f"`{name}` = {arg}")
    return "; ".join(parts) + f"; launched as a grid of {_dims(launch.grid)} workgroup(s) of {_dims(launch.block)} " \
        "work-items"


def _dims(dims) -> str:
    """(64, 1, 1) as "64", (16, 16, 1) as "16x16"."""
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return "x".join(map(str, dims))


def _differences(ir, run, roles) -> "tuple[list, tuple | None]":
    """Table rows `| out[i] | IR value | machine value |`, the first SHOWN differing elements of each output, and
    the first of them as (element, IR value, machine value)."""
    if run.fault:
        return [f"| (the whole kernel) | runs to the end | faults: {run.fault[:120]} |"], None
    rows, first = [], None
    for name, ref in ir.outputs.items():
        if roles.get(name) == "in" or name not in run.outputs:
            continue
        a, b = ref.reshape(-1), run.outputs[name].reshape(-1)
        differ = np.flatnonzero(_differ(a, b))
        for i in differ[:SHOWN]:
            cells = (f"{name}[{i}]", _value(a[i], a.dtype), _value(b[i], b.dtype))
            first = first or cells
            rows.append("| `{}` | {} | {} |".format(*cells))
        if differ.size > SHOWN:
            rows.append(f"| ... | ({differ.size} elements of `{name}` differ) | |")
    return rows, first


def _kernel_lines(asm: str, kernel: str) -> list:
    """(offset, line) of each instruction line of `kernel` in llc's assembly, as llc printed it."""
    found = re.search(rf"^{re.escape(kernel)}:.*?$(.*?)^\s*s_endpgm", asm, re.S | re.M)
    if not found:
        return []
    return [(found.start(1) + m.start(), m.group(0)) for m in re.finditer(r"^[ \t]+[a-z]\w*[^\n]*", found.group(1),
                                                                          re.M)]


def _registers(line: str) -> "tuple[set, set]":
    """(written, read): the registers of an instruction's first operand, and of the others (v1, s2, v[0:1] as v0)."""
    operands = re.sub(r"\s*;.*$", "", line).split(None, 1)[1:] or [""]
    parts = operands[0].split(",")
    names = [set(re.findall(r"\b([vs])\[?(\d+)", part)) for part in parts]
    return names[0], set().union(*names[1:]) if len(names) > 1 else set()


def _shown_mnemonics(asm: str, kernel: str, witness: str) -> list:
    """The mnemonics the grep shows: the instructions the witness spans (and the one that writes what the first
    of them reads, one step back), else, where it does not match, every instruction of the kernel."""
    at = _kernel_lines(asm, kernel)
    lines, names = [line for _, line in at], [line.split()[0] for _, line in at]
    match = re.search(witness, asm)
    picked = []
    if match:  # the lines the match overlaps
        hit = [i for i, (start, line) in enumerate(at) if start < match.end() and start + len(line) > match.start()]
        if hit:  # and the nearest instruction before them that writes what the first of them reads
            reads = _registers(lines[hit[0]])[1]
            back = next((i for i in range(hit[0] - 1, -1, -1) if _registers(lines[i])[0] & reads), None)
            picked = ([back] if back is not None else []) + hit
    chosen = [names[i] for i in sorted(picked)] if picked else names
    return [n for n in dict.fromkeys(chosen) if n not in QUIET]


def _joined(items) -> str:
    items = list(items)
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def _witnessed(asm: str, witness: str) -> bool:
    return re.search(witness, asm) is not None


def _run_block(block: str, ll: str, timeout: float) -> "tuple[int | None, str, str]":
    """The command block run as pasted (bash -e) in a fresh folder with reduced.ll: (exit code, stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="gfxhound-wrongcode-") as tmp:
        Path(tmp, REDUCED_LL).write_text(ll)
        Path(tmp, "block.sh").write_text(block + "\n")
        try:
            done = subprocess.run(["bash", "-e", "block.sh"], cwd=tmp, capture_output=True, text=True,
                                  timeout=timeout, env=dict(os.environ, LANG="C.UTF-8"))
        except subprocess.TimeoutExpired:
            return None, "", "timeout"
        return done.returncode, done.stdout, done.stderr


def _layer_section(layer, stock: str, mcpu: str, ll: Path, llc: str, witness: str) -> list:
    """The layer as the commands that found it, each with its verdict and whether the witness matches."""
    from gfxhound.executors.amdgcn.codegen import CodegenError, from_ll
    out = ["## Analysis: which part of LLVM", "",
           "Each `llc` below was run and its code executed on the AMDGCN executor with the same arguments, then "
           "compared with the IR's values (\"right\" or \"wrong\"); \"the pattern matches\" is the last `grep` of "
           "the command block, applied to that command's assembly.", ""]
    for step in layer["steps"]:
        parsed = re.match(r"^llc -(O\d)((?:\s+-[\w=.-]+)*)\s*(\([^)]*\))?:\s*(.*)$", step)
        if not parsed:
            out.append(f"- {step}")
            continue
        level, flags, note, said = parsed.groups()
        extra = flags.split()
        if "-global-isel" in extra and not any(f.startswith("-global-isel-abort") for f in extra):
            extra.append("-global-isel-abort=1")  # as llvm_layer ran it: no silent fall-back to SelectionDAG
        try:
            asm = from_ll(ll, mcpu, level, llc, extra=tuple(extra)).text
            seen = "the pattern matches" if _witnessed(asm, witness) else "the pattern does not match"
        except CodegenError as exc:
            seen = f"llc failed: {str(exc).splitlines()[0][:120]}"
        command = " ".join([stock, TRIPLE, f"-mcpu={mcpu}", f"-{level}", *extra, REDUCED_LL, "-o", "-"])
        out.append(f"- `{command}`{' ' + note if note else ''}: {said}; {seen}")
    out += ["", f"Method: {layer['method'] or 'the compiles above'}. So the fault is in: {layer['layer']}.",
            "(This is the tool's reading of the runs above, not a reviewed root cause.)"]
    return out


def build(ll: Path, launch_text: str, levels: list, mcpu: str, witness: str, llc: str, kernel: str | None = None,
          seed: int = 0, block=None, primary=None, timeout: float = 120) -> Draft:
    """The draft for `ll`, whose llc code for `mcpu` computes something other than the IR executor's run.
    `primary`: emulate's comparison for `mcpu` (run again when not given). Raises NothingToDraft."""
    from gfxhound.oracle.crosscheck import IR_LABEL, compare
    from gfxhound.oracle.llvm_layer import Judge, name_layer
    ll, text = Path(ll), Path(ll).read_text()
    targets = list(dict.fromkeys([mcpu, *TARGETS]))
    results = {mcpu: primary or compare(str(ll), mcpu, levels, launch_text, llc, kernel, seed, block)}
    for target in targets[1:]:
        results[target] = compare(str(ll), target, levels, launch_text, llc, kernel, seed, block)
    wrong, unjudged = {mcpu: wrong_levels(results[mcpu])}, {}
    for target in targets[1:]:
        try:
            wrong[target] = wrong_levels(results[target])
        except NothingToDraft as exc:  # another target's IR run cannot judge: said, not drafted from
            wrong[target], unjudged[target] = {}, str(exc)
    if not wrong[mcpu]:
        raise NothingToDraft(f"llc's code for {mcpu} computes what the IR executor does at "
                             f"{', '.join(sorted(results[mcpu].assemblies))}: nothing to draft")
    first = results[mcpu]
    kernel = first.kernel
    level = "O2" if "O2" in wrong[mcpu] else sorted(wrong[mcpu])[-1]
    stock = stock_llc(llc)
    compile_line = " ".join([stock, TRIPLE, f"-mcpu={mcpu}", f"-{level}", REDUCED_LL, "-o", "reduced.s"])
    with tempfile.TemporaryDirectory(prefix="gfxhound-wrongcode-") as tmp:
        Path(tmp, REDUCED_LL).write_text(text)
        rc, said, _ = run_tool(compile_line.split(), tmp, timeout)
        asm = Path(tmp, "reduced.s").read_text() if rc == 0 else ""
        version = run_tool([stock, "--version"], tmp, 60)[1]
    if rc != 0:
        raise NothingToDraft(f"`{compile_line}` {'exited ' + str(rc) if rc is not None else 'did not finish'}: "
                             f"{(said.strip().splitlines() or ['no output'])[-1][:160]}")
    show = f"^{re.escape(kernel)}:|^\\s+({'|'.join(_shown_mnemonics(asm, kernel, witness))})\\s"
    command = "\n".join([compile_line, f"grep -E {shlex.quote(show)} reduced.s",
                         "# exit 1 while the pattern below is in the assembly (the bug), 0 once it is not",
                         f"! grep -Pzq {shlex.quote(witness)} reduced.s"])
    code, printed, errors = _run_block(command, text, timeout)
    reproduced = code == 1
    check = f"the command block exited {code}" + (f": {errors.strip().splitlines()[-1][:160]}"
                                                  if errors.strip() else "")
    layer = name_layer(Judge(str(ll), mcpu, level, launch_text, llc, kernel, seed, block)).to_json()
    runs = {r.label: r for r in first.runs}
    rows, shown = _differences(runs[IR_LABEL], wrong[mcpu][level], first.launch.roles)
    seen = [t for t in targets if wrong[t]]
    at = _joined([f"-{x}" for x in sorted({x for t in seen for x in wrong[t]})])
    where = f"{_joined(seen)} at {at}"
    selector = "SelectionDAG" if layer["layer"].startswith("SelectionDAG") else layer["pass_name"]
    effect = f"`@{kernel}` computes {shown[2]} for `{shown[0]}` where the IR gives {shown[1]}" if shown else \
        f"`@{kernel}` faults where the IR runs to the end"
    title = f"[AMDGPU] Wrong code for {where}: {effect}" + (f" ({selector})" if selector else "")
    llvm_line = next((line.strip() for line in version.splitlines() if "LLVM version" in line), "unknown")
    per_target = [f"- {t}: " + (f"cannot judge ({unjudged[t]})" if t in unjudged else "; ".join(
        f"-{x}: {'wrong' if x in wrong[t] else 'right'}" for x in results[t].assemblies if x.startswith("O")))
        for t in targets]
    body = "\n".join([
        BANNER, "",
        f"`llc` compiles the IR below for {_joined(seen)} into code that computes a different value than the "
        f"IR does ({at}). No AMD GPU was used: the evidence is llc's assembly, and the values "
        "come from executors of the IR and of the machine code (see How this was found).", "",
        "## Test case", f"The test case, saved as `{REDUCED_LL}`:", f"```llvm\n{text.rstrip()}\n```", "",
        "## Command",
        f"Set-up: `{stock}` ({llvm_line}), and the test case above saved as `{REDUCED_LL}`. The second command "
        "shows the instructions that compute the stored value; the last makes the block exit 1 while llc emits "
        "them this way, and 0 once it does not.",
        f"```sh\n{command}\n```",
        *([] if reproduced else [f"**The block did not exit 1 when this draft was written ({check}): the pattern "
                              "does not match llc's code; check it by hand.**"]), "",
        "## Output", f"Output (what the `grep -E` prints; the block then exits {code}):",
        f"```asm\n{printed.rstrip()}\n```", "",
        "## Expected",
        f"Arguments: {_arguments(first.launch)}.", "",
        f"| element | the IR's semantics | llc -{level} code for {mcpu} |", "|---|---|---|", *rows, "",
        "The IR's values are what an executor of LLVM IR's semantics computes for the module (it tracks poison "
        "and undefined behaviour, and none reaches a store here); the machine code's come from running llc's code "
        "on an executor of AMD's ISA pseudocode.", "",
        *_layer_section(layer, stock, mcpu, ll, llc, witness), "",
        "## What changes it",
        "Each -O level and target, compared with the IR's values on the same arguments:", *per_target,
        f"- `-global-isel` at -{level} for {mcpu}: {layer['global_isel'] or 'not run'}", "",
        "## Environment",
        f"- llc: {llvm_line} (`{stock} --version`, first line)",
        "- Not checked on llvm-project main.",
        "- Suggested labels: backend:AMDGPU, miscompilation, generated by fuzzer"
        + (", llvm:SelectionDAG" if selector == "SelectionDAG" else ""), "",
        "## How this was found",
        "Found by gfxhound, a fuzzer of Triton's AMD backend and LLVM's AMDGPU backend, with no AMD GPU: the IR "
        "ran on an executor of LLVM IR's semantics, and llc's code for it on an AMDGCN executor built from AMD's "
        "ISA pseudocode, with the same arguments; they disagreed, and the assembly above shows where."])
    scrub = Scrubber()
    draft = Draft(LLVM, scrub(title), scrub(body), reproduced, scrub(check), {REDUCED_LL: text})
    draft.leaks = scrub.leaks(draft.markdown() + text) + lint(draft.title, draft.body, draft.attachments)
    return draft
