"""A reader for the YAML of an ``.amdgpu_metadata`` block (AMDGPU code object metadata, AMDGPUUsage "Code Object
V3 to V6 Metadata"), and only for the subset LLVM writes there.

Why our own: PyYAML is not a gfxhound dependency, and the metadata LLVM emits (its msgpack document printed as
YAML) uses a small, regular subset: block mappings and block sequences indented by blanks, ``- key: value``
items that open a mapping, plain scalars, ``'single'`` and ``"double"`` quoted strings, ``[a, b]`` flow
sequences, ints (decimal or 0x hex), ``true``/``false``, and the ``---`` / ``...`` document markers. Anything else
(anchors, tags, block scalars ``|``, flow mappings) raises ``YamlError``, never a guess.
"""
from __future__ import annotations

import re


class YamlError(ValueError):
    """Metadata text outside the subset this reader knows (one line, with the line number)."""


_KEY = re.compile(r"^([^\s'\"\[\]{}#][^:]*?):(?:\s+(.*))?$")


def _scalar(text: str, number: int):
    text = text.strip()
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise YamlError(f"line {number}: unterminated quoted string {text!r}")
        return text[1:-1].replace("''", "'")
    if text.startswith('"'):
        if not text.endswith('"') or len(text) < 2:
            raise YamlError(f"line {number}: unterminated quoted string {text!r}")
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError(f"line {number}: a flow sequence over several lines: {text!r}")
        inner = text[1:-1].strip()
        return [_scalar(part, number) for part in inner.split(",")] if inner else []
    if text.startswith("!str "):   # llc tags a name YAML would read as a boolean (n, y, no, on): a string
        return _scalar(text[5:], number) if text[5:].strip()[:1] in "'\"" else text[5:].strip()
    if text[:1] in "{&*!|>":
        raise YamlError(f"line {number}: YAML this reader does not know: {text!r}")
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text, 16)
    return text


def _lines(text: str) -> list:
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
        if "\t" in raw[:len(raw) - len(raw.lstrip())]:
            raise YamlError(f"line {number}: a tab in the indentation")
        out.append([len(raw) - len(raw.lstrip(" ")), stripped, number])
    return out


def _block(lines: list, at: int, indent: int) -> tuple:
    """(value, next line) of the block whose lines start at column `indent`."""
    if lines[at][1].startswith("-") and lines[at][1][1:2] in ("", " "):
        return _sequence(lines, at, indent)
    return _mapping(lines, at, indent)


def _mapping(lines: list, at: int, indent: int) -> tuple:
    out = {}
    while at < len(lines) and lines[at][0] == indent:
        _, text, number = lines[at]
        found = _KEY.match(text)
        if not found or text.startswith("- "):
            break
        key, value = found.group(1).strip(), found.group(2)
        if key in out:
            raise YamlError(f"line {number}: key {key} twice")
        at += 1
        if value is not None and value.strip():
            out[key] = _scalar(value, number)
        elif at < len(lines) and (lines[at][0] > indent or
                                  (lines[at][0] == indent and lines[at][1].startswith("- "))):
            out[key], at = _block(lines, at, lines[at][0])
        else:
            out[key] = None
    if at < len(lines) and lines[at][0] > indent:
        raise YamlError(f"line {lines[at][2]}: unexpected indentation")
    return out, at


def _sequence(lines: list, at: int, indent: int) -> tuple:
    out = []
    while at < len(lines) and lines[at][0] == indent and lines[at][1].startswith("-"):
        _, text, number = lines[at]
        rest = text[1:].strip()
        if not rest:  # "-" alone: the item is the block below
            at += 1
            item, at = _block(lines, at, lines[at][0]) if at < len(lines) and lines[at][0] > indent else (None, at)
        elif _KEY.match(rest) and not rest.startswith(("'", '"', "[")):
            lines[at] = [indent + len(text) - len(rest), rest, number]  # "- k: v" opens a mapping at k's column
            item, at = _mapping(lines, at, lines[at][0])
        else:
            item, at = _scalar(rest, number), at + 1
        out.append(item)
    return out, at


def load(text: str):
    """The document in `text` (a mapping, a sequence, or None when empty)."""
    lines = _lines(text)
    if not lines:
        return None
    value, at = _block(lines, 0, lines[0][0])
    if at != len(lines):
        raise YamlError(f"line {lines[at][2]}: cannot read {lines[at][1]!r}")
    return value
