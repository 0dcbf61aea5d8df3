# A bf16 tensor times a Python float: the scalar becomes a bf16 constant in the Triton IR. Compiles on a CPU (any
# target shows it: the constant is wrong before the backend runs). Exit 1 when a constant is wrong.
import re
import sys

import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def scale(x_ptr, y_ptr, S: tl.constexpr):
    offs = tl.arange(0, 64)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * S)


wrong = 0
for s in (3e-7, 5.1e-7, 2**-17, 1.234e-5):
    src = triton.compiler.ASTSource(scale, signature={"x_ptr": "*bf16", "y_ptr": "*bf16", "S": "constexpr"},
                                    constexprs={"S": s})
    ttir = triton.compile(src, target=GPUTarget("hip", "gfx942", 64)).asm["ttir"]
    got = float(re.search(r"arith\.constant dense<([^>]+)> : tensor<64xbf16>", ttir).group(1))
    got_bf16 = torch.tensor(got).to(torch.bfloat16)
    want = torch.tensor(s, dtype=torch.float64).to(torch.bfloat16)
    bits = lambda t: f"0x{t.view(torch.int16).item() & 0xffff:04x}"  # noqa: E731
    print(f"S = {s!r}: Triton IR constant {bits(got_bf16)} ({got_bf16.item():.6e}), bf16(S) = {bits(want)} "
          f"({want.item():.6e})")
    wrong += bool(got_bf16 != want)
sys.exit(1 if wrong else 0)
