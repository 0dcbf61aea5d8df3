"""Reduce a finding to its smallest repro (spec level, TTGIR, LLVM IR). Built in issue #4."""
