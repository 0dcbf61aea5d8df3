"""The script an LLVM draft gives when its fault shows only through the AMDGPU code generator Triton bundles: the
call Triton makes into it on reduced.ll, the assembly printed, and a check that speaks the repro protocol
(gfxhound/protocol.py): exit 1 when the fault shows, 0 when it does not, 125 when this build cannot test.

Why every release's call (3.9's `compile_amdgpu`, 3.4-3.8's `llvm.translate_to_asm`, picked by what the installed
Triton has): the draft's check runs the script at the bisection's last good release too, and a script that only
knows the bad release's call exits 125 there, so the check could never show it is not vacuous (the f311e39e draft).

Why a script and not an `llc` line: no `llc` at that LLVM revision is at hand, and a command that was never run
must not be presented as the reproducer (the f311e39e draft showed an `llc -mtriple=amdgpu9.42-...` that LLVM 22
rejects). Why a check: `gfxhound bisect --repro codegen.py` and a maintainer read the exit the same way.
"""
from __future__ import annotations

import re
import textwrap

from gfxhound.oracle.repro.snippet import quoted, with_check
from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT
from gfxhound.report.draft_check import bug_parts

SCRIPT = "codegen.py"
EXITS = (f"exit {EXIT_PRESENT} = the fault shows, {EXIT_ABSENT} = it does not, {EXIT_CANNOT_TEST} = cannot test "
         "here")


def _call(recorded: dict) -> str:
    """The code generator's call as the reduction recorded it (its code's last line writes the call's result)."""
    last = recorded["code"].strip().splitlines()[-1]
    return re.sub(r"^sys\.stdout\.write\((.*)\)$", r"\1", last)


def _releases_call(recorded: dict, indent: str = "") -> list:
    """`asm = ...` from the LLVM IR text `ir`, with the call the installed Triton's `make_amdgcn` makes, whichever
    release it is (read from each release's backends/amd/compiler.py; gfxhound/codegen.py tells the same calls):
    3.9 on, `compile_amdgpu` (its separately pinned AMD code generator); 3.4 to 3.8, `llvm.translate_to_asm` of the
    LLVM in libtriton, after `llvm.init_targets()`, with `amd.TARGET_TRIPLE`; 3.8's takes one more argument (False
    in make_amdgcn), read off its pybind signature (`inspect.signature` cannot read a pybind function). The
    release-dependent features and flags are written only for the targets and schedule hint that have them."""
    arch, extra = recorded["arch"], recorded.get("extra") or {}
    fusion = bool(extra.get("fp_fusion", True))
    call = _call(recorded).replace("open(sys.argv[1]).read()", "ir")
    if not call.startswith("compile_amdgpu("):  # reduced with an older release: ask 3.9's helpers, as it does
        call = (f"compile_amdgpu(ir, compiler.get_amd_codegen_target_triple({quoted(arch)}), {quoted(arch)}, \"\", "
                f"flags=compiler.get_llvm_flags({quoted(arch)}), enable_fp_fusion={fusion}, "
                "disable_optimization=False, canonicalize_gep=False, disabled_passes=\"\", dump_ir=False, "
                "enable_timing=False)")
    features, flags, setup = quoted(""), "[]", []  # names bound before the call where a release decides them
    if arch.startswith("gfx11"):  # make_amdgcn turns real-true16 off on gfx11 from 3.5
        features = "features"
        setup.append('features = "" if triton.__version__.startswith("3.4.") else "-real-true16"  # from 3.5')
    if extra.get("schedule_hint") == "attention":  # up to 3.5, make_amdgcn sinks instructions for this hint
        flags = "flags"
        setup.append('flags = ["sink-insts-to-avoid-spills"] if triton.__version__.startswith(("3.4.", "3.5.")) '
                     'else []')
    elif arch == "gfx1250":  # 3.8's make_amdgcn asks for expert scheduling where its helper says so
        flags = "flags"
        setup += ['expert = getattr(compiler, "is_expert_scheduling_enabled", None)  # 3.8\'s make_amdgcn asks it',
                  f'flags = ["amdgpu-expert-scheduling-mode"] if expert and expert({quoted(arch)}) else []']
    old = f"translate_to_asm(ir, amd.TARGET_TRIPLE, {quoted(arch)}, {features}, {flags}, {fusion}, *[False] * falses)"
    return [
        f"{indent}ir = open(sys.argv[1]).read()",
        f'{indent}if hasattr(compiler, "compile_amdgpu"):  # Triton 3.9 on: the AMD code generator it pins',
        *_wrapped(f"{indent}    asm = compiler.", call),
        f"{indent}else:  # Triton 3.4 to 3.8: the LLVM in libtriton; from 3.8, translate_to_asm takes one more False",
        f"{indent}    llvm.init_targets()",
        f'{indent}    falses = llvm.translate_to_asm.__doc__.split("->")[0].count(":") - 6  # its pybind signature',
        *[f"{indent}    {line}" for line in setup],
        *_wrapped(f"{indent}    asm = llvm.", old)]


def _imports(recorded: dict) -> list:
    arch, extra = recorded["arch"], recorded.get("extra") or {}
    needs = arch.startswith("gfx11") or extra.get("schedule_hint") == "attention"
    return [*(["import triton"] if needs else []), "import triton.backends.amd.compiler as compiler",
            "from triton._C.libtriton import amd, llvm"]


def _wrapped(prefix: str, call: str, width: int = 110) -> list:
    """`prefix + call` over lines of at most `width`, broken after an argument's comma, continuation lines under
    the call's first argument (as a person would write it)."""
    name, _, rest = call.partition("(")
    args = re.split(r", (?![^(]*\))", rest[:-1])  # the call's own arguments (none of them has a comma inside)
    indent = " " * len(f"{prefix}{name}(")
    lines, line = [], f"{prefix}{name}("
    for i, arg in enumerate(args):
        piece = arg + (", " if i < len(args) - 1 else ")")
        if len(line + piece.rstrip()) > width and line.strip() != f"{prefix}{name}(".strip():
            lines.append(line.rstrip())
            line = indent
        line += piece
    return lines + [line]


def _comment(text: str) -> list:
    return textwrap.wrap(text, 110, initial_indent="# ", subsequent_indent="# ")


def _head(recorded: dict, where: str) -> list:
    version = recorded.get("version", "?")
    said = (f"Compiles reduced.ll with the AMDGPU code generator of the installed Triton (3.4 or later; the fault "
            f"showed with Triton {version}'s, {where}), through the call Triton makes, and prints the assembly. "
            "Run: python codegen.py reduced.ll")
    return _comment(said) + ["import sys"]


def codegen_script(recorded: dict, where: str, violation=None, message: str = "", output: str = "") -> str:
    """The script for a memory-model `violation` (oracle/memory_model.py Violation: a wait missing before an
    instruction after the atomic), or for a crash whose message and output `bug_parts` reads."""
    if violation is None:  # a crash: the compile runs in a child, its output is read (snippet.py with_check)
        code = "\n".join(_head(recorded, where) + [*_imports(recorded), "", "", *_releases_call(recorded),
                                                    "print(asm)"]) + "\n"
        checked = with_check(code, bug_parts(message, output) or None, start=r"\bopen\(sys\.argv\[1\]\)",
                             what="the IR", args=True)
        return checked or code
    wait, _, before = violation.missing.partition(" before ")
    atomic = violation.instruction.split()[0]
    lines = _head(recorded, where) + [
        "",
        "try:",
        *[f"    {line}" for line in _imports(recorded)],
        "except ImportError as exc:  # not the bug: this Python cannot run the reproducer",
        '    print("other failure (cannot test):", exc)', f"    sys.exit({EXIT_CANNOT_TEST})", "",
        "try:",
        *_releases_call(recorded, "    "),
        "except Exception as exc:  # IR this Triton cannot read, a call it does not have: not the bug",
        '    print("other failure (cannot test):", exc)', f"    sys.exit({EXIT_CANNOT_TEST})",
        "print(asm)", ""]
    if not before or not wait.startswith("s_waitcnt"):  # a defect this script cannot judge by itself
        why = f"cannot judge here: check the code around {atomic} against AMDGPUUsage ({violation.missing} is missing)"
        return "\n".join(lines + [f"print({quoted(why)})", f"sys.exit({EXIT_CANNOT_TEST})"]) + "\n"
    lines += [
        *_comment(f"The check, in the repro protocol: exit {EXIT_PRESENT} when the fault shows, {EXIT_ABSENT} when it "
                  f"does not, {EXIT_CANNOT_TEST} when this build cannot test for it. The fault: no {wait} between "
                  f"{atomic} and the {before} after it."),
        f"ATOMIC, WAIT, BEFORE = {quoted(atomic)}, [{', '.join(map(quoted, wait.split()))}], {quoted(before)}",
        'code = [line.split(";")[0].strip() for line in asm.splitlines()]',
        "atomic = next((i for i, line in enumerate(code) if line.startswith(ATOMIC)), None)",
        "after = code[atomic + 1:] if atomic is not None else []",
        "before = next((i for i, line in enumerate(after) if line.startswith(BEFORE)), None)",
        "if before is None:",
        '    print(f"other failure (cannot test): no {ATOMIC} followed by {BEFORE}")',
        f"    sys.exit({EXIT_CANNOT_TEST})",
        "if any(all(part in line for part in WAIT) for line in after[:before]):",
        f'    print("not reproduced: {wait} is between {atomic} and {before}")',
        f"    sys.exit({EXIT_ABSENT})",
        f'print("reproduced: no {wait} between {atomic} and {before}")',
        f"sys.exit({EXIT_PRESENT})"]
    return "\n".join(lines) + "\n"
