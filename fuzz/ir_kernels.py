"""Random LLVM IR kernels for amdgcn-amd-amdhsa, each with the `--launch` spec that runs it: the input of
`gfxhound emulate-campaign` (oracle/ir_campaign.py), where llc's code at each -O level on the machine-code executor
and the IR on the IR executor judge each other. Why IR and not Triton: it reaches the backend's integer, bit,
vector, control-flow and cross-lane lowering (i1..i64, DPP, LDS, readlane) directly, at any -O level.

Every kernel is valid and free of undefined behaviour by construction (fuzz/ir_kernels_ops.py says how per op):
its loads run under `if (gid < n)` and reconverge through a phi (out-of-range lanes take a constant), so the rest
of the top level runs with every lane active; cross-lane operations and LDS live only there; stores run under the
same bound. `kernel(seed)` is deterministic: Hypothesis draws from bytes a seeded generator gives (as
fuzz/generate.py does), so a seed names a kernel for good. The odds are a table (`STATEMENTS`, `OPS`, `TYPES`,
`FRAME`), as in fuzz/odds.py: tuning is an edit there.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .ir_kernels_ops import DPP_CONTROLS, SCALARS, VECTOR_PARTS, VECTORS, Builder, Value, const_of
from .odds import chance, pick

# ---- the knob table: how often each thing is drawn (policy as data) ---------------------------------------------
STATEMENTS = {"value": 14, "if_varying": 2, "if_uniform": 1, "loop": 2, "lds": 1}  # a top-level statement
# a value's op; bswap is rare while the IR executor does not model it (each one makes its kernel unresolved)
OPS_GATED = {"bswap": (1, 4)}  # an op a kernel may draw at all only with this chance (k, n), drawn once per kernel
OPS = {"arith": 24, "bitwise": 16, "shift": 12, "div": 8, "cmp_select": 12, "cast": 12, "bitcount": 8, "funnel": 4,
       "bswap": 1, "minmax": 8, "abs": 4, "shuffle": 4,
       "readfirstlane": 4, "readlane": 4, "dpp": 8, "bpermute": 4}
CROSS_LANE = ("readfirstlane", "readlane", "dpp", "bpermute")  # drawn only where every lane is active
TYPES = {"i32": 4, "i64": 2, "i16": 2, "i8": 2, "i1": 1, "<2 x i32>": 1, "<4 x i16>": 1}  # a value's type
MOV_DPP = (1, 16)  # a DPP value is llvm.amdgcn.mov.dpp (rare: the IR executor does not model it yet), else update.dpp
BLOCKS = {64: 2, 128: 1, 256: 1}  # work-items per workgroup
LOOP_TRIPS = {"constant": 2, "uniform": 1, "varying": 1}  # a loop's trip count: a literal, a kernel argument, x & 3
FRAME = {"workgroups": (1, 2), "inputs": (1, 3), "outputs": (1, 3), "scalar_args": (0, 2), "statements": (4, 14),
         "branch_values": (1, 3), "loop_values": (0, 3), "depth_max": 2, "lds_rounds_max": 3}
# which value types an op makes (others are never drawn for it)
# (funnel shifts of i64 are left out while the IR executor does not model them: each made its kernel unresolved)
OP_TYPES = {"bswap": ("i16", "i32", "i64"), "bitcount": ("i8", "i16", "i32", "i64"), "funnel": ("i8", "i16", "i32"),
            "abs": ("i8", "i16", "i32", "i64"), "minmax": ("i8", "i16", "i32", "i64") + VECTORS,
            "div": ("i8", "i16", "i32", "i64") + VECTORS, "shift": ("i8", "i16", "i32", "i64") + VECTORS,
            "shuffle": VECTORS}
DTYPES = {"i1": "u8", "i8": "i8", "i16": "i16", "i32": "u32", "i64": "i64"}  # a buffer's launch dtype per element
# every feature the table can reach, for the coverage test: ops, statements, types, loop trip kinds
FEATURES = sorted((set(OPS) | set(STATEMENTS) | {f"type:{t}" for t in TYPES} | {f"trip:{k}" for k in LOOP_TRIPS}
                   | {f"dpp:{c}" for c in DPP_CONTROLS} | {"dpp:mov", "dpp:bound_ctrl=0", "dpp:bound_ctrl=1",
                                                          "vector", "scalar_arg"}) - {"value"})

BUFFER_BYTES = 16384
MAX_MISSES = 50


@dataclass
class IRKernel:
    seed: int
    name: str
    text: str
    launch: str
    features: set = field(default_factory=set)


class _Kernel(Builder):
    """One kernel's body, drawn statement by statement."""

    def __init__(self, draw, block):
        super().__init__(draw)
        self.block_size, self.lds_rounds, self.depth = block, 0, 0
        self.mov_dpp_odds = MOV_DPP
        self.gated_off = {op for op, odds in OPS_GATED.items() if not chance(draw, odds)}

    def kinds(self, ty, cross_lane):
        return {k: w for k, w in OPS.items() if ty in OP_TYPES.get(k, TYPES) and (cross_lane or k not in CROSS_LANE)
                and k not in self.gated_off}

    def new_value(self, cross_lane):
        ty = pick(self.draw, TYPES)
        return self.value(pick(self.draw, self.kinds(ty, cross_lane)), ty)

    def statement(self):
        top = self.depth == 0
        menu = {k: w for k, w in STATEMENTS.items()
                if (k == "value" or self.depth < FRAME["depth_max"]) and (k != "lds" or top and
                                                                         self.lds_rounds < FRAME["lds_rounds_max"])}
        kind = pick(self.draw, menu)
        if kind == "value":
            self.new_value(cross_lane=top)
        else:
            self.features.add(kind)
            getattr(self, kind)()

    def body(self, count):
        self.depth += 1
        for _ in range(count):
            self.statement()
        self.depth -= 1

    def uniform_condition(self) -> str:
        uniform = [v for v in self.pool if v.uniform and v.ty in SCALARS[1:]][-6:]
        v = uniform[self.draw(st.integers(0, len(uniform) - 1))]
        pred = self.draw(st.sampled_from(("eq", "ne", "ult", "sgt", "slt", "uge")))
        name = self.fresh("ucond")
        self.emit(f"{name} = icmp {pred} {v.ty} {v.name}, {const_of(self.draw, v.ty)}")
        return name

    def if_uniform(self):
        self._if(self.uniform_condition())

    def if_varying(self):
        varying = [v for v in self.pool if not v.uniform and v.ty in SCALARS][-6:]
        v = varying[self.draw(st.integers(0, len(varying) - 1))]
        cond = self.convert(v, "i1").name if v.ty != "i1" and self.draw(st.booleans()) else v.name
        if v.ty != "i1" and cond == v.name:
            cond = self.fresh("vcond")
            self.emit(f"{cond} = icmp {self.draw(st.sampled_from(('ult', 'sgt', 'eq', 'ne')))} {v.ty} {v.name}, "
                      f"{const_of(self.draw, v.ty)}")
        self._if(cond)

    def _if(self, cond):
        then, other, join = self.fresh("then"), self.fresh("else"), self.fresh("join")
        types = [pick(self.draw, TYPES) for _ in range(self.draw(st.integers(1, 2)))]
        self.emit(f"br i1 {cond}, label {then}, label {other}")
        incoming = []
        for label in (then, other):
            self.label(label)
            mark = len(self.pool)
            self.body(self.draw(st.integers(*FRAME["branch_values"])))
            incoming.append(([self.operand(t, window=3) for t in types], self.block))
            self.emit(f"br label {join}")
            del self.pool[mark:]
        self.label(join)
        for k, ty in enumerate(types):
            name = self.fresh("phi")
            self.emit(f"{name} = phi {ty} " + ", ".join(f"[ {vals[k].name}, {blk} ]" for vals, blk in incoming))
            self.add(name, ty)

    def loop(self):
        how = pick(self.draw, LOOP_TRIPS)
        self.features.add(f"trip:{how}")
        if how == "constant":
            trip = Value(str(self.draw(st.integers(1, 4))), "i32", True)
        elif how == "uniform":
            trip = Value("%trip", "i32", True)  # the kernel argument, 0..4 (the launch spec draws it)
        else:
            varying = [v for v in self.pool if not v.uniform and v.ty != "i1"][-6:]
            x = self.convert(varying[self.draw(st.integers(0, len(varying) - 1))], "i32")
            trip = self._binary("and", "i32", x, Value("3", "i32", True))
        ty = pick(self.draw, TYPES)
        init = self.operand(ty)
        pre, head, body, done = self.block, self.fresh("head"), self.fresh("body"), self.fresh("done")
        i, acc, i_next, acc_next = self.fresh("i"), self.fresh("acc"), self.fresh("inext"), self.fresh("accn")
        self.emit(f"br label {head}")
        self.label(head)
        slot = len(self.lines)
        self.lines.append(None)  # the phis, once the latch is known
        cont = self.fresh("more")
        self.emit(f"{cont} = icmp ult i32 {i}, {trip.name}")
        self.emit(f"br i1 {cont}, label {body}, label {done}")
        self.label(body)
        mark = len(self.pool)
        self.add(i, "i32", trip.uniform)
        accv = self.add(acc, ty, trip.uniform and init.uniform)
        self.body(self.draw(st.integers(*FRAME["loop_values"])))
        other = self.operand(ty, window=4)
        op = self.draw(st.sampled_from(("xor", "and", "or") if ty == "i1" else ("add", "xor", "sub", "mul")))
        self.emit(f"{acc_next} = {op} {ty} {accv.name}, {other.name}")
        self.emit(f"{i_next} = add i32 {i}, 1")
        latch = self.block
        self.emit(f"br label {head}")
        self.lines[slot] = (f"  {i} = phi i32 [ 0, {pre} ], [ {i_next}, {latch} ]\n"
                            f"  {acc} = phi {ty} [ {init.name}, {pre} ], [ {acc_next}, {latch} ]")
        del self.pool[mark:]
        self.label(done)
        self.add(acc, ty, trip.uniform and init.uniform and other.uniform)

    def lds(self):
        """Each lane stores an i32 into its slot of this round's region, a workgroup barrier (with workgroup
        fences), then reads another lane's slot of the same workgroup."""
        b, base = self.block_size, self.lds_rounds * self.block_size
        self.lds_rounds += 1
        v = self.operand("i32")
        slot, mine, theirs = self.fresh("slot"), self.fresh("lp"), self.fresh("lq")
        self.emit(f"{slot} = add i32 %tid, {base}")
        self.emit(f"{mine} = getelementptr [LDS x i32], ptr addrspace(3) @lds, i32 0, i32 {slot}")
        self.emit(f"store i32 {v.name}, ptr addrspace(3) {mine}, align 4")
        self.emit('fence syncscope("workgroup") release')
        self.emit("call void @llvm.amdgcn.s.barrier()")
        self.emit('fence syncscope("workgroup") acquire')
        self.declare("declare void @llvm.amdgcn.s.barrier()")
        how = self.draw(st.integers(0, 2))
        k = self.draw(st.integers(1, b - 1))
        other = self.fresh("other")
        if how == 0:
            self.emit(f"{other} = xor i32 %tid, {k}")
        elif how == 1:
            add = self.fresh("sum")
            self.emit(f"{add} = add i32 %tid, {k}")
            self.emit(f"{other} = and i32 {add}, {b - 1}")
        else:
            self.emit(f"{other} = sub i32 {b - 1}, %tid")
        at, name = self.fresh("oslot"), self.fresh("lds")
        self.emit(f"{at} = add i32 {other}, {base}")
        self.emit(f"{theirs} = getelementptr [LDS x i32], ptr addrspace(3) @lds, i32 0, i32 {at}")
        self.emit(f"{name} = load i32, ptr addrspace(3) {theirs}, align 4")
        self.add(name, "i32")


@st.composite
def ir_kernels(draw, name="k"):
    """(text, launch spec, features) of one kernel."""
    block = pick(draw, BLOCKS)
    groups = draw(st.integers(*FRAME["workgroups"]))
    n = draw(st.integers(1, groups * block))
    k = _Kernel(draw, block)
    params, spec = [], []
    ins = [pick(draw, TYPES) for _ in range(draw(st.integers(*FRAME["inputs"])))]
    for j, ty in enumerate(ins):
        params.append(f"ptr addrspace(1) %in{j}")
        spec.append(_buffer(f"in{j}", ty, ""))
    outs = [pick(draw, TYPES) for _ in range(draw(st.integers(*FRAME["outputs"])))]
    for j, ty in enumerate(outs):
        params.append(f"ptr addrspace(1) %out{j}")
        spec.append(_buffer(f"out{j}", ty, " out"))
    params.append("i32 %n")
    spec.append("n: N")
    k.add("%n", "i32", True)
    for j in range(draw(st.integers(*FRAME["scalar_args"]))):
        ty = draw(st.sampled_from(("i32", "i64")))
        params.append(f"{ty} %u{j}")
        spec.append(f"u{j}: {const_of(draw, ty)}")
        k.add(f"%u{j}", ty, True)
        k.features.add("scalar_arg")
    k.emit("%tid = call i32 @llvm.amdgcn.workitem.id.x()")
    k.emit("%wg = call i32 @llvm.amdgcn.workgroup.id.x()")
    k.emit(f"%wbase = mul i32 %wg, {block}")
    k.emit("%gid = add i32 %wbase, %tid")
    k.emit("%gidx = zext i32 %gid to i64")
    k.emit("%inb = icmp ult i32 %gid, %n")
    k.add("%gid", "i32")
    k.emit("br i1 %inb, label %load, label %loaded")
    k.label("%load")
    loaded = []
    for j, ty in enumerate(ins):
        memty = "i8" if ty == "i1" else ty
        k.emit(f"%pin{j} = getelementptr {memty}, ptr addrspace(1) %in{j}, i64 %gidx")
        k.emit(f"%ld{j} = load {memty}, ptr addrspace(1) %pin{j}")
        if ty == "i1":
            k.emit(f"%ldb{j} = trunc i8 %ld{j} to i1")
        loaded.append(f"%ldb{j}" if ty == "i1" else f"%ld{j}")
    k.emit("br label %loaded")
    k.label("%loaded")
    for j, ty in enumerate(ins):
        k.emit(f"%x{j} = phi {ty} [ {loaded[j]}, %load ], [ {const_of(draw, ty)}, %entry ]")
        k.add(f"%x{j}", ty)
    for _ in range(draw(st.integers(*FRAME["statements"]))):
        k.statement()
    results = _fold(k, outs, len(ins))
    k.emit("br i1 %inb, label %store, label %exit")
    k.label("%store")
    for j, (ty, v) in enumerate(zip(outs, results)):
        memty = "i8" if ty == "i1" else ty
        value = v.name
        if ty == "i1":
            value = k.fresh("st")
            k.emit(f"{value} = zext i1 {v.name} to i8")
        k.emit(f"%pout{j} = getelementptr {memty}, ptr addrspace(1) %out{j}, i64 %gidx")
        k.emit(f"store {memty} {value}, ptr addrspace(1) %pout{j}")
    k.emit("br label %exit")
    k.label("%exit")
    k.emit("ret void")
    if "trip:uniform" in k.features:
        params.append("i32 %trip")
        spec.append("trip: 0..4")
    spec += [f"N: {n}", f"grid: cdiv(N, {block})", f"block: {block}"]
    for ty in ins + outs:
        k.features.add(f"type:{ty}")
    text = _module(name, params, k, block)
    return text, "; ".join(spec), k.features


def _fold(k, outs, skip):
    """Every value the top level made, folded into the outputs (each converted to its output's type, combined by
    xor or add): so no drawn value is dead code that llc simply drops."""
    made = [v for v in k.pool if v.name not in ("%n", "%gid") and not v.name.startswith("%u")][skip:]
    results = [k.operand(ty, window=3) for ty in outs]
    for j, v in enumerate(made):
        slot = j % len(outs)
        ty = outs[slot]
        part = k.convert(v, ty)
        op = "xor" if ty == "i1" or k.draw(st.booleans()) else "add"
        results[slot] = k._binary(op, ty, results[slot], part)
    return results


def _buffer(name, ty, role):
    if ty in VECTOR_PARTS:
        parts, el = VECTOR_PARTS[ty]
        return f"{name}: {DTYPES[el]}[{parts} * N]{role}"
    return f"{name}: {DTYPES[ty]}[N]{role}"


def _module(name, params, k, block):
    lds = k.lds_rounds * block
    body = "\n".join(k.lines).replace("[LDS x i32]", f"[{lds} x i32]")
    head = ['; generated by fuzz/ir_kernels.py', 'target triple = "amdgcn-amd-amdhsa"', ""]
    if lds:
        head += [f"@lds = internal addrspace(3) global [{lds} x i32] poison, align 4", ""]
    declares = sorted(k.declares | {"declare i32 @llvm.amdgcn.workitem.id.x()",
                                    "declare i32 @llvm.amdgcn.workgroup.id.x()"})
    return "\n".join(head + [f"define amdgpu_kernel void @{name}({', '.join(params)}) #0 {{", "entry:", body, "}",
                             "", *declares, "",
                             f'attributes #0 = {{ "amdgpu-flat-work-group-size"="{block},{block}" }}', ""])


def kernel(seed: int) -> IRKernel:
    """The kernel a seed names (the same seed, the same kernel)."""
    rng = random.Random(seed)
    captured = []

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck), max_examples=1)
    @given(ir_kernels(name=f"k{seed}"))
    def capture(drawn):
        captured.append(drawn)

    for _ in range(MAX_MISSES):
        capture.hypothesis.fuzz_one_input(rng.randbytes(BUFFER_BYTES))
        if captured:
            text, launch, features = captured[0]
            return IRKernel(seed, f"k{seed}", text, launch, set(features))
    raise RuntimeError(f"seed {seed}: no kernel drawn in {MAX_MISSES} tries")
