"""The op behind a wrong result: what keys an unreduced wrong result (docs/identity.md, "wrong result").

Why: a wrong result has no message, and keying it by the random kernel's op list made one bug met through 68
kernels 68 findings. What tells bugs apart cheaply, before any reduction, is the computation the first wrong
output depends on: its backward slice in the resolved program (fuzz/program.py's nodes), and in that slice the op
most likely to be wrong, ranked by the data below (a scaled dot before a dot, a dot before a scan, ...). Reduction
still decides in the end (reduce/regroup.py); this only groups what a campaign counts.
"""
from __future__ import annotations

import re

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.axes import K_VIEWS
from gfxhound.fuzz.ops import REGISTRY, ops_dot_scaled as scaled_ops  # the registry's MX format and role tables

# most specific first: the slice's op whose family comes first names the wrong result
FAMILY_ORDER = ("dot", "scan", "histogram", "gather", "reduce", "cast", "atomic", "shape", "math", "select", "compare",
                "elementwise", "constant", "memory")
# tl.dot_scaled operand formats by what lowers them: 16-bit operands take their scale as a separate multiply, fp4
# is unpacked in software on most targets, fp8 goes to the scaled MFMA where there is one
FORMAT_CLASS = {"e2m1": "fp4", "e4m3": "fp8", "e5m2": "fp8", "bf16": "16-bit", "fp16": "16-bit"}
# what sets one scaled dot's bugs apart, most specific first: a scaled dot is named by the first that holds
SCALED_TRAITS = ("scaled 16-bit operand", "16-element scale groups", "fp4 operand", "fp8 operand", "16-bit operands")
# the comparison's lines (oracle/compare.py) and the guard check's (oracle/execute.py), first wrong output first
_WRONG_OUTPUT = re.compile(r"^(out_\d+)(?: \(\w+, \w+\): \d+ of \d+ elements wrong|(: a guard region))", re.M)


def scaled_dot_sides(op_name: str, types) -> list:
    """[(side, format class, scaled, group)] of one tl.dot_scaled* op's operands, from the registry's roles."""
    ops = dict(zip(scaled_ops.SCALED_ROLES[op_name], types))
    sides = []
    for side in ("lhs", "rhs"):
        scale = ops.get(side + "_scale")
        sides.append((side, FORMAT_CLASS[scaled_ops.MX_FORMATS[ops[side].dtype]], scale is not None,
                      K_VIEWS[scale.axes[1]] if scale is not None else 32))
    return sides


def scaled_dot_layout(op_name: str, types) -> str:
    """Operand format classes with their scales, and the scale group: 'fp4+scale x fp8+scale, groups of 16'."""
    sides = scaled_dot_sides(op_name, types)
    groups = sorted({group for _, _, scaled, group in sides if scaled})
    text = " x ".join(sorted(f"{cls}{'+scale' if scaled else ''}" for _, cls, scaled, _ in sides))
    return text + (f", groups of {groups[0]}" if groups else "")


def scaled_dot_trait(op_name: str, types) -> "tuple[int, str]":
    """(rank, trait) of a scaled dot: its most specific trait in SCALED_TRAITS."""
    sides = scaled_dot_sides(op_name, types)
    holds = {"scaled 16-bit operand": any(cls == "16-bit" and scaled for _, cls, scaled, _ in sides),
             "16-element scale groups": any(scaled and group == 16 for _, _, scaled, group in sides),
             "fp4 operand": any(cls == "fp4" for _, cls, _, _ in sides),
             "fp8 operand": any(cls == "fp8" for _, cls, _, _ in sides), "16-bit operands": True}
    rank = next(i for i, trait in enumerate(SCALED_TRAITS) if holds[trait])
    return rank, SCALED_TRAITS[rank]


def wrong_output(message: str) -> "tuple[str, bool]":
    """(the first output the comparison found wrong, whether it was a write past its end), or ('', False)."""
    found = _WRONG_OUTPUT.search(message or "")
    return (found.group(1), bool(found.group(2))) if found else ("", False)


def _flatten(nodes, deps, producer):
    """Fill deps (value -> the values it is computed from) and producer (value -> its op node)."""
    for node in nodes:
        kind = node.get("k")
        if kind == "op":
            for out in node.get("out", []):
                producer[out] = node
                deps.setdefault(out, []).extend(node["args"])
        elif kind == "for":
            for name, value in node.get("init", []) + node.get("yields", []):
                deps.setdefault(name, []).append(value)
            _flatten(node.get("body", []), deps, producer)
        elif kind == "if":
            for name, then_value, else_value in node.get("yields", []):
                deps.setdefault(name, []).extend([then_value, else_value] + ([node["cond"]] if node.get("cond")
                                                                               else []))
            _flatten(node.get("then", []), deps, producer)
            _flatten(node.get("else", []), deps, producer)


def _writers(nodes, output):
    for node in nodes:
        if node.get("k") == "op" and node["op"] in ("store", "atomic") and node["args"][-1:] == [output]:
            yield node
        for key in ("body", "then", "else"):
            yield from _writers(node.get(key, []), output)


def slice_ops(nodes, output) -> list:
    """The op nodes an output's stored values depend on, its writers (stores, atomics) included."""
    deps, producer = {}, {}
    _flatten(nodes, deps, producer)
    found, seen = [], set()
    todo = []
    for writer in _writers(nodes, output):
        found.append(writer)
        todo += writer["args"][:-1]
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        if value in producer and producer[value] not in found:
            found.append(producer[value])
        todo += deps.get(value, [])
    return found


def describe(node) -> "tuple[tuple, str]":
    """(rank, words) of one op node: its family's place in FAMILY_ORDER, then what of it sets bugs apart."""
    name, types = node["op"], node["types"]
    family = REGISTRY[name].family if name in REGISTRY else "memory"
    place = FAMILY_ORDER.index(family) if family in FAMILY_ORDER else len(FAMILY_ORDER)
    if name.startswith("dot_scaled"):
        rank, trait = scaled_dot_trait(name, types)
        return (place, rank), f"dot_scaled ({trait})"
    dtypes = " ".join(dict.fromkeys(t.dtype for t in types if t.kind == "t"))
    if family == "dot":  # a dot's fp8 formats share its lowering (one bug seen with fp8e4nv and fp8e4b8 alike)
        dtypes = " ".join(dict.fromkeys("fp8" if D.is_fp8(t.dtype) else t.dtype for t in types if t.kind == "t"))
    if name == "cast":
        return (place, 0), f"cast {dtypes} to {node['attrs'].get('dtype', '?')}"
    if name == "atomic":
        return (place, 0), f"atomic {node['attrs'].get('op', '?')} {dtypes}".strip()
    return (place, 0), f"{name} {dtypes}".strip()


def culprit(spec, caps, message: str) -> str:
    """The op behind the first wrong output, in words ('dot_scaled (scaled 16-bit operand)'), or '' when the
    kernel or the message does not say (a user's kernel, a collective, a stray write)."""
    if getattr(spec, "family", "kernels") != "kernels":
        return ""
    output, past_end = wrong_output(message)
    if not output:
        return ""
    from gfxhound.fuzz.program import walk
    try:
        nodes = walk(spec, caps).nodes
        ops = slice_ops(nodes, output)
    except (KeyError, IndexError, TypeError, ValueError):
        return ""
    if not ops:
        return ""
    if past_end:  # a write past the buffer: the writers' addressing, not what they wrote
        return "out-of-bounds " + min(describe(node) for node in _writers(nodes, output))[1]
    return min(describe(node) for node in ops)[1]
