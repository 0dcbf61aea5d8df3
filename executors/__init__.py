"""The two CPU executors of AMD kernels, in a room of their own: they judge each other, so what each may import is
fixed here.

- ``llvm_ir``: runs the LLVM IR Triton's AMD backend emits (and any ``amdgpu_kernel`` module), before LLVM's
  AMDGPU code generator: the emulate backend's executor (docs/emulate.md).
- ``amdgcn``: runs the machine code that code generator produced (``.s`` or a code object), with semantics from
  AMD's ISA documentation only (docs/amdgcn-pcode.md).

Neither imports the other: a semantic function they shared would make a bug they shared invisible
(tests/ground/test_layering.py asserts it). Both sit on the ground floor: any stage may use them, and they import
no stage.
"""

__all__ = ["llvm_ir", "amdgcn"]
