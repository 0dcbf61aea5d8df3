import os
import sys
import math

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

SCALE = 3.0
NAMES = ["a", "b", "c"]


def helper(x):
    return [n * 2 for n in NAMES] + [x]


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * 2.0 + 1.0
    z = tl.arange(0, 3)
    tl.store(y_ptr + offs, y, mask=mask)


print(helper(math.sqrt(SCALE)))
src = ASTSource(kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 64})
triton.compile(src, target=GPUTarget("hip", "gfx942", 64))
print("compiled", os.getpid(), sys.argv)
