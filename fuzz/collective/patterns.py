"""The pattern registry: every communication pattern the collective family can draw, by name.

A pattern is declared once, with everything every stage needs, as the op registry does for single-rank ops
(docs/design.md "One op registry"): the renderer reads `emit`, the launcher `counts`/`zero`, the oracle `inputs` and
`expected`, the interpreter subset `waits` (which decide, statically, whether the sequential interpreter can run
it). The interface is pattern.py's Pattern; the patterns themselves live by family (patterns_*.py). This module
only names them.
"""
from __future__ import annotations

from .patterns_allreduce import AllReduceAtomic, AllReduceOneShot, AllReduceRing, AllReduceTwoShot
from .patterns_gather_scatter import AllGatherPull, AllGatherPush, AllToAll, ReduceScatter
from .patterns_gemm import GemmReduceScatter, GemmScatter
from .patterns_p2p import BarrierAllPairs, GridBarrier, PutSignal, SpinLockRMW

PATTERNS = {p.name: p for p in [
    PutSignal(), BarrierAllPairs(), GridBarrier(), SpinLockRMW(), AllReduceOneShot(), AllReduceTwoShot(),
    AllReduceAtomic(), AllReduceRing(), AllGatherPush(), AllGatherPull(), ReduceScatter(), AllToAll(),
    GemmScatter(), GemmReduceScatter()]}
