"""Writing a kernel's statements by name: the kernel shapes (fuzz/shapes.py) spell out attention, GEMM epilogues
and their kin as sequences of registry ops, each placed through the same Generator and Walker as a random statement.

Why a module of its own: a shape names the values it combines ("the running max", "the accumulator"), while the
statement language refers to operands relatively ("the k-th most recent value this slot accepts"). This module
turns one into the other, so a shape's output is ordinary statements: rendered, run, judged, reduced and bisected
like any generated kernel, with the op registry's references as its oracle.
"""
from __future__ import annotations

from .opdef import VType
from .ops import REGISTRY
from .scope import Value, carriable


class Incomplete(Exception):
    """A statement of the shape could not be placed (the target lacks the op, or the op rejects its operands):
    the kernel keeps what was placed so far and the random generator finishes it."""


class Builder:
    """Appends named statements to a Generator's spec, at top level or inside the loop being built."""

    def __init__(self, gen):
        self.gen = gen
        self.env = gen.env
        self.body = gen.spec.body
        self.depth = 1

    def value(self, name: str) -> Value:
        """An argument by name: `in_0`, `sa_1`, `pid_m`."""
        for v in self.env.values:
            if v.name == name:
                return v
        raise Incomplete(f"no value {name}")

    def op(self, name: str, *operands: Value, **attrs) -> Value:
        """Place `name(operands)` with `attrs`; its first result."""
        opdef = REGISTRY[name]
        refs, chosen = [], []
        for slot, v in enumerate(operands):
            try:
                refs.append(self.gen.ref_to(self.env, opdef, slot, chosen, v))
            except ValueError:
                raise Incomplete(f"{name} does not take {v.name}: {v.type} in slot {slot}") from None
            chosen.append(v)
        got = self.gen.try_op(self.env, self.body, name, refs, attrs)
        if not got or got[0] is None:
            if got and name in ("store", "atomic"):
                return None
            raise Incomplete(f"{name}{tuple(v.type for v in operands)} {attrs} was rejected")
        return got[0]

    def full(self, dtype, axes, value) -> Value:
        return self.op("full", dtype=dtype, axes=axes, value=value)

    def expand(self, v: Value, axis: str, position: int) -> Value:
        """expand_dims + broadcast_to: a reduction's result back to a tile, as `x[:, None]` does."""
        return self.op("expand", v, axis=axis, position=position)

    def reduce(self, name, v: Value, axis: int) -> Value:
        return self.op(name, v, axis=axis, promote=False)

    def cast(self, v: Value, dtype: str) -> Value:
        return v if v.type.dtype == dtype else self.op("cast", v, dtype=dtype)

    def load(self, ptr: Value, masked=True) -> Value:
        return self.op("load", ptr, masked=masked, other=0)

    def store(self, v: Value, mode="store", **attrs):
        """Store (or atomically combine) `v` into the output of its dtype and axes (Generator.output_for: one
        store per output)."""
        out = self.gen.output_for(v.type.dtype, v.type.axes, mode)
        if out is None:
            raise Incomplete(f"no output left for {v.type} (a value of that type was stored already)")
        return self.op(mode, v, out, **attrs)

    def loop(self, carried: list, body, trip=("cdiv", "K"), stages=None) -> list:
        """A `for` loop carrying `carried`: `body(index, carried_in)` places the loop's statements and returns the
        values to yield, one per carried value. Returns the loop's results (what the carried values are after it)."""
        env, gen = self.env, self.gen
        tensors = carriable(env)
        try:
            carry = [len(tensors) - 1 - tensors.index(v) for v in carried]
        except ValueError:
            raise Incomplete("a loop can carry only tensors and scalars") from None
        node = {"trip": list(trip), "stages": stages, "carry": carry, "body": [], "yield": []}
        inner = env.child()  # mirrors Walker.for_stmt's scope, as Generator.gen_for does
        index = inner.define(Value("k", VType("t", "i32", "")))
        cvals = [inner.define(Value(f"c{i}", v.type)) for i, v in enumerate(carried)]
        gen.walker.loops.append({"trip": list(trip)})
        saved = (self.env, self.body, self.depth)
        self.env, self.body, self.depth = inner, node["body"], self.depth + 1
        try:
            yields = body(index, cvals)
        finally:
            self.env, self.body, self.depth = saved
            gen.walker.loops.pop()
        for c, y in zip(cvals, yields):
            same = inner.of_type(c.type)
            if y not in same:
                raise Incomplete(f"a loop cannot yield {y.type} for {c.type}")
            node["yield"].append(len(same) - 1 - same.index(y))
        before = len(env.values)
        self.body.append({"for": node})
        gen.walker.for_stmt(node, env, self.depth)
        gen.walker.lines.clear()
        gen.budget -= 1
        return env.values[before:]
