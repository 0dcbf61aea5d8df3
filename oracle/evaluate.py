"""The reference run: evaluate a spec's resolved program with torch on the CPU, one program instance at a time.

The program walker (fuzz/program.py) resolves a spec once into nodes; this module runs those nodes for every
program of the launch grid with the op registry's references (`OpDef.ref`) and a simulated memory. What comes out
is, for every output element: the reference value, its error bound, whether a correct kernel determines it, and
whether any program writes it at all (unwritten elements must keep their pre-fill).

Undefined behaviour is excluded, not modelled (docs/design.md): every address a load, store or atomic touches under a
true mask (or without a mask) is checked to be in bounds, and an out-of-bounds one raises `UndefinedBehaviour`
(a generator bug: the run is `unresolved`, never a miscompile).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.axes import K_VIEWS, extent, offsets_name
from gfxhound.fuzz.ops import REGISTRY
from gfxhound.fuzz.program import walk
from gfxhound.fuzz.render import input_strides, memory_shape, row_major_strides

from .arith import Arith
from .numeric import (DYADIC_SCALES, F64, I64, MANT, TINY, TV, UndefinedBehaviour, exact, finish, gamma, round_to,  # noqa: F401 - UndefinedBehaviour is this module's API too
                      wrap)
from .tolerance import Table


class _Return(Exception):
    pass


@dataclass
class Ptr:
    name: str  # "in_3" / "out_1": the buffer
    strides: tuple
    bad: bool = False


@dataclass
class OutBuf:
    """The expected content of one output buffer (flat, row-major)."""
    dtype: str
    mode: str
    numel: int
    v: torch.Tensor = None
    e: torch.Tensor = None
    bad: torch.Tensor = None
    written: torch.Tensor = None
    # atomics: contributions per element
    count: torch.Tensor = None
    mags: torch.Tensor = None
    kinds: torch.Tensor = None  # bit per atomic kind seen
    equal: torch.Tensor = None  # xchg: all contributions equal so far
    exact: torch.Tensor = None

    def __post_init__(self):
        n = self.numel
        is_float = D.is_float(self.dtype)
        self.v = torch.zeros(n, dtype=F64 if is_float else I64)
        self.e = torch.zeros(n, dtype=F64)
        self.bad = torch.zeros(n, dtype=torch.bool)
        self.written = torch.zeros(n, dtype=torch.bool)
        self.count = torch.zeros(n, dtype=I64)
        self.mags = torch.zeros(n, dtype=F64)
        self.kinds = torch.zeros(n, dtype=I64)
        self.equal = torch.ones(n, dtype=torch.bool)
        self.exact = torch.ones(n, dtype=torch.bool)
        self.scale = torch.zeros(n, dtype=F64)  # atomics: every contribution is a multiple of 2^-scale
        self.program = torch.full((n,), -1, dtype=I64)  # atomics: the program that first updated the element
        self.shared = torch.zeros(n, dtype=torch.bool)  # atomics: updated by more than one program
        self.narrow = torch.zeros(n, dtype=torch.bool)  # atomics: updated with a scope narrower than the grid


ATOMIC_BITS = {"add": 1, "max": 2, "min": 4, "xchg": 8}


@dataclass
class Expected:
    outputs: dict = field(default_factory=dict)  # name -> OutBuf (finalised)
    programs: int = 0


class Kit(Arith):
    """The evaluation kit the registry's references call: arithmetic (Arith) plus one program's memory view."""

    def __init__(self, spec, table: Table, inputs: dict, outputs: dict):
        super().__init__(table, sanitize_overflow=bool(spec.launch.options.get("debug")))
        self.spec = spec
        self.inputs = inputs  # name -> flat torch tensor of the input dtype
        self.outputs = outputs  # name -> OutBuf
        self.blocks, self.sizes = spec.blocks, spec.sizes
        self.uncertain = 0
        self.tainted = False
        self.offs = {}
        self.program = 0  # the index of the program instance being evaluated

    # --- shapes -------------------------------------------------------------------------------------------------
    def shape(self, axes):
        return tuple(extent(a, self.blocks) for a in axes)

    @staticmethod
    def permute(x: TV, order):
        return TV(x.v.permute(order), x.e.permute(order), x.bad.permute(order), x.dtype)

    @staticmethod
    def reshape(x: TV, shape):
        return TV(x.v.reshape(shape), x.e.reshape(shape), x.bad.reshape(shape), x.dtype)

    @staticmethod
    def expand(x: TV, position, shape):
        if x.v.dim() == 0:  # x + tl.zeros(shape): an add of zero (turns -0.0 into +0.0)
            v = x.v + torch.zeros(shape, dtype=x.v.dtype)
            return TV(v, x.e.expand(shape).clone(), x.bad.expand(shape).clone(), x.dtype)
        return TV(x.v.unsqueeze(position).expand(shape), x.e.unsqueeze(position).expand(shape),
                  x.bad.unsqueeze(position).expand(shape), x.dtype)

    @staticmethod
    def join(a: TV, b: TV):
        return TV(torch.stack([a.v, b.v], -1), torch.stack([a.e, b.e], -1), torch.stack([a.bad, b.bad], -1),
                  a.dtype)

    @staticmethod
    def split(x: TV):
        return tuple(TV(x.v[..., i], x.e[..., i], x.bad[..., i], x.dtype) for i in (0, 1))

    # --- memory -------------------------------------------------------------------------------------------------
    def _axis_offsets(self, axis, koffs):
        return self.offs[offsets_name(axis, koffs)]

    def _address(self, axes, strides, koffs):
        addr = torch.zeros((), dtype=I64)
        mask = torch.ones((), dtype=torch.bool)
        n = len(axes)
        for i, axis in enumerate(axes):
            view = [1] * n
            view[i] = -1
            offs = self._axis_offsets(axis, koffs).reshape(view)
            addr = addr + offs * int(strides[i])
            if axis != "2":
                mask = mask & (offs < extent(axis, self.sizes))
        return addr.expand(self.shape(axes)), mask.expand(self.shape(axes))

    def _check_bounds(self, addr, active, numel, what):
        outside = active & ((addr < 0) | (addr >= numel))
        if bool(outside.any()):
            raise UndefinedBehaviour(f"{what}: {int(outside.sum())} active lanes address outside the buffer")

    def load(self, ptr: Ptr, vtype, attrs, node):
        data = self.inputs[ptr.name]
        dtype = vtype.dtype
        if not vtype.axes:
            index = int(attrs.get("index", 0))
            self._check_bounds(torch.tensor(index), torch.tensor(True), data.numel(), "scalar load")
            out = exact(data[index].to(F64 if D.is_float(dtype) else I64), dtype)
            return _mark(out, ptr.bad)
        addr, inside = self._address(vtype.axes, ptr.strides, node["koffs"])
        masked = node.get("masked", True)
        active = inside if masked else torch.ones_like(inside)
        self._check_bounds(addr, active, data.numel(), "unmasked load" if not masked else "masked load")
        flat = data.to(F64 if D.is_float(dtype) else I64)
        values = flat[addr.clamp(0, data.numel() - 1)]
        other = attrs.get("other")
        bad = ~active
        if masked and other is not None:
            fill = float(other) if D.is_float(dtype) else int(other)
            values = torch.where(active, values, torch.full_like(values, fill))
            bad = torch.zeros_like(bad)
        elif masked:
            values = torch.where(active, values, torch.zeros_like(values))
        out = exact(values, dtype)
        if D.is_float(dtype):  # a denormal input may be flushed by the consumer
            denormal = (out.v != 0) & (out.v.abs() < TINY[dtype])
            out.e = torch.where(denormal, torch.full_like(out.e, TINY[dtype]), out.e)
        out.bad = bad | ptr.bad
        return out

    def _effects_uncertain(self):
        return self.uncertain > 0 or self.tainted

    def store(self, ptr: Ptr, value: TV, axes, node):
        buf = self.outputs[ptr.name]
        addr, inside = self._address(axes, ptr.strides, node["koffs"])
        self._check_bounds(addr, inside, buf.numel, "store")
        idx = addr[inside]
        v = value.v.expand(addr.shape)[inside]
        buf.v[idx] = v.to(buf.v.dtype)
        buf.e[idx] = value.e.expand(addr.shape)[inside]
        buf.bad[idx] = value.bad.expand(addr.shape)[inside] | self._effects_uncertain() | ptr.bad
        buf.written[idx] = True

    def atomic(self, kind, ptr: Ptr, value: TV, axes, node):
        buf = self.outputs[ptr.name]
        if axes:
            addr, inside = self._address(axes, ptr.strides, node["koffs"])
        else:
            addr, inside = torch.zeros((), dtype=I64), torch.ones((), dtype=torch.bool)
        self._check_bounds(addr, inside, buf.numel, "atomic")
        idx = addr[inside]
        v = value.v.expand(addr.shape)[inside]
        e = value.e.expand(addr.shape)[inside]
        bad = value.bad.expand(addr.shape)[inside] | self._effects_uncertain() | ptr.bad
        first = buf.count[idx] == 0
        if kind == "add":
            buf.v[idx] = buf.v[idx] + v.to(buf.v.dtype) if D.is_float(buf.dtype) else wrap(buf.dtype, buf.v[idx] + v)
        elif kind in ("max", "min"):
            current = torch.where(first, torch.zeros_like(buf.v[idx]), buf.v[idx])  # outputs start at zero
            pick = torch.maximum if kind == "max" else torch.minimum
            buf.v[idx] = pick(current, v.to(buf.v.dtype))
            if D.is_float(buf.dtype):
                bad = bad | torch.isnan(v)
        else:  # xchg: the last writer wins; only one writer (or equal values) makes that determined
            buf.equal[idx] = buf.equal[idx] & (first | ((buf.v[idx] == v.to(buf.v.dtype)) & (e == 0)))
            buf.v[idx] = v.to(buf.v.dtype)
        buf.mags[idx] += v.abs().to(F64)
        buf.e[idx] += e
        buf.exact[idx] &= e == 0
        if D.is_float(buf.dtype):  # the coarsest dyadic scale among the contributions decides exactness
            buf.scale[idx] = torch.maximum(buf.scale[idx], _lane_scale(v.to(F64)))
        buf.kinds[idx] |= ATOMIC_BITS[kind]
        owner = buf.program[idx]
        buf.shared[idx] |= (owner >= 0) & (owner != self.program)
        buf.program[idx] = torch.where(owner >= 0, owner, torch.full_like(owner, self.program))
        if node["attrs"].get("scope") == "cta":
            buf.narrow[idx] = True
        buf.count[idx] += 1
        buf.bad[idx] |= bad
        buf.written[idx] = True

    def select_pointer(self, cond: TV, a: Ptr, b: Ptr):
        chosen = a if bool(cond.v != 0) else b
        if bool(cond.bad):  # which buffer is open: loads through it are undetermined
            return Ptr(chosen.name, chosen.strides, True)
        return Ptr(chosen.name, chosen.strides, chosen.bad)


def _mark(x, bad):
    if isinstance(x, Ptr):
        return Ptr(x.name, x.strides, x.bad or bool(bad))
    if not bad:
        return x
    return TV(x.v, x.e, torch.ones_like(x.bad), x.dtype)


def _finalise_atomic(buf: OutBuf, name: str):
    """Turn accumulated atomic contributions into expected values with bounds."""
    race = buf.shared & buf.narrow
    if bool(race.any()):  # PTX and the AMDGPU memory model: atomicity holds only among threads within the scope
        raise UndefinedBehaviour(f"{name}: {int(race.sum())} elements updated by atomics of scope 'cta' from more "
                                 "than one program (a data race: a cta-scoped atomic is atomic only within its "
                                 "program)")
    touched = buf.count > 0
    mixed = (buf.kinds & (buf.kinds - 1)) != 0  # more than one kind: the interleaving decides
    buf.bad |= touched & mixed
    is_xchg = buf.kinds == ATOMIC_BITS["xchg"]
    buf.bad |= touched & is_xchg & ~buf.equal & (buf.count > 1)
    if D.is_float(buf.dtype):
        is_add = buf.kinds == ATOMIC_BITS["add"]
        n = int(buf.count.max()) if buf.numel else 0
        r = buf.v
        # exact in any order: every contribution a multiple of 2^-s, magnitudes below 2^MANT * 2^-s; or one
        # contribution (0 + x is x)
        scaled_ok = torch.isfinite(buf.scale) & (buf.mags * torch.exp2(buf.scale.clamp(max=200))
                                                 <= 2.0 ** MANT[buf.dtype])
        e_add = buf.e + gamma(n + 1, buf.dtype) * (buf.mags + buf.e) + (n + 1) * TINY[buf.dtype]
        exact_add = buf.exact & (scaled_ok | (buf.count == 1))
        e = torch.where(is_add & ~exact_add, e_add, buf.e)
        out = finish(buf.dtype, r, e, (e == 0), bad=buf.bad, peak=torch.where(is_add, buf.mags, torch.zeros_like(r)))
        buf.v, buf.e, buf.bad = torch.where(touched, out.v, buf.v), torch.where(touched, out.e, buf.e), out.bad
    else:
        buf.v = wrap(buf.dtype, buf.v)


def _lane_scale(v):
    """Per lane: the smallest s in DYADIC_SCALES making v a multiple of 2^-s (inf if none)."""
    out = torch.full(v.shape, float("inf"), dtype=F64)
    for s in reversed(DYADIC_SCALES):
        scaled = v * (2.0 ** s)
        out = torch.where((scaled == torch.round(scaled)) & torch.isfinite(scaled), torch.full_like(out, float(s)),
                          out)
    return out


def evaluate(spec, caps, inputs: dict, table: Table, walker=None) -> Expected:
    """Run every program of the launch grid on the reference semantics."""
    walker = walker or walk(spec, caps)
    outputs = {}
    for i, arg in enumerate(spec.outputs):
        numel = 1
        for d in memory_shape(arg["axes"], spec.sizes):
            numel *= d
        outputs[f"out_{i}"] = OutBuf(arg["dtype"], arg["mode"], numel)
    kit = Kit(spec, table, inputs, outputs)
    gm = -(-spec.sizes["M"] // spec.blocks["M"])
    gn = -(-spec.sizes["N"] // spec.blocks["N"]) if "N" in spec.grid else 1
    base_env = {}
    for i, arg in enumerate(spec.scalars):
        dtype = arg["dtype"]
        value = round_to("fp32", torch.tensor(float(arg["value"]), dtype=F64)) if dtype == "fp32" else \
            wrap(dtype, torch.tensor(int(arg["value"]), dtype=I64))
        base_env[f"sa_{i}"] = exact(value, dtype)
    for i, arg in enumerate(spec.inputs):
        base_env[f"in_{i}"] = Ptr(f"in_{i}", tuple(input_strides(arg, spec.sizes)))
    for i, arg in enumerate(spec.outputs):
        shape = memory_shape(arg["axes"], spec.sizes)
        base_env[f"out_{i}"] = Ptr(f"out_{i}", tuple(row_major_strides(shape)) if arg["axes"] else ())
    for pid_m in range(gm):
        for pid_n in range(gn):
            env = dict(base_env)
            env["pid_m"] = exact(torch.tensor(pid_m), "i32")
            env["pid_n"] = exact(torch.tensor(pid_n), "i32")
            kit.uncertain, kit.tainted = 0, False
            kit.program = pid_m * gn + pid_n
            bn = spec.blocks["N"]
            kit.offs = {"offs_M": pid_m * spec.blocks["M"] + torch.arange(spec.blocks["M"]),
                        "offs_N": (pid_n * bn if "N" in spec.grid else 0) + torch.arange(bn),
                        "offs_K": torch.arange(spec.blocks["K"]), "offs_2": torch.arange(2)}
            kit.offs.update({offsets_name(a, "offs_K"): torch.arange(extent(a, spec.blocks)) for a in K_VIEWS})
            try:
                _run(walker.nodes, env, kit)
            except _Return:
                pass
    for name, buf in outputs.items():
        if buf.mode == "atomic":
            _finalise_atomic(buf, name)
    return Expected(outputs, gm * gn)


def _run(nodes, env, kit: Kit):
    for node in nodes:
        kind = node["k"]
        if kind == "op":
            op = REGISTRY[node["op"]]
            xs = [env[name] for name in node["args"]]
            result = op.ref(kit, xs, node["types"], node["attrs"], node)
            outs = node["out"]
            if len(outs) == 1:
                env[outs[0]] = result
            elif outs:
                for name, value in zip(outs, result):
                    env[name] = value
        elif kind == "for":
            _run_for(node, env, kit)
        elif kind == "if":
            _run_if(node, env, kit)
        elif kind == "return":
            cond = env[node["cond"]]
            if bool(cond.bad) or kit._effects_uncertain():
                if bool(cond.bad) or bool(cond.v != 0):
                    kit.tainted = True  # the program may or may not have ended here
            elif bool(cond.v != 0):
                raise _Return()


def _run_for(node, env, kit):
    spec = kit.spec
    for name, source in node["init"]:
        env[name] = env[source]
    trip = node["trip"]
    count = -(-spec.sizes["K"] // spec.blocks["K"]) if trip[0] == "cdiv" else max(1, int(trip[1]))
    bk = spec.blocks["K"]
    for i in range(count):
        env[node["index"]] = exact(torch.tensor(i), "i32")
        kit.offs[node["koffs"]] = i * bk + torch.arange(bk)
        for axis in K_VIEWS:
            n = extent(axis, spec.blocks)
            kit.offs[offsets_name(axis, node["koffs"])] = i * n + torch.arange(n)
        _run(node["body"], env, kit)
        for name, chosen in node["yields"]:
            env[name] = env[chosen]


def _run_if(node, env, kit):
    if node["cond"] is None:
        cond_value, cond_bad = int(env["pid_m"].v) % 2 == 0, False
    else:
        cond = env[node["cond"]]
        cond_value, cond_bad = bool(cond.v != 0), bool(cond.bad)
    if cond_bad:
        kit.uncertain += 1
        try:
            _run(node["then"], env, kit)
            _run(node["else"], env, kit)
        finally:
            kit.uncertain -= 1
        for name, then_name, _ in node["yields"]:
            env[name] = _mark(env[then_name], True)
        return
    _run(node["then"] if cond_value else node["else"], env, kit)
    for name, then_name, else_name in node["yields"]:
        env[name] = env[then_name if cond_value else else_name]
