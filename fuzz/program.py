"""Resolve a KernelSpec into a typed program and Triton source.

Operands are relative references: a statement names "the k-th most recent earlier value that this slot accepts".
This module is the single place that walks a spec and turns those numbers into values (against fuzz/scope.py's
Env), for the renderer (source), the generator (which draws references against the same Env) and coverage
(fuzz/features.py). A statement whose operands cannot be resolved, or whose attributes no longer fit its operands
(after shrinking), is dropped, never rendered invalid.

The undefined-behaviour rules that depend on context are enforced here: a load is left unmasked only where every
address is in bounds for the spec's sizes, and stores go only to outputs that span the launch grid.
"""
from __future__ import annotations

from . import dtypes as D
from .axes import block_expr, extent, follows_k, offsets_line, offsets_name, size_expr, used_k_views
from .features import Features, detail_features
from .opdef import VType
from .ops import REGISTRY
from .scope import Env, Value, carriable

PINNED_FAMILIES = ("elementwise", "math", "select")
NARROW = ("fp16", "bf16", "i8")


class Walker:
    """Walks a spec's statements once, resolving operands and emitting source lines."""

    def __init__(self, spec, caps):
        self.spec, self.caps = spec, caps
        self.blocks, self.sizes, self.grid = spec.blocks, spec.sizes, spec.grid
        self.lines: list[str] = []
        self.features = Features()
        self.counter = 0
        self.loops: list[dict] = []  # enclosing loops, innermost last
        self.in_branch = False
        self.koffs = "offs_K"
        self.nodes: list[dict] = []  # the resolved program the oracle evaluates (see oracle/evaluate.py)
        self.k_views = used_k_views(spec.inputs)
        # reach (fuzz/reach.py): which values are dot results or slices of one, which conditions guarded an if
        self.dot_results: set[str] = set()  # names of tl.dot / tl.dot_scaled results and loops that yield them
        self.dot_slices: set[str] = set()  # names of reductions of a dot result (the slice layout of its MMA layout)
        self.cond_seen: dict[str, int] = {}  # an if's condition -> the loops walked when it first guarded an if
        self.active_conds: list[str] = []  # the conditions of the ifs being walked, outermost first
        self.loops_done = 0

    # --- context used by the op registry's emitters --------------------------------------------------------------
    def block(self, axis):
        return block_expr(axis)

    def offs(self, axis):
        return offsets_name(axis, self.koffs)

    def offsets(self, axes, strides):
        terms = []
        for i, axis in enumerate(axes):
            index = ", ".join(":" if j == i else "None" for j in range(len(axes)))
            sub = f"[{index}]" if len(axes) > 1 else ""
            terms.append(f"{self.offs(axis)}{sub} * {strides[i]}")
        return "(" + " + ".join(terms) + ")"

    def mask(self, axes):
        terms = []
        for i, axis in enumerate(axes):
            if axis == "2":
                continue
            index = ", ".join(":" if j == i else "None" for j in range(len(axes)))
            sub = f"[{index}]" if len(axes) > 1 else ""
            terms.append(f"({self.offs(axis)} < {size_expr(axis)}){sub}")
        return " & ".join(terms) if terms else "None"

    def axis_in_bounds(self, axis):
        """True when the offsets along ``axis`` can never leave the tensor, so a load needs no mask."""
        size, block = extent(axis, self.sizes), extent(axis, self.blocks)
        if axis in self.grid:
            return size % block == 0
        if follows_k(axis) and self.loops:
            trip = self.loops[-1]["trip"]
            if trip[0] == "cdiv":
                return size % block == 0
            return trip[1] * block <= size
        return block <= size

    def load_needs_mask(self, axes, attrs):
        return attrs.get("masked", True) or not all(self.axis_in_bounds(a) for a in axes)

    # --- walking -------------------------------------------------------------------------------------------------
    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def root_env(self) -> Env:
        env = Env()
        env.define(Value("pid_m", VType("t", "i32", "")))
        if "N" in self.grid:
            env.define(Value("pid_n", VType("t", "i32", "")))
        for i, arg in enumerate(self.spec.scalars):
            env.define(Value(f"sa_{i}", VType("t", arg["dtype"], "")))
        for i, arg in enumerate(self.spec.inputs):
            strides = tuple(f"s_in_{i}_{j}" for j in range(len(arg["axes"])))
            env.define(Value(f"in_{i}", VType("ptr", arg["dtype"], arg["axes"], arg.get("order", "row")), strides))
        for i, arg in enumerate(self.spec.outputs):
            strides = tuple(f"s_out_{i}_{j}" for j in range(len(arg["axes"])))
            env.outputs.append(Value(f"out_{i}", VType("out", arg["dtype"], arg["axes"], arg["mode"]), strides))
        return env

    def walk(self):
        env = self.root_env()
        self.block_stmts(self.spec.body, env, 1)
        return env

    def block_stmts(self, stmts, env, depth):
        for stmt in stmts:
            if not isinstance(stmt, dict):
                self.features.dropped += 1
            elif "op" in stmt:
                self.op_stmt(stmt, env, depth)
            elif "for" in stmt:
                self.for_stmt(stmt["for"], env, depth)
            elif "if" in stmt:
                self.if_stmt(stmt["if"], env, depth)
            elif "return" in stmt:
                self.return_stmt(stmt["return"], env, depth)
            else:
                self.features.dropped += 1

    def op_stmt(self, stmt, env, depth):
        op = REGISTRY.get(stmt.get("op"))
        if op is None or (op.needs and not self.caps.has(op.needs)):
            self.features.dropped += 1
            return
        args = env.resolve(op, stmt.get("args", []))
        attrs = stmt.get("attrs", {})
        types = tuple(a.type for a in args) if args is not None else None
        try:
            ok = args is not None and op.valid(types, attrs, self)
            results = op.result(types, attrs, self) if ok else []
            expr = op.emit(args, types, attrs, self) if ok else ""
        except (KeyError, IndexError, TypeError, ValueError):
            ok = False
        if ok and not all(self.caps.allows_dtype(t.dtype) for t in tuple(types) + tuple(results)):
            self.features.steered += 1  # a dtype the execution backend cannot run faithfully
            ok = False
        if not ok:
            self.features.dropped += 1
            return
        for a in args:
            a.uses += 1
        self.features.ops[op.name] += 1
        self.features.dtypes.update(t.dtype for t in types)
        if op.name == "load" and types[0].axes:
            masked = self.load_needs_mask(types[0].axes, attrs)
            self.features.control.add("load_masked" if masked else "load_unmasked")
            if masked and attrs.get("other") is not None:
                self.features.control.add("load_other")
        elif op.name == "load":
            self.features.control.add("load_scalar")
        self.features.details.update(detail_features(op, types, attrs))
        self.features.details.update(self._reach_details(op, args, types, attrs, results))
        from_load = op.name == "load" and bool(self.loops) or any(a.from_load for a in args)
        loops = [loop for loop in self.loops if not loop.get("once")]  # what is still a loop after the frontend
        if op.family == "dot" and loops and any(a.from_load for a in args):
            self.features.control.add("kloop_dot")
            if loops[-1].get("stages", self.spec.launch.num_stages) >= 2:
                self.features.control.add("kloop_pipelined")  # the software pipeliner has a K-loop to work on
        node = {"k": "op", "op": op.name, "args": [a.name for a in args], "types": types, "attrs": attrs,
                "out": [], "koffs": self.koffs}
        if op.name == "load" and types[0].axes:
            node["masked"] = self.load_needs_mask(types[0].axes, attrs)
        self.nodes.append(node)
        if not results:
            self.emit(depth, expr)
            return
        if len(results) == 1 and op.family in PINNED_FAMILIES and results[0].dtype in NARROW and not op.name == "cast":
            # Triton releases differ in when they widen 8/16-bit operands (fp16 / fp16 is fp32 in some): pin the
            # declared type so typing never depends on the release. A no-op where Triton already agrees.
            expr = f"({expr}).to({D.tl(results[0].dtype)})"
        names = [self.fresh() for _ in results]
        node["out"], node["out_types"] = names, results
        self.emit(depth, f"{', '.join(names)} = {expr}")
        if op.family == "dot" or op.name.startswith("dot_scaled"):
            self.dot_results.update(names)
        elif op.family == "reduce" and any(a.name in self.dot_results for a in args):
            self.dot_slices.update(names)
        for name, rtype in zip(names, results):
            # a selected pointer keeps the strides of the buffers it chose between (equal by construction)
            strides = next((a.strides for a in args if a.type.kind == "ptr"), ()) if rtype.kind == "ptr" else ()
            env.define(Value(name, rtype, strides, from_load=from_load))
            self.features.dtypes.add(rtype.dtype)

    def _reach_details(self, op, args, types, attrs, results) -> set:
        """What the reach matrix (fuzz/reach.py) needs the generator to ask for: an op straight on a dot result or on
        the slice a reduction of one leaves (the MMA layout reaches the op's lowering only then), and degenerate
        sizes (a size-1 dimension in a value, a reduction or scan along one, an axis narrower than the warps)."""
        out = set()
        if op.family in ("reduce", "scan", "shape", "atomic", "histogram", "gather"):  # not elementwise
            if any(a.name in self.dot_results for a in args):
                out.add(f"dot_result:{op.name}")
            if any(a.name in self.dot_slices for a in args):
                out.add(f"dot_slice:{op.name}")
        if op.family in ("reduce", "scan") and types and isinstance(attrs.get("axis"), int) and \
                attrs["axis"] < len(types[0].axes) and self.blocks.get(types[0].axes[attrs["axis"]]) == 1:
            out.add(f"size1:{op.family}")
        for rtype in results:
            sizes = [self.blocks.get(a) for a in rtype.axes if a in self.blocks]
            if len(rtype.axes) >= 2 and 1 in sizes:
                out.add("size1:tile")
            if sizes and min(sizes) < self.spec.launch.num_warps:
                out.add("size_lt_warps:tile")
        return out

    def _cond_reuse(self, cond_name):
        """A runtime condition that guards more than one region (coverage): again after a loop, the shape AMD's
        if-combining pass pairs up, or again inside a region it already guards."""
        if cond_name is None:
            return
        if cond_name in self.cond_seen:
            self.features.control.add("cond_reused")
            if self.loops_done > self.cond_seen[cond_name]:
                self.features.control.add("cond_reused_across_loop")
        else:
            self.cond_seen[cond_name] = self.loops_done
        if cond_name in self.active_conds:
            self.features.control.add("cond_retested_nested")

    def for_stmt(self, loop, env, depth):
        outer_branch, self.in_branch = self.in_branch, False
        try:
            self._for_stmt(loop, env, depth)
        finally:
            self.in_branch = outer_branch

    def _for_stmt(self, loop, env, depth):
        trip = loop.get("trip", ["const", 1])
        if not (isinstance(trip, list) and len(trip) == 2 and trip[0] in ("cdiv", "const", "static")):
            self.features.dropped += 1
            return
        carried = []
        for ref in loop.get("carry", []):
            cands = carriable(env)
            if cands and isinstance(ref, int) and ref >= 0:
                carried.append(cands[-1 - (ref % len(cands))])
        index = self.fresh("k")
        if trip[0] == "cdiv":
            bound = "tl.cdiv(K, BLOCK_K)"
        else:
            bound = str(max(1, int(trip[1])))
        stages = loop.get("stages")
        if trip[0] == "static":
            header = f"for {index} in tl.static_range({bound}):"
        elif stages is not None and self.caps.has("loop:num_stages"):
            header = f"for {index} in tl.range(0, {bound}, num_stages={int(stages)}):"
        else:
            header = f"for {index} in range(0, {bound}):"
        cvars = []
        node = {"k": "for", "index": index, "trip": trip, "init": [], "yields": []}
        for value in carried:
            name = self.fresh("c")
            self.emit(depth, f"{name} = {value.name}")
            value.uses += 1
            cvars.append(Value(name, value.type))
            node["init"].append((name, value.name))
        # a static_range of one trip is unrolled by Triton's frontend: it is written as the straight-line code it
        # becomes, and adds no loop to the kernel's features (the reducer turns a loop into one to remove it while
        # its carried values keep their meaning: reduce/spec_level.py UnrollOnce)
        once = trip == ["static", 1]
        inner = depth if once else depth + 1
        self.emit(depth, f"{index} = tl.full([], 0, tl.int32)" if once else header)
        body = env.child()
        body.define(Value(index, VType("t", "i32", "")))
        for c in cvars:
            body.define(Value(c.name, c.type, from_load=False))
        outer_koffs = self.koffs
        self.koffs = f"offs_K_{index}"
        self.loops.append({"trip": trip, "once": once, "stages": int(stages) if stages is not None and
                           self.caps.has("loop:num_stages") else self.spec.launch.num_stages})
        self.emit(inner, f"{self.koffs} = {index} * BLOCK_K + tl.arange(0, BLOCK_K)")
        for axis in self.k_views:
            self.emit(inner, offsets_line(axis, self.koffs, index))
        if not once and (trip[0] == "static" or self.caps.has("exclude:raw-loop-index")):
            # a static_range index is a constexpr (and an interpreted range index a Python int): make it i32
            self.emit(inner, f"{index} = {index} + tl.full([], 0, tl.int32)")
        outer_nodes, self.nodes = self.nodes, []
        node["koffs"] = self.koffs
        self.block_stmts(loop.get("body", []), body, inner)
        node["body"], self.nodes = self.nodes, outer_nodes
        self.nodes.append(node)
        yields = loop.get("yield", [])
        for i, c in enumerate(cvars):
            same = body.of_type(c.type)
            ref = yields[i] if i < len(yields) and isinstance(yields[i], int) and yields[i] >= 0 else 0
            chosen = same[-1 - (ref % len(same))]
            chosen.uses += 1
            node["yields"].append((c.name, chosen.name))
            if chosen.name != c.name:
                self.emit(inner, f"{c.name} = {chosen.name}")
            if chosen.from_load:
                c.from_load = True
            if chosen.name in self.dot_results:  # a K-loop's accumulator: the loop's result is the dot's
                self.dot_results.add(c.name)
        self.loops.pop()
        self.koffs = outer_koffs
        for c in cvars:
            env.define(Value(c.name, c.type, from_load=False))
        if once:
            return
        self.loops_done += 1
        self.features.control.add("for")
        self.features.control.add(f"for_{trip[0]}")
        if carried:
            self.features.control.add("for_carried")
        if stages is not None:
            self.features.control.add(f"loop_stages_{stages}")
        if any(not loop.get("once") for loop in self.loops):
            self.features.control.add("nested_for")

    def return_stmt(self, node, env, depth):
        """`if <scalar cond>: return` (only inside a branch: an early exit the pointer passes must survive)."""
        if not self.in_branch or self.loops:
            self.features.dropped += 1
            return
        conds = [v for v in env.values if v.type == VType("t", "i1", "")]
        ref = node.get("cond", 0) if isinstance(node, dict) else 0
        if not conds or not isinstance(ref, int) or ref < 0:
            self.features.dropped += 1
            return
        cond = conds[-1 - (ref % len(conds))]
        cond.uses += 1
        self.nodes.append({"k": "return", "cond": cond.name})
        self.emit(depth, f"if {cond.name}:")
        self.emit(depth + 1, "return")
        self.features.control.add("early_return")

    def if_stmt(self, node, env, depth):
        conds = [v for v in env.values if v.type == VType("t", "i1", "")]
        ref = node.get("cond", 0)
        if conds and isinstance(ref, int) and ref >= 0:
            cond = conds[-1 - (ref % len(conds))]
            cond.uses += 1
            cond_expr = cond.name
        else:
            cond_expr = "pid_m % 2 == 0"
        cond_name = cond_expr if cond_expr != "pid_m % 2 == 0" else None
        self._cond_reuse(cond_name)
        types = [VType(*t) for t in node.get("types", []) if isinstance(t, list) and len(t) in (3, 4)]
        names = [self.fresh("y") for _ in types]
        branches, branch_nodes = [], []
        for key in ("then", "else"):
            branch_env = env.child()
            start = len(self.lines)
            outer, self.in_branch = self.in_branch, True
            outer_nodes, self.nodes = self.nodes, []
            self.active_conds.append(cond_name)
            self.block_stmts(node.get(key, []), branch_env, depth + 1)
            self.active_conds.pop()
            branch_nodes.append(self.nodes)
            self.nodes = outer_nodes
            self.in_branch = outer
            branches.append((branch_env, self.lines[start:]))
            del self.lines[start:]
        # a yield exists only if both branches can produce it
        picks = []
        for i, vtype in enumerate(types):
            chosen = []
            for (branch_env, _), key in zip(branches, ("then_yield", "else_yield")):
                same = branch_env.of_type(vtype)
                refs = node.get(key, [])
                r = refs[i] if i < len(refs) and isinstance(refs[i], int) and refs[i] >= 0 else 0
                chosen.append(same[-1 - (r % len(same))] if same else None)
            picks.append(chosen if all(chosen) else None)
        self.emit(depth, f"if {cond_expr}:")
        for b, (branch_env, lines) in enumerate(branches):
            if b == 1:
                self.emit(depth, "else:")
            self.lines.extend(lines)
            wrote = len(lines)
            for name, vtype, pick in zip(names, types, picks):
                if pick is None:
                    continue
                value = pick[b]
                value.uses += 1
                self.emit(depth + 1, f"{name} = {value.name}")
                for j, stride in enumerate(value.strides):
                    self.emit(depth + 1, f"{name}_s{j} = {stride}")
                wrote += 1
            if not wrote:
                self.emit(depth + 1, "pass")
        self.nodes.append({"k": "if", "cond": cond_name, "then": branch_nodes[0], "else": branch_nodes[1],
                           "yields": [(name, pick[0].name, pick[1].name)
                                      for name, pick in zip(names, picks) if pick is not None]})
        self.features.control.add("if")
        if len(node.get("else", [])) == 1 and isinstance(node["else"][0], dict) and "if" in node["else"][0]:
            self.features.control.add("if_elif_chain")
        if self.loops:
            self.features.control.add("if_in_loop")
        if any(p is not None and p[0] is not p[1] and {p[0].name, p[1].name} & self.dot_slices for p in picks):
            self.features.details.add("dot_slice:if_yield")   # an scf.if yielding a dot result's slice (reach)
        for name, vtype, pick in zip(names, types, picks):
            if pick is None:
                continue
            strides = tuple(f"{name}_s{j}" for j in range(len(pick[0].strides)))
            env.define(Value(name, vtype, strides, from_load=any(p.from_load for p in pick)))
            self.features.control.add("if_ptr_select" if vtype.kind == "ptr" else "if_tensor")


def walk(spec, caps) -> Walker:
    walker = Walker(spec, caps)
    walker.env = walker.walk()
    return walker
