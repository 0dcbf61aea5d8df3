"""The operands of one AMDGCN instruction as typed, frozen records, parsed from the text llc prints.

Why typed records and not strings: the executor reads each operand once (at decode) and must never re-interpret
text while running; a register range, an inline constant and a 32-bit literal behave differently (an inline float
is a value whose bit pattern depends on the operand's width; a literal is 32 bits taken as written), so the record
keeps what the text said and leaves the meaning to the executor. Syntax this module does not know raises
``OperandError``: the executor reports ``unresolved``, it never guesses.

The syntax is LLVM's AMDGPU assembler syntax (llvm/docs/AMDGPUOperandSyntax.rst and AMDGPUModifierSyntax.rst):
what is parsed is listed in ``parse_operand``; nothing here assigns a meaning beyond the text.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields


class OperandError(ValueError):
    """Operand text this parser does not know (the caller adds the line)."""


# ---- records ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reg:
    """``count`` consecutive registers of one file from ``index``: s4 (file "s"), v[0:1] (file "v", count 2),
    a[0:15] (accumulation VGPRs, file "a"), ttmp[4:5] (trap temporaries, file "ttmp")."""
    file: str
    index: int
    count: int = 1

    @property
    def last(self) -> int:
        return self.index + self.count - 1

    def __str__(self) -> str:
        return f"{self.file}{self.index}" if self.count == 1 else f"{self.file}[{self.index}:{self.last}]"


# The named registers of GFX9 (gfx90a/gfx942/gfx950) as llc prints them, with their width in bits. `off` is the
# "no register" of global/scratch/buffer addresses; `null` is GFX10+'s and kept so that text is recognised.
SPECIAL_WIDTH = {
    "vcc": 64, "vcc_lo": 32, "vcc_hi": 32, "exec": 64, "exec_lo": 32, "exec_hi": 32, "m0": 32, "scc": 1,
    "flat_scratch": 64, "flat_scratch_lo": 32, "flat_scratch_hi": 32,
    "xnack_mask": 64, "xnack_mask_lo": 32, "xnack_mask_hi": 32,
    "tba": 64, "tba_lo": 32, "tba_hi": 32, "tma": 64, "tma_lo": 32, "tma_hi": 32,
    "src_shared_base": 64, "src_shared_limit": 64, "src_private_base": 64, "src_private_limit": 64,
    "src_pops_exiting_wave_id": 32, "src_vccz": 1, "src_execz": 1, "src_scc": 1, "src_lds_direct": 32,
    "lds_direct": 32, "vccz": 1, "execz": 1, "off": 0, "null": 0,
}
SPECIAL_ALIASES = {"shared_base": "src_shared_base", "shared_limit": "src_shared_limit",
                   "private_base": "src_private_base", "private_limit": "src_private_limit",
                   "pops_exiting_wave_id": "src_pops_exiting_wave_id"}


@dataclass(frozen=True)
class Special:
    """A named register (vcc, exec_hi, m0, scc, flat_scratch, src_shared_base, ...) or ``off``."""
    name: str

    @property
    def width(self) -> int:
        return SPECIAL_WIDTH[self.name]

    def __str__(self) -> str:
        return self.name


INV2PI = 1 / (2 * math.pi)
INLINE_FLOATS = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)
# 1/(2*pi) as AMD's ISA guides list it among the inline constants: its IEEE encoding at each operand width
INV2PI_BITS = {16: 0x3118, 32: 0x3E22F983, 64: 0x3FC45F306DC9C882}


@dataclass(frozen=True)
class Imm:
    """A number as written: kind "int" (decimal or hex, maybe negative) or "float" (one of the inline floats
    0.5, 1.0, 2.0, 4.0 and their negations, or 1/(2*pi) written 0.15915494...). ``inline`` says whether the
    value is one of the hardware's inline constants (ints -16..64 and those floats); otherwise it is a literal.
    Whether an Imm is a source operand or an encoded field (an SMEM offset, s_nop's count) is the
    instruction's business, not the record's."""
    value: int | float
    text: str
    kind: str = "int"

    @property
    def inline(self) -> bool:
        if self.text.startswith("lit("):  # the disassembler's mark of a literal that could have been inline
            return False
        return self.kind == "float" or -16 <= self.value <= 64

    @property
    def is_inv2pi(self) -> bool:
        return self.kind == "float" and self.text.startswith("0.15915494")

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Label:
    """A reference to a local label (.LBB0_2): a branch target, resolved to an instruction index by asm.py."""
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Symbol:
    """A reference to a symbol, with LLVM's relocation variant and addend as written: ``helper@rel32@lo+4`` is
    Symbol("helper", "rel32@lo", 4). Resolving it (the PC-relative address of a callee) is the executor's."""
    name: str
    variant: str = ""
    addend: int = 0

    def __str__(self) -> str:
        text = self.name + (f"@{self.variant}" if self.variant else "")
        return text + (f"+{self.addend}" if self.addend > 0 else f"{self.addend}" if self.addend else "")


@dataclass(frozen=True)
class Waitcnt:
    """s_waitcnt's operand: the counters written (None: not written, so not waited on)."""
    vmcnt: int | None = None
    expcnt: int | None = None
    lgkmcnt: int | None = None

    def __str__(self) -> str:
        parts = [f"{f.name}({getattr(self, f.name)})" for f in fields(self) if getattr(self, f.name) is not None]
        return " ".join(parts) or "0"


@dataclass(frozen=True)
class Func:
    """A function-like operand kept by name and arguments as written: hwreg(HW_REG_MODE, 0, 4),
    sendmsg(MSG_INTERRUPT), swizzle(QUAD_PERM, 0, 1, 2, 3), gpr_idx(SRC0). Arguments are ints where they read
    as ints, else the text (a symbolic name or a quoted string)."""
    name: str
    args: tuple = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Src:
    """A source with input modifiers: -v1 (neg), |v1| (abs), -|v1| (both), sext(v1) (SDWA sign extension).
    Only a modified source is wrapped, so a plain operand is always the bare record."""
    base: object
    neg: bool = False
    abs: bool = False
    sext: bool = False

    def __str__(self) -> str:
        text = f"|{self.base}|" if self.abs else str(self.base)
        text = f"sext({text})" if self.sext else text
        return f"-{text}" if self.neg else text


OPERAND_TYPES = {cls.__name__: cls for cls in (Reg, Special, Imm, Label, Symbol, Waitcnt, Func, Src)}


# ---- JSON ---------------------------------------------------------------------------------------------------
def operand_to_json(op) -> dict:
    """{"type": "Reg", "file": "s", ...}: the record's fields, a nested Src base as its own object."""
    out = {"type": type(op).__name__}
    for f in fields(op):
        value = getattr(op, f.name)
        out[f.name] = operand_to_json(value) if type(value).__name__ in OPERAND_TYPES else \
            list(value) if isinstance(value, tuple) else value
    return out


def operand_from_json(data: dict):
    cls = OPERAND_TYPES[data["type"]]
    kwargs = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        kwargs[f.name] = operand_from_json(value) if isinstance(value, dict) else \
            tuple(value) if isinstance(value, list) else value
    return cls(**kwargs)


# ---- parsing ------------------------------------------------------------------------------------------------
_REG = re.compile(r"(ttmp|[sva])(?:(\d+)|\[(\d+):(\d+)\])")
_INT = re.compile(r"-?(?:0x[0-9a-f]+|\d+)")
_FLOAT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")
_SYMBOL = re.compile(r"([A-Za-z_$][\w.$]*)((?:@[A-Za-z0-9_]+)*)([-+](?:0x[0-9a-fA-F]+|\d+))?")
WAITCNT = re.compile(r"(vmcnt|expcnt|lgkmcnt)\((\d+)\)")
_FUNCS = ("hwreg", "sendmsg", "swizzle", "gpr_idx")


def parse_int(text: str) -> int:
    text = text.strip().lower()
    if not _INT.fullmatch(text):
        raise OperandError(f"not an integer: {text!r}")
    negative = text.startswith("-")
    value = int(text.lstrip("-"), 0)
    return -value if negative else value


def _number(text: str) -> Imm:
    low = text.lower()
    if _INT.fullmatch(low):
        return Imm(parse_int(low), text, "int")
    if _FLOAT.fullmatch(low):
        value = float(low)
        if value in INLINE_FLOATS:
            return Imm(value, text, "float")
        if low.startswith("0.15915494"):  # only +1/(2*pi) is an inline constant
            return Imm(INV2PI, text, "float")
        raise OperandError(f"float {text} is not an inline constant (llc writes other floats as hex literals)")
    raise OperandError(f"not a number: {text!r}")


def _register(text: str):
    low = text.lower()
    found = _REG.fullmatch(low)
    if found:
        file, single, first, last = found.groups()
        if single is not None:
            return Reg(file, int(single))
        if int(last) < int(first):
            raise OperandError(f"register range {text} ends before it starts")
        return Reg(file, int(first), int(last) - int(first) + 1)
    name = SPECIAL_ALIASES.get(low, low)
    return Special(name) if name in SPECIAL_WIDTH else None


def _func_args(body: str) -> tuple:
    args = []
    for part in split_top(body, ","):
        part = part.strip()
        try:
            args.append(parse_int(part))
        except OperandError:
            args.append(part)
    return tuple(args)


def parse_operand(text: str):
    """One operand. Known: registers (s4, v[0:1], a0, ttmp[4:5]), the named registers of SPECIAL_WIDTH, ints
    (decimal, hex, negative; lit(N), the disassembler's forced literal), the inline floats, labels (.L...),
    symbols with @variants and an addend, vmcnt(N) expcnt(N) lgkmcnt(N) lists, hwreg/sendmsg/swizzle/gpr_idx(...),
    and the input modifiers -x, |x|, abs(x), neg(x), sext(x). Anything else: OperandError."""
    text = text.strip()
    if not text:
        raise OperandError("empty operand")
    if WAITCNT.match(text):
        return _waitcnt(text)
    low = text.lower()
    for wrapper in ("neg", "abs", "sext"):
        if low.startswith(wrapper + "(") and low.endswith(")"):
            inner = parse_operand(text[len(wrapper) + 1:-1])
            return _modified(inner, **{wrapper: True})
    if text.startswith("|") and text.endswith("|") and len(text) > 2:
        return _modified(parse_operand(text[1:-1]), abs=True)
    if text.startswith("-") and not _INT.fullmatch(low) and not _FLOAT.fullmatch(low):
        return _modified(parse_operand(text[1:]), neg=True)
    for name in _FUNCS:
        if low.startswith(name + "(") and low.endswith(")"):
            return Func(name, _func_args(text[len(name) + 1:-1]))
    if low.startswith("lit(") and low.endswith(")"):
        inner = _number(text[4:-1])
        return Imm(inner.value, text, inner.kind)
    reg = _register(text)
    if reg is not None:
        return reg
    if text[0].isdigit() or text[0] == "-":
        return _number(text)
    if text.startswith(".L"):
        if not re.fullmatch(r"\.L[\w.$]*", text):
            raise OperandError(f"label expression {text!r} is not a plain label")
        return Label(text)
    found = _SYMBOL.fullmatch(text)
    if found:
        name, variant, addend = found.groups()
        return Symbol(name, variant.lstrip("@"), parse_int(addend.lstrip("+")) if addend else 0)
    raise OperandError(f"unknown operand {text!r}")


def _modified(inner, neg=False, abs=False, sext=False):
    if isinstance(inner, Src):  # -|v1|, -sext(v1): one record with every modifier
        return Src(inner.base, inner.neg or neg, inner.abs or abs, inner.sext or sext)
    if isinstance(inner, (Label, Symbol, Waitcnt, Func)):
        raise OperandError(f"an input modifier on {inner}")
    return Src(inner, neg, abs, sext)


def _waitcnt(text: str) -> Waitcnt:
    counts, at = {}, 0
    for found in WAITCNT.finditer(text):
        if text[at:found.start()].strip(" &,"):
            break
        if found.group(1) in counts:
            raise OperandError(f"{found.group(1)} twice in {text!r}")
        counts[found.group(1)] = int(found.group(2))
        at = found.end()
    if text[at:].strip():
        raise OperandError(f"unknown s_waitcnt operand {text!r}")
    return Waitcnt(**counts)


def split_top(text: str, sep: str) -> list:
    """`text` split at each `sep` outside brackets and parentheses (a space `sep` splits at runs of blanks)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and (ch == sep or (sep == " " and ch in " \t")):
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if sep == " ":
        parts = [p for p in parts if p]
    return parts
