"""The statement generator: draws a kernel's body (ops, `for` loops, `if`/`else`, early returns) and the
epilogue that stores what nothing consumed.

Why a module of its own: drawing statements is a job apart from drawing the kernel's frame (fuzz/strategies.py:
blocks, sizes, arguments, launch). The generator draws against the same Walker/Env the renderer uses
(fuzz/program.py, fuzz/scope.py), so a drawn operand reference always means what the renderer will resolve it to.
Templates raise the odds of the shapes real kernels have (K-loops feeding tl.dot, pointer selection by a scalar if)
without leaving the statement language: what they produce is ordinary statements that shrink like any other.
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from . import odds
from .opdef import VType
from .ops import REGISTRY, ops_for
from .ops_dot_scaled import SCALED_ROLES
from .program import Walker
from .reach_statements import ReachStatements
from .scope import Value, carriable


class Generator(ReachStatements):
    """Draws one kernel's statements into its spec's body, walking each as it goes so the next draw sees it."""

    def __init__(self, draw, caps, spec, max_ops):
        self.draw, self.caps, self.spec = draw, caps, spec
        matmul = [a["axes"] for a in spec.inputs[:2]] == ["MK", "KN"] or spec.meta.get("mx")
        if not matmul and not spec.meta.get("shape") and odds.chance(draw, odds.DEGENERATE_BLOCK):
            self.degenerate_block(spec)
        self.walker = Walker(spec, caps)
        self.env = self.walker.root_env()
        self.budget = max_ops
        self.stored = set()  # outputs a value was stored to (output_for): one store each
        self.ops = [op for op in ops_for(caps) if odds.OP_WEIGHTS[op.name] > 0]
        self.weights = [max(1, int(odds.OP_WEIGHTS[op.name] * odds.OP_WEIGHT_SCALE)) for op in self.ops]

    # --- single statements ---------------------------------------------------------------------------------------
    def ref_to(self, env, op, slot, chosen, value):
        cands = env.candidates(op, slot, [v.type for v in chosen])
        return len(cands) - 1 - cands.index(value)

    def try_op(self, env, body, op_name, refs, attrs) -> list[Value] | None:
        stmt = {"op": op_name, "args": refs, "attrs": attrs}
        before_drop, before_len = self.walker.features.dropped, len(env.values)
        self.walker.op_stmt(stmt, env, 1)
        if self.walker.features.dropped != before_drop:
            return None
        body.append(stmt)
        self.budget -= 1
        return env.values[before_len:] or [None]

    def random_op(self, env, body):
        draw = self.draw
        for _ in range(odds.OP_TRIES):
            total = sum(self.weights)
            pick = draw(st.integers(0, total - 1))
            for op, w in zip(self.ops, self.weights):
                if pick < w:
                    break
                pick -= w
            refs, chosen = [], []
            for slot in range(op.arity):
                cands = env.candidates(op, slot, [v.type for v in chosen])
                if slot == 0 and op.arity > 1:  # only first operands that some second operand fits
                    cands = [v for v in cands if env.candidates(op, 1, [v.type])]
                if not cands:
                    break
                value = cands[-1 - draw(st.integers(0, min(odds.OPERAND_WINDOW, len(cands) - 1)))]
                refs.append(self.ref_to(env, op, slot, chosen, value))
                chosen.append(value)
            else:
                attrs = op.draw_attrs(draw, tuple(v.type for v in chosen), self.caps)
                got = self.try_op(env, body, op.name, refs, attrs)
                if got is not None and op.name in odds.KEEP_OPS and odds.chance(draw, odds.KEEP_OPS[op.name]):
                    self.keep(env, body, got[0])  # a user, so the op survives to TTGIR (reach_statements.py)
                if got is not None:
                    return True
        return False

    def ensure_cond(self, env, body):
        conds = [v for v in env.values if v.type == VType("t", "i1", "")]
        if conds:
            return self.draw(st.integers(0, min(odds.COND_WINDOW, len(conds) - 1)))
        scalars = [v for v in env.values if v.type.kind == "t" and v.type.axes == "" and v.type.dtype in D.NUMERIC]
        op = REGISTRY["cmpc"]
        target = self.draw(st.sampled_from(scalars))
        ref = self.ref_to(env, op, 0, [], target)
        attrs = {"pred": self.draw(st.sampled_from([">", "<", "==", "!="])), "value": self.draw(st.integers(0, 3))}
        self.try_op(env, body, "cmpc", [ref], attrs)
        return 0

    # --- control flow --------------------------------------------------------------------------------------------
    def gen_for(self, env, body, depth, kloop):
        draw = self.draw
        trip = list(draw(st.sampled_from(odds.menu(odds.LOOP_TRIPS))))
        stages = None
        if self.caps.has("loop:num_stages") and trip[0] != "static" and odds.chance(draw, odds.LOOP_STAGES):
            stages = draw(st.integers(1, 4))
        acc = None
        if kloop:
            a_ptrs = [v for v in env.values if v.type.kind == "ptr" and v.type.axes == "MK"]
            acc_dtype = "i32" if a_ptrs and a_ptrs[0].type.dtype == "i8" and not self.spec.meta.get("mx") else "fp32"
            self.try_op(env, body, "full", [], {"dtype": acc_dtype, "axes": "MN", "value": 0})
            acc = env.values[-1]
        tensors = carriable(env)
        carry = []
        if acc is not None:
            carry.append(len(tensors) - 1 - tensors.index(acc))
        for _ in range(draw(st.integers(0 if kloop else 1, odds.LOOP_CARRIED_MAX))):
            ref = draw(st.integers(0, min(odds.CARRY_WINDOW, len(tensors) - 1))) if tensors else None
            # one value carried under two names is Triton's known loop-carry miscompile (corpus/03cc1f52451e1522,
            # Triton 3.5-3.9): campaigns leave it to that finding's replays instead of refinding it every night
            if ref is not None and ref not in carry:
                carry.append(ref)
        loop = {"trip": trip, "stages": stages, "carry": carry, "body": [], "yield": []}
        # mirror Walker.for_stmt's scope to draw the body against it
        inner = env.child()
        inner.define(Value("k", VType("t", "i32", "")))
        carried = [tensors[-1 - (r % len(tensors))] for r in carry]
        cvals = [inner.define(Value(f"c{i}", v.type)) for i, v in enumerate(carried)]
        self.walker.loops.append({"trip": trip})
        if kloop and self.spec.meta.get("mx"):
            self.mx_body(inner, loop["body"], cvals[0])
        elif kloop:
            self.kloop_body(inner, loop["body"], cvals[0])
        self.block(inner, loop["body"], depth + 1, draw(st.integers(*odds.LOOP_BODY)))
        self.walker.loops.pop()
        for c in cvals:
            same = inner.of_type(c.type)
            loop["yield"].append(0 if c is cvals[0] and kloop else
                                 draw(st.integers(0, min(odds.YIELD_WINDOW, len(same) - 1))))
        body.append({"for": loop})
        before = len(env.values)
        self.walker.for_stmt(loop, env, depth)
        self.walker.lines.clear()
        self.budget -= 1
        results = env.values[before:]
        if kloop and results and results[0].type.axes == "MN" and odds.chance(draw, odds.DOT_RESULT_OPS):
            self.dot_result_ops(env, body, results[0], depth)

    def kloop_body(self, env, body, acc):
        """Loads of an (M,K) and a (K,N) tile, optional elementwise work on them, then acc = dot(a, b, acc)."""
        draw = self.draw
        loads = []
        for axes in ("MK", "KN"):
            ptrs = [v for v in env.values if v.type.kind == "ptr" and v.type.axes == axes
                    and self.caps.has("dot:" + v.type.dtype)]
            if not ptrs:
                return
            loads.append(draw(st.sampled_from(ptrs)))
        if loads[0].type.dtype != loads[1].type.dtype:
            return
        op = REGISTRY["load"]
        vals = []
        for ptr in loads:
            ref = self.ref_to(env, op, 0, [], ptr)
            got = self.try_op(env, body, "load", [ref], {"masked": draw(st.booleans()), "other": 0})
            if not got:
                return
            vals.append(got[0])
        # more loads per iteration: the pipeliner's hard cases
        for _ in range(draw(st.integers(*odds.KLOOP_EXTRA_LOADS))):
            others = [v for v in env.values if v.type.kind == "ptr" and v.type.axes]
            if others:
                self.try_op(env, body, "load", [self.ref_to(env, op, 0, [], draw(st.sampled_from(others)))],
                            {"masked": True, "other": 0})
        if draw(st.booleans()):
            self.random_op(env, body)
        acc = self.bias(env, body, acc) or acc
        dot = REGISTRY["dot_acc"]
        try:
            refs = [self.ref_to(env, dot, 0, [], vals[0]), self.ref_to(env, dot, 1, [vals[0]], vals[1])]
            if (acc.type.dtype == "i32") != (vals[0].type.dtype == "i8"):
                return
            refs.append(self.ref_to(env, dot, 2, vals[:2], acc))
        except ValueError:
            return
        attrs = dot.draw_attrs(draw, (vals[0].type, vals[1].type, acc.type), self.caps)
        self.try_op(env, body, "dot_acc", refs, attrs)

    def mx_body(self, env, body, acc):
        """Loads of the block-scaled operands and their scales, then acc = dot_scaled(...) (tl.dot_scaled's
        operand format follows from the operand's dtype; which scales exist decides which of the four ops)."""
        draw = self.draw
        load = REGISTRY["load"]
        values = {}
        for i, arg in enumerate(self.spec.inputs[:self.spec.meta["mx"]]):
            ptr = next(v for v in env.values if v.name == f"in_{i}")
            got = self.try_op(env, body, "load", [self.ref_to(env, load, 0, [], ptr)],
                              {"masked": draw(st.booleans()), "other": 0})
            if not got:
                return
            values[arg["role"]] = got[0]
        if odds.chance(draw, odds.MX_BODY_EXTRA_OP):
            self.random_op(env, body)
        roles, op = SCALED_ROLES[self.spec.meta["mx_op"]], REGISTRY[self.spec.meta["mx_op"]]
        values["acc"] = acc
        chosen, refs = [], []
        for slot, role in enumerate(roles):
            if values[role] not in env.candidates(op, slot, [v.type for v in chosen]):
                return  # an operand this op cannot take here (the accumulator is not fp32)
            refs.append(self.ref_to(env, op, slot, chosen, values[role]))
            chosen.append(values[role])
        self.try_op(env, body, op.name, refs, {})

    def bias(self, env, body, acc):
        """acc + (a tile loaded in this iteration), as attention kernels add a bias or mask inside the loop."""
        draw = self.draw
        tiles = [v for v in env.values if v.type.kind == "ptr" and v.type.axes == acc.type.axes]
        if not tiles or draw(st.booleans()):
            return None
        got = self.try_op(env, body, "load", [self.ref_to(env, REGISTRY["load"], 0, [], draw(st.sampled_from(tiles)))],
                          {"masked": True, "other": 0})
        if not got:
            return None
        tile = got[0]
        if tile.type.dtype != acc.type.dtype:
            got = self.try_op(env, body, "cast", [self.ref_to(env, REGISTRY["cast"], 0, [], tile)],
                              {"dtype": acc.type.dtype})
            if not got:
                return None
            tile = got[0]
        add = REGISTRY["add"]
        got = self.try_op(env, body, "add", [self.ref_to(env, add, 0, [], acc), self.ref_to(env, add, 1, [acc], tile)],
                          {})
        return got[0] if got else None

    def gen_if(self, env, body, depth, types=None):
        draw = self.draw
        cond = self.ensure_cond(env, body)
        if types is not None:
            return self._gen_if(env, body, depth, cond, [list(t) for t in types])
        types = []
        ptr_types = sorted({v.type for v in env.values if v.type.kind == "ptr"
                            and len([w for w in env.values if w.type == v.type]) >= 2})
        if ptr_types and odds.chance(draw, odds.IF_PTR_SELECT):
            types.append(list(draw(st.sampled_from(ptr_types))))
        tensor_types = sorted({v.type for v in carriable(env) if v.type.axes})
        for _ in range(draw(st.integers(0 if types else 1, odds.IF_TENSOR_YIELDS_MAX))):
            if tensor_types:
                types.append(list(draw(st.sampled_from(tensor_types))))
        return self._gen_if(env, body, depth, cond, types)

    def _gen_if(self, env, body, depth, cond, types, retest=None):
        """`retest`: a condition the then-branch tests again (a nested if on the same scalar); with it each branch
        gets a side effect, so that canonicalisation keeps the if for the AMD passes to see."""
        draw = self.draw
        node = {"cond": cond, "types": types, "then": [], "then_yield": [], "else": [], "else_yield": []}
        elif_chain = bool(types) and types[0][0] == "ptr" and depth < odds.DEPTH_MAX and draw(st.booleans())
        for key in ("then", "else"):
            branch = env.child()
            if retest is not None:
                self.guarded_effect(branch, node[key])
            if key == "then" and retest is not None and self.cond_ref(branch, retest) is not None and \
                    depth < odds.DEPTH_MAX and odds.chance(draw, odds.COND_RETEST):
                self._gen_if(branch, node[key], depth + 1, self.cond_ref(branch, retest), [], retest=retest)
            if key == "else" and elif_chain:  # if / elif / else choosing among pointers
                self.gen_if(branch, node[key], depth + 1, types=types)
            else:
                self.block(branch, node[key], depth + 1, draw(st.integers(*odds.BRANCH_BODY)), in_branch=True)
            for t in types:
                same = branch.of_type(VType(*t))
                node[key + "_yield"].append(draw(st.integers(0, max(0, min(odds.YIELD_WINDOW, len(same) - 1)))))
        body.append({"if": node})
        self.walker.if_stmt(node, env, depth)
        self.walker.lines.clear()
        self.budget -= 1
        if any(t[0] == "ptr" for t in types) and draw(st.booleans()):
            self.try_op(env, body, "load", [0], {"masked": True, "other": 0})

    def gen_return(self, env, body):
        cond = self.ensure_cond(env, body)
        body.append({"return": {"cond": cond}})
        self.walker.in_branch, self.walker.loops, saved = True, [], (self.walker.in_branch, self.walker.loops)
        self.walker.return_stmt({"cond": cond}, env, 1)
        self.walker.in_branch, self.walker.loops = saved
        self.walker.lines.clear()
        self.budget -= 1

    def block(self, env, body, depth, n, in_branch=False):
        draw = self.draw
        for _ in range(n):
            if self.budget <= 0:
                return
            kind = odds.pick(draw, odds.STATEMENT_KINDS) if depth < odds.DEPTH_MAX else "op"
            if in_branch and not self.walker.loops and odds.chance(draw, odds.EARLY_RETURN):
                self.gen_return(env, body)
            elif kind == "for":
                self.gen_for(env, body, depth, kloop=odds.chance(draw, odds.KLOOP_FOR))
            elif kind == "if" and depth < odds.DEPTH_MAX - 1 and odds.chance(draw, odds.COND_REGIONS):
                self.gen_cond_regions(env, body, depth)
            elif kind == "if":
                self.gen_if(env, body, depth)
            else:
                self.random_op(env, body)

    # --- outputs -------------------------------------------------------------------------------------------------
    def output_for(self, dtype, axes, mode):
        """The output of this type (one per dtype, axes and mode: statements refer to outputs relatively, by type),
        made on first use; None once a value was stored to it: a second value stored to the same addresses, from
        another layout, would race with the first (threads of one program, no barrier between them)."""
        for v in self.env.outputs:
            if v.type == VType("out", dtype, axes, mode):
                if mode == "store" and v.name in self.stored:
                    return None
                if mode == "store":
                    self.stored.add(v.name)
                return v
        if len(self.spec.outputs) >= odds.OUTPUTS_MAX:
            return None
        i = len(self.spec.outputs)
        self.spec.outputs.append({"dtype": dtype, "axes": axes, "mode": mode})
        strides = tuple(f"s_out_{i}_{j}" for j in range(len(axes)))
        value = Value(f"out_{i}", VType("out", dtype, axes, mode), strides)
        self.env.outputs.append(value)
        if mode == "store":
            self.stored.add(value.name)
        return value

    def epilogue(self, body):
        """Store the values nothing else consumed, so the compiler cannot delete the kernel's work."""
        leaves = [v for v in self.env.values if v.type.kind == "t" and v.uses == 0
                  and not v.name.startswith(("pid_", "sa_")) and v.type.dtype not in D.MX_CODES]
        for leaf in leaves[-odds.EPILOGUE_STORES_MAX:][::-1]:
            value = leaf
            if value.type.dtype == "i1":
                got = self.try_op(self.env, body, "cast", [self.ref_to(self.env, REGISTRY["cast"], 0, [], value)],
                                  {"dtype": "i32"})
                if not got:
                    continue
                value = got[0]
            covers = set(self.spec.grid) <= set(value.type.axes)
            atomic_ok = self.caps.has(f"atomic:add:{value.type.dtype}") and "2" not in value.type.axes
            if covers and not (atomic_ok and odds.chance(self.draw, odds.EPILOGUE_ATOMIC)):
                out, op = self.output_for(value.type.dtype, value.type.axes, "store"), "store"
                attrs = REGISTRY["store"].draw_attrs(self.draw, (value.type,), self.caps)
            else:
                if not atomic_ok:
                    got = self.try_op(self.env, body, "cast",
                                      [self.ref_to(self.env, REGISTRY["cast"], 0, [], value)], {"dtype": "fp32"})
                    if not got:
                        continue
                    value = got[0]
                    if "2" in value.type.axes:
                        continue
                out, op = self.output_for(value.type.dtype, value.type.axes, "atomic"), "atomic"
                kinds = [k for k in odds.menu(odds.EPILOGUE_ATOMIC_KINDS)
                         if self.caps.has(f"atomic:{k}:{value.type.dtype}")]
                # programs that share an address need a scope that spans them: a cta-scoped atomic is atomic
                # only within its program (PTX and the AMDGPU memory model), so two programs' updates race
                scopes = [s for s in self.caps.atomic_scopes if covers or s != "cta"] or ["gpu"]
                attrs = {"op": self.draw(st.sampled_from(kinds or ["add"])),
                         "sem": self.draw(st.sampled_from(self.caps.atomic_sems)),
                         "scope": self.draw(st.sampled_from(scopes))}
            if out is None:
                continue
            opdef = REGISTRY[op]
            refs = [self.ref_to(self.env, opdef, 0, [], value), self.ref_to(self.env, opdef, 1, [value], out)]
            self.try_op(self.env, body, op, refs, attrs)
