"""The op registry: every op the generator can emit, declared once, in one table.

Each entry holds its typing rule (which operand types each slot accepts, what it produces), its attribute choices
and validity constraints, its Triton emission with the undefined-behaviour guard built in, its reference semantics
and the capability it needs (the record is fuzz/opdef.py's OpDef). The generator (fuzz/statements.py), the renderer
(fuzz/render.py), capability probing and coverage all read this table; none keeps a private list.

The ops themselves are declared by class, one module each (fuzz/ops_*.py); this module only lists the classes in
the order the registry holds them. That order is part of the generator's behaviour (it draws ops by position):
reordering the classes, or the ops inside one, changes every generated kernel.
"""
from __future__ import annotations

from . import (ops_cast, ops_constant, ops_debug, ops_dot, ops_dot_scaled, ops_elementwise, ops_index, ops_memory,
               ops_pointer, ops_reduce, ops_shape)
from .opdef import OpDef

REGISTRY_VERSION = 4  # 4: tl.histogram and tl.gather (fuzz/ops_index.py)
OP_CLASSES = (ops_elementwise, ops_cast, ops_constant, ops_reduce, ops_dot, ops_dot_scaled, ops_shape, ops_pointer,
              ops_debug, ops_memory, ops_index)

REGISTRY: dict[str, OpDef] = {}
for _module in OP_CLASSES:
    for _op in _module.OPS:
        assert _op.name not in REGISTRY, _op.name
        REGISTRY[_op.name] = _op


def ops_for(caps) -> list[OpDef]:
    """The ops this Triton/target accepts (capability probing decides)."""
    return [op for op in REGISTRY.values() if not op.needs or caps.has(op.needs)]
