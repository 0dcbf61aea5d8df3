"""The poison function of each instruction: the op and call modules' compilers behind one entry point, registered
with poison.py so that its Track reaches them without importing them (they import poison.py)."""
from __future__ import annotations

from . import poison, poison_calls, poison_ops


def compile_poison(ins, kernel):
    """(pfn, always, before) for an instruction; pfn None where its result can never be poison and it is no sink;
    `before`: a memory access, whose checks run before it (a poison address must not fault first), with no
    poisoned result (memory holds no poison: a store of poison is UB here)."""
    before = ins.op in ("load", "store", "atomicrmw", "cmpxchg")
    if ins.op == "call":
        pfn, always = poison_calls.compile_call(ins, kernel)
        before = ins.extra["callee"].startswith(poison_calls.MEMORY)
    else:
        pfn, always = poison_ops.compile_op(ins)
    if pfn is None:
        return None, False, False
    return pfn, always, before


poison.register(compile_poison, poison_calls.MEMORY)
