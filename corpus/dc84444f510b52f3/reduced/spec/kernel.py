import triton
import triton.language as tl


@triton.jit
def kernel(in_0, s_in_0_0, s_in_0_1, in_1, s_in_1_0, s_in_1_1, in_2, s_in_2_0, s_in_2_1, in_3, s_in_3_0, s_in_3_1, in_4, s_in_4_0, s_in_4_1, out_0, s_out_0_0, s_out_0_1, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    v_1 = tl.full([BLOCK_M, BLOCK_N], 0.0, tl.float32)
    v_2 = tl.load(in_0 + (offs_M[:, None] * s_in_0_0 + offs_K[None, :] * s_in_0_1))
    v_3 = tl.load(in_1 + (offs_K[:, None] * s_in_1_0 + offs_N[None, :] * s_in_1_1), mask=(offs_K < K)[:, None] & (offs_N < N)[None, :], other=0.0)
    v_4 = tl.dot(v_2, v_3, v_1)
    c_6 = v_1
    for k_5 in range(0, 2):
        offs_K_k_5 = k_5 * BLOCK_K + tl.arange(0, BLOCK_K)
    if pid_m % 2 == 0:
        y_7 = v_1
    else:
        y_7 = c_6
    tl.store(out_0 + (offs_M[:, None] * s_out_0_0 + offs_N[None, :] * s_out_0_1), v_4, mask=(offs_M < M)[:, None] & (offs_N < N)[None, :], cache_modifier=".wt")
