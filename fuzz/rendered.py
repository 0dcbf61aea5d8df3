"""What rendering a spec produces (the kernel's source and its launch description), shared by every kernel
family's renderer (fuzz/render.py for single-rank kernels, fuzz/collective/render.py for collectives) so that
neither imports the other's module."""
from __future__ import annotations

from dataclasses import dataclass

HEADER = "import triton\nimport triton.language as tl\n\n\n"


@dataclass
class Rendered:
    source: str  # a module defining the kernel (imports included)
    kernel_name: str
    args: list  # [{name, kind, type, value}] in parameter order, for compat.specialise
    options: dict
    env: dict
    grid: tuple
    features: object  # fuzz.features.Features
    body_lines: int


def launch_options(spec):
    """The compile options a launch of this spec passes (AMD knobs included)."""
    return {"num_warps": spec.launch.num_warps, "num_stages": spec.launch.num_stages, **spec.launch.options}
