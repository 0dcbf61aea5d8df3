"""Forced configurations: environment knobs that switch a feature on for a target whose backend would not use it.

Why: a crash that needs `TRITON_HIP_USE_ASYNC_COPY=1` on gfx1100 (which has no direct-to-LDS loads) is real (the
backend should reject the knob, not abort), but it is not what a maintainer fixes first and no user meets it by
default. Such findings are labelled, counted apart and listed after default-configuration ones.

The table is policy as data: per knob, the feature it forces and the targets where that feature exists (a release
enables it there by default, e.g. Triton 3.9's `is_async_copy_enabled`, `is_pingpong_schedule_enabled`,
`is_in_thread_transpose_enabled` in `backends/amd/compiler.py`, or the hardware has it: direct-to-LDS loads on
CDNA3/4 and gfx1250). A knob set off, or on where the feature exists, is not forcing anything.
"""
from __future__ import annotations

ON = ("1", "true", "on", "True")
_ASYNC = ("gfx942", "gfx950", "gfx1250")
_RDNA_TRANSPOSE = ("gfx110", "gfx115", "gfx117", "gfx120")

# knob -> (feature it forces, arch prefixes that have the feature)
FORCING_KNOBS = {
    "TRITON_HIP_USE_ASYNC_COPY": ("async copy to LDS", _ASYNC),
    "TRITON_HIP_ASYNC_FAST_SWIZZLE": ("async copy to LDS (fast swizzle)", _ASYNC),
    "TRITON_HIP_USE_BLOCK_PINGPONG": ("block ping-pong scheduling", ("gfx942", "gfx950")),
    "TRITON_HIP_USE_IN_THREAD_TRANSPOSE": ("in-thread transpose", ("gfx942",) + _RDNA_TRANSPOSE),
}


def forced(env: dict, arch: str) -> str:
    """'' for a default configuration, else e.g. 'forced: TRITON_HIP_USE_ASYNC_COPY=1 on gfx1100 (async copy to
    LDS)'; several knobs are listed in name order."""
    base = arch.split(":")[0]
    found = [f"{knob}={env[knob]} on {base} ({feature})" for knob, (feature, have) in sorted(FORCING_KNOBS.items())
             if str(env.get(knob, "")) in ON and not base.startswith(have)]
    return "forced: " + "; ".join(found) if found else ""
