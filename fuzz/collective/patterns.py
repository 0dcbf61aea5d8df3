"""The pattern registry: each communication pattern's buffers, kernel body, inputs, float64 reference and the
waits it performs (which decide, statically, whether the sequential interpreter can run it).

A pattern is declared once here, with everything every stage needs, as the op registry does for single-rank ops
(docs/design.md "One op registry"): the renderer reads `emit`, the launcher `counts`/`zero`, the oracle `inputs` and
`expected`, the interpreter subset `waits`.

Parameters (spec.collective, see spec.py): dtype, n (elements a rank contributes), block, programs (per rank),
sem (release side, acquire side), scope, poll, flags (epoch | reset), signal (xchg | add), load_cache,
store_cache, pointers (table | translate), barrier (the optional barriers of the patterns that have one),
control (None | "no-barrier" | "relaxed": negative controls), extra (pattern-specific).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NAN = float("nan")


@dataclass
class Expect:
    """What one region of one rank must hold after a launch. `absum`/`terms` bound rounding (terms = 0: exact):
    |got - want| <= terms * u(acc) * absum + u(out) * |want|. NaN in `want` means "must still be the NaN fill"."""
    want: np.ndarray
    absum: np.ndarray | None = None
    terms: int = 0
    acc: str | None = None  # the dtype sums are rounded to along the way (default: emit.ACC of the data dtype)


class Pattern:
    name = ""
    dtypes = ("fp32", "fp16", "bf16", "i32")
    optional_barrier = False  # has a barrier the spec may leave out (then it has no waits at all)
    min_programs = 1
    zero = ()  # regions filled with 0 instead of NaN (atomic accumulation)
    flags_modes = ("epoch", "reset")

    def counts(self, c, R) -> dict:
        """Elements per region (IN, OUT, SCR, AUX); FLAGS come from flag_arrays."""
        raise NotImplementedError

    def scr_dtype(self, c) -> str:
        return c["dtype"]

    def out_dtype(self, c) -> str:
        return c["dtype"]

    def flag_arrays(self, c, R) -> dict:
        """name -> (slots, kind); kind: "signal" | "lock" | "counter"."""
        return {"bar": (R * c["programs"] * self.barriers(c), "signal")} if self.barriers(c) else {}

    def barriers(self, c) -> int:
        """How many all-pairs barriers the kernel holds: by default its optional one, when the spec asks for it."""
        return 1 if self.optional_barrier and c["barrier"] else 0

    def emit(self, e, c, R):
        raise NotImplementedError

    def inputs(self, c, R, rng) -> list:
        """Per rank: {"IN": float64 values (already representable in the dtype), "AUX": int32s (optional)}."""
        return [{"IN": _values(c["dtype"], self.counts(c, R)["IN"], rng)} for _ in range(R)]

    def expected(self, c, R, ins) -> list:
        """Per rank: {region: Expect}."""
        raise NotImplementedError

    def waits(self, c, R, pid, r) -> list:
        """The programs (pid, rank) whose signal or lock program (pid, r) waits for. Empty: no waits."""
        if self.barriers(c):
            return [(pid, q) for q in range(R)]
        return []


def _values(dtype, count, rng):
    if dtype == "i32":
        return rng.integers(-1000, 1001, size=count).astype(np.float64)
    x = rng.uniform(-1.0, 1.0, size=count)
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float64)
    if dtype == "bf16":  # round to nearest even on the top 16 bits
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
        return bits.view(np.float32).astype(np.float64)
    return x.astype(np.float32).astype(np.float64)


def _sum(arrays):
    return np.sum(arrays, axis=0), np.sum(np.abs(arrays), axis=0)


def _nan(count):
    return np.full(count, NAN)


def cdiv(a, b):
    return -(-a // b)


# --- point to point and barriers ---------------------------------------------------------------------------------
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
            want, absum = _sum([ins[(r + 1) % R]["IN"], ins[r]["IN"]])
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
        want, absum = _sum([i["IN"] for i in ins])
        zero = np.zeros(c["n"])
        return [{"OUT": Expect(want, absum, R, acc=c["dtype"]) if r == 0 else Expect(zero)} for r in range(R)]

    def waits(self, c, R, pid, r):  # a lock waits for whoever holds it: in program order, only earlier holders
        return [(pid, q) for q in range(r)]


# --- all-reduce -------------------------------------------------------------------------------------------------
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
            e.line(f"s = tl.zeros([BLOCK], {_acc_tl(c)})")
            with e.ranks():
                e.line(f"s += {e.acc(e.load(e.ptr('IN', 'p')))}")
            e.store(e.ptr("OUT"), e.out("s"), remote=False)
        if c["barrier"]:
            e.barrier("bar", 1)

    def expected(self, c, R, ins):
        want, absum = _sum([i["IN"] for i in ins])
        return [{"OUT": Expect(want, absum, R)} for _ in range(R)]


class AllReduceTwoShot(Pattern):
    """Reduce-scatter (rank r sums shard r from every peer into its scratch), a barrier, then all-gather (every
    rank pulls every shard): OUT_r = sum x_p."""
    name = "allreduce_twoshot"

    def counts(self, c, R):
        return {"IN": c["n"], "OUT": c["n"], "SCR": c["n"]}

    def scr_dtype(self, c):
        return _acc(c)

    def barriers(self, c):
        return 1

    def emit(self, e, c, R):
        e.line("S = (n + R - 1) // R")
        e.line("lo = rank * S")
        e.line("L = tl.minimum(n - lo, S)")
        with e.chunks("L", start="lo"):
            e.line(f"s = tl.zeros([BLOCK], {_acc_tl(c)})")
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
        want, absum = _sum([i["IN"] for i in ins])
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
        want, absum = _sum([i["IN"] for i in ins])
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
        return _acc(c)

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
        want, absum = _sum([i["IN"] for i in ins])
        return [{"OUT": Expect(want, absum, R)} for _ in range(R)]

    def waits(self, c, R, pid, r):
        return [(pid, (r - 1) % R)]


# --- gather, scatter, all-to-all ---------------------------------------------------------------------------------
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
                e.line(f"s = tl.zeros([BLOCK], {_acc_tl(c)})")
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
            want, absum = _sum([i["IN"][r * n:(r + 1) * n] for i in ins])
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
        return [{"IN": _values(c["dtype"], count, rng), "AUX": aux} for _ in range(R)]

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
            want = _nan(count)
            for p in range(R):
                want[recv[p, q]:recv[p, q] + s[p, q]] = ins[p]["IN"][send[p, q]:send[p, q] + s[p, q]]
            region = {"OUT": Expect(want)}
            if self.barriers(c):
                region["SCR"] = Expect(want)
            out.append(region)
        return out


# --- GEMM fused with communication ----------------------------------------------------------------------------------
class _Gemm(Pattern):
    """Each rank computes C_r = A_r @ B_r (A_r: M x K, B_r: K x N in IN, row-major, one after the other) tile by
    tile with tl.dot, and sends row tile tm to its owner rank tm % R."""
    dtypes = ("fp16", "bf16")

    def dims(self, c):
        x = c["extra"]
        return x["M"], x["N"], x["K"], x["BM"], x["BN"], x["BK"]

    def products(self, c, R, ins):
        M, N, K, *_ = self.dims(c)
        out = []
        for i in ins:
            a, b = i["IN"][:M * K].reshape(M, K), i["IN"][M * K:].reshape(K, N)
            out.append((a @ b, np.abs(a) @ np.abs(b)))
        return out

    def owned_rows(self, c, R, q):
        M, _, _, BM, _, _ = self.dims(c)
        return (np.arange(M) // BM) % R == q

    def tile_loop(self, e, c):
        M, N, K, BM, BN, BK = self.dims(c)
        e.line(f"TN = {cdiv(N, BN)}")
        e.line(f"for tile in range(pid, {cdiv(M, BM)} * TN, NPROG):")
        e.depth += 1
        e.line("tm = tile // TN")
        e.line("tn = tile % TN")
        e.line("owner = tm % R")
        e.line(f"rows = tm * {BM} + tl.arange(0, {BM})")
        e.line(f"cols = tn * {BN} + tl.arange(0, {BN})")
        e.line(f"tmask = (rows[:, None] < {M}) & (cols[None, :] < {N})")

    def copy_owned(self, e, c, sources):
        """After a barrier, the owner of each row tile copies what it received from OUT to SCR (per source rank
        when `sources`), walking the tiles in the same order as the senders, so each program reads what the
        programs it met at the barrier wrote."""
        M, N = self.dims(c)[:2]
        e.barrier("bar", 0)
        self.tile_loop(e, c)
        e.line("if owner == rank:")
        with e.indented():
            if sources:
                e.line("for p in range(R):")
                e.depth += 1
            base = f"p * {M * N} + " if sources else ""
            e.line(f"where = {base}rows[:, None] * {N} + cols[None, :]")
            e.line(f"tl.store({e.ptr('SCR')} + where, tl.load({e.ptr('OUT')} + where, mask=tmask), mask=tmask)")
            if sources:
                e.depth -= 1
        e.depth -= 1

    def emit_product(self, e, c):
        M, N, K, BM, BN, BK = self.dims(c)
        e.line(f"a_ptr = {e.ptr('IN')}")
        e.line(f"acc = tl.zeros([{BM}, {BN}], tl.float32)")
        e.line(f"for k0 in range(0, {K}, {BK}):")
        with e.indented():
            e.line(f"ks = k0 + tl.arange(0, {BK})")
            e.line(f"a = tl.load(a_ptr + rows[:, None] * {K} + ks[None, :], "
                   f"mask=(rows[:, None] < {M}) & (ks[None, :] < {K}), other=0)")
            e.line(f"b = tl.load(a_ptr + {M * K} + ks[:, None] * {N} + cols[None, :], "
                   f"mask=(ks[:, None] < {K}) & (cols[None, :] < {N}), other=0)")
            e.line("acc += tl.dot(a, b)")


class GemmScatter(_Gemm):
    """OUT_q[p] holds the rows of C_p that rank q owns (the rest stays NaN); with the optional barrier, the owner
    then copies the tiles it received to SCR."""
    name = "gemm_scatter"
    optional_barrier = True

    def counts(self, c, R):
        M, N, K, *_ = self.dims(c)
        return {"IN": M * K + K * N, "OUT": R * M * N, "SCR": R * M * N if c["barrier"] else 0}

    def emit(self, e, c, R):
        M, N = self.dims(c)[:2]
        self.tile_loop(e, c)
        self.emit_product(e, c)
        e.line(f"tl.store({e.ptr('OUT', 'owner')} + rank * {M * N} + rows[:, None] * {N} + cols[None, :], "
               f"{e.out('acc')}, mask=tmask)")
        e.depth -= 1
        if c["barrier"]:
            self.copy_owned(e, c, sources=True)

    def expected(self, c, R, ins):
        M, N = self.dims(c)[:2]
        products = self.products(c, R, ins)
        out = []
        for q in range(R):
            rows = self.owned_rows(c, R, q)
            want, absum = np.full((R, M, N), NAN), np.zeros((R, M, N))
            for p, (prod, mag) in enumerate(products):
                want[p][rows], absum[p][rows] = prod[rows], mag[rows]
            region = {"OUT": Expect(want.ravel(), absum.ravel(), c["extra"]["K"], acc="fp32")}
            if c["barrier"]:
                region["SCR"] = region["OUT"]
            out.append(region)
        return out


class GemmReduceScatter(_Gemm):
    """Tensor-parallel GEMM: C = sum_r A_r @ B_r; each rank atomically adds its partial tile into the owner's OUT
    (fp32, zero-filled; rows the rank does not own stay 0); the optional barrier is followed by a copy to SCR."""
    name = "gemm_reduce_scatter"
    optional_barrier = True
    zero = ("OUT",)

    def out_dtype(self, c):
        return "fp32"

    def scr_dtype(self, c):
        return "fp32"

    def counts(self, c, R):
        M, N, K, *_ = self.dims(c)
        return {"IN": M * K + K * N, "OUT": M * N, "SCR": M * N if c["barrier"] else 0}

    def emit(self, e, c, R):
        M, N = self.dims(c)[:2]
        self.tile_loop(e, c)
        self.emit_product(e, c)
        e.line(f'tl.atomic_add({e.ptr("OUT", "owner")} + rows[:, None] * {N} + cols[None, :], acc, mask=tmask, '
               f'sem="relaxed", scope="{c["scope"]}")')
        e.depth -= 1
        if c["barrier"]:
            self.copy_owned(e, c, sources=False)

    def expected(self, c, R, ins):
        M, N = self.dims(c)[:2]
        products = self.products(c, R, ins)
        total = np.sum([prod for prod, _ in products], axis=0)
        mag = np.sum([m for _, m in products], axis=0)
        out = []
        for q in range(R):
            rows = self.owned_rows(c, R, q)
            want, absum = np.zeros((M, N)), np.zeros((M, N))
            want[rows], absum[rows] = total[rows], mag[rows]
            terms = R * c["extra"]["K"]
            region = {"OUT": Expect(want.ravel(), absum.ravel(), terms, acc="fp32")}
            if c["barrier"]:  # the copy covers the owned rows only: the rest keeps its NaN fill
                scr = np.where(rows[:, None], want, NAN)
                region["SCR"] = Expect(scr.ravel(), absum.ravel(), terms, acc="fp32")
            out.append(region)
        return out


def _acc(c):
    from .emit import ACC
    return ACC[c["dtype"]]


def _acc_tl(c):
    from .. import dtypes as D
    return D.tl(_acc(c))


PATTERNS = {p.name: p for p in [
    PutSignal(), BarrierAllPairs(), GridBarrier(), SpinLockRMW(), AllReduceOneShot(), AllReduceTwoShot(),
    AllReduceAtomic(), AllReduceRing(), AllGatherPush(), AllGatherPull(), ReduceScatter(), AllToAll(),
    GemmScatter(), GemmReduceScatter()]}
