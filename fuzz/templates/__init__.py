"""Kernel templates: real-world-shaped Triton kernels shipped with gfxhound, each a `NAME.py` (the `@triton.jit`
kernel, its helpers and a float64 torch `reference`) and a `NAME.launch` (its launch spec, docs/user-kernels.md).

Why kernels as files and not statements: what these shapes are made of (a `while` loop over a block table,
pointer tensors yielded by an `if` and carried through loops, `tl.num_programs` persistent loops, tensor
descriptors, gathers through index tensors) is the structure of a real kernel, not a sequence of the registry's
ops; written as the kernels people ship, with constexpr switches for their variants, they reach that structure
for certain, and `gfxhound fuzz --kernel` already fuzzes such files' launches. fuzz/shape_templates.py makes them
kernel shapes (`--shape moe`), so campaigns draw them beside the generated ones.

The files import only Triton at module level (torch inside `reference`): a compile reproducer, which embeds the
file, runs in release venvs that hold Triton alone.
"""
