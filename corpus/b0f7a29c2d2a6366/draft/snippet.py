"""Compiles the kernel for gfx950 as the Triton runtime would."""
import os
import subprocess
import sys


def cannot_test(kind, exc, tb):  # an exception outside the compile is not the bug: say what it was
    print("other failure (cannot test):", f"{kind.__name__}: {exc}".strip().splitlines()[0][:300], flush=True)
    os._exit(125)


if "--child" not in sys.argv:  # the child's own failure is read from its output, below
    sys.excepthook = cannot_test

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def kernel(a_ptr, b_ptr, bs_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m, offs_n, offs_k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])  # [M, K] fp16, unscaled
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])  # [K, N] e5m2
    b_scale = tl.load(bs_ptr + offs_n[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])  # [N, K // 32] e8m0
    c = tl.dot_scaled(a, None, "fp16", b, b_scale, "e5m2")
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c)


if "--child" in sys.argv:  # the compile, in a child process: an LLVM abort ends the process it is in
    src = ASTSource(
        kernel,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp8e5", "bs_ptr": "*u8", "c_ptr": "*fp32", "M": "constexpr",
                   "N": "constexpr", "K": "constexpr"},
        constexprs={"M": 16, "N": 16, "K": 32},  # N=32 compiles
    )
    triton.compile(src, target=GPUTarget("hip", 'gfx950', 64), options={'matrix_instr_nonkdim': 32})  # 16 compiles
    sys.exit(0)


# The check, in the repro protocol: exit 1 when the compile fails with the error this report is about,
# 0 when the kernel compiles, 125 on any other failure (this build cannot test for the bug).
BUG = ["Failures have been detected while processing an MLIR pass pipeline", "TritonAMDGPUAccelerateMatmul"]  # every part is in the failure's output
# the pass fails without saying why: a diagnostic of its own is another failure
OWN = ("error:", "Assertion", "LLVM ERROR")
try:
    child = subprocess.run([sys.executable, __file__, "--child"],
                           capture_output=True, text=True, timeout=600)
except subprocess.TimeoutExpired:
    print("other failure (cannot test): the compile did not finish in 600 s")
    sys.exit(125)
output = child.stdout + child.stderr
sys.stderr.write(output)
if child.returncode == 0:
    print("not reproduced: the kernel compiled")
    sys.exit(0)
own = [line for line in output.splitlines()
       if BUG[0] not in line and any(word in line for word in OWN)]
if all(part in output for part in BUG) and not own:
    print("reproduced: TritonAMDGPUAccelerateMatmul failed without a diagnostic of its own")
    sys.exit(1)
lines = output.strip().splitlines() or [f"exit {child.returncode}"]
errors = [line for line in lines if "error" in line.lower() or "Assertion" in line]
print("other failure (cannot test):", (errors or lines[-1:])[0].strip())
sys.exit(125)
