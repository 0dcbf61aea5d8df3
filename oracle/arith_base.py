"""What every op class of the reference arithmetic shares: the backend's tolerance table, Triton's overflow
sanitizer under debug=True, and γ_n (the rounding bound of n operations) as the float64 reference needs it.

Why a module of its own: the op classes (oracle/arith_elementwise.py, arith_casts.py, arith_reductions.py,
arith_dot.py) are mixins that oracle/arith.py composes into one `Arith`; each needs these and none owns them.
"""
from __future__ import annotations

from gfxhound.fuzz import dtypes as D

from .numeric import UndefinedBehaviour, gamma, int_range
from .tolerance import Table


class ArithBase:
    """The tolerance table the bounds read, and the overflow rule of debug=True."""

    def __init__(self, table: Table, sanitize_overflow: bool = False):
        self.table = table
        # debug=True: Triton asserts on integer overflow of +, - and * below 64 bits (semantic.py's
        # binary_op_sanitize_overflow_impl), also inside tl.sum / tl.cumsum / tl.cumprod, whose combine functions
        # use them: a device-side assert there is the user's overflow, not a compiler bug, so it is excluded
        self.sanitize_overflow = sanitize_overflow

    def _overflow_check(self, what, dtype, exact_values, bad):
        """Under debug=True: raise if a lane overflows, or if an undetermined lane (unknown value) takes part."""
        if not self.sanitize_overflow or dtype == "i1" or D.DTYPES[dtype].bits >= 64:
            return
        lo, hi = int_range(dtype)
        over = (exact_values < lo) | (exact_values > hi)
        if bool(over.any()) or bool(bad.any()):
            raise UndefinedBehaviour(f"integer overflow under debug=True ({what} in {dtype}, "
                                     f"{int(over.sum())} lanes; undetermined lanes: {int(bad.sum())}): Triton's "
                                     "overflow sanitizer asserts by design")


def reference_gamma(n, dtype):
    """γ_n, doubled for fp64: the float64 reference itself rounds as often as the kernel does."""
    return gamma(n, dtype) * (2 if dtype == "fp64" else 1)
