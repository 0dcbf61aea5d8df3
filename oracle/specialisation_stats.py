"""Is a campaign exercising the buffer-op code paths? Two shares, from the summary's coverage table.

The compile worker (oracle/compile_task.py) reports, per kernel, how many pointer arguments it has and how many got
``tt.pointer_range`` (the attribute that lets the AMD backend use buffer ops: CanonicalizePointers, buffer loads,
stores and atomics), as the details ``ptr_args=N`` and ``pointer_range_args=K``, and whether its AMDGCN has buffer
instructions (``amdgcn:buffer_ops`` / ``amdgcn:no_buffer_ops``). The campaign counts kernels per detail; summing
N and K weighted by those counts gives the share of pointer arguments, not of kernels.

What to expect depends on the release: from 3.6 Triton adds ``tt.pointer_range`` by default (AMDGCN_USE_BUFFER_OPS
defaults on) to every pointer under 2 GB, so about 0.8 of the arguments get it (the rest: >2 GB views, kernels that
draw the knob off); 3.4 and 3.5 default off, so about 0.1 (kernels that draw the knob on). The toolchain record's
``specialisation`` entry (gfxhound/compat.py, ``specialisation_report``) says which applies.
"""
from __future__ import annotations

PTR_ARGS = "detail:ptr_args="
RANGED_ARGS = "detail:pointer_range_args="
BUFFER_OPS = "detail:amdgcn:buffer_ops"
NO_BUFFER_OPS = "detail:amdgcn:no_buffer_ops"
# below this share of pointer arguments with tt.pointer_range, a release that adds it by default is not being
# exercised the way its users' launches are (expected: about 0.8)
DEFAULT_ON_LEAST = 0.5


def _kernels(entry) -> int:
    """A coverage entry: the summary's {"kernels": n, "share": s} or a bare count (Stats.coverage)."""
    return int(entry["kernels"]) if isinstance(entry, dict) else int(entry)


def _weighted(coverage, prefix) -> int:
    return sum(int(key[len(prefix):]) * _kernels(entry) for key, entry in coverage.items()
               if key.startswith(prefix) and key[len(prefix):].isdigit())


def specialisation_shares(coverage, record=None) -> dict:
    """{pointer_args, pointer_range_args, pointer_range_share, kernels_compiled, buffer_op_kernels,
    buffer_op_share, default_on, notices} from a coverage table; ``record``: the toolchain record's
    ``specialisation`` entry, or None. A share is None when nothing was counted."""
    pointers, ranged = _weighted(coverage, PTR_ARGS), _weighted(coverage, RANGED_ARGS)
    buffered = _kernels(coverage.get(BUFFER_OPS, 0))
    compiled = buffered + _kernels(coverage.get(NO_BUFFER_OPS, 0))
    record = record or {}
    out = {"pointer_args": pointers, "pointer_range_args": ranged,
           "pointer_range_share": round(ranged / pointers, 4) if pointers else None,
           "kernels_compiled": compiled, "buffer_op_kernels": buffered,
           "buffer_op_share": round(buffered / compiled, 4) if compiled else None,
           "default_on": record.get("pointer_range_on_4kb"), "notices": []}
    if record.get("notice"):
        out["notices"].append(record["notice"])
    if out["default_on"] and out["pointer_range_share"] is not None and out["pointer_range_share"] < DEFAULT_ON_LEAST:
        out["notices"].append(
            f"only {out['pointer_range_share']:.0%} of pointer arguments got tt.pointer_range although this release "
            f"adds it to every pointer under 2 GB by default: buffer-op code paths are under-exercised")
    return out


def summary_line(shares: dict) -> str:
    """One line for the campaign summary."""
    def share(value):
        return "n/a" if value is None else f"{value:.1%}"
    default = {True: "on", False: "off"}.get(shares.get("default_on"), "unknown")
    return (f"tt.pointer_range on {share(shares['pointer_range_share'])} of pointer arguments "
            f"({shares['pointer_range_args']}/{shares['pointer_args']}; "
            f"release default {default}); buffer ops in {share(shares['buffer_op_share'])} of compiled kernels "
            f"({shares['buffer_op_kernels']}/{shares['kernels_compiled']})")
