"""GEMM fused with communication: each rank computes a tiled `tl.dot` product and scatters its row tiles to their
owner ranks (plain stores, or atomic adds for tensor-parallel reduce-scatter).

Why a module of its own: these are the only patterns with a matrix product inside; they share a tile loop, a
K-loop and an fp32 reference with a K-long rounding bound (the _Gemm base) that no other family needs.
"""
from __future__ import annotations

import numpy as np

from .pattern import NAN, Expect, Pattern, cdiv


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
