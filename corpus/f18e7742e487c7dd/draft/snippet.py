import re
import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def probe(y_ptr):
    y = tl.full([64], 5.6e-09, tl.bfloat16)
    tl.store(y_ptr + tl.arange(0, 64), y)


kernel = triton.compile(triton.compiler.ASTSource(probe, signature={"y_ptr": "*bf16"}),
                        target=GPUTarget("hip", "gfx90a", 64))  # compiles on a CPU, no GPU needed
print("ttir:", re.findall(r"arith\.constant .*?(?= loc|$)", kernel.asm["ttir"], re.M))
print("stored:", [line.strip() for line in kernel.asm["llir"].splitlines() if "store" in line and "declare" not in line])
expected = torch.tensor([5.6e-09], dtype=torch.float64).to(torch.bfloat16)
print("expected:", hex(expected.view(torch.int16).item() & 0xffff), "=", expected.item())
