import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def probe(y_ptr):
    x = tl.full([64], 1.0, tl.float16)
    y = x.to(tl.float8e5b16, fp_downcast_rounding="rtz")
    tl.store(y_ptr + tl.arange(0, 64), y)


kernel = triton.compile(triton.compiler.ASTSource(probe, signature={"y_ptr": "*fp8e5b16"}),
                        target=GPUTarget("hip", "gfx90a", 64))  # compiles on a CPU, no GPU needed
print("stored:", [line.strip() for line in kernel.asm["llir"].splitlines() if "store" in line and "declare" not in line])
expected = torch.tensor([1.0], dtype=torch.float64).to(torch.float8_e5m2fnuz)
print("expected:", hex(expected.view(torch.uint8).item()), "=", expected.item())
