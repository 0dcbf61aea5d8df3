"""Point-to-point and synchronisation patterns: put-and-signal to a neighbour, an all-pairs barrier, a grid-wide
barrier inside one rank, and a spin lock guarding a remote read-modify-write.

Why a module of its own: these are the building blocks the larger collectives are made of (one signal, one wait,
one barrier, one lock), each alone in a kernel, so a miscompiled memory order shows up without anything else
around it; they share no code with the data-moving families.
"""
from __future__ import annotations

import numpy as np

from .pattern import Expect, Pattern, sum_and_magnitude


class PutSignal(Pattern):
    """Rank r puts its data into rank r-1's OUT, signals it, waits for rank r+1's signal, then adds its own data
    to what arrived: OUT_r = x_(r+1) + x_r."""
    name = "put_signal"

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"]}

    def flag_arrays(self, c, R):
        return {"put": (c["programs"], "signal")}

    def emit(self, e, c, R):
        e.line("peer = (rank + R - 1) % R")
        with e.chunks("n"):
            e.store(e.ptr("OUT", "peer"), e.load(e.ptr("IN"), remote=False))
        e.line("tl.debug_barrier()")
        e.signal(e.flag("put", "pid", "peer"))
        e.wait(e.flag("put", "pid"))
        e.line("tl.debug_barrier()")
        with e.chunks("n", reader=True):
            e.line(f"y = {e.acc(e.load(e.ptr('OUT'), remote=False))} + {e.acc(e.load(e.ptr('IN'), remote=False))}")
            e.store(e.ptr("OUT"), e.out("y"), remote=False)

    def expected(self, c, R, ins):
        out = []
        for r in range(R):
            want, absum = sum_and_magnitude([ins[(r + 1) % R]["IN"], ins[r]["IN"]])
            out.append({"OUT": Expect(want, absum, 2)})
        return out

    def waits(self, c, R, pid, r):
        return [(pid, (r + 1) % R)]


class BarrierAllPairs(Pattern):
    """Every rank stages its data, all ranks meet in an all-pairs barrier (self-resetting CAS flags or epoch
    flags), then each reads its right neighbour's staged data: OUT_r = x_(r+1)."""
    name = "barrier_allpairs"

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"], "SCR": c["n"]}

    def barriers(self, c):
        return 1

    def emit(self, e, c, R):
        with e.chunks("n"):
            e.store(e.ptr("SCR"), e.load(e.ptr("IN"), remote=False), remote=False)
        e.barrier("bar", 0)
        e.line("peer = (rank + 1) % R")
        with e.chunks("n", reader=True):
            e.store(e.ptr("OUT"), e.load(e.ptr("SCR", "peer")), remote=False)

    def expected(self, c, R, ins):
        return [{"OUT": Expect(ins[(r + 1) % R]["IN"])} for r in range(R)]


class GridBarrier(Pattern):
    """A grid-wide barrier inside one rank (an arrival counter, epoch-numbered): each program stages its blocks,
    all programs meet, then each copies the blocks another program staged: OUT_r = x_r."""
    name = "grid_barrier"
    min_programs = 2
    flags_modes = ("epoch",)

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"], "SCR": c["n"]}

    def flag_arrays(self, c, R):
        return {"ctr": (1, "counter")}

    def emit(self, e, c, R):
        with e.chunks("n"):
            e.store(e.ptr("SCR"), e.load(e.ptr("IN"), remote=False), remote=False)
        e.line("tl.debug_barrier()")
        e.line(f"_arrive({e.flag('ctr', '0')})")
        if e.control != "no-barrier":
            e.line(f"_wait_value({e.flag('ctr', '0')}, epoch * NPROG, max_spin, err)")
        e.line("tl.debug_barrier()")
        e.line("for _s in range((NPROG - 1 - pid) * BLOCK, n, NPROG * BLOCK):")
        with e.indented():
            e.line("offs = _s + tl.arange(0, BLOCK)")
            e.line("m = offs < n")
            e.store(e.ptr("OUT"), e.load(e.ptr("SCR"), remote=False), remote=False)

    def expected(self, c, R, ins):
        return [{"OUT": Expect(ins[r]["IN"])} for r in range(R)]

    def waits(self, c, R, pid, r):
        return [(q, r) for q in range(c["programs"])]


class SpinLockRMW(Pattern):
    """A spin lock on rank 0 guards a plain read-modify-write of rank 0's OUT by every rank: OUT_0 = sum x_r."""
    name = "spinlock_rmw"
    zero = ("OUT",)
    flags_modes = ("epoch",)  # a lock is its own protocol: epoch/reset does not apply

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"]}

    def flag_arrays(self, c, R):
        return {"lock": (c["programs"], "lock")}

    def emit(self, e, c, R):
        e.line("owner = 0")
        lock = e.flag("lock", "pid", "owner")
        if e.control != "no-barrier":
            e.line(f"_lock({lock}, max_spin, err)")
        e.line("tl.debug_barrier()")
        with e.chunks("n"):
            e.line(f"y = {e.acc(e.load(e.ptr('OUT', 'owner')))} + {e.acc(e.load(e.ptr('IN'), remote=False))}")
            e.store(e.ptr("OUT", "owner"), e.out("y"))
        e.line("tl.debug_barrier()")
        if e.control != "no-barrier":
            e.line(f"_unlock({lock})")

    def expected(self, c, R, ins):
        want, absum = sum_and_magnitude([i["IN"] for i in ins])
        zero = np.zeros(c["n"])
        return [{"OUT": Expect(want, absum, R, acc=c["dtype"]) if r == 0 else Expect(zero)} for r in range(R)]

    def waits(self, c, R, pid, r):  # a lock waits for whoever holds it: in program order, only earlier holders
        return [(pid, q) for q in range(r)]
