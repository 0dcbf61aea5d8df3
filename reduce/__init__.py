"""Reduce a finding to its smallest repro at the layer where the bug is: the spec, TTIR/TTGIR, LLVM IR, a script."""

# the modules other packages may import (tests/ground/test_layering.py checks it)
__all__ = ["codegen", "llvm_ir", "regroup", "source", "through", "workflow"]
