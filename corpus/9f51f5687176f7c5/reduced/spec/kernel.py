import triton
import triton.language as tl


@triton.jit
def kernel(in_0, s_in_0_0, s_in_0_1, in_1, s_in_1_0, s_in_1_1, in_2, s_in_2_0, s_in_2_1, in_3, s_in_3_0, s_in_3_1, out_0, s_out_0_0, s_out_0_1, s_out_0_2, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    offs_H = tl.arange(0, (BLOCK_K // 2))
    offs_T = tl.arange(0, (BLOCK_K // 16))
    v_1 = tl.full([BLOCK_M, BLOCK_N], 0.0, tl.float32)
    v_2 = tl.load(in_3 + (offs_M[:, None] * s_in_3_0 + offs_T[None, :] * s_in_3_1), mask=(offs_M < M)[:, None] & (offs_T < (K // 16))[None, :], other=0)
    v_3 = tl.load(in_0 + (offs_M[:, None] * s_in_0_0 + offs_H[None, :] * s_in_0_1), mask=(offs_M < M)[:, None] & (offs_H < (K // 2))[None, :], other=0)
    v_4 = tl.load(in_1 + (offs_K[:, None] * s_in_1_0 + offs_N[None, :] * s_in_1_1), mask=(offs_K < K)[:, None] & (offs_N < N)[None, :], other=0.0)
    v_5 = tl.load(in_2 + (offs_N[:, None] * s_in_2_0 + offs_T[None, :] * s_in_2_1), mask=(offs_N < N)[:, None] & (offs_T < (K // 16))[None, :], other=0)
    v_6 = tl.dot_scaled(v_3, v_2, "e2m1", v_4, v_5, "e5m2", v_1)
    v_7 = tl.join(v_6, v_6)
    tl.store(out_0 + (offs_M[:, None, None] * s_out_0_0 + offs_N[None, :, None] * s_out_0_1 + offs_2[None, None, :] * s_out_0_2), v_7, mask=(offs_M < M)[:, None, None] & (offs_N < N)[None, :, None], cache_modifier=".wt")
