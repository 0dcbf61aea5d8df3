"""Planted lowering bugs: edits of a compiled kernel's LLVM IR that a wrong TTGIR-to-LLVM lowering would make.

They validate the executor (does it catch what it is for?), as planted bugs validate the other oracles
(oracle/planted.py): each edit is the IR a plausible lowering bug leaves, applied to every instance of the construct
in the kernel. `applies(text)` says whether a kernel has the construct at all; a mutation that applies and leaves
the outputs within tolerance is a miss, which the validation counts (tests/oracle/test_emulate_mutations.py and
`scratch`-free figures in docs/emulate.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

_MFMA = re.compile(r"(call <\d+ x (?:float|i32|double)> @llvm\.amdgcn\.mfma\.[\w.]+\()"
                   r"(<\d+ x \w+>|i64|i32|float|double) (%[\w.]+), (<\d+ x \w+>|i64|i32|float|double) (%[\w.]+),")
_BPERMUTE = re.compile(r"^(\s*)(%[\w.]+) = (tail )?call i32 @llvm\.amdgcn\.ds\.bpermute\(i32 (%[\w.]+|-?\d+), ", re.M)
_BUFFER_LOAD = re.compile(r"^(\s*)(%[\w.]+) = (tail )?call (<(\d+) x (\w+)>|\w+) @llvm\.amdgcn\.raw\.ptr\.buffer\.load"
                          r"(\.\w+)?\(ptr addrspace\(8\) (%[\w.]+), i32 (%[\w.]+|-?\d+), ", re.M)
_CVT_FP8 = re.compile(r"^(\s*)(%[\w.]+) = (tail )?call i32 @llvm\.amdgcn\.cvt\.pk\.(fp8|bf8)\.f32\(float (%[\w.]+|[-\w.+]+), "
                      r"float (%[\w.]+|[-\w.+]+), ", re.M)
_BARRIER = re.compile(r"^\s*(tail )?call void @llvm\.amdgcn\.s\.barrier\(\)[^\n]*\n", re.M)
_SIZES = {"i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4, "i64": 8, "double": 8}


def _swap_mfma(text):
    return _MFMA.sub(lambda m: f"{m.group(1)}{m.group(4)} {m.group(5)}, {m.group(2)} {m.group(3)},", text)


def _bpermute_lane(text):
    """Every ds_bpermute reads its neighbour lane (byte address + 4): a wrong lane in a shuffle."""
    counter = iter(range(1 << 30))

    def edit(m):
        name = f"%gfxh.bp{next(counter)}"
        return (f"{m.group(1)}{name} = add i32 {m.group(4)}, 4\n"
                f"{m.group(1)}{m.group(2)} = {m.group(3) or ''}call i32 @llvm.amdgcn.ds.bpermute(i32 {name}, ")
    return _BPERMUTE.sub(edit, text)


def _buffer_offset(text):
    """Every buffer load's offset one element too far: an off-by-one in the lowering's offset arithmetic."""
    counter = iter(range(1 << 30))

    def edit(m):
        elem = m.group(6) or m.group(4)
        step = _SIZES.get(elem, 4)
        name = f"%gfxh.bo{next(counter)}"
        return (f"{m.group(1)}{name} = add i32 {m.group(9)}, {step}\n"
                f"{m.group(1)}{m.group(2)} = {m.group(3) or ''}call {m.group(4)} @llvm.amdgcn.raw.ptr.buffer.load"
                f"{m.group(7) or ''}(ptr addrspace(8) {m.group(8)}, i32 {name}, ")
    return _BUFFER_LOAD.sub(edit, text)


def _fp8_truncate(text):
    """fp8/bf8 conversions round toward zero instead of to nearest even: the mantissa bits below the target's
    precision are cleared before the (correct) hardware conversion."""
    counter = iter(range(1 << 30))

    def edit(m):
        keep = 0xFFF00000 if m.group(4) == "fp8" else 0xFFE00000  # e4m3 keeps 3 mantissa bits, e5m2 keeps 2
        lines, names = [], []
        for operand in (m.group(5), m.group(6)):
            k = next(counter)
            lines.append(f"{m.group(1)}%gfxh.t{k} = bitcast float {operand} to i32")
            lines.append(f"{m.group(1)}%gfxh.u{k} = and i32 %gfxh.t{k}, {keep - (1 << 32)}")
            lines.append(f"{m.group(1)}%gfxh.f{k} = bitcast i32 %gfxh.u{k} to float")
            names.append(f"%gfxh.f{k}")
        return ("\n".join(lines) + f"\n{m.group(1)}{m.group(2)} = {m.group(3) or ''}call i32 "
                f"@llvm.amdgcn.cvt.pk.{m.group(4)}.f32(float {names[0]}, float {names[1]}, ")
    return _CVT_FP8.sub(edit, text)


def _drop_barriers(text):
    return _BARRIER.sub("", text)


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    pattern: re.Pattern
    edit: Callable[[str], str]

    def applies(self, text: str) -> bool:
        return bool(self.pattern.search(text))


MUTATIONS = {m.name: m for m in (
    Mutation("mfma-swap", "an MFMA's A and B operands swapped", _MFMA, _swap_mfma),
    Mutation("bpermute-lane", "every ds_bpermute reads the next lane", _BPERMUTE, _bpermute_lane),
    Mutation("buffer-offset", "every buffer load one element off", _BUFFER_LOAD, _buffer_offset),
    Mutation("fp8-rounding", "fp8/bf8 conversions truncate instead of rounding to nearest even", _CVT_FP8,
             _fp8_truncate),
    Mutation("drop-barrier", "every s_barrier removed (an LDS race between waves)", _BARRIER, _drop_barriers),
)}
