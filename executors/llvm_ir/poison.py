"""Poison and undef, tracked per lane and per vector element, to LLVM's LangRef ("Poison Values", "Undefined
Values", the `freeze` instruction and each instruction's own poison clauses).

Why: a reduced `.ll` whose outputs hinge on undefined behaviour must never be called a miscompile (llc may give such
a program any result). So the executor carries, beside each SSA value, which lanes (and elements) hold poison, and
raises `UndefinedBehaviour` (a NotModelled: the kernel is `unresolved`, "cannot judge") when poison reaches a store's
value or address, a load's address, a branch or switch condition, a division's divisor or a `noundef` argument.
Division by zero and INT_MIN / -1 are immediate UB and raise the same way. Lanes outside the execution mask never
count. `undef` is taken as poison: conservative (an `or i32 undef, -1` is defined, and called UB here), never wrong
in the direction that matters (UB called defined).

Cost when no poison exists: a value's poison is an entry of `ex.poison` (name -> (mask, source)) only where some
lane holds it, so the dict is empty in an ordinary kernel. Each instruction has a poison function `pfn(ex, out)` run
only when the dict is non-empty or the instruction can create poison from clean operands (`always`: nsw/nuw/exact
flags, shifts by a lane-varying amount, divisions, fptosi, a poison constant operand, ...). A mask is a bool array
broadcastable to the value ([lanes] or [lanes, n]; constants 0-d or [1, n]); an aggregate's is a tuple per field.
An integer scalar made by bitcasting a vector may carry a bit mask instead (unsigned, the value's width: which bits
came from poison elements), so an intrinsic that reads only some bytes (the fp8 conversions) reads clean ones
clean; everything else takes it as wholly poison (`as_bool`).
"""
from __future__ import annotations

import numpy as np

from .errors import UndefinedBehaviour
from .values import lanes_of

POISON_WORDS = ("undef", "poison")


def const_entry(operand, line=0):
    """The poison of a constant operand: None (defined), or (mask, source)."""
    if operand[0] != "c":
        return None
    ty, value = operand[1], operand[2]
    where = f"at IR line {line}" if line else "in a constant"
    if value is None and len(operand) == 4:
        word = operand[3]
        if ty[0] == "v":
            return np.ones((1, ty[1]), bool), f"`{word}` {where}"
        if ty[0] == "s":
            return tuple(np.ones((), bool) for _ in ty[1]), f"`{word}` {where}"
        return np.ones((), bool), f"`{word}` {where}"
    if ty[0] == "v" and isinstance(value, list) and any(v is None for v in value):
        return np.array([v is None for v in value], bool).reshape(1, ty[1]), f"an undef element {where}"
    return None


class Operand:
    """How a poison function reads one operand's poison: a local name's entry in `ex.poison`, or a constant's."""
    __slots__ = ("name", "const")

    def __init__(self, operand, line=0):
        self.name = operand[1] if operand[0] == "%" else None
        self.const = None if self.name else const_entry(operand, line)

    def __call__(self, ex):
        return ex.poison.get(self.name) if self.name is not None else self.const


def flat(mask, n):
    """Any poison per lane: bool [n] (a vector's elements or an aggregate's fields folded)."""
    if isinstance(mask, tuple):
        out = np.zeros(n, bool)
        for m in mask:
            if m is not None:
                out |= flat(m, n)
        return out
    m = lanes_of(as_bool(mask), n)
    return m.any(axis=tuple(range(1, m.ndim))) if m.ndim > 1 else m


def union(entries):
    """Elementwise poison of an instruction whose result depends on every operand (LangRef: "Most instructions
    return poison when one of their arguments is poison")."""
    mask, src = None, None
    for e in entries:
        if e is None:
            continue
        m = flat_any(e[0]) if isinstance(e[0], tuple) else as_bool(e[0])  # an aggregate or bits: as a whole
        mask = m if mask is None else (mask | m)
        src = src or e[1]
    return None if mask is None else (mask, src)


def as_bool(mask):
    """A mask as bool: a bit mask (an integer built from poison bytes by a bitcast) is poison where any bit is."""
    mask = np.asarray(mask)
    return mask if mask.dtype == np.bool_ else mask != 0


def flat_any(mask):
    """An aggregate's poison folded to one mask (any field): used where fields mix."""
    out = None
    for m in mask:
        if m is None:
            continue
        m = np.asarray(m)
        m = m.any(axis=tuple(range(1, m.ndim))) if m.ndim > 1 else m
        out = m if out is None else (out | m)
    return np.zeros((), bool) if out is None else out


def per_lane(entries, n, shape_tail=()):
    """Poison folded per lane and spread over the result's elements: for an op that mixes a lane's elements."""
    lanes, src = None, None
    for e in entries:
        if e is None:
            continue
        f = flat(e[0], n)
        lanes = f if lanes is None else (lanes | f)
        src = src or e[1]
    if lanes is None or not lanes.any():
        return None
    return (lanes[:, None] if shape_tail else lanes), src


def with_new(entry, new, what):
    """`entry` with the poison a source creates (bool mask `new`) added; `what` names the source."""
    if new is None:
        return entry
    new = np.asarray(new, bool)
    if not new.any():
        return entry
    if entry is None:
        return new, what
    return entry[0] | new, entry[1]


def store_entry(ex, res, entry):
    """Write `res`'s poison after its value was written under the executor's mask (core.Executor.run)."""
    P = ex.poison
    if entry is not None and not _holds(entry[0]):
        entry = None
    if ex.full:
        if entry is None:
            P.pop(res, None)
        else:
            P[res] = entry
        return
    old = P.get(res)
    if entry is None and old is None:
        return
    merged = merge_mask(ex.mask, ex.n, None if entry is None else entry[0], None if old is None else old[0])
    if merged is None:
        P.pop(res, None)
    else:
        P[res] = (merged, entry[1] if entry is not None else old[1])


def _holds(mask):
    if isinstance(mask, tuple):
        return any(m is not None and _holds(m) for m in mask)
    return bool(np.any(mask))


def merge_mask(lanes, n, new, old):
    """`new` on `lanes`, `old` elsewhere (None: no poison); None when nothing is left poisoned."""
    if isinstance(new, tuple) or isinstance(old, tuple):
        k = len(new) if isinstance(new, tuple) else len(old)
        news = new if isinstance(new, tuple) else (new,) * k
        olds = old if isinstance(old, tuple) else (old,) * k
        fields = tuple(merge_mask(lanes, n, a, b) for a, b in zip(news, olds))
        return None if all(f is None for f in fields) else fields
    ref = new if new is not None else old
    ref = lanes_of(np.asarray(ref), n)
    a = lanes_of(np.asarray(new), n) if new is not None else np.zeros(ref.shape, bool)
    b = lanes_of(np.asarray(old), n) if old is not None else np.zeros(ref.shape, bool)
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    m = lanes if a.ndim == 1 else lanes.reshape((n,) + (1,) * (a.ndim - 1))
    out = np.where(m, a, b)
    return out if out.any() else None


def check(ex, entry, what, ins):
    """Raise UndefinedBehaviour when poison reaches a sink on an active lane."""
    if entry is None:
        return
    hit = flat(entry[0], ex.n) & ex.mask
    if hit.any():
        lane = int(np.flatnonzero(hit)[0])
        raise UndefinedBehaviour(f"poison ({entry[1]}) reaches {what} (lane {lane} of the batch, "
                                 f"{int(hit.sum())} lanes)", f"IR line {ins.line} ({_name(ins)})")


def immediate(ex, bad, what, ins):
    """Immediate UB on the active lanes of `bad` (a division by zero, an overflowing division)."""
    hit = lanes_of(np.asarray(bad), ex.n)
    hit = (hit.any(axis=tuple(range(1, hit.ndim))) if hit.ndim > 1 else hit) & ex.mask
    if hit.any():
        raise UndefinedBehaviour(f"{what} ({int(hit.sum())} lanes)", f"IR line {ins.line} ({_name(ins)})")


def _name(ins):
    return ins.op + (" " + ins.extra["callee"] if ins.op == "call" else "")


def source(ins, what):
    """The name a poison source gives itself in messages: what, and where."""
    return f"{what} at IR line {ins.line}"


# compile_poison and the call module's MEMORY prefixes live in poison_compile.py, which imports the op and call
# modules (they import this one); it registers them here when imported (core.py imports it)
_REGISTRY = {}


def register(compile_fn, memory_prefixes):
    _REGISTRY["compile"], _REGISTRY["memory"] = compile_fn, memory_prefixes


def compile_poison(ins, kernel):
    """(pfn, always, before) for an instruction (poison_compile.compile_poison, registered)."""
    return _REGISTRY["compile"](ins, kernel)


def reads(ins, indices=None):
    """The instruction's operands (or those at `indices`) as Operands."""
    ops = ins.ops if indices is None else [ins.ops[i] for i in indices]
    return [Operand(o, ins.line) for o in ops]


def value_getter(operand):
    """A getter of an operand's value for a poison test (the value closures are the executor's; these read the
    same env)."""
    if operand[0] == "%":
        name = operand[1]
        return lambda ex: ex.env[name]
    held = []

    def get(ex):  # made on first use: most poison functions are dropped before they run (poison.may_be_poison)
        if not held:
            from .values import constant
            held.append(constant(operand[1], operand[2]))
        return held[0]
    return get


# results that never hold poison whatever their operands: freeze stops it, memory holds none (a store of poison is
# UB here, so nothing poisoned is ever written)
_CLEAN_RESULTS = {"freeze", "load", "atomicrmw", "cmpxchg"}


_FLAG_SOURCES = {"nsw", "nuw", "exact", "disjoint", "nneg", "samesign"}
_DIVISIONS = {"udiv", "sdiv", "urem", "srem"}


def creates(ins):
    """(may create poison from clean operands, operand indices whose poison is never read): a cheap, conservative
    reading of the instruction, before any poison function is built (most never are: may_be_poison)."""
    op, ops = ins.op, ins.ops
    if op == "call":
        callee = ins.extra["callee"]
        if callee.startswith("llvm.amdgcn.update.dpp"):
            c = [o[2] if o[0] == "c" else None for o in ops[2:6]]
            ignores = (0,) if c[1] is not None and c[2] is not None and (c[1] & 15) == 15 and (c[2] & 15) == 15 \
                and c[3] else ()
            return c[0] in (0x142, 0x143), ignores
        if callee.startswith(("llvm.amdgcn.readlane", "llvm.ctlz", "llvm.cttz", "llvm.abs")):
            return True, ()
        return False, ()
    if op in _DIVISIONS or op == "fptosi" or op == "fptoui":
        return True, ()
    if op != "getelementptr":
        for flag in ins.extra.get("flags", ()):  # no set built: this runs for every instruction of every kernel
            if flag in _FLAG_SOURCES:
                return True, ()
    if op in ("shl", "lshr", "ashr"):
        amount = ops[1]
        bits = ins.ty[1] if ins.ty[0] == "i" else ins.ty[2][1]
        return not (amount[0] == "c" and isinstance(amount[2], int) and 0 <= amount[2] < bits), ()
    if op in ("extractelement", "insertelement"):
        idx = ops[1] if op == "extractelement" else ops[2]
        n = ins.extra["n"] if op == "extractelement" else ins.ty[1]
        return not (idx[0] == "c" and isinstance(idx[2], int) and 0 <= idx[2] < n), ()
    if op == "shufflevector":
        return any(m < 0 for m in ins.extra["mask"]), ()
    return False, ()


# results that never hold poison whatever their operands: freeze stops it, memory holds none (a store of poison is
# UB here, so nothing poisoned is ever written), ids and barriers have no operands to take it from
_CLEAN_RESULTS = {"freeze", "load", "atomicrmw", "cmpxchg", "fence"}
_CLEAN_CALLS = ("llvm.amdgcn.raw.ptr.buffer.load", "llvm.amdgcn.raw.ptr.buffer.atomic", "llvm.amdgcn.workitem",
                "llvm.amdgcn.workgroup", "llvm.amdgcn.implicitarg", "__ockl_")


def may_be_poison(fn):
    """SSA names that may hold poison on some run: results of instructions that can create it (`creates`) or take
    a poison constant and, transitively, of those with such an operand (phis included: a fixpoint over loops).
    Only instructions that create poison or read a name of this set get a poison function (core.Kernel), so the
    part of a kernel no poison can reach costs nothing; Triton's IR, which builds vectors from `poison`, keeps
    partly poisoned vectors live, so a dynamic "is any poison live" test alone would not do."""
    maybe, users = set(), {}
    # id(ins) -> 1 (creates poison) | 2 (a poison constant operand), for needs and lazy; few objects made, as the
    # garbage collector's passes over a big heap cost more than this analysis (small ints are shared)
    fn.poison_info = info = {}
    fn.poison_ignores = ignored = {}
    for block in fn.blocks.values():
        for ins in block.phis + block.body:
            op = ins.op
            own, ignores = creates(ins) if op != "phi" and op != "br" and op != "switch" else (False, ())
            ops = ins.ops
            if ignores:
                ignored[id(ins)] = ignores
                ops = _read(ins, ignores)
            consts = False
            for o in ops:
                if o[0] == "c" and (len(o) == 4 or isinstance(o[2], list) and None in o[2]):
                    consts = True
                    break
            info[id(ins)] = own + 2 * consts
            if ins.res is None or op in _CLEAN_RESULTS or op == "call" and ins.extra[
                    "callee"].startswith(_CLEAN_CALLS):
                continue
            if own or consts:
                maybe.add(ins.res)
            for o in ops:
                if o[0] == "%":
                    users.setdefault(o[1], []).append(ins.res)
    work = list(maybe)
    while work:  # spread to users: a worklist over the def-use edges
        for user in users.get(work.pop(), ()):
            if user not in maybe:
                maybe.add(user)
                work.append(user)
    return maybe


def _read(ins, ignores):
    """The operands whose poison can matter (`ignores`: those proven unread)."""
    return [o for k, o in enumerate(ins.ops) if k not in ignores] if ignores else ins.ops


class Track:
    """An instruction's poison tracking in the executor's loop (core.Executor.run): `always` (it may create poison
    from clean operands), `before` (a memory access: its checks run first, its result is clean), `names` (the
    operands whose entries it reads); called as the poison function, built on first use: most instructions a
    source may reach never see poison on a run, and building every one up front doubled the kernel's preparation
    (one object per instruction, not closures: the garbage collector's passes over a big heap are the cost)."""
    __slots__ = ("ins", "kernel", "fn", "always", "before", "names")

    def __init__(self, ins, kernel, info):
        self.ins, self.kernel, self.fn = ins, kernel, None
        self.always = info[id(ins)] != 0
        self.before = ins.op in ("load", "store", "atomicrmw", "cmpxchg") or ins.op == "call" and ins.extra[
            "callee"].startswith(_REGISTRY["memory"])
        self.names = frozenset(o[1] for o in ins.ops if o[0] == "%")

    def __call__(self, ex, out):
        fn = self.fn
        if fn is None:
            fn = self.fn = compile_poison(self.ins, self.kernel)[0] or _nothing
        return fn(ex, out)


def _nothing(ex, out):
    return None


def needs(ins, maybe, info, ignored):
    """Whether an instruction needs a poison function: it creates poison, or an operand may hold it."""
    if info[id(ins)]:
        return True
    skip = ignored.get(id(ins), ())
    for k, o in enumerate(ins.ops):
        if o[0] == "%" and o[1] in maybe and k not in skip:
            return True
    return False


def branch_operand(term):
    """The poison reader of a br/switch condition, or None for an unconditional branch."""
    if term.op in ("br", "switch") and term.ops:
        return Operand(term.ops[0], term.line)
    return None


def check_branch(ex, reader, term):
    check(ex, reader(ex), f"the condition of a `{term.op}` (LangRef: \"undefined behavior occurs when branching "
                          f"on a poison value\")", term)
