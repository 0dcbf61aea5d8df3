"""Hand-minimised repro: TritonAMDGPUCanonicalizePointers asserts "ifOp types must match in both arms" for a `tl.where` between two base pointers inside an `if` arm (`tt.pointer_range=32`)

The kernel below selects between two different base pointers with `tl.where` in the `else` arm of an `if`, and
its pointer arguments carry `tt.pointer_range=32`, as the HIP runtime attaches to every tensor under 2 GB while
`AMDGCN_USE_BUFFER_OPS=1` (the default). Compiling it for gfx942 as the Triton runtime would aborts in
`TritonAMDGPUCanonicalizePointers` on the assertion `ifOp.thenYield().getOperandTypes() ==
ifOp.elseYield().getOperandTypes() && "ifOp types must match in both arms"` (`CanonicalizePointers.cpp:1459` in
3.9.0), not a diagnostic about the kernel. Without the attribute, or with the `tl.where` outside the `if`, it
compiles. No GPU needed: the reproducer only compiles.

Compiles the kernel for gfx942 as the Triton runtime would.
"""
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def kernel(a_ptr, b_ptr, c):
    offs = tl.arange(0, 16)
    if c == 1:
        p = a_ptr + offs
    else:
        p = tl.where(c == 2, a_ptr + offs, b_ptr + offs)  # a select between two bases in one arm
    tl.store(p, 1.0)


# tt.pointer_range=32 is what the HIP runtime attaches to every tensor under 2 GB (AMDGCN_USE_BUFFER_OPS=1, the
# default); without it, or with the tl.where outside the if, this compiles
src = ASTSource(kernel, signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c": "i32"},
                attrs={(0,): [["tt.pointer_range", 32]], (1,): [["tt.pointer_range", 32]]})
triton.compile(src, target=GPUTarget("hip", "gfx942", 64))
