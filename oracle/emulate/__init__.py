"""A CPU executor for the LLVM IR Triton's AMD backend emits: AMD outputs without an AMD GPU (docs/emulate.md).

ir (the reader) -> core (the executor: lanes in lockstep, reconvergence, waves scheduled between barriers) over
values, ops, access, memory and intrinsics (lanes, convert, matrix, llvm_math: the ISA's documented semantics);
launch runs a compiled kernel on a launch's CPU tensors; mutations are planted lowering bugs that validate it.
The package imports only numpy (and torch in launch): a repro embeds it whole (`package_sources`).
"""
from __future__ import annotations

MODULES = ("errors", "ir", "values", "memory", "ops", "access", "lanes", "convert", "matrix", "llvm_math",
           "cvt_calls", "intrinsics", "core", "launch", "mutations")


def package_sources() -> dict:
    """module name -> source, for a standalone script to write out as a package and import."""
    import importlib
    import inspect
    return {name: inspect.getsource(importlib.import_module(f"{__name__}.{name}")) for name in MODULES}
