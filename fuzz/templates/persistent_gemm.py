"""A persistent GEMM with a grouped tile order, a bias and an activation: the shape of the matmul kernels people
ship for AMD GPUs (Triton's persistent-matmul tutorial, vLLM's and aiter's GEMMs), a kernel template of gfxhound
(`--shape persistent`) and the example of docs/user-kernels.md.

What it exercises that generated kernels reach rarely: `tl.num_programs` and a loop over tiles with a runtime
step, a program-id swizzle (GROUP_M) in a jit helper, pointer tensors carried through the K loop (`a_ptrs += ...`),
masks on every edge (or, EVEN_K, only on M and N), contiguity hints, i64 offsets, a constexpr-selected epilogue.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_coords(tile, num_m, num_n, GROUP_M: tl.constexpr):
    """Tiles in groups of GROUP_M rows, so programs running together share operand tiles in the cache."""
    width = GROUP_M * num_n
    group = tile // width
    first_m = group * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (tile % width) % size_m
    pid_n = (tile % width) // size_m
    return pid_m, pid_n


@triton.jit
def persistent_gemm(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                    ACTIVATION: tl.constexpr = "none", EVEN_K: tl.constexpr = False, HINTS: tl.constexpr = False,
                    OFFSETS_I64: tl.constexpr = False):
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    for tile in range(tl.program_id(0), num_m * num_n, tl.num_programs(0)):
        pid_m, pid_n = _tile_coords(tile, num_m, num_n, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        if HINTS:  # what the tutorials and vLLM tell the compiler about tile offsets
            offs_m = tl.max_contiguous(tl.multiple_of(offs_m, BLOCK_M), BLOCK_M)
            offs_n = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_N), BLOCK_N)
        if OFFSETS_I64:  # large-tensor kernels widen their offsets
            offs_m = offs_m.to(tl.int64)
            offs_n = offs_n.to(tl.int64)
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            if EVEN_K:  # K is a multiple of BLOCK_K (the launch spec says so): only the M and N edges are masked
                a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
                b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
            else:
                k_left = K - k * BLOCK_K
                a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc = acc + bias[None, :]
        if ACTIVATION == "relu":
            acc = tl.maximum(acc, 0.0)
        elif ACTIVATION == "silu":
            acc = acc * tl.sigmoid(acc)
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def reference(a_ptr, b_ptr, bias_ptr, c_ptr, ACTIVATION, **_):
    import torch
    acc = a_ptr.double() @ b_ptr.double() + bias_ptr.double()
    if ACTIVATION == "relu":
        acc = acc.clamp_min(0)
    elif ACTIVATION == "silu":
        acc = acc * torch.sigmoid(acc)
    return acc.to(c_ptr.dtype)
