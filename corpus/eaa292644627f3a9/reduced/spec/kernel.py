import triton
import triton.language as tl


@triton.jit
def kernel(out_0, s_out_0_0, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    v_1 = pid_n + tl.zeros([BLOCK_K], dtype=tl.int32)
    tl.atomic_xchg(out_0 + (offs_K * s_out_0_0), v_1, mask=(offs_K < K), sem="acq_rel", scope="cta")
