"""Data-moving patterns: all-gather (pushed or pulled), reduce-scatter (pulled or atomically pushed) and
all-to-all with variable splits (MoE token dispatch).

Why a module of its own: these patterns move or partition data rather than sum one whole buffer; their references
are concatenations and slices (with host-written split tables for all-to-all), not the all-reduce sums.
"""
from __future__ import annotations

import numpy as np

from .pattern import Expect, Pattern, acc_tl, nans, representable_values, sum_and_magnitude


class AllGatherPush(Pattern):
    """Every rank stores its data into slot r of every peer's OUT (optionally a barrier, after which each rank
    copies its gathered OUT to SCR): OUT_r = concat(x_0 .. x_(R-1))."""
    name = "allgather_push"
    optional_barrier = True

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": R * c["n"], "SCR": R * c["n"] if c["barrier"] else 0}

    def emit(self, e, c, R):
        with e.chunks("n"):
            e.line(f"x = {e.load(e.ptr('IN'), remote=False)}")
            with e.ranks():
                e.store(e.ptr("OUT", "p"), "x", offs="rank * n + offs")
        if c["barrier"]:
            e.barrier("bar", 0)
            with e.ranks():  # per source slot, so each block is read by the program that wrote it
                with e.chunks("n", reader=True):
                    e.store(e.ptr("SCR"), e.load(e.ptr("OUT"), offs="p * n + offs", remote=False), offs="p * n + offs",
                            remote=False)

    def expected(self, c, R, ins):
        whole = np.concatenate([i["IN"] for i in ins])
        out = {"OUT": Expect(whole)}
        if c["barrier"]:
            out["SCR"] = Expect(whole)
        return [dict(out) for _ in range(R)]


class AllGatherPull(Pattern):
    """Every rank reads every peer's data into its OUT (entry barrier optional): OUT_r = concat(x_p)."""
    name = "allgather_pull"
    optional_barrier = True

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": R * c["n"]}

    def emit(self, e, c, R):
        if c["barrier"]:
            e.barrier("bar", 0)
        with e.ranks():
            with e.chunks("n"):
                e.store(e.ptr("OUT"), e.load(e.ptr("IN", "p")), offs="p * n + offs", remote=False)

    def expected(self, c, R, ins):
        whole = np.concatenate([i["IN"] for i in ins])
        return [{"OUT": Expect(whole)} for _ in range(R)]


class ReduceScatter(Pattern):
    """Rank r gets the sum of shard r of every rank's data, pulled (extra.mode "pull") or atomically pushed by
    its owners ("push"): OUT_r = sum_p x_p[r*n:(r+1)*n]."""
    name = "reduce_scatter"

    def counts(self, c, R):
        return {"IN": R * c["n"], "OUT": c["n"]}

    @property
    def zero(self):
        return ("OUT",)  # pull overwrites every element: zero is as good a fill as NaN there

    def emit(self, e, c, R):
        if c["extra"]["mode"] == "pull":
            with e.chunks("n"):
                e.line(f"s = tl.zeros([BLOCK], {acc_tl(c)})")
                with e.ranks():
                    e.line(f"s += {e.acc(e.load(e.ptr('IN', 'p'), offs='rank * n + offs'))}")
                e.store(e.ptr("OUT"), e.out("s"), remote=False)
            return
        with e.ranks("q"):
            with e.chunks("n"):
                e.line(f"x = {e.load(e.ptr('IN'), offs='q * n + offs', remote=False)}")
                e.line(f'tl.atomic_add({e.ptr("OUT", "q")} + offs, x, mask=m, sem="relaxed", scope="{c["scope"]}")')

    def expected(self, c, R, ins):
        n = c["n"]
        out = []
        for r in range(R):
            want, absum = sum_and_magnitude([i["IN"][r * n:(r + 1) * n] for i in ins])
            acc = c["dtype"] if c["extra"]["mode"] == "push" else None
            out.append({"OUT": Expect(want, absum, R, acc=acc)})
        return out


class AllToAll(Pattern):
    """All-to-all with variable splits (MoE token dispatch): rank p sends splits[p][q] elements to rank q, pushed
    into q's OUT (then optionally a barrier and q copies what it received to SCR) or pulled by q. The split and
    offset tables are host data in AUX: [splits | send offsets | receive offsets], R*R each."""
    name = "all_to_all"

    @property
    def optional_barrier(self):
        return True

    def counts(self, c, R):
        s = np.array(c["extra"]["splits"])
        received = int(s.sum(axis=0).max())
        return {"IN": int(s.sum(axis=1).max()), "OUT": received,
                "SCR": received if c["barrier"] and c["extra"]["mode"] == "push" else 0, "AUX": 3 * R * R}

    def barriers(self, c):
        return 1 if c["barrier"] and c["extra"]["mode"] == "push" else 0

    def tables(self, c, R):
        s = np.array(c["extra"]["splits"], dtype=np.int64)
        send = np.concatenate([np.zeros((R, 1), np.int64), np.cumsum(s, axis=1)[:, :-1]], axis=1)
        recv = np.concatenate([np.zeros((1, R), np.int64), np.cumsum(s, axis=0)[:-1, :]], axis=0)
        return s, send, recv

    def inputs(self, c, R, rng):
        s, send, recv = self.tables(c, R)
        aux = np.concatenate([s.ravel(), send.ravel(), recv.ravel()]).astype(np.float64)
        count = self.counts(c, R)["IN"]
        return [{"IN": representable_values(c["dtype"], count, rng), "AUX": aux} for _ in range(R)]

    def emit(self, e, c, R):
        e.line(f"aux = {e.ptr('AUX', 'rank', 'i32')}")
        if c["extra"]["mode"] == "push":
            with e.ranks("q"):
                e.line("L = tl.load(aux + rank * R + q)")
                e.line("so = tl.load(aux + R * R + rank * R + q)")
                e.line("ro = tl.load(aux + 2 * R * R + rank * R + q)")
                with e.chunks("L"):
                    e.store(e.ptr("OUT", "q"), e.load(e.ptr("IN"), offs="so + offs", remote=False), offs="ro + offs")
            if c["barrier"]:
                e.barrier("bar", 0)
                with e.ranks():
                    e.line("L = tl.load(aux + p * R + rank)")
                    e.line("ro = tl.load(aux + 2 * R * R + p * R + rank)")
                    with e.chunks("L"):
                        e.store(e.ptr("SCR"), e.load(e.ptr("OUT"), offs="ro + offs", remote=False), offs="ro + offs",
                                remote=False)
            return
        with e.ranks():
            e.line("L = tl.load(aux + p * R + rank)")
            e.line("so = tl.load(aux + R * R + p * R + rank)")
            e.line("ro = tl.load(aux + 2 * R * R + p * R + rank)")
            with e.chunks("L"):
                e.store(e.ptr("OUT"), e.load(e.ptr("IN", "p"), offs="so + offs"), offs="ro + offs", remote=False)

    def expected(self, c, R, ins):
        s, send, recv = self.tables(c, R)
        count = self.counts(c, R)["OUT"]
        out = []
        for q in range(R):
            want = nans(count)
            for p in range(R):
                want[recv[p, q]:recv[p, q] + s[p, q]] = ins[p]["IN"][send[p, q]:send[p, q] + s[p, q]]
            region = {"OUT": Expect(want)}
            if self.barriers(c):
                region["SCR"] = Expect(want)
            out.append(region)
        return out
