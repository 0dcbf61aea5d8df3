"""All-reduce patterns: one-shot (every rank pulls every peer), two-shot (reduce-scatter then all-gather),
atomic (every rank adds into every peer) and ring (R-1 reduce-scatter steps, then R-1 all-gather steps).

Why a module of its own: the four are the same computation (OUT_r = sum of every rank's data) reached by four
communication schemes, which is what makes them worth fuzzing side by side; they share its float64 reference and
its accumulation rules and nothing with the other families.
"""
from __future__ import annotations

from .pattern import Expect, Pattern, acc_dtype, acc_tl, cdiv, sum_and_magnitude


class AllReduceOneShot(Pattern):
    """Every rank pulls every peer's data and sums it (entry and exit barriers optional): OUT_r = sum x_p."""
    name = "allreduce_oneshot"
    optional_barrier = True

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"]}

    def barriers(self, c):
        return 2 if c["barrier"] else 0

    def emit(self, e, c, R):
        if c["barrier"]:
            e.barrier("bar", 0)
        with e.chunks("n"):
            e.line(f"s = tl.zeros([BLOCK], {acc_tl(c)})")
            with e.ranks():
                e.line(f"s += {e.acc(e.load(e.ptr('IN', 'p')))}")
            e.store(e.ptr("OUT"), e.out("s"), remote=False)
        if c["barrier"]:
            e.barrier("bar", 1)

    def expected(self, c, R, ins):
        want, absum = sum_and_magnitude([i["IN"] for i in ins])
        return [{"OUT": Expect(want, absum, R)} for _ in range(R)]


class AllReduceTwoShot(Pattern):
    """Reduce-scatter (rank r sums shard r from every peer into its scratch), a barrier, then all-gather (every
    rank pulls every shard): OUT_r = sum x_p."""
    name = "allreduce_twoshot"

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"], "SCR": c["n"]}

    def scr_dtype(self, c):
        return acc_dtype(c)

    def barriers(self, c):
        return 1

    def emit(self, e, c, R):
        e.line("S = (n + R - 1) // R")
        e.line("lo = rank * S")
        e.line("L = tl.minimum(n - lo, S)")
        with e.chunks("L", start="lo"):
            e.line(f"s = tl.zeros([BLOCK], {acc_tl(c)})")
            with e.ranks():
                e.line(f"s += {e.acc(e.load(e.ptr('IN', 'p')))}")
            e.store(e.ptr("SCR"), "s", remote=False)
        e.barrier("bar", 0)
        with e.ranks("q"):
            e.line("lo_q = q * S")
            e.line("L_q = tl.minimum(n - lo_q, S)")
            with e.chunks("L_q", start="lo_q", reader=True):
                e.store(e.ptr("OUT"), e.out(e.load(e.ptr("SCR", "q"))), remote=False)

    def expected(self, c, R, ins):
        want, absum = sum_and_magnitude([i["IN"] for i in ins])
        return [{"OUT": Expect(want, absum, R)} for _ in range(R)]


class AllReduceAtomic(Pattern):
    """Every rank atomically adds its data into every peer's OUT (optionally a barrier, after which each rank
    copies its OUT to SCR): OUT_r = sum x_p, in any order."""
    name = "allreduce_atomic"
    dtypes = ("fp32", "i32")
    optional_barrier = True
    zero = ("OUT",)

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"], "SCR": c["n"] if c["barrier"] else 0}

    def emit(self, e, c, R):
        with e.chunks("n"):
            e.line(f"x = {e.load(e.ptr('IN'), remote=False)}")
            with e.ranks():
                e.line(f'tl.atomic_add({e.ptr("OUT", "p")} + offs, x, mask=m, sem="relaxed", scope="{c["scope"]}")')
        if c["barrier"]:
            e.barrier("bar", 0)
            with e.chunks("n"):
                e.store(e.ptr("SCR"), e.load(e.ptr("OUT"), remote=False), remote=False)

    def expected(self, c, R, ins):
        want, absum = sum_and_magnitude([i["IN"] for i in ins])
        out = {"OUT": Expect(want, absum, R, acc=c["dtype"])}
        if c["barrier"]:
            out["SCR"] = out["OUT"]
        return [dict(out) for _ in range(R)]


class AllReduceRing(Pattern):
    """Ring all-reduce: R-1 reduce-scatter steps (each rank passes a growing partial sum to its right neighbour's
    scratch slot and signals), then R-1 all-gather steps (each rank forwards a finished shard into its right
    neighbour's OUT and signals): OUT_r = sum x_p."""
    name = "allreduce_ring"

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"], "SCR": (R - 1) * cdiv(c["n"], R)}

    def scr_dtype(self, c):
        return acc_dtype(c)

    def flag_arrays(self, c, R):
        return {"rs": ((R - 1) * c["programs"], "signal"), "ag": ((R - 1) * c["programs"], "signal")}

    def emit(self, e, c, R):
        e.line("S = (n + R - 1) // R")
        e.line("nxt = (rank + 1) % R")
        e.line("for t in range(R - 1):")
        with e.indented():
            e.line("lo = ((rank + R - t) % R) * S")
            e.line("L = tl.minimum(n - lo, S)")
            with e.chunks("L", start="lo"):
                e.line(f"v = {e.acc(e.load(e.ptr('IN'), remote=False))}")
                e.line(f"v += {e.load(e.ptr('SCR'), offs='(t - 1) * S + offs - lo', mask='m & (t > 0)', remote=False)}")
                e.store(e.ptr("SCR", "nxt"), "v", offs="t * S + offs - lo")
            e.line("tl.debug_barrier()")
            e.signal(e.flag("rs", "t * NPROG + pid", "nxt"))
            e.wait(e.flag("rs", "t * NPROG + pid"))
            e.line("tl.debug_barrier()")
        e.line("lo = ((rank + 1) % R) * S")
        e.line("L = tl.minimum(n - lo, S)")
        with e.chunks("L", start="lo"):
            e.line(f"v = {e.acc(e.load(e.ptr('IN'), remote=False))}")
            e.line(f"v += {e.load(e.ptr('SCR'), offs='(R - 2) * S + offs - lo', remote=False)}")
            e.store(e.ptr("OUT"), e.out("v"), remote=False)
        e.line("for t in range(R - 1):")
        with e.indented():
            e.line("lo = ((rank + 1 + R - t) % R) * S")
            e.line("L = tl.minimum(n - lo, S)")
            with e.chunks("L", start="lo"):
                e.store(e.ptr("OUT", "nxt"), e.load(e.ptr("OUT"), remote=False))
            e.line("tl.debug_barrier()")
            e.signal(e.flag("ag", "t * NPROG + pid", "nxt"))
            e.wait(e.flag("ag", "t * NPROG + pid"))
            e.line("tl.debug_barrier()")

    def expected(self, c, R, ins):
        want, absum = sum_and_magnitude([i["IN"] for i in ins])
        return [{"OUT": Expect(want, absum, R)} for _ in range(R)]

    def waits(self, c, R, pid, r):
        return [(pid, (r - 1) % R)]
