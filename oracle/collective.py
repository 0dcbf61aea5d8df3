"""The collective oracle: a spec's case (heap layout, inputs, float64 reference, flag arrays) for the launcher
and the judge in oracle/collective_heap.py, and the launch facts (options, residency) of this machine.

Backend-neutral: heaps are torch tensors on `device` ("cpu" under the interpreter, "cuda" on NVIDIA and on ROCm,
where torch's cuda device is HIP). How the heaps are allocated and how their addresses reach the kernel is the
caller's (virtual ranks: collective_heap.run_virtual; one process per GPU: oracle/distributed.py).
"""
from __future__ import annotations

import hashlib

import numpy as np

from gfxhound.fuzz.collective.patterns import PATTERNS
from gfxhound.fuzz.collective.spec import layout_of

from .collective_heap import LAUNCHES, Judgement, fill, judge, run_virtual  # noqa: F401 - the judge's API

__all__ = ["LAUNCHES", "Judgement", "fill", "judge", "run_virtual", "case_of", "launch_options", "resident_limit"]


def seed_of(spec) -> int:
    return int(hashlib.sha256(spec.spec_hash().encode()).hexdigest()[:8], 16)


def case_of(spec) -> dict:
    """Everything the launcher and the judge need for one collective spec, as plain data (it is what a repro
    script embeds)."""
    c, R = spec.collective, spec.ranks
    pattern = PATTERNS[c["pattern"]]
    layout = layout_of(spec)
    inputs = pattern.inputs(c, R, np.random.default_rng(seed_of(spec)))
    expected = [{name: {"want": e.want, "absum": e.absum, "terms": e.terms, "acc": e.acc} for name, e in r.items()}
                for r in pattern.expected(c, R, inputs)]
    regions = {name: {"offset": reg.offset, "count": reg.count, "dtype": reg.dtype, "canary": list(reg.canary)}
               for name, reg in layout.regions.items()}
    return {"ranks": R, "programs": c["programs"], "n": c["n"], "block": c["block"], "control": c["control"],
            "flags": c["flags"], "dtype": c["dtype"], "regions": regions, "nbytes": layout.nbytes, "inputs": inputs,
            "expected": expected, "flag_arrays": [[name, count, kind] for name, (count, kind)
                                                  in pattern.flag_arrays(c, R).items()],
            "zero": list(pattern.zero)}


def launch_options(rendered, accepted, device) -> dict:
    """num_warps/num_stages, plus a cooperative launch where the backend offers one: it refuses a grid that
    cannot be resident at once instead of letting spin-waits deadlock."""
    options = {"num_warps": rendered.options["num_warps"], "num_stages": rendered.options["num_stages"]}
    if device != "cpu" and "launch_cooperative_grid" in accepted:
        options["launch_cooperative_grid"] = True
    return options


def resident_limit(device) -> int | None:
    """Programs that are surely resident at once: one per compute unit (a program that fits at all fits alone)."""
    if device == "cpu":
        return None
    import torch
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
