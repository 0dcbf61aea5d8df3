"""A deterministic stream of specs from a seed, driven by Hypothesis.

Why fuzz_one_input and not ``strategy.example()``: it is Hypothesis's entry point for external drivers, it is
reproducible from the bytes we feed it (a campaign seed fixes every kernel), and it is fast (no database, no
shrinking, no health checks per example).
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings

from .strategies import kernel_specs

BUFFER_BYTES = 4096
MAX_MISSES = 500


class NothingDrawn(RuntimeError):
    """The strategy rejected every draw: a campaign would spin forever (the CLI says so in one line)."""


def spec_stream(caps, seed: int, max_ops: int = 24, family: str = "kernels", collective: dict | None = None,
                shapes=(), user=None):
    """Yield KernelSpecs forever; the same (caps, seed, family, shapes) yields the same specs. family "collectives"
    draws communication patterns (fuzz/collective/); `collective` holds their options (patterns, controls, ranks).
    `shapes`: only these kernel shapes (fuzz/shapes.py; empty: random kernels, a share of them shapes). family
    "user": launches of a user's kernel (fuzz/user_kernel.py); `user` holds its UserKernel's JSON form."""
    rng = random.Random(seed)
    captured = []
    options = {"kernels": {"shapes": tuple(shapes)}, "user": user}.get(family, collective or {})
    strategy = _STRATEGIES[family](caps, max_ops, options)

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck), max_examples=1)
    @given(strategy)
    def capture(spec):
        captured.append(spec)

    index, misses = 0, 0
    while True:
        captured.clear()
        capture.hypothesis.fuzz_one_input(rng.randbytes(BUFFER_BYTES))
        misses = 0 if captured else misses + 1
        if misses >= MAX_MISSES:  # every draw rejected (a user's launch spec that never evaluates here)
            raise NothingDrawn(f"no kernel could be drawn in {MAX_MISSES} tries")
        if captured:
            spec = captured[0]
            spec.meta.update({"seed": seed, "index": index})
            index += 1
            yield spec


def _collective_specs(caps, max_ops, options):
    from .collective.spec import collective_specs  # imported on use: single-rank campaigns never load it
    return collective_specs(caps, **options)


def _user_specs(caps, max_ops, options):
    from .user_kernel import user_specs  # imported on use, like the collectives
    return user_specs(caps, options)


# what each kernel family (gfxhound.spec.FAMILIES) draws its specs from
_STRATEGIES = {"kernels": lambda caps, max_ops, options: kernel_specs(caps, max_ops, options.get("shapes", ())),
               "collectives": _collective_specs, "user": _user_specs}
