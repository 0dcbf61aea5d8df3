"""The script an LLVM draft gives when its fault shows only through the AMDGPU code generator Triton bundles: the
call Triton makes into it (`compile_amdgpu`) on reduced.ll, the assembly printed, and a check that speaks the repro
protocol (gfxhound/protocol.py): exit 1 when the fault shows, 0 when it does not, 125 when this build cannot test.

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
    """`compile_amdgpu(...)` as the reduction recorded it (its code's last line writes the call's result)."""
    last = recorded["code"].strip().splitlines()[-1]
    return re.sub(r"^sys\.stdout\.write\((.*)\)$", r"\1", last)


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
    said = (f"Compiles reduced.ll with the AMDGPU code generator that Triton {version} bundles ({where}), through "
            "the call Triton makes, and prints the assembly. Run: python codegen.py reduced.ll")
    return _comment(said) + ["import sys"]


def codegen_script(recorded: dict, where: str, violation=None, message: str = "", output: str = "") -> str:
    """The script for a memory-model `violation` (oracle/memory_model.py Violation: a wait missing before an
    instruction after the atomic), or for a crash whose message and output `bug_parts` reads."""
    call = _call(recorded)
    if violation is None:  # a crash: the compile runs in a child, its output is read (snippet.py with_check)
        code = "\n".join(_head(recorded, where) + [
            "from triton.backends.amd.compiler import compile_amdgpu", "", "",
            *_wrapped("asm = ", call), "print(asm)"]) + "\n"
        checked = with_check(code, bug_parts(message, output) or None, start=r"\bcompile_amdgpu\(", what="the IR",
                             args=True)
        return checked or code
    wait, _, before = violation.missing.partition(" before ")
    atomic = violation.instruction.split()[0]
    lines = _head(recorded, where) + [
        "",
        "try:",
        "    from triton.backends.amd.compiler import compile_amdgpu",
        "except ImportError as exc:  # not the bug: this Python cannot run the reproducer",
        '    print("other failure (cannot test):", exc)', f"    sys.exit({EXIT_CANNOT_TEST})", "",
        "try:",
        *_wrapped("    asm = ", call),
        "except Exception as exc:  # another Triton's signature, IR it cannot read: not the bug",
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
