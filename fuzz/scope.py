"""What is in scope at one point of a kernel (Env, a list of Values) and how a relative reference picks among it.

Operands are relative references: a statement names "the k-th most recent earlier value that this slot accepts".
Why a module of its own: the program walker (fuzz/program.py) resolves references against an Env and the
generator (fuzz/statements.py) draws them against the very same one, so a drawn reference always means what the
renderer will resolve it to; both import this module, neither owns it.
"""
from __future__ import annotations

from dataclasses import dataclass

from .opdef import VType


@dataclass
class Value:
    name: str
    type: VType
    strides: tuple = ()  # pointer values: the names of their stride arguments
    from_load: bool = False  # derived from a load inside the innermost enclosing loop (coverage: K-loops)
    uses: int = 0

    @property
    def base(self):
        return self.name

    def __str__(self):
        return self.name

    __format__ = lambda self, spec: format(self.name, spec)  # noqa: E731  (emitters write f"{value}")



def carriable(env):
    """Values a loop may carry: tensors and scalars, but never constexprs (their type could not stay fixed)."""
    return [v for v in env.values if v.type.kind == "t" and v.type.mode != "constexpr"]


class Env:
    """The values visible at one point of the kernel; children see their parent's values, not the other way."""

    def __init__(self, values=None, outputs=None):
        self.values: list[Value] = list(values or [])
        self.outputs: list[Value] = outputs if outputs is not None else []

    def child(self) -> "Env":
        return Env(self.values, self.outputs)

    def define(self, value: Value) -> Value:
        self.values.append(value)
        return value

    def candidates(self, op, slot, chosen_types) -> list[Value]:
        pool = self.outputs if op.name in ("store", "atomic") and slot == op.arity - 1 else self.values
        return [v for v in pool if op.accepts(slot, v.type, tuple(chosen_types))]

    def resolve(self, op, refs) -> list[Value] | None:
        if len(refs) != op.arity:
            return None
        chosen: list[Value] = []
        for slot, ref in enumerate(refs):
            cands = self.candidates(op, slot, [v.type for v in chosen])
            if not cands or not isinstance(ref, int) or ref < 0:
                return None
            chosen.append(cands[-1 - (ref % len(cands))])
        return chosen

    def of_type(self, vtype) -> list[Value]:
        return [v for v in self.values if v.type == vtype]
