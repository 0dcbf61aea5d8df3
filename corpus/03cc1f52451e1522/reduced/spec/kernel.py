import triton
import triton.language as tl


@triton.jit
def kernel(in_0, s_in_0_0, s_in_0_1, out_0, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    offs_N = tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    v_1 = tl.load(in_0 + (offs_M[:, None] * s_in_0_0 + offs_N[None, :] * s_in_0_1), cache_modifier=".ca")
    v_2 = pid_m == 1
    if v_2:
        y_3 = v_1
    else:
        y_3 = v_1
    v_4 = (v_1 * v_1).to(tl.float16)
    v_5 = ~v_2
    v_6 = tl.full([BLOCK_M, BLOCK_N], 0.0, tl.float32)
    c_8 = v_6
    c_9 = v_2
    c_10 = v_2
    for k_7 in range(0, 2):
        offs_K_k_7 = k_7 * BLOCK_K + tl.arange(0, BLOCK_K)
        c_9 = c_10
        c_10 = v_5
    v_11 = c_9.to(tl.int32)
    tl.atomic_add(out_0 + 0, v_11, sem="acq_rel", scope="gpu")
