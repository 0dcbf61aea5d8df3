"""Reduce a finding to its smallest repro at the layer where the bug is: the spec, TTIR/TTGIR, LLVM IR, a script."""
