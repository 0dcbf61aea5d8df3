import triton
import triton.language as tl


@triton.jit
def kernel(in_0, s_in_0_0, s_in_0_1, in_1, s_in_1_0, s_in_1_1, in_2, s_in_2_0, in_3, s_in_3_0, s_in_3_1, in_4, s_in_4_0, out_0, s_out_0_0, s_out_0_1, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    v_1 = tl.full([BLOCK_M, BLOCK_N], 0.0, tl.float32)
    c_3 = v_1
    for k_2 in tl.range(0, 2, num_stages=4):
        offs_K_k_2 = k_2 * BLOCK_K + tl.arange(0, BLOCK_K)
        v_4 = tl.load(in_0 + (offs_M[:, None] * s_in_0_0 + offs_K_k_2[None, :] * s_in_0_1), mask=(offs_M < M)[:, None] & (offs_K_k_2 < K)[None, :], other=0.0)
        v_5 = tl.load(in_1 + (offs_K_k_2[:, None] * s_in_1_0 + offs_N[None, :] * s_in_1_1), mask=(offs_K_k_2 < K)[:, None] & (offs_N < N)[None, :], other=0.0)
        v_6 = tl.dot(v_4, v_5, c_3)
        c_3 = v_6
    c_8 = pid_n
    for k_7 in tl.range(0, 3, num_stages=2):
        offs_K_k_7 = k_7 * BLOCK_K + tl.arange(0, BLOCK_K)
        c_8 = k_7
    tl.store(out_0 + (offs_M[:, None] * s_out_0_0 + offs_N[None, :] * s_out_0_1), c_3, mask=(offs_M < M)[:, None] & (offs_N < N)[None, :])
