"""Input data for an execution, derived from the spec alone so the oracle, every backend and a repro agree.

The data depend on the computation a spec describes, not on how it is launched: the seed leaves out the launch
configuration and the metamorphic pair (`data_key`). Both members of a launch pair run on the same data and are
judged against the same reference, and the second member, recorded as a spec of its own (`fuzz/pairs.py`
`variant`), regenerates exactly the data it was judged with, so its repro embeds the expected values its
finding's message quotes.

Each input draws a value profile. Integer-valued and dyadic floats keep long chains of arithmetic exact, so the
oracle can check them bit for bit (and comparisons, floor and casts to int on them stay decidable); real-valued
and positive profiles exercise rounding and the domains of log and sqrt. Values stay far from overflow and from
the denormal range: steering towards special values is the generator's job, not an accident of the data.
"""
from __future__ import annotations

import hashlib
import json

import torch

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.render import memory_shape

from .formats import BY_DTYPE
from .numeric import TORCH

FLOAT_PROFILES = ("integers", "dyadic", "real", "positive")
INT_PROFILES = ("small", "wide")


def _seed(key: str, index: int) -> int:
    return int(hashlib.sha256(f"{key}:{index}".encode()).hexdigest()[:12], 16)


def data_key(spec) -> str:
    """What the input data are drawn from: the spec's identity without its launch configuration (num_warps,
    num_stages, AMD options, environment knobs) and its metamorphic pair, none of which may change the result."""
    identity = spec.identity()
    identity.pop("launch", None)
    identity.pop("pair", None)
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def numel(axes, sizes) -> int:
    n = 1
    for d in memory_shape(axes, sizes):
        n *= d
    return n


def make_inputs(spec) -> dict:
    """name -> flat CPU tensor of the input's dtype (row- or column-major order is the strides' business)."""
    key = data_key(spec)
    out = {}
    for i, arg in enumerate(spec.inputs):
        gen = torch.Generator().manual_seed(_seed(key, i))
        n = numel(arg["axes"], spec.sizes)
        dtype = arg["dtype"]
        pick = int(torch.randint(0, 1 << 20, (1,), generator=gen))
        if D.is_fp8(dtype) or dtype in D.MX_CODES:
            out[f"in_{i}"] = _narrow_codes(dtype, n, gen, arg.get("values")).view(TORCH[dtype])
        elif D.is_float(dtype):
            profile = arg.get("values") or FLOAT_PROFILES[pick % len(FLOAT_PROFILES)]  # a spec may fix it
            if profile == "integers":
                x = torch.randint(-4, 5, (n,), generator=gen).to(torch.float64)
            elif profile == "dyadic":
                x = torch.randint(-64, 65, (n,), generator=gen).to(torch.float64) / 16
            elif profile == "real":
                x = torch.rand(n, generator=gen, dtype=torch.float64) * 4 - 2
            else:
                x = torch.rand(n, generator=gen, dtype=torch.float64) * 3.75 + 0.25
            out[f"in_{i}"] = x.to(TORCH[dtype])
        else:
            lo, hi = {"i8": (-128, 128), "i32": (-(1 << 31), 1 << 31), "i64": (-(1 << 40), 1 << 40)}[dtype]
            if (arg.get("values") or INT_PROFILES[pick % len(INT_PROFILES)]) == "small":
                lo, hi = -9, 10
            out[f"in_{i}"] = torch.randint(lo, hi, (n,), generator=gen, dtype=torch.int64).to(TORCH[dtype])
    return out


MODERATE = (2.0 ** -4, 2.0 ** 4)  # |value| of 8-bit float inputs: products neither vanish nor overflow
SPECIAL_SHARE = 0.05


def _narrow_codes(dtype, n, gen, profile):
    """Raw codes (uint8) for the 8-bit and MX formats, drawn as codes so every value is exactly representable.
    8-bit floats: zero or a magnitude in MODERATE, either sign; the "specials" profile puts NaN, the infinities,
    the largest finite value and the smallest subnormal in about 5% of the positions. Packed FP4: any byte (all
    16 codes are finite). E8M0 scales: 2^-3 .. 2^1 (codes 124..128), so the block-scaled products stay in the
    range an fp16 upcast holds."""
    if dtype == "e2m1x2":
        return torch.randint(0, 256, (n,), generator=gen, dtype=torch.int64).to(torch.uint8)
    if dtype == "e8m0":
        return torch.randint(124, 129, (n,), generator=gen, dtype=torch.int64).to(torch.uint8)
    fmt = BY_DTYPE[dtype]
    table = torch.tensor(fmt.table(), dtype=torch.float64)
    codes = torch.arange(256)
    usable = (table == 0) & (codes < 128) | ((table.abs() >= MODERATE[0]) & (table.abs() <= MODERATE[1]))
    pool = codes[usable]
    out = pool[torch.randint(0, len(pool), (n,), generator=gen)]
    if profile == "specials":
        finite = torch.isfinite(table)
        special = [int(codes[torch.isnan(table)][0]), int(codes[finite][table[finite].argmax()]),
                   int(codes[(table > 0)][table[table > 0].argmin()])]
        special += [int(c) for c in codes[torch.isinf(table)]]
        where = torch.rand(n, generator=gen) < SPECIAL_SHARE
        picks = torch.tensor(special)[torch.randint(0, len(special), (n,), generator=gen)]
        out = torch.where(where, picks, out)
    return out.to(torch.uint8)
