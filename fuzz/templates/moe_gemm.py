"""A mixture-of-experts GEMM with gathered rows and a scattered, weighted combine: the shape of vLLM's and SGLang's
fused-MoE kernels (`fused_moe_kernel`) without their routing pre-pass, a kernel template of gfxhound
(`--shape moe`) and an example of docs/user-kernels.md.

Each program takes BLOCK_M routed rows (`rows[i]` is the token a row reads, `weights[i]` its router weight), all
routed to one expert (`experts[pid_m]`), multiplies the gathered token rows by that expert's weight matrix, scales
by the router weights and adds the result into the tokens' output rows with atomics (a token routed twice, top-k,
gets both contributions). As in vLLM, the routed list is padded: a row index equal to M is padding (masked by
the loaded index itself), and a block whose expert is -1 belongs to no expert and returns early.

What it exercises: loads through index tensors, a pointer offset by a loaded scalar (the expert), masks computed
from loaded indices, an early return on a loaded value, vLLM's `tl.multiple_of`/`tl.max_contiguous` hints on the
column offsets, i32 or i64 gather offsets, atomic scatter-adds that programs share.
"""
import triton
import triton.language as tl


@triton.jit
def moe_gemm(x_ptr, w_ptr, out_ptr, rows_ptr, weights_ptr, experts_ptr, M, R, N, K,
             stride_xm, stride_xk, stride_we, stride_wk, stride_wn, stride_om, stride_on,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, WEIGHTED: tl.constexpr,
             HINTS: tl.constexpr = False, GATHER_I64: tl.constexpr = True):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = tl.load(experts_ptr + pid_m)
    if expert == -1:  # a block of padding rows: no expert, nothing to add
        return
    offs_r = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = tl.load(rows_ptr + offs_r, mask=offs_r < R, other=M)
    row_mask = rows < M  # padding rows (index M) and rows past R read and write nothing
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if HINTS:
        offs_n = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_N), BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if GATHER_I64:
        x_ptrs = x_ptr + rows[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
        w_ptrs = w_ptr + expert.to(tl.int64) * stride_we + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    else:
        x_ptrs = x_ptr + rows[:, None] * stride_xm + offs_k[None, :] * stride_xk
        w_ptrs = w_ptr + expert * stride_we + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=row_mask[:, None] & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if WEIGHTED:
        acc = acc * tl.load(weights_ptr + offs_r, mask=row_mask, other=0.0)[:, None]
    out_ptrs = out_ptr + rows[:, None] * stride_om + offs_n[None, :] * stride_on
    tl.atomic_add(out_ptrs, acc, mask=row_mask[:, None] & (offs_n[None, :] < N))


def reference(x_ptr, w_ptr, out_ptr, rows_ptr, weights_ptr, experts_ptr, M, R, BLOCK_M, WEIGHTED, **_):
    out = out_ptr.double().clone()
    for r in range(R):
        token, expert = int(rows_ptr[r]), int(experts_ptr[r // BLOCK_M])
        if expert == -1 or token == M:  # padding
            continue
        y = x_ptr[token].double() @ w_ptr[expert].double()
        out[token] += y * float(weights_ptr[r]) if WEIGHTED else y
    return out.float()
