"""Debugging ops: `tl.device_assert` on a condition that always holds.

Why a module of its own: it produces no value and computes nothing; it exists only to put an assert (and its
lowering) in kernels, which no other op class has to do with.
"""
from __future__ import annotations

from .opdef import OpDef, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them

OPS.append(OpDef("device_assert", "debug", 1, lambda s, v, c: is_t(v, ("i1",)), lambda t, a, c: [],
                 lambda n, t, a, c: f'tl.device_assert({n[0]} | True, "gfxhound")', needs="op:device_assert",
                 ub_guard="the asserted condition is always true", ref=lambda k, x, t, a, n: None))
