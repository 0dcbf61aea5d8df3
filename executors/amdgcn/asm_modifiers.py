"""The instruction modifiers written after the last operand (``offset:16 sc0``, ``op_sel:[0,1]``,
``quad_perm:[1,0,3,2] row_mask:0xa``, ``dst_sel:WORD_1``) as frozen records.

Why a closed list: a modifier changes what an instruction does (an address offset, a cache policy, a lane
permutation, an output scale); one this module does not know must stop the decode (``ModifierError``) rather than
be dropped, since an executor that ignored it would report a wrong result as the backend's. The names and their
value forms are LLVM's AMDGPU assembler syntax (llvm/docs/AMDGPUModifierSyntax.rst); meanings are the executor's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gfxhound.executors.amdgcn.asm_operands import (Func, OperandError, operand_from_json, operand_to_json, parse_int,
                                          parse_operand, split_top)


class ModifierError(ValueError):
    """A modifier this parser does not know, or a value of the wrong form (the caller adds the line)."""


# modifiers written alone (their value is True)
FLAGS = frozenset({
    "glc", "slc", "dlc", "scc", "nt", "sc0", "sc1", "lds", "offen", "idxen", "addr64", "tfe", "lwe", "gds",
    "clamp", "a16", "r128", "unorm", "da", "d16", "nv", "row_mirror", "row_half_mirror", "high",
})
# name:int (decimal or hex, maybe negative)
INTS = frozenset({
    "offset", "offset0", "offset1", "row_shl", "row_shr", "row_ror", "row_bcast", "row_newbcast", "row_share",
    "row_xmask", "wave_shl", "wave_shr", "wave_rol", "wave_ror", "row_mask", "bank_mask", "bound_ctrl", "fi",
    "cbsz", "abid", "blgp", "mul", "div", "dmask", "format", "byte_sel", "index_key", "matrix_a_fmt",
    "matrix_b_fmt", "bitop3",
})
# name:[0,1,...]
LISTS = frozenset({"op_sel", "op_sel_hi", "neg_lo", "neg_hi", "quad_perm", "dpp8"})
# name:WORD (an enumerator of the SDWA selects)
NAMES = {
    "dst_sel": {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"},
    "src0_sel": {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"},
    "src1_sel": {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"},
    "dst_unused": {"UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"},
}
DPP = frozenset({"quad_perm", "row_shl", "row_shr", "row_ror", "row_bcast", "row_newbcast", "row_share",
                 "row_xmask", "wave_shl", "wave_shr", "wave_rol", "wave_ror", "row_mirror", "row_half_mirror",
                 "row_mask", "bank_mask", "bound_ctrl", "fi", "dpp8"})
SDWA = frozenset(NAMES)


@dataclass(frozen=True)
class Modifier:
    """One modifier: ``name`` as written and ``value``: True for a flag, an int, a tuple of ints for a list, the
    enumerator's name for an SDWA select, or a Func record for ``offset:swizzle(...)``."""
    name: str
    value: object = True

    def __str__(self) -> str:
        if self.value is True:
            return self.name
        if isinstance(self.value, tuple):
            return f"{self.name}:[{','.join(str(v) for v in self.value)}]"
        if self.name in ("row_mask", "bank_mask") and isinstance(self.value, int):
            return f"{self.name}:{self.value:#x}"
        return f"{self.name}:{self.value}"

    def to_json(self) -> dict:
        value = operand_to_json(self.value) if isinstance(self.value, Func) else \
            list(self.value) if isinstance(self.value, tuple) else self.value
        return {"name": self.name, "value": value}

    @classmethod
    def from_json(cls, data: dict) -> "Modifier":
        value = data["value"]
        value = operand_from_json(value) if isinstance(value, dict) else \
            tuple(value) if isinstance(value, list) else value
        return cls(data["name"], value)


def is_modifier(word: str) -> bool:
    """Whether `word` reads as a modifier (a known name, alone or before a colon) rather than an operand."""
    name = word.split(":", 1)[0].lower()
    return name in FLAGS or name in INTS or name in LISTS or name in NAMES


def parse_modifier(word: str) -> Modifier:
    name, colon, value = word.partition(":")
    name = name.lower()
    try:
        if not colon:
            if name not in FLAGS:
                raise ModifierError(f"unknown modifier {word!r}")
            return Modifier(name)
        if name in LISTS:
            if not re.fullmatch(r"\[[-\w, ]*\]", value):
                raise ModifierError(f"{name} wants a list like [0,1]: {word!r}")
            return Modifier(name, tuple(parse_int(v) for v in split_top(value[1:-1], ",") if v.strip()))
        if name in NAMES:
            if value.upper() not in NAMES[name]:
                raise ModifierError(f"unknown {name} value in {word!r}")
            return Modifier(name, value.upper())
        if name == "offset" and value.lower().startswith("swizzle("):
            return Modifier(name, parse_operand(value))
        if name in INTS:
            return Modifier(name, parse_int(value))
        if name in FLAGS:  # bound_ctrl-like flags written name:1
            return Modifier(name, parse_int(value))
    except OperandError as exc:
        raise ModifierError(f"{word!r}: {exc}") from None
    raise ModifierError(f"unknown modifier {word!r}")
