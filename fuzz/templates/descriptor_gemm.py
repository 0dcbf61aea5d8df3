"""A GEMM whose operands and output go through tensor descriptors made on the device: the shape of Triton's
tutorial 09-persistent-matmul in its descriptor variant (`matmul_kernel_descriptor_persistent`: descriptors made
once with `tl.make_tensor_descriptor`, a persistent loop over tiles with a grouped order, B given K-major as
`[N, K]` and transposed in registers, an optionally split epilogue store) and of 06-fused-attention's descriptor
path (`desc.load([off, 0])` on a 2-D view, `.T` of a loaded tile fed to `tl.dot`), with a bias and an activation
as vLLM's and aiter's GEMMs fuse them; a kernel template of gfxhound (`gfxhound fuzz --kernel`).

Why it exists: generated kernels never make a descriptor, so the compiler's descriptor paths go unfuzzed. On
gfx942/gfx950 `tt.make_tensor_descriptor`, `tt.descriptor_load` and `tt.descriptor_store` are rewritten into
pointer arithmetic with bounds masks (RewriteTensorDescriptorToPointer, in make_ttir) and then reach the
buffer-op and pipelining passes as masked loads the rewrite built, not ones a user wrote; on gfx1250 (Triton >=
3.7) they stay descriptors and lower to the Tensor Data Mover. A descriptor's bounds are its whole safety: a
wrong bound reads or writes the neighbours' data. So every tensor is wider than its descriptor's ragged shape:
rows of `KP = 8*cdiv(K, 8)` or `NP = 8*cdiv(N, 8)` elements (which also keeps every non-last stride a multiple of
16 bytes, as descriptors require), and the output is `inout`, random in 8 rows and 8 columns past what the kernel
may write, as when a GEMM writes a slice of a larger buffer (a fused QKV projection's columns): a store past its
bound overwrites values the comparison checks.

The output descriptor's width is N rounded up to 16 bytes, not N: NVIDIA's TMA stores whole 16-byte chunks, so a
store writes past a ragged inner extent (a documented hardware limit, triton-lang/triton#11583, seen here on an
H100), and a kernel valid everywhere gives its store an extent on a 16-byte edge over a padded row, as kernels
that store through TMA do. The columns from N to that edge receive zeros (B and the bias read as zeros past N),
so a B load that ignored N shows there. A wrong K bound in one operand cannot show, by a GEMM's nature: the
other operand's zero fill cancels it.

Constexpr switches: which of A, B and C go through a descriptor (the others through masked pointer tensors, as
kernels that adopt descriptors one operand at a time do), B row-major `[K, N]` or K-major `[N, K]` (its tile
transposed with `.T`), a persistent loop over `tl.num_programs(0)` programs or one tile per program, the grouped
tile order, an epilogue store split into two column halves (tutorial 09's EPILOGUE_SUBTILE: reshape, permute,
`tl.split`), and the epilogue's bias and activation.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_coords(tile, num_m, num_n, GROUP_M: tl.constexpr):
    """Tiles in groups of GROUP_M rows (tutorial 09's `_compute_pid`), so programs running together share
    operand tiles in the cache."""
    width = GROUP_M * num_n
    group = tile // width
    first_m = group * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (tile % width) % size_m
    pid_n = (tile % width) // size_m
    return pid_m, pid_n


@triton.jit
def _epilogue(acc, bias_ptr, offs_n, N, EPILOGUE: tl.constexpr):
    """The fused epilogue of the GEMMs people ship: nothing, a per-column bias, or a bias and an activation."""
    if EPILOGUE != "none":
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc = acc + bias[None, :]
    if EPILOGUE == "bias_relu":
        acc = tl.maximum(acc, 0.0)
    elif EPILOGUE == "bias_silu":
        acc = acc * tl.sigmoid(acc)
    return acc


@triton.jit
def _gemm_tile(a_src, b_src, c_src, bias_ptr, tile, M, N, K, stride_am, stride_b, stride_cm,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
               DESC_A: tl.constexpr, DESC_B: tl.constexpr, DESC_C: tl.constexpr, B_KMAJOR: tl.constexpr,
               SUBTILE: tl.constexpr, EPILOGUE: tl.constexpr):
    """One output tile. Each `*_src` is a descriptor or a plain pointer, as its DESC_* says: descriptors handed
    to a jit helper, as 06-fused-attention hands `desc_k`, `desc_v` to `_attn_fwd_inner`."""
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _tile_coords(tile, num_m, num_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    offs_m = off_m + tl.arange(0, BLOCK_M)
    offs_n = off_n + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(tl.cdiv(K, BLOCK_K)):
        off_k = kt * BLOCK_K
        offs_k = off_k + tl.arange(0, BLOCK_K)
        if DESC_A:
            a = a_src.load([off_m, off_k])  # rows past M and columns past K read as zeros
        else:
            a = tl.load(a_src + offs_m[:, None] * stride_am + offs_k[None, :],
                        mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        if B_KMAJOR:
            if DESC_B:
                bt = b_src.load([off_n, off_k])
            else:
                bt = tl.load(b_src + offs_n[:, None] * stride_b + offs_k[None, :],
                             mask=(offs_n[:, None] < N) & (offs_k[None, :] < K), other=0.0)
            b = bt.T
        else:
            if DESC_B:
                b = b_src.load([off_k, off_n])
            else:
                b = tl.load(b_src + offs_k[:, None] * stride_b + offs_n[None, :],
                            mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    acc = _epilogue(acc, bias_ptr, offs_n, N, EPILOGUE)
    if DESC_C:
        c = acc.to(c_src.dtype)
        if SUBTILE:  # two column halves, stored one after the other (tutorial 09's EPILOGUE_SUBTILE)
            c0, c1 = tl.split(tl.permute(tl.reshape(c, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
            c_src.store([off_m, off_n], c0)
            c_src.store([off_m, off_n + BLOCK_N // 2], c1)
        else:
            c_src.store([off_m, off_n], c)  # rows past M and columns past the extent are not written
    else:
        c = acc.to(c_src.dtype.element_ty)
        tl.store(c_src + offs_m[:, None] * stride_cm + offs_n[None, :], c,
                 mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def descriptor_gemm(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_b, stride_cm,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                    DESC_A: tl.constexpr, DESC_B: tl.constexpr, DESC_C: tl.constexpr, B_KMAJOR: tl.constexpr,
                    PERSISTENT: tl.constexpr, SUBTILE: tl.constexpr = False, EPILOGUE: tl.constexpr = "none"):
    """C[M, N] = epilogue(A[M, K] @ B) with B = b[K, N] or, B_KMAJOR, b[N, K].T; every tensor row-major with a
    leading stride of its own (padded past the logical size)."""
    # descriptors are made once, before the tile loop, as in tutorial 09 (on NVIDIA each is a TMA descriptor
    # written to global scratch: the reason a launch there needs triton.set_allocator)
    a_src = a_ptr
    if DESC_A:
        a_src = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                          block_shape=[BLOCK_M, BLOCK_K])
    b_src = b_ptr
    if DESC_B:
        if B_KMAJOR:
            b_src = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_b, 1],
                                              block_shape=[BLOCK_N, BLOCK_K])
        else:
            b_src = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_b, 1],
                                              block_shape=[BLOCK_K, BLOCK_N])
    c_src = c_ptr
    if DESC_C:  # N rounded up to 16 bytes (8 fp16/bf16 elements): TMA stores whole 16-byte chunks (docstring)
        c_src = tl.make_tensor_descriptor(c_ptr, shape=[M, tl.cdiv(N, 8) * 8], strides=[stride_cm, 1],
                                          block_shape=[BLOCK_M, BLOCK_N // 2 if SUBTILE else BLOCK_N])
    if PERSISTENT:  # tl.num_programs(0) programs loop over all tiles
        for tile in range(tl.program_id(0), tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N), tl.num_programs(0)):
            _gemm_tile(a_src, b_src, c_src, bias_ptr, tile, M, N, K, stride_am, stride_b, stride_cm,
                       BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, DESC_A, DESC_B, DESC_C, B_KMAJOR, SUBTILE, EPILOGUE)
    else:  # one tile per program
        _gemm_tile(a_src, b_src, c_src, bias_ptr, tl.program_id(0), M, N, K, stride_am, stride_b, stride_cm,
                   BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, DESC_A, DESC_B, DESC_C, B_KMAJOR, SUBTILE, EPILOGUE)


def reference(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, DESC_C, B_KMAJOR, EPILOGUE, **_):
    """The logical product in float64, written over the output's first M rows and N columns, and zeros up to the
    16-byte edge where the store is a descriptor's; the rest of the output keeps its random values."""
    import torch
    a = a_ptr[:M, :K].double()
    b = b_ptr[:N, :K].double().T if B_KMAJOR else b_ptr[:K, :N].double()
    acc = a @ b
    if EPILOGUE != "none":
        acc = acc + bias_ptr[:N].double()
    if EPILOGUE == "bias_relu":
        acc = acc.clamp_min(0)
    elif EPILOGUE == "bias_silu":
        acc = acc * torch.sigmoid(acc)
    out = c_ptr.double()
    out[:M, :N] = acc
    if DESC_C:
        out[:M, N:-(-N // 8) * 8] = 0
    return out.to(c_ptr.dtype)
