"""Metamorphic pairs: the same computation compiled (and, on a GPU, run) a second way that must not change it.

A spec's `pair` names the second member: another launch configuration (`stages`: num_stages; `warps`:
num_warps; `knobs`: an AMD option or environment knob), another AMD target (`target`), or the kernel's TTGIR with
its layout encodings mutated (`layout`, fuzz/layouts.py). On a CPU both members must compile: a crash of the
second is a finding of its own, recorded as the spec that reproduces it (`variant`). On a GPU a launch pair is run
too: `stages` and `knobs` keep every accumulation order, so their outputs must agree bit for bit with the first
member's; `warps` may reorder sums, so its outputs are judged against the reference like the first's.
"""
from __future__ import annotations

from dataclasses import asdict

from hypothesis import strategies as st

from gfxhound.spec import KernelSpec, Launch

from . import odds

LAUNCH_KINDS = ("stages", "warps", "knobs")
ORDER_PRESERVING = ("stages", "knobs")
COMPILE_ONLY = ("target", "layout")
PAIR_TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250")


def draw_pair(draw, caps, launch: Launch) -> dict | None:
    """A pair for a spec with this launch, or None. Kinds the campaign's backend cannot check are excluded by
    capability (`exclude:pair:<kind>`, oracle/limitations.py)."""
    kinds = [k for k in LAUNCH_KINDS + COMPILE_ONLY if not caps.has(f"exclude:pair:{k}")]
    if not caps.arch.startswith("gfx"):
        kinds = [k for k in kinds if k not in COMPILE_ONLY]
    if not kinds:
        return None
    # each kind once, then again as often as its weight asks (layouts: the widest space)
    kind = draw(st.sampled_from(kinds + [k for k in kinds for _ in range(odds.PAIR_KINDS[k] - 1)]))
    if kind == "target":
        return {"kind": kind, "arch": draw(st.sampled_from([t for t in PAIR_TARGETS if t != caps.arch]))}
    if kind == "layout":
        return {"kind": kind, "seed": draw(st.integers(0, 2 ** 31 - 1))}
    second = Launch(**asdict(launch))
    if kind == "stages":
        second.num_stages = draw(st.sampled_from([s for s in (1, 2, 3, 4) if s != launch.num_stages]))
    elif kind == "warps":
        second.num_warps = draw(st.sampled_from([w for w in (1, 2, 4, 8, 16) if w != launch.num_warps]))
    else:
        flips = [(name, values) for name, values in sorted(caps.knobs.items()) if name != "debug" and len(values) > 1]
        flips += [(name, values) for name, values in sorted(caps.env_knobs.items()) if len(values) > 1]
        if not flips:
            return None
        name, values = draw(st.sampled_from(flips))
        where = second.env if name in caps.env_knobs else second.options
        current = where.get(name)
        where[name] = draw(st.sampled_from([v for v in values if v != current]))
    return {"kind": kind, "launch": asdict(second)}


def variant(spec: KernelSpec, arch: str) -> tuple:
    """(spec, arch) of the second member, as a spec that reproduces it alone. A layout pair stays as it is: its
    second member is its own TTGIR, mutated."""
    pair = spec.pair or {}
    kind = pair.get("kind")
    if kind in LAUNCH_KINDS:
        return spec.replace(launch=Launch(**pair["launch"]), pair=None), arch
    if kind == "target":
        # AMD options and knobs are per target: the second target gets the launch shape only
        launch = Launch(num_warps=spec.launch.num_warps, num_stages=spec.launch.num_stages)
        return spec.replace(launch=launch, pair=None), pair["arch"]
    return spec, arch
