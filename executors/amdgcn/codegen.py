"""The AMDGCN assembly text the executor decodes, from LLVM IR (through llc or Triton's own code generator), from
a ``.s`` as is, or from an ELF code object (``.o``) through llvm-objdump and llvm-readobj.

Why several sources: the executor judges what a *named* code generator produced. Debian's llc-22 is at hand in
every test; Triton 3.9's pinned AMD code generator (``compile_amdgpu``) is what a campaign's kernels really went
through; a ``.s`` or ``.o`` a maintainer attaches to an issue should run without recompiling. The calls are the
ones gfxhound/gfxhound/codegen.py already makes (``llc_codegen``: the flags as given, ``-mtriple=amdgcn-amd-amdhsa``
and ``-o -`` added; ``triton_codegen``: each Triton release's own ``make_amdgcn`` call, 3.9's ``compile_amdgpu``
or 3.4-3.8's ``llvm.translate_to_asm``), reused here so a reduction, a draft and the executor run one command.

Every tool is a child process with an argument list and a timeout; a failure is a one-line ``CodegenError``.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from gfxhound.codegen import CodegenError, llc_codegen, triton_codegen

ASSEMBLY_FORMAT = 1  # the newest Assembly JSON this module reads
DEFAULT_LLC = "/usr/lib/llvm-22/bin/llc"
PROCESSORS = ("gfx942", "gfx950")  # what the executor targets; others are passed through untested
__all__ = ["Assembly", "CodegenError", "from_ll", "from_ll_triton", "from_s", "from_object", "load", "find_llc"]


@dataclass(frozen=True)
class Assembly:
    """Assembly text and how it was made: ``source`` "llc" | "triton" | "s" | "o"; ``opt`` the llc level
    ("O2"; "" otherwise); ``command`` the argument list that made it (the IR file last; for "triton" the
    interpreter, ``-c`` and the program); ``tool`` the code generator by name and version."""
    text: str
    mcpu: str
    source: str
    opt: str = ""
    command: tuple = ()
    tool: str = ""
    path: str = ""
    format: int = ASSEMBLY_FORMAT

    def to_json(self) -> dict:
        return {"format": self.format, "text": self.text, "mcpu": self.mcpu, "source": self.source,
                "opt": self.opt, "command": list(self.command), "tool": self.tool, "path": self.path}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @classmethod
    def from_json(cls, data: dict) -> "Assembly":
        if data.get("format", 0) > ASSEMBLY_FORMAT:
            raise ValueError(f"assembly format {data.get('format')} is newer than this gfxhound; upgrade gfxhound")
        return cls(data["text"], data["mcpu"], data["source"], data.get("opt", ""), tuple(data.get("command", ())),
                   data.get("tool", ""), data.get("path", ""), data.get("format", ASSEMBLY_FORMAT))


def find_llc(llc: str | None = None) -> str:
    """`llc` as given, else Debian's llc-22 (its absolute path, else `llc-22` on PATH)."""
    if llc:
        return llc
    if Path(DEFAULT_LLC).exists():
        return DEFAULT_LLC
    found = shutil.which("llc-22")
    if not found:
        raise CodegenError(f"no llc: neither {DEFAULT_LLC} nor llc-22 on PATH (install llvm-22 or pass --llc)")
    return found


def _opt(level) -> str:
    text = str(level).lstrip("-").upper()
    text = text if text.startswith("O") else f"O{text}"
    if text not in ("O0", "O1", "O2", "O3"):
        raise CodegenError(f"optimisation level {level!r}: want 0, 1, 2 or 3")
    return text


def _check_mcpu(mcpu: str) -> str:
    if not mcpu or not mcpu.startswith("gfx"):
        raise CodegenError(f"processor {mcpu!r}: want a gfx name such as {' or '.join(PROCESSORS)}")
    return mcpu


def _file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise CodegenError(f"{path}: no such file")
    return path


def _compiled(codegen, ll: Path, timeout: float) -> str:
    result = codegen.run(ll, timeout)
    if result.status == "ok":
        return result.asm
    lines = [line for line in result.text.splitlines() if line.strip() and not line.startswith("##gfxhound")]
    why = next((line for line in lines if "error" in line.lower()), lines[0] if lines else result.status)
    raise CodegenError(f"{codegen.name} could not compile {ll.name} ({result.status}): {why.strip()[:300]}")


def from_ll(ll, mcpu: str, opt=2, llc: str | None = None, timeout: float = 120, extra=()) -> Assembly:
    """`ll` through llc at -O`opt` for `mcpu` (``extra``: more llc flags, before the file)."""
    ll, mcpu, level = _file(ll), _check_mcpu(mcpu), _opt(opt)
    codegen = llc_codegen(find_llc(llc), [f"-mcpu={mcpu}", f"-{level}", *extra], arch=mcpu)
    text = _compiled(codegen, ll, timeout)
    return Assembly(text, mcpu, "llc", level, tuple(codegen.command(str(ll.resolve()))), codegen.version,
                    str(ll))


def from_ll_triton(ll, mcpu: str, python: str | None = None, timeout: float = 300) -> Assembly:
    """`ll` through the code generator of the Triton that `python` imports (default: this interpreter's), with
    the call that release's make_amdgcn makes (3.9: the pinned AMD code generator; older: bundled LLVM)."""
    ll, mcpu = _file(ll), _check_mcpu(mcpu)
    codegen = triton_codegen(python or sys.executable, mcpu, timeout=timeout)
    text = _compiled(codegen, ll, timeout)
    return Assembly(text, mcpu, "triton", "", tuple(codegen.command(str(ll.resolve()))), codegen.name, str(ll))


def from_s(path, mcpu: str = "") -> Assembly:
    """A ``.s`` as is; `mcpu` from its ``.amdgcn_target`` when not given."""
    path = _file(path)
    text = path.read_text(errors="replace")
    if not mcpu:
        found = re.search(r'\.amdgcn_target\s+"[^"]*?(gfx\w+)', text)
        mcpu = found.group(1) if found else ""
    return Assembly(text, mcpu, "s", path=str(path))


def from_object(path, mcpu: str = "", timeout: float = 60, llvm_bin: str | None = None) -> Assembly:
    """An ELF code object's kernels as assembly text (asm_object.py: llvm-objdump for the code and kernel
    descriptors, llvm-readobj --notes for the metadata); `mcpu` from the object's metadata when not given."""
    from gfxhound.executors.amdgcn.asm_object import object_text
    path = _file(path)
    text, mcpu, commands = object_text(path, mcpu, timeout, llvm_bin or str(Path(find_llc()).parent))
    return Assembly(text, mcpu, "o", command=tuple(commands[0]), tool="llvm-objdump", path=str(path))


def load(path, mcpu: str = "", opt=2, via: str = "llc", llc: str | None = None, timeout: float = 120) -> Assembly:
    """Whatever `path` is, by its suffix: ``.ll`` compiled (`via` "llc" or "triton"), ``.s`` as is, ``.o`` /
    ``.co`` / ``.hsaco`` disassembled."""
    suffix = Path(path).suffix.lower()
    if suffix == ".ll":
        if via == "triton":
            return from_ll_triton(path, mcpu, timeout=max(timeout, 300))
        if via != "llc":
            raise CodegenError(f"code generator {via!r}: want llc or triton")
        return from_ll(path, mcpu, opt, llc, timeout)
    if suffix == ".s":
        return from_s(path, mcpu)
    if suffix in (".o", ".co", ".hsaco", ".elf"):
        return from_object(path, mcpu, timeout)
    raise CodegenError(f"{path}: want a .ll, .s or .o (code object)")
