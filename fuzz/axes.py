"""Axis letters of tile and buffer shapes, and how far each one reaches.

M, N and K are the problem's axes (a block of each per program); "2" is the pair axis `tl.join` adds. Block-scaled
operands of `tl.dot_scaled` see K through their storage: packed FP4 holds two K elements a byte (axis H, K / 2),
and one E8M0 scale covers a group of 32 K elements (axis S, K / 32) or of 16 (axis T, K / 16). Everything that
sizes, offsets or masks a tile asks this module, so the renderer, the reference and the buffers agree.
"""
from __future__ import annotations

K_VIEWS = {"H": 2, "S": 32, "T": 16}  # axis -> how many K elements one index along it covers
SCALE_AXES = ("S", "T")


def extent(axis: str, dims: dict) -> int:
    """The length along `axis` given the M/N/K lengths in `dims` (problem sizes or block sizes)."""
    if axis == "2":
        return 2
    if axis in K_VIEWS:
        return dims["K"] // K_VIEWS[axis]
    return dims[axis]


def block_expr(axis: str) -> str:
    """The tile length along `axis` in kernel source."""
    if axis == "2":
        return "2"
    if axis in K_VIEWS:
        return f"(BLOCK_K // {K_VIEWS[axis]})"
    return f"BLOCK_{axis}"


def size_expr(axis: str) -> str:
    """The problem length along `axis` in kernel source (masks compare offsets with it)."""
    if axis in K_VIEWS:
        return f"(K // {K_VIEWS[axis]})"
    return axis


def follows_k(axis: str) -> bool:
    """Offsets along this axis advance with the K-loop."""
    return axis == "K" or axis in K_VIEWS


def offsets_name(axis: str, koffs: str) -> str:
    """The name of the offsets along `axis`, given the name of the K offsets in scope (`offs_K` or a loop's)."""
    if axis in K_VIEWS:
        return koffs.replace("offs_K", f"offs_{axis}", 1)
    return koffs if axis == "K" else f"offs_{axis}"


def offsets_line(axis: str, koffs: str, index: str | None) -> str:
    """The statement that defines a K view's offsets (at the top: index None; in a K-loop: its index)."""
    block = block_expr(axis)
    start = f"{index} * {block} + " if index else ""
    return f"{offsets_name(axis, koffs)} = {start}tl.arange(0, {block})"


def used_k_views(inputs) -> list:
    """The K views (packed FP4, scale groups) some input is laid out along: only those get offsets."""
    return [axis for axis in K_VIEWS if any(axis in arg["axes"] for arg in inputs)]
