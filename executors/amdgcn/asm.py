"""The assembly text llc (or Triton's code generator) writes for gfx942/gfx950, decoded once into a program:
per function, its instructions as frozen records (mnemonic, encoding, typed operands, modifiers), its labels as
instruction indices, and every branch's target resolved.

Why decode once: the executor (machine.py) runs a wave's instructions many times; it should index records, not
re-read text, and a statement it cannot decode must be known before the first instruction runs, so that the run
is reported ``unresolved`` instead of diverging half-way. Hence every unknown form raises ``AsmError`` naming the
line and the statement: the decode never guesses.

What is read (LLVM's assembly output; llvm/docs/AMDGPUInstructionSyntax.rst): ``;`` and ``//`` comments,
``.section``/``.text`` (instructions live in text sections), ``.type NAME,@function`` + ``NAME:`` (a function
starts), ``.size NAME`` (it ends), local labels (``.LBB0_2:``), ``.p2align`` inside a function (kept as
alignment marks: the kernarg-preload entry is the 256-byte-aligned point after the compatibility prologue, see
abi.py), and instruction statements ``mnemonic op, op, ... mod mod``. Other directives (``.globl``, ``.set``, the
``.amdhsa_kernel`` block, metadata) are not instructions; asm_directives.py reads those that matter.

Mnemonics are normalised: ``v_add_u32_e32`` is mnemonic ``v_add_u32`` with encoding ``e32``; the suffixes
``_e32``, ``_e64``, ``_sdwa``, ``_dpp`` and ``_e64_dpp`` are taken off and kept in ``encoding`` ("" when none
was written: VOP3-only, SOP, SMEM, FLAT, DS ... instructions).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gfxhound.executors.amdgcn.asm_modifiers import Modifier, ModifierError, is_modifier, parse_modifier
from gfxhound.executors.amdgcn.asm_operands import (WAITCNT, Label, OperandError, operand_from_json, operand_to_json,
                                          parse_operand, split_top)

PROGRAM_FORMAT = 1  # the newest Program JSON this module reads
ENCODINGS = ("e64_dpp", "e32", "e64", "sdwa", "dpp")
_SUFFIX = re.compile(r"^(v_\w+?)_(e64_dpp|e32|e64|sdwa|dpp)$")
_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):(.*)$")
_MNEMONIC = re.compile(r"^[a-z][a-z0-9_]*$")
# directives that put bytes where instructions are: inside a function they would be code the decode cannot see
_DATA = frozenset({".byte", ".short", ".hword", ".word", ".long", ".int", ".quad", ".fill", ".zero", ".space",
                   ".skip", ".ascii", ".asciz", ".string", ".inst", ".2byte", ".4byte", ".8byte"})

# blocks read by asm_directives.py, skipped here: their lines are YAML or descriptor fields, not statements
_BLOCKS = {".amdgpu_metadata": ".end_amdgpu_metadata", ".amdhsa_kernel": ".end_amdhsa_kernel"}


def _nop_fill(args: str):
    """N for `.fill N, 4, 0xbf800000` (0xbf800000 is the encoding of s_nop 0, per llvm-mc), else None."""
    parts = [p.strip().lower() for p in args.split(",")]
    if len(parts) == 3 and parts[1] == "4" and parts[2] in ("0xbf800000", "3212836864") and parts[0].isdigit():
        return int(parts[0])
    return None


class AsmError(ValueError):
    """A statement the decode does not know: one line, with the line number and the statement."""


@dataclass(frozen=True)
class Instruction:
    """One instruction. ``operands`` are asm_operands records in the order written (destinations first, as
    llc writes them, including explicit vcc/sdst operands); ``modifiers`` the asm_modifiers records in the order
    written; ``target`` the index (in its function) of the instruction a Label operand names, else None; ``line``
    the 1-based line in the text; ``index`` its position in its function."""
    mnemonic: str
    encoding: str
    operands: tuple
    modifiers: tuple = ()
    target: int | None = None
    line: int = 0
    index: int = 0

    @property
    def name(self) -> str:
        """The mnemonic as written (with its encoding suffix)."""
        return f"{self.mnemonic}_{self.encoding}" if self.encoding else self.mnemonic

    def mod(self, name: str, default=None):
        """The value of modifier `name` (True for a flag), or `default` when it is not written."""
        return next((m.value for m in self.modifiers if m.name == name), default)

    def render(self) -> str:
        """The statement again, from the records alone (tests assemble it next to the original: equal
        encodings mean the records dropped nothing)."""
        text = self.name
        if self.operands:
            text += " " + ", ".join(str(op) for op in self.operands)
        if self.modifiers:
            text += " " + " ".join(str(m) for m in self.modifiers)
        return text

    def to_json(self) -> dict:
        return {"mnemonic": self.mnemonic, "encoding": self.encoding,
                "operands": [operand_to_json(op) for op in self.operands],
                "modifiers": [m.to_json() for m in self.modifiers], "target": self.target, "line": self.line,
                "index": self.index}

    @classmethod
    def from_json(cls, data: dict) -> "Instruction":
        return cls(data["mnemonic"], data["encoding"], tuple(operand_from_json(o) for o in data["operands"]),
                   tuple(Modifier.from_json(m) for m in data["modifiers"]), data["target"], data["line"],
                   data["index"])


@dataclass(frozen=True)
class Function:
    """A function's instructions; ``labels`` maps each local label to the index of the instruction after it
    (len(instructions) for a label at the end); ``aligns`` holds (index, log2 bytes) for each .p2align written
    inside the body, before the instruction at that index."""
    name: str
    instructions: tuple
    labels: tuple = ()
    aligns: tuple = ()

    def label(self, name: str) -> int:
        for label, index in self.labels:
            if label == name:
                return index
        raise KeyError(name)

    def to_json(self) -> dict:
        return {"name": self.name, "instructions": [i.to_json() for i in self.instructions],
                "labels": [list(x) for x in self.labels], "aligns": [list(x) for x in self.aligns]}

    @classmethod
    def from_json(cls, data: dict) -> "Function":
        return cls(data["name"], tuple(Instruction.from_json(i) for i in data["instructions"]),
                   tuple(tuple(x) for x in data["labels"]), tuple(tuple(x) for x in data["aligns"]))


@dataclass(frozen=True)
class Program:
    """Every function of one assembly text, in order; ``target`` the .amdgcn_target string ("" if none)."""
    functions: tuple
    target: str = ""
    format: int = PROGRAM_FORMAT

    def function(self, name: str) -> Function:
        for fn in self.functions:
            if fn.name == name:
                return fn
        raise KeyError(f"no function {name!r} in the program (have: {', '.join(f.name for f in self.functions)})")

    @property
    def processor(self) -> str:
        """gfx942 from "amdgcn-amd-amdhsa--gfx942" or "amdgpu9.42-amd-amdhsa-unknown-gfx942:sramecc+"."""
        found = re.search(r"(gfx\w+)", self.target)
        return found.group(1) if found else ""

    def to_json(self) -> dict:
        return {"format": self.format, "target": self.target, "functions": [f.to_json() for f in self.functions]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @classmethod
    def from_json(cls, data: dict) -> "Program":
        if data.get("format", 0) > PROGRAM_FORMAT:
            raise ValueError(f"program format {data.get('format')} is newer than this gfxhound; upgrade gfxhound")
        return cls(tuple(Function.from_json(f) for f in data["functions"]), data.get("target", ""),
                   data.get("format", PROGRAM_FORMAT))


# ---- statements ---------------------------------------------------------------------------------------------
def strip_comment(line: str) -> str:
    """`line` without its `;` or `//` comment (outside double quotes)."""
    if '"' not in line:   # most lines: no string to skip over
        cut = min((i for i in (line.find(";"), line.find("//")) if i >= 0), default=len(line))
        return line[:cut].rstrip()
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif not quoted and (ch == ";" or line.startswith("//", i)):
            return line[:i].rstrip()
    return line.rstrip()


def split_mnemonic(name: str) -> tuple:
    """("v_add_u32", "e32") from "v_add_u32_e32"; (name, "") when no encoding suffix is written."""
    found = _SUFFIX.match(name)
    return (found.group(1), found.group(2)) if found else (name, "")


def parse_statement(text: str, line: int = 0, index: int = 0) -> Instruction:
    """One instruction statement (comment already stripped). Raises AsmError naming `line`."""
    text = text.strip()
    name, _, rest = text.partition(" ")
    name, rest = name.strip().lower(), rest.strip()
    if "\t" in name:
        name, _, more = name.partition("\t")
        rest = f"{more} {rest}".strip()
    if not _MNEMONIC.match(name):
        raise AsmError(f"line {line}: not an instruction mnemonic {name!r}: {text}")
    mnemonic, encoding = split_mnemonic(name)
    operands, modifiers = [], []
    try:
        segments = [s.strip() for s in split_top(rest, ",")] if rest else []
        for n, segment in enumerate(segments):
            if WAITCNT.match(segment):  # s_waitcnt vmcnt(0) lgkmcnt(0): one operand, blanks inside
                operands.append(parse_operand(segment))
                continue
            words = split_top(segment, " ")
            if not words:
                raise AsmError(f"line {line}: an empty operand: {text}")
            last = n == len(segments) - 1
            if last and len(segments) == 1 and is_modifier(words[0]):
                first, mods = None, words  # buffer_wbl2 sc0 sc1: no operand, only modifiers
            else:
                first, mods = words[0], words[1:]
            if mods and not last:
                raise AsmError(f"line {line}: modifiers {' '.join(mods)!r} before the last operand: {text}")
            if first is not None:
                operands.append(parse_operand(first))
            modifiers.extend(parse_modifier(word) for word in mods)
    except (OperandError, ModifierError) as exc:
        raise AsmError(f"line {line}: {exc}: {text}") from None
    labels = [op for op in operands if isinstance(op, Label)]
    if len(labels) > 1:
        raise AsmError(f"line {line}: more than one label operand: {text}")
    return Instruction(mnemonic, encoding, tuple(operands), tuple(modifiers), None, line, index)


# ---- the program ------------------------------------------------------------------------------------------
@dataclass
class _Open:
    """A function being read: instructions so far, labels and alignment marks by instruction index."""
    name: str
    instructions: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)
    aligns: list = field(default_factory=list)

    def close(self) -> Function:
        resolved = []
        for ins in self.instructions:
            label = next((op for op in ins.operands if isinstance(op, Label)), None)
            if label is None:
                resolved.append(ins)
                continue
            if label.name not in self.labels:
                raise AsmError(f"line {ins.line}: branch target {label.name} is not a label of function "
                               f"{self.name}: {ins.render()}")
            resolved.append(Instruction(ins.mnemonic, ins.encoding, ins.operands, ins.modifiers,
                                        self.labels[label.name], ins.line, ins.index))
        return Function(self.name, tuple(resolved), tuple(self.labels.items()), tuple(self.aligns))


def _section(directive: str, args: str, current: str, stack: list) -> str:
    if directive in (".text", ".data", ".bss", ".rodata"):
        return directive
    if directive in (".section", ".pushsection"):
        name = split_top(args, ",")[0].strip().strip('"')
        if directive == ".pushsection":
            stack.append(current)
        return name
    if directive in (".popsection", ".previous"):
        return stack.pop() if stack else ".text"
    return current


def parse_program(text: str) -> Program:
    """Every function of an assembly text. Raises AsmError (one line: line number, reason, statement) on a
    statement it does not know, an instruction outside a function or a text section, a branch to a label its
    function lacks, or data bytes inside a function."""
    functions, declared, stack = [], set(), []
    section, target, current = ".text", "", None
    skipping = ""  # the end directive of a block that holds no statements (metadata YAML, a descriptor)
    for number, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw).strip()
        if skipping:
            skipping = "" if line == skipping else skipping
            continue
        if line.split(" ")[0].split("\t")[0] in _BLOCKS:
            skipping = _BLOCKS[line.split(" ")[0].split("\t")[0]]
            continue
        while line:
            found = _LABEL.match(line)
            if not found:
                break
            label, line = found.group(1), found.group(2).strip()
            if label in declared and section.startswith(".text"):
                if current is not None:
                    functions.append(current.close())
                current = _Open(label)
            elif current is not None:
                if label in current.labels:
                    raise AsmError(f"line {number}: label {label} defined twice in {current.name}")
                current.labels[label] = len(current.instructions)
        if not line:
            continue
        if line.startswith("."):
            directive, args = (re.split(r"\s+", line, maxsplit=1) + [""])[:2]
            section = _section(directive, args, section, stack)
            if directive == ".amdgcn_target":
                target = args.strip('"')
            elif directive == ".type" and re.search(r"[@%]function|STT_FUNC", args):
                declared.add(split_top(args, ",")[0].strip())
            elif directive == ".size" and current is not None and split_top(args, ",")[0].strip() == current.name:
                functions.append(current.close())
                current = None
            elif current is not None and section.startswith(".text"):
                if directive in (".p2align", ".p2alignl", ".align", ".balign"):
                    current.aligns.append((len(current.instructions), _align_power(directive, args, number)))
                elif directive == ".fill" and _nop_fill(args) is not None:
                    # llc's kernarg-preload header pads with `.fill N, 4, 0xbf800000`: N words of s_nop 0
                    for _ in range(_nop_fill(args)):
                        current.instructions.append(parse_statement("s_nop 0", number, len(current.instructions)))
                elif directive in _DATA:
                    raise AsmError(f"line {number}: data directive inside function {current.name}: {line}")
            continue
        if current is None:
            raise AsmError(f"line {number}: instruction outside a function: {line}")
        if not section.startswith(".text"):
            raise AsmError(f"line {number}: instruction in section {section}, not in code: {line}")
        current.instructions.append(parse_statement(line, number, len(current.instructions)))
    if current is not None:
        functions.append(current.close())
    return Program(tuple(functions), target)


def _align_power(directive: str, args: str, number: int) -> int:
    value = split_top(args, ",")[0].strip()
    try:
        amount = int(value, 0)
    except ValueError:
        raise AsmError(f"line {number}: alignment {value!r} is not a number: {directive} {args}") from None
    if directive in (".p2align", ".p2alignl"):
        return amount
    if amount <= 0 or amount & (amount - 1):
        raise AsmError(f"line {number}: alignment {amount} is not a power of two: {directive} {args}")
    return amount.bit_length() - 1
