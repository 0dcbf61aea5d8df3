"""Hand-minimised repro: SIGFPE (divide by zero) in BlockedToMFMA for `tl.dot_scaled` with one unscaled fp16/bf16 operand, N=16, `matrix_instr_nonkdim=32` (gfx90a/gfx942/gfx950)

`tl.dot_scaled(a, None, "fp16", b, b_scale, "e5m2")` with M = N = 16 and K = 32, compiled with
`matrix_instr_nonkdim=32`, fails in `TritonAMDGPUAccelerateMatmul` without a diagnostic of its own: MLIR reports
"Failures have been detected while processing an MLIR pass pipeline" and Triton raises `PassManager::run failed`.
Under gdb the pass stops on a SIGFPE (an integer divide by zero) in `BlockedToMFMA::matchAndRewrite`, which MLIR's
crash recovery turns into that bare failure. N=32 or `matrix_instr_nonkdim=16` compile. No GPU needed: the
reproducer only compiles.

Compiles the kernel for gfx950 as the Triton runtime would.
"""
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


src = ASTSource(
    kernel,
    signature={"a_ptr": "*fp16", "b_ptr": "*fp8e5", "bs_ptr": "*u8", "c_ptr": "*fp32", "M": "constexpr",
               "N": "constexpr", "K": "constexpr"},
    constexprs={"M": 16, "N": 16, "K": 32},  # N=32 compiles
)
triton.compile(src, target=GPUTarget("hip", 'gfx950', 64), options={'matrix_instr_nonkdim': 32})  # 16 compiles
