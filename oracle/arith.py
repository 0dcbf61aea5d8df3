"""Triton's value semantics on tracked values (oracle/numeric.py): what the op registry's references call.

C-style integer division and remainder, two's-complement wrap-around, arithmetic right shift, casts that round to
nearest even (or toward zero) and wrap, NaN in min/max left open (backends differ), argmax ties to the lowest
index, dots with the accumulation dtype and input precision of the call.

The kit is composed of one mixin per op class, each in its own module: elementwise ops, comparisons and selection
(oracle/arith_elementwise.py), casts (oracle/arith_casts.py), reductions and scans (oracle/arith_reductions.py),
matrix products (oracle/arith_dot.py), over what they share (oracle/arith_base.py). `Arith` is what
oracle/evaluate.py's kit extends and tests call.
"""
from __future__ import annotations

import torch

from .arith_dot import DotArith
from .arith_elementwise import ElementwiseArith
from .arith_reductions import ReductionArith
from .numeric import I64, TV, constant, exact


class Arith(ElementwiseArith, ReductionArith, DotArith):
    """Triton's semantics, every op class; built with the backend's tolerance table (ArithBase)."""

    # --- constants ----------------------------------------------------------------------------------------------
    @staticmethod
    def full(value, dtype, shape) -> TV:
        return constant(value, dtype, shape)

    @staticmethod
    def arange(n) -> TV:
        return exact(torch.arange(n, dtype=I64), "i32")
