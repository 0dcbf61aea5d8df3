import triton
import triton.language as tl


@triton.jit
def kernel(in_0, s_in_0_0, s_in_0_1, in_1, s_in_1_0, s_in_1_1, in_2, s_in_2_0, s_in_2_1, out_0, out_1, s_out_1_0, s_out_1_1, out_2, s_out_2_0, out_3, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    offs_N = tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
