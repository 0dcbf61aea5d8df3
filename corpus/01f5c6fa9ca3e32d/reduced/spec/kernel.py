import triton
import triton.language as tl


@triton.jit
def kernel(out_0, M, N, K, sa_0, sa_1, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_K = tl.arange(0, BLOCK_K)
    offs_2 = tl.arange(0, 2)
    v_1 = tl.minimum(tl.maximum(sa_0, -57344.0), 57344.0).to(tl.float8e5b16, fp_downcast_rounding="rtz")
    c_3 = sa_1
    for k_2 in tl.range(0, 2, num_stages=1):
        offs_K_k_2 = k_2 * BLOCK_K + tl.arange(0, BLOCK_K)
    c_5 = pid_n
    for k_4 in tl.static_range(2):
        offs_K_k_4 = k_4 * BLOCK_K + tl.arange(0, BLOCK_K)
        k_4 = k_4 + tl.full([], 0, tl.int32)
        c_5 = pid_n
    v_6 = v_1.to(tl.float32)
    tl.atomic_max(out_0 + 0, v_6, sem="acq_rel", scope="gpu")
