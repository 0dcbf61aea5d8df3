"""Collective communication kernels: the patterns users write with remote pointers, atomics and flags.

A collective spec (KernelSpec format 3, `spec.collective`) names one pattern of `patterns.PATTERNS` and its
parameters. Every pattern is rendered into the same kernel shape, so one launcher serves all of them:

- each rank owns one *heap* (a byte buffer, like a symmetric-memory allocation or Iris's heap) holding the regions
  IN, OUT, SCR (scratch), AUX (host-written int32 tables), FLAGS and ERR at fixed offsets (`layout.py`), each followed
  by a canary;
- the kernel gets `bases`, a table of every rank's heap address, and finds a peer's region either from the table or
  by translating its own pointer (Iris's heap-base translation);
- `rank = rank_base + tl.program_id(1)`: on one GPU, virtual ranks are a grid axis (`rank_base = 0`); with one
  process per GPU the grid has one row and `rank_base` is the process's rank;
- every spin-wait is bounded: when `max_spin` polls pass, it counts into ERR and goes on, so a lost signal is a
  wrong answer with a non-zero error counter, not a hung machine.
"""
from .patterns import PATTERNS

__all__ = ["PATTERNS"]
