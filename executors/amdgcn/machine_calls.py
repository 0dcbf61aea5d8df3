"""Calls on the machine: a kernel and the functions it calls laid out as one code image, `s_getpc_b64`,
`s_swappc_b64`, `s_setpc_b64`, and the PC-relative `callee@rel32@lo+4` / `@rel32@hi+12` literals that address a
callee, so non-kernel functions under the AMDGPU calling convention (and device-library functions linked into the
module) run as the code generator emitted them.

Why an image of its own: the machine runs instruction indices, not bytes; a call needs code addresses. Each
instruction gets the address CODE_BASE + 4 * its index in the image (the kernel first, then the program's other
functions in order). The guide's PC is the address of the instruction after the current one (`S_GETPC_B64: D0 =
PC + 4`, `S_SWAPPC_B64: D0 = PC + 4; PC = S0`), and a `rel32` literal is the callee's address plus the addend
minus the address of the literal, taken as the instruction's address + 4. With 4 bytes per instruction this puts
the literal of the `s_addc_u32` of LLVM's `s_getpc/s_add/s_addc` sequence 4 bytes before where an assembler would,
which changes its high half only when the low half of callee - caller lies within 4 of a 2^32 boundary: the image
keeps functions close together, so it never does. A jump to an address that is not an instruction of the image
faults. Calls through a register loaded from memory (indirect calls) work the same way if the address is an
image address; any other address faults.
"""
from __future__ import annotations

from dataclasses import replace

from gfxhound.executors.amdgcn.asm_operands import Imm, Symbol
from gfxhound.executors.amdgcn.machine import M32, M64, MachineFault, NotModelled, reader, writer

__all__ = ["CODE_BASE", "address", "link", "CALL_STEPS"]

CODE_BASE = 0x7FF0_0000_0000


def address(index: int) -> int:
    return CODE_BASE + 4 * index


def _resolved(ins, starts: dict):
    ops = []
    for op in ins.operands:
        if isinstance(op, Symbol) and op.variant in ("rel32@lo", "rel32@hi"):
            if op.name not in starts:   # a data object (a printf format string) or a function not in the text:
                return ins                # left as it is: the decoder refuses the operand, where a wave runs it
            value = (address(starts[op.name]) + op.addend - (address(ins.index) + 4)) & M64
            value = value & M32 if op.variant.endswith("lo") else value >> 32
            op = Imm(value, f"{value:#x}")
        ops.append(op)
    return replace(ins, operands=tuple(ops))


def link(function, program) -> tuple:
    """(instructions, starts): `function`'s instructions, then every other function of `program`, with indices,
    branch targets and rel32 literals made image-wide; starts maps each function's name to its first index."""
    functions = [function] + ([f for f in program.functions if f.name != function.name] if program else [])
    starts, at = {}, 0
    for f in functions:
        starts[f.name] = at
        at += len(f.instructions)
    out = []
    for f in functions:
        off = starts[f.name]
        for ins in f.instructions:
            moved = replace(ins, index=ins.index + off, target=None if ins.target is None else ins.target + off)
            out.append(_resolved(moved, starts) if any(isinstance(o, Symbol) for o in ins.operands) else moved)
    return tuple(out), starts


def _jump(w, target: int, ins, count: int):
    index, rest = divmod(int(target) - CODE_BASE, 4)
    if rest or not 0 <= index < count:
        raise MachineFault(f"a jump to {int(target):#x}, which is not an instruction of the code image", ins,
                           int(target))
    w.pc = index


def _getpc(ins, count):
    put = writer(ins.operands[0], 64, ins.mnemonic)

    def step(w):
        put(w, address(ins.index + 1))
        w.pc += 1
    return step


def _swappc(ins, count):
    dst, src = ins.operands
    put, get = writer(dst, 64, ins.mnemonic), reader(src, 64, ins.mnemonic)

    def step(w):
        target = get(w)
        put(w, address(ins.index + 1))
        _jump(w, target, ins, count)
    return step


def _setpc(ins, count):
    get = reader(ins.operands[0], 64, ins.mnemonic)
    return lambda w: _jump(w, get(w), ins, count)


CALL_STEPS = {"s_getpc_b64": _getpc, "s_swappc_b64": _swappc, "s_setpc_b64": _setpc}
