"""An executor of AMDGCN machine code for gfx942/gfx950 (CDNA3/CDNA4, wave64), on the CPU.

Why it exists: gfxhound judges LLVM's AMDGPU backend without an AMD GPU. The LLVM IR executor in
``executors/llvm_ir/`` runs a kernel *before* the backend; this package runs what the backend *produced* (the
``.s``/code object), so a disagreement between the two points at instruction selection, scheduling or register
allocation rather than at Triton.

For that comparison to mean anything the two executors must not share a single semantic function: the semantics
here come from AMD's documentation only -- the per-instruction pseudocode of AMD's ISA guide, carried as data in
``pcode_data.py`` and compiled by ``pcode.py`` -- never from LLVM's instruction definitions or selection patterns,
and never from ``executors/llvm_ir``. Plumbing (memory buffers and the like) may be shared later; semantics never.

Modules:

- ``pcode_data``: generated table, mnemonic -> AMD pseudocode text and encoding families (``pcode_extract``).
- ``pcode``: compiles one instruction's pseudocode into an ``Op`` that runs a wave's 64 lanes at once.
- ``pcode_parse`` / ``pcode_lib``: the pseudocode's parser, and its typed values and helper functions.
"""
