"""Two ways the machine runs an instruction's pseudocode less often, with the same results (pcode.py uses both).

Why: a wave step costs a few hundred microseconds of closures over numpy lanes (pcode_compile.py), and a kernel
runs tens of thousands. Two patterns dominate what is left after decoding once:

* **The same inputs again.** An instruction without memory is a pure function of its input registers and EXEC:
  a workgroup's index arithmetic repeats in every workgroup, EXEC masks and loop bounds repeat in every
  iteration. ``Results`` keeps each (instruction, inputs, EXEC) -> outputs, so a repeat is a dictionary lookup.
  Measured on eight gfx942 kernels: 63% of the per-lane and 76% of the scalar runs were repeats.
* **Read-modify-write lanes that touch different bytes.** An atomic's pseudocode runs lane by lane in ascending
  order (the guide's order, which decides what each lane reads back where lanes share an address), 64 runs of
  the whole text; a global_atomic_add_f32 took 26 ms. Where no two active lanes touch a common byte the order
  cannot matter, so ``Deferred`` runs every lane at once with the stores held back, and the caller keeps that
  run only if the lanes' bytes are disjoint and no load followed a store (else it runs lane by lane, as ever).

Neither is a second semantics: both run the guide's pseudocode, and `tests/amdgcn/test_pcode_reuse.py` holds
each to the plain run on the same inputs.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Deferred", "Results"]

M64 = (1 << 64) - 1


def _key(value):
    """A hashable form of a register value, or None where bytes do not identify it (object arrays hold
    references, whose bytes can repeat for another value once the first is freed)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.dtype != object:
        return value.dtype.str, value.shape, value.tobytes()
    return None


class Results:
    """(Op, EXEC, inputs) -> the outputs of a pure instruction's run: arrays kept read-only and handed out as
    copies, so no caller can change what a later hit returns. The key holds the Op itself (hashed by identity, and
    kept alive by the key), since two Ops can share a mnemonic (pcode.compile_variant). Bounded: emptied when
    full."""

    def __init__(self, limit: int = 20_000):
        self.limit, self.table, self.hits, self.misses = limit, {}, 0, 0

    def key(self, op, exec_mask, inputs: dict):
        parts = [op, None if exec_mask is None else _key(exec_mask)]
        if exec_mask is not None and parts[1] is None:
            return None
        for name in sorted(inputs):
            k = _key(inputs[name])
            if k is None:
                return None
            parts += (name, k)
        return tuple(parts)

    def get(self, key):
        out = self.table.get(key)
        if out is None:
            self.misses += 1
            return None
        self.hits += 1
        return {name: v.copy() if isinstance(v, np.ndarray) else v for name, v in out.items()}

    def put(self, key, out: dict) -> None:
        if len(self.table) >= self.limit:
            self.table.clear()
        kept = {}
        for name, v in out.items():
            if isinstance(v, np.ndarray):
                v = v.copy()
                v.setflags(write=False)
            kept[name] = v
        self.table[key] = kept


class _Ordered(Exception):
    """A lane loads after a store: running the lanes together would read the memory before that store."""


class Deferred:
    """The memory of an all-lanes run of a read-modify-write instruction: loads pass through, stores are held
    (``commit`` applies them in the order issued), and every byte each lane touches is recorded, so ``disjoint``
    can say whether the lanes could have run in any order."""

    def __init__(self, memory):
        self.memory, self.stores, self.touched = memory, [], []
        self.wrap = int(getattr(memory, "wrap", M64))   # LDS ports wrap addresses at 32 bits (machine_decode.Port)

    def __getattr__(self, name):   # the Calc*Addr hooks and anything else the port offers
        return getattr(self.memory, name)

    def _touch(self, addr, nbytes, lanes):
        on = np.broadcast_to(np.asarray(lanes, bool), (64,))
        a = np.broadcast_to(np.asarray(addr, np.uint64) & np.uint64(self.wrap), (64,))
        self.touched.append((a[on], np.flatnonzero(on), nbytes))

    def load(self, addr, nbytes, lanes):
        if self.stores:
            raise _Ordered()
        self._touch(addr, nbytes, lanes)
        return self.memory.load(addr, nbytes, lanes)

    def store(self, addr, nbytes, bits, lanes):
        self._touch(addr, nbytes, lanes)
        self.stores.append((addr, nbytes, bits, lanes))

    def disjoint(self) -> bool:
        """No byte is touched by two lanes: each lane's span (lowest to highest byte it touched) apart from every
        other lane's."""
        if not self.touched:
            return True
        starts = np.concatenate([a for a, _, _ in self.touched]).astype(np.uint64)
        ends = np.concatenate([a + np.uint64(n) for a, _, n in self.touched]).astype(np.uint64)
        lanes = np.concatenate([lane for _, lane, _ in self.touched])
        low = np.full(64, np.iinfo(np.uint64).max, np.uint64)
        high = np.zeros(64, np.uint64)
        np.minimum.at(low, lanes, starts)
        np.maximum.at(high, lanes, ends)
        used = np.unique(lanes)
        order = used[np.argsort(low[used], kind="stable")]
        return bool(np.all(low[order][1:] >= high[order][:-1]))

    def commit(self) -> None:
        for addr, nbytes, bits, lanes in self.stores:
            self.memory.store(addr, nbytes, bits, lanes)


ORDERED = _Ordered
