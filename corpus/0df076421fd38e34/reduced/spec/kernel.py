import triton
import triton.language as tl


@triton.jit
def kernel(in_0, s_in_0_0, s_in_0_1, in_1, s_in_1_0, s_in_1_1, in_2, s_in_2_0, s_in_2_1, in_3, s_in_3_0, s_in_3_1, in_4, s_in_4_0, s_in_4_1, in_5, s_in_5_0, s_in_5_1, in_6, s_in_6_0, s_in_6_1, in_7, s_in_7_0, s_in_7_1, out_0, s_out_0_0, s_out_0_1, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    offs_H = tl.arange(0, (BLOCK_K // 2))
    offs_T = tl.arange(0, (BLOCK_K // 16))
    v_1 = tl.full([BLOCK_M, BLOCK_N], 0.0, tl.float32)
    c_3 = v_1
    c_4 = pid_n
    c_5 = pid_n
    for k_2 in tl.static_range(1):
        offs_K_k_2 = k_2 * BLOCK_K + tl.arange(0, BLOCK_K)
        offs_H_k_2 = k_2 * (BLOCK_K // 2) + tl.arange(0, (BLOCK_K // 2))
        offs_T_k_2 = k_2 * (BLOCK_K // 16) + tl.arange(0, (BLOCK_K // 16))
        k_2 = k_2 + tl.full([], 0, tl.int32)
        v_6 = tl.load(in_0 + (offs_M[:, None] * s_in_0_0 + offs_H_k_2[None, :] * s_in_0_1), mask=(offs_M < M)[:, None] & (offs_H_k_2 < (K // 2))[None, :], other=0)
        v_7 = tl.load(in_1 + (offs_M[:, None] * s_in_1_0 + offs_T_k_2[None, :] * s_in_1_1), mask=(offs_M < M)[:, None] & (offs_T_k_2 < (K // 16))[None, :], other=0)
        v_8 = tl.load(in_2 + (offs_K_k_2[:, None] * s_in_2_0 + offs_N[None, :] * s_in_2_1), mask=(offs_K_k_2 < K)[:, None] & (offs_N < N)[None, :], other=0.0)
        v_9 = tl.load(in_3 + (offs_N[:, None] * s_in_3_0 + offs_T_k_2[None, :] * s_in_3_1), mask=(offs_N < N)[:, None] & (offs_T_k_2 < (K // 16))[None, :], other=0)
        v_10 = tl.dot_scaled(v_6, v_7, "e2m1", v_8, v_9, "e4m3", c_3)
        c_3 = v_10
        c_4 = c_5
        c_5 = k_2
    tl.store(out_0 + (offs_M[:, None] * s_out_0_0 + offs_N[None, :] * s_out_0_1), c_3, mask=(offs_M < M)[:, None] & (offs_N < N)[None, :])
