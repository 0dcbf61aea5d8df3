"""The statements that fill the reach matrix's holes (issue #38, docs/reach.md, fuzz/reach.py): ops straight on dot
results and their slices, one runtime condition guarding regions before and after a loop, degenerate block sizes.

Why a module of its own: each is a small template over the ordinary statement language (what it produces is plain
statements the walker, the oracle and the reducer already handle), and the statement generator (fuzz/statements.py,
Generator) is already the size a module should be; Generator takes these as a mixin.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import odds
from .opdef import VType
from .ops import REGISTRY
from .scope import carriable


class ReachStatements:
    """Mixed into fuzz/statements.py's Generator: uses its draw, caps, try_op, ref_to, output_for, _gen_if, gen_if,
    gen_for and ensure_cond."""

    def degenerate_block(self, spec):
        """One axis of a kernel without a product gets a block of 1 or 2 ([32, 1] tiles, reductions and scans along
        a size-1 axis, fewer rows than warps): layouts then replicate or broadcast where the lowering patterns are
        least exercised. Drawn before the body, so every statement is drawn against it (tl.dot refuses it)."""
        axis = self.draw(st.sampled_from("MNK"))
        block = self.draw(st.sampled_from(odds.menu(odds.DEGENERATE_BLOCKS)))
        spec.blocks[axis] = block
        spec.sizes[axis] = self.draw(st.integers(1, 3 * block))

    def apply(self, env, body, name, value, **fixed):
        """`name` on `value` as its first operand (attributes drawn, then `fixed` over them); its results or None."""
        op = REGISTRY[name]
        if value not in env.candidates(op, 0, []):
            return None
        attrs = dict(op.draw_attrs(self.draw, (value.type,), self.caps), **fixed)
        return self.try_op(env, body, name, [self.ref_to(env, op, 0, [], value)], attrs)

    def dot_result_ops(self, env, body, acc, depth=0):
        """An op straight on a K-loop's result, in the MMA layout the dot left it in, and (reduce_then) one on the
        slice a reduction of it leaves, or an `if` that yields that slice (scf.if with a slice(MMA) result): what
        the lowering meets on a dot result only when no store or other op in between made the compiler convert it
        first (fuzz/reach.py)."""
        draw = self.draw
        kind = odds.pick(draw, odds.DOT_RESULT_MENU)
        if kind == "join":
            op = REGISTRY["join"]
            if acc in env.candidates(op, 0, []) and acc in env.candidates(op, 1, [acc.type]):
                ref = self.ref_to(env, op, 0, [], acc)
                self.try_op(env, body, "join", [ref, self.ref_to(env, op, 1, [acc], acc)], {})
            return
        if kind in ("histogram", "gather"):
            return self.dot_result_index(env, body, kind, acc)
        got = self.apply(env, body, "sum" if kind == "reduce_then" else kind, acc)
        if got and kind == "reduce_then" and got[0] is not None and got[0].type.axes:
            then = draw(st.sampled_from(["scan", "expand", "max", "scan", "if"]))
            if then == "if":
                self.if_yielding(env, body, depth, got[0])
                return
            self.apply(env, body, then, got[0], **({} if then == "expand" else {"axis": 0}))

    def if_yielding(self, env, body, depth, value):
        """`if c: y = op(value) else: y = value`: an scf.if whose result has `value`'s layout (a dot result's slice:
        slice(MMA)). The then-branch computes, so canonicalisation cannot fold the if into nothing or a select of
        two existing values."""
        node = {"cond": self.ensure_cond(env, body), "types": [list(value.type)], "then": [], "then_yield": [0],
                "else": [], "else_yield": [0]}
        if not self.apply(env.child(), node["then"], self.draw(st.sampled_from(["neg", "abs"])), value):
            return
        body.append({"if": node})
        self.walker.if_stmt(node, env, depth)
        self.walker.lines.clear()
        self.budget -= 1

    def dot_result_index(self, env, body, kind, acc):
        """tl.histogram of a dot result's slice (an argmax/argmin along one axis: i32 positions, in the slice of the
        MMA layout, which HistogramOpToLLVM lowers as it is), or tl.gather of the dot result by indices made from it
        (Triton 3.9.0 gives a gather a blocked layout of its own, so this reaches convert_layout mma->blocked)."""
        draw = self.draw
        if kind == "histogram":
            got = self.apply(env, body, draw(st.sampled_from(["argmax", "argmin"])), acc)
            if got and got[0] is not None:
                hist = self.apply(env, body, "histogram", got[0])
                self.keep(env, body, hist[0] if hist else None)
            return
        index = acc
        if acc.type.dtype != "i32":
            got = self.apply(env, body, "cast", acc, dtype="i32", rounding=None)
            if not got or got[0] is None:
                return
            index = got[0]
        op = REGISTRY["gather"]
        if acc in env.candidates(op, 0, []) and index in env.candidates(op, 1, [acc.type]):
            attrs = op.draw_attrs(draw, (acc.type, index.type), self.caps)
            got = self.try_op(env, body, "gather", [self.ref_to(env, op, 0, [], acc),
                                                    self.ref_to(env, op, 1, [acc], index)], attrs)
            self.keep(env, body, got[0] if got else None)

    def keep(self, env, body, value):
        """Add `value` atomically into an output right where it was made (an exact i32 add for a histogram's
        counts): a pure op whose result nothing reads is deleted before TTGIR, so without a user its cell is never
        reached; atomics are order-free across programs and loop iterations, which a store in a loop is not."""
        op, draw = REGISTRY["atomic"], self.draw
        if value is None or "2" in value.type.axes or not self.caps.has(f"atomic:add:{value.type.dtype}"):
            return
        out = self.output_for(value.type.dtype, value.type.axes, "atomic")
        if out is None or value not in env.candidates(op, 0, []) or out not in env.candidates(op, 1, [value.type]):
            return
        scopes = [s for s in self.caps.atomic_scopes if s != "cta"] or ["gpu"]  # programs share the address
        attrs = {"op": "add", "sem": draw(st.sampled_from(self.caps.atomic_sems)),
                 "scope": draw(st.sampled_from(scopes))}
        self.try_op(env, body, "atomic", [self.ref_to(env, op, 0, [], value), self.ref_to(env, op, 1, [value], out)],
                    attrs)

    def guarded_effect(self, env, body):
        """An i32 scalar atomically added to a scalar output: a side effect, so canonicalisation cannot fold the if
        that guards it into a select or drop it (exact and order-free, so the oracle's reference is exact too)."""
        op, draw = REGISTRY["atomic"], self.draw
        values = [v for v in env.candidates(op, 0, []) if v.type == VType("t", "i32", "")]
        out = self.output_for("i32", "", "atomic") if values and self.caps.has("atomic:add:i32") else None
        if out is None or out not in env.candidates(op, 1, [values[-1].type]):
            return
        scopes = [s for s in self.caps.atomic_scopes if s != "cta"] or ["gpu"]  # programs share the address
        attrs = {"op": "add", "sem": draw(st.sampled_from(self.caps.atomic_sems)),
                 "scope": draw(st.sampled_from(scopes))}
        self.try_op(env, body, "atomic", [self.ref_to(env, op, 0, [], values[-1]),
                                          self.ref_to(env, op, 1, [values[-1]], out)], attrs)

    def cond_ref(self, env, cond):
        """The reference that resolves to `cond` among the scalar conditions in scope (program.py, if_stmt)."""
        conds = [v for v in env.values if v.type == VType("t", "i1", "")]
        return len(conds) - 1 - conds.index(cond) if cond in conds else None

    def gen_cond_regions(self, env, body, depth):
        """`if c: ...`, a loop, `if c: ...` on the same runtime scalar (AMD's if-combining pass pairs such ifs up,
        the loop between them is what it must respect), with c tested again inside a then-branch it guards some of
        the time; each branch has a side effect (guarded_effect) that keeps the ifs in TTGIR. Each part is an
        ordinary statement: the reducer drops them one by one."""
        draw = self.draw
        conds = [v for v in env.values if v.type == VType("t", "i1", "")]
        cond = conds[-1 - self.ensure_cond(env, body)] if conds else None
        if cond is None:
            conds = [v for v in env.values if v.type == VType("t", "i1", "")]
            cond = conds[-1] if conds else None
        if cond is None:
            return self.gen_if(env, body, depth)
        self._gen_if(env, body, depth, self.cond_ref(env, cond), [], retest=cond)
        self.gen_for(env, body, depth, kloop=False)
        ref = self.cond_ref(env, cond)
        if ref is not None:
            types = [list(draw(st.sampled_from(sorted({v.type for v in carriable(env) if v.type.axes}))))] \
                if any(v.type.axes for v in carriable(env)) and draw(st.booleans()) else []
            self._gen_if(env, body, depth, ref, types, retest=cond)
