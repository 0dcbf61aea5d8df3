"""A CPU executor for the LLVM IR Triton's AMD backend emits: AMD outputs without an AMD GPU (docs/emulate.md).

ir (the reader) -> core (the executor: lanes in lockstep, reconvergence, waves scheduled between barriers) over
values, ops, access, memory and intrinsics (lanes, convert, matrix, llvm_math: the ISA's documented semantics);
launch runs a compiled kernel on a launch's CPU tensors; mutations are planted lowering bugs that validate it.
The package imports only numpy (and torch in launch): a repro embeds it whole (`package_sources`).
"""
from __future__ import annotations



def package_sources() -> dict:
    """module name -> source of every module of this package, for a standalone script to write out as a package
    and import."""
    import importlib
    import inspect
    import pkgutil
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    return {name: inspect.getsource(importlib.import_module(f"{__name__}.{name}")) for name in names}
