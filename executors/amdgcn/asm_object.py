"""An ELF code object (``.o``) rewritten as the assembly text asm.py and abi.py read, with LLVM's own tools:
``llvm-objdump -t`` (the functions and kernel descriptors), ``llvm-objdump -d`` (the code), ``llvm-objdump -D
--disassemble-symbols=K.kd`` (each kernel descriptor decoded back into ``.amdhsa_kernel`` directives) and
``llvm-readobj --notes`` (the ``.amdgpu_metadata`` YAML).

Why rewrite and not parse objdump's listing in asm.py: one decoder, one set of tests. What changes on the way:
a branch's numeric offset becomes a label (``.L<function>_<offset>``) at the address objdump's comment names;
code past a function's symbol size (the ``s_code_end`` padding) is dropped; and where the descriptor asks for
kernarg preload, a ``.p2align 8`` marks the instruction 256 bytes in, where the firmware that preloads starts
(AMDGPUUsage "Preloaded Kernel Arguments": CP adds 256 bytes to the kernel entry), as llc's own ``.s`` marks it.

What is refused (``CodegenError``): relocations in ``.text`` (a call's PC-relative address is 0 until linked, and
running it would jump to the wrong place: link the object, or use the ``.s``). The decoded descriptor gives
``.amdhsa_next_free_vgpr/sgpr`` rounded up to the register allocation granule, not llc's exact numbers.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from gfxhound.codegen import CodegenError

# objdump -t: address, 7 flag characters, section, size, an optional visibility, the name
_SYMBOL = re.compile(r"^([0-9a-f]+) (.{7}) (\S+)\s+([0-9a-f]+)\s+(?:\.(?:hidden|protected|internal)\s+)?(\S+)$")
_LINE = re.compile(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):[^<]*(?:<([^>+]+)(?:\+0x([0-9a-f]+))?>)?\s*$")
_PRELOAD = re.compile(r"\.amdhsa_user_sgpr_kernarg_preload_length\s+([1-9]\d*)")


def _run(command: list, timeout: float) -> str:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        raise CodegenError(f"{Path(command[0]).name} did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise CodegenError(f"cannot run {command[0]}: {exc.strerror}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise CodegenError(f"{Path(command[0]).name} failed on {command[-1]}: {last[:300]}")
    return proc.stdout


def _symbols(listing: str) -> tuple:
    """(functions: [(name, address, size)] in .text, kernel descriptors: [name of K.kd])."""
    functions, descriptors = [], []
    for line in listing.splitlines():
        found = _SYMBOL.match(line)
        if not found:
            continue
        address, flags, section, size, name = found.groups()
        if section == ".text" and "F" in flags:
            functions.append((name, int(address, 16), int(size, 16)))
        elif section == ".rodata" and "O" in flags and name.endswith(".kd"):
            descriptors.append(name)
    return sorted(functions, key=lambda f: f[1]), descriptors


def _code(listing: str, functions: list, preload: dict) -> list:
    """The .text statements of every function, branches to labels, the padding past each function dropped."""
    by_address = {address: (name, size) for name, address, size in functions}
    body = {name: [] for name, _, _ in functions}  # name -> [(offset, text, target offset or None)]
    current = None
    for line in listing.splitlines():
        head = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if head:
            current = head.group(2) if int(head.group(1), 16) in by_address else None
            continue
        found = _LINE.match(line)
        if current is None or not found:
            continue
        text, address, symbol, offset = found.groups()
        start = next(a for a, (n, _) in by_address.items() if n == current)
        at = int(address, 16) - start
        if at >= by_address[start][1]:
            continue  # past the function's size: s_code_end padding
        target = None
        if symbol is not None:
            target = int(offset or "0", 16) + next(a for a, (n, _) in by_address.items() if n == symbol) - start
            text = re.sub(r"(\s|,\s*)-?\d+$", lambda m: f"{m.group(1)}.L{current}_{target:x}", text)
        body[current].append((at, text, target))
    lines = []
    for name, _, size in functions:
        targets = {t for _, _, t in body[name] if t is not None}
        lines += ["\t.text", f"\t.type {name},@function", f"{name}:"]
        for at, text, _ in body[name]:
            if at == 256 and preload.get(name):
                lines.append("\t.p2align 8")
            if at in targets:
                lines.append(f".L{name}_{at:x}:")
            lines.append(f"\t{text}")
        if size in targets:
            lines.append(f".L{name}_{size:x}:")
        lines.append(f"\t.size {name}, {size}")
    return lines


def _metadata(notes: str) -> list:
    found = re.search(r"AMDGPU Metadata: (---\n.*?\n\.\.\.)", notes, re.S)
    return ["\t.amdgpu_metadata", found.group(1), "\t.end_amdgpu_metadata"] if found else []


def object_text(path: Path, mcpu: str, timeout: float, llvm_bin: str) -> tuple:
    """(assembly text, processor, [the commands run]) for the code object at `path`."""
    objdump, readobj = str(Path(llvm_bin) / "llvm-objdump"), str(Path(llvm_bin) / "llvm-readobj")
    commands = [[readobj, "--notes", str(path)], [objdump, "-t", str(path)], [objdump, "-r", str(path)]]
    notes, table, relocations = (_run(c, timeout) for c in commands)
    if not mcpu:
        found = re.search(r"amdhsa\.target:\s+\S*?(gfx\w+)", notes)
        if not found:
            raise CodegenError(f"{path}: no amdhsa.target in its notes; pass the processor")
        mcpu = found.group(1)
    if "RELOCATION RECORDS FOR [.text]" in relocations:
        raise CodegenError(f"{path}: relocations in .text (calls not yet linked) would run as address 0; "
                           "link it or use the .s")
    functions, descriptors = _symbols(table)
    if not functions:
        raise CodegenError(f"{path}: no functions in .text")
    disassemble = [objdump, "-d", f"--mcpu={mcpu}", str(path)]
    commands.insert(0, disassemble)
    kernels, preload = [], {}
    for kd in descriptors:
        command = [objdump, "-D", f"--mcpu={mcpu}", f"--disassemble-symbols={kd}", str(path)]
        commands.append(command)
        block = re.search(r"^\.amdhsa_kernel .*?^\.end_amdhsa_kernel$", _run(command, timeout), re.S | re.M)
        if block:
            kernels.append(block.group(0))
            preload[kd[:-3]] = bool(_PRELOAD.search(block.group(0)))
    target = re.search(r"amdhsa\.target:\s+(\S+)", notes)
    head = [f'\t.amdgcn_target "{target.group(1) if target else "amdgcn-amd-amdhsa--" + mcpu}"']
    lines = head + _code(_run(disassemble, timeout), functions, preload)
    lines += ["\t.section\t.rodata,\"a\",@progbits", *kernels, "\t.text", *_metadata(notes)]
    return "\n".join(lines) + "\n", mcpu, commands
