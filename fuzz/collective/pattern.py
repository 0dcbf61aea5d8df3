"""What every communication pattern is written against: the Pattern interface (buffers, kernel body, inputs,
float64 reference, waits), the Expect record of one checked region, and the helpers the references share.

Why a module of its own: the pattern families (patterns_*.py) all subclass Pattern and build their references from
the same few helpers; kept here, apart from any pattern, the families import it and the registry
(patterns.py) imports the families, with no circle.

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
        return [{"IN": representable_values(c["dtype"], self.counts(c, R)["IN"], rng)} for _ in range(R)]

    def expected(self, c, R, ins) -> list:
        """Per rank: {region: Expect}."""
        raise NotImplementedError

    def waits(self, c, R, pid, r) -> list:
        """The programs (pid, rank) whose signal or lock program (pid, r) waits for. Empty: no waits."""
        if self.barriers(c):
            return [(pid, q) for q in range(R)]
        return []


def representable_values(dtype, count, rng):
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


def sum_and_magnitude(arrays):
    return np.sum(arrays, axis=0), np.sum(np.abs(arrays), axis=0)


def nans(count):
    return np.full(count, NAN)


def cdiv(a, b):
    return -(-a // b)


def acc_dtype(c):
    from .emit import ACC
    return ACC[c["dtype"]]


def acc_tl(c):
    from .. import dtypes as D
    return D.tl(acc_dtype(c))
