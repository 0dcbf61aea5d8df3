"""The vocabulary every op declaration is written in: value types (VType), the op record (OpDef) and the small
typing helpers the op classes share.

Why a module of its own: the op classes (fuzz/ops_*.py) and the registry that lists them (fuzz/ops.py) both need
these names, and the program walker and generator speak VType too; kept apart from any op, they can be imported
without pulling in the registry, and the registry can import every op class without an import circle.

`ref(k, xs, types, attrs, node)` is an op's reference semantics for the execution oracle: `k` is the oracle's
evaluation kit (oracle/evaluate.py: torch arithmetic on tracked values plus the simulated memory of one program),
`xs` the operands' values, `node` what the program walker resolved (masking, loop offsets). The registry stays free
of torch imports; the kit supplies the numerics.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from . import dtypes as D


class VType(NamedTuple):
    kind: str  # "t" tensor/scalar value, "ptr" input pointer, "out" output pointer
    dtype: str
    axes: str  # "" scalar; letters from M N K, plus a trailing "2" after a join
    mode: str = ""  # outputs: "store" | "atomic"


def T(dtype, axes=""):
    return VType("t", dtype, axes)


def is_t(v, dtypes=None):
    """A tensor or scalar value (of one of `dtypes`); raw MX codes only where a slot names them."""
    if dtypes is None:
        return v.kind == "t" and v.dtype not in D.MX_CODES
    return v.kind == "t" and v.dtype in dtypes


def same_or_scalar(a, b):
    return a.axes == b.axes or a.axes == "" or b.axes == ""


def wider_axes(*types):
    return max((t.axes for t in types), key=len)


@dataclass(frozen=True)
class OpDef:
    name: str
    family: str
    arity: int
    accepts: Callable  # (slot, candidate VType, chosen VTypes so far) -> bool
    result: Callable  # (types, attrs, ctx) -> list[VType]
    emit: Callable  # (names, types, attrs, ctx) -> expression (or statement when result is empty)
    draw_attrs: Callable = field(default=lambda draw, types, caps: {})
    valid: Callable = field(default=lambda types, attrs, ctx: True)
    needs: str = ""  # capability key (see fuzz/capabilities.py); "" = always present
    ub_guard: str = ""  # what the emission does to exclude undefined behaviour
    ref: Callable = None  # (kit, operand values, types, attrs, node) -> result value(s); see the module docstring



def first_dtypes(dtypes):
    return lambda slot, v, chosen: is_t(v, dtypes) if slot == 0 else (
        is_t(v, (chosen[0].dtype,)) and same_or_scalar(chosen[0], v))


def keep_type(types, attrs, ctx):
    return [VType("t", types[0].dtype, wider_axes(*types) if len(types) > 1 else types[0].axes)]


def pin(expr, dtype):
    return f"({expr}).to({D.tl(dtype)})"
