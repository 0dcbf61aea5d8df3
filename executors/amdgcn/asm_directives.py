"""The directives of an assembly text that describe kernels rather than code: each ``.amdhsa_kernel`` block (the
kernel descriptor as assembler directives, AMDGPUUsage "Code Object V3 and Above Directives"), the
``.amdgpu_metadata`` YAML (asm_yaml.py) and the ``.set`` symbols some descriptor values are written with.

Why apart from asm.py: abi.py needs these and nothing of the instructions; asm.py needs nothing of these.
A descriptor value is kept as text and evaluated on request (``value``): LLVM writes most as numbers, but from
LLVM 19 the resource counts may be expressions over ``.set`` symbols (``max(totalnumvgprs(k.num_agpr,
k.num_vgpr), 1, 0)``); ``value`` evaluates numbers, symbols, + - * and max/min, and says it cannot (None)
rather than guess at a function it does not know.
"""
from __future__ import annotations

import re

from gfxhound.executors.amdgcn import asm_yaml
from gfxhound.executors.amdgcn.asm import AsmError, strip_comment

_TOKEN = re.compile(r"\s*(0x[0-9a-fA-F]+|\d+|[A-Za-z_.$][\w.$]*|[-+*(),])")


def kernel_descriptors(text: str) -> dict:
    """{kernel name: {field without ".amdhsa_": value text}} for every .amdhsa_kernel block."""
    out, name, fields = {}, None, None
    for number, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw).strip()
        if line.startswith(".amdhsa_kernel"):
            parts = line.split(None, 1)
            if len(parts) != 2:
                raise AsmError(f"line {number}: .amdhsa_kernel without a name: {line}")
            name, fields = parts[1].strip(), {}
        elif line.startswith(".end_amdhsa_kernel"):
            if name is None:
                raise AsmError(f"line {number}: .end_amdhsa_kernel without .amdhsa_kernel")
            out[name], name = fields, None
        elif name is not None and line:
            key, _, value = line.partition(" ")
            if not key.startswith(".amdhsa_"):
                raise AsmError(f"line {number}: not a kernel descriptor directive: {line}")
            fields[key[len(".amdhsa_"):]] = value.strip()
    if name is not None:
        raise AsmError(f".amdhsa_kernel {name} has no .end_amdhsa_kernel")
    return out


def metadata(text: str) -> dict:
    """The .amdgpu_metadata document ({} when the text has none)."""
    found = re.search(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata\s*$", text, re.S | re.M)
    if not found:
        return {}
    try:
        return asm_yaml.load(found.group(1)) or {}
    except asm_yaml.YamlError as exc:
        raise AsmError(f".amdgpu_metadata: {exc}") from None


def set_symbols(text: str) -> dict:
    """{symbol: expression text} of every `.set NAME, EXPR` (and `NAME = EXPR`)."""
    out = {}
    for raw in text.splitlines():
        line = strip_comment(raw).strip()
        found = re.match(r"^\.set\s+([\w.$]+)\s*,\s*(.+)$", line) or re.match(r"^([\w.$]+)\s*=\s*(.+)$", line)
        if found:
            out[found.group(1)] = found.group(2).strip()
    return out


def value(expression: str, symbols: dict | None = None, depth: int = 0):
    """The integer `expression` stands for, or None when it uses what this evaluator does not know."""
    symbols = symbols or {}
    tokens, at = [], 0
    while at < len(expression.strip()):
        found = _TOKEN.match(expression, at)
        if not found:
            return None
        tokens.append(found.group(1))
        at = found.end()
    try:
        result, rest = _sum(tokens, symbols, depth)
    except (ValueError, IndexError, KeyError):
        return None
    return result if not rest else None


def _sum(tokens: list, symbols: dict, depth: int):
    result, tokens = _product(tokens, symbols, depth)
    while tokens and tokens[0] in "+-":
        sign, (rhs, tokens) = tokens[0], _product(tokens[1:], symbols, depth)
        result = result + rhs if sign == "+" else result - rhs
    return result, tokens


def _product(tokens: list, symbols: dict, depth: int):
    result, tokens = _atom(tokens, symbols, depth)
    while tokens and tokens[0] == "*":
        rhs, tokens = _atom(tokens[1:], symbols, depth)
        result *= rhs
    return result, tokens


def _atom(tokens: list, symbols: dict, depth: int):
    head, tokens = tokens[0], tokens[1:]
    if head == "-":
        result, tokens = _atom(tokens, symbols, depth)
        return -result, tokens
    if head == "(":
        result, tokens = _sum(tokens, symbols, depth)
        if tokens[0] != ")":
            raise ValueError(head)
        return result, tokens[1:]
    if head[0].isdigit():
        return int(head, 0), tokens
    if tokens and tokens[0] == "(":
        if head not in ("max", "min"):
            raise ValueError(f"unknown function {head}")
        args, tokens = [], tokens[1:]
        while True:
            arg, tokens = _sum(tokens, symbols, depth)
            args.append(arg)
            if tokens[0] == ")":
                return (max(args) if head == "max" else min(args)), tokens[1:]
            if tokens[0] != ",":
                raise ValueError(tokens[0])
            tokens = tokens[1:]
    if head in symbols and depth < 16:
        result = value(symbols[head], symbols, depth + 1)
        if result is None:
            raise ValueError(head)
        return result, tokens
    raise KeyError(head)
