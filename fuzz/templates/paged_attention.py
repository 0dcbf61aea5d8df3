"""Paged-KV decode attention: one query token per sequence attending over a KV cache stored in fixed-size pages,
the shape of vLLM's `paged_attention` / `unified_attention` decode path (vllm/attention/ops) and SGLang's decode
attention (`_fwd_kernel_stage1`), written as a gfxhound fuzz template (`--kernel`, docs/user-kernels.md).

One program per (sequence, KV head), a 2-D grid. It loads the sequence's length (`seq_lens[seq]`, 0 for an empty
slot: it stores zeros and returns early), then takes the QUERIES_PER_KV query heads that share its KV head (GQA,
padded to BLOCK_Q rows) and walks the sequence's pages: each step loads the page's physical number from the block
table, gathers a [PAGE, HEAD] tile of K and of V from the paged caches through it, and folds it into an online
softmax (fp32 state of shape [BLOCK_Q, 1], exp2 form) and the output accumulator.

Why it exists: it reaches compiler paths that generated kernels and the GEMM examples do not.
- an early `return` behind a loaded, per-program condition (`seq_len == 0`): the front end lowers it to
  unstructured control flow (cf.cond_br to a block ending in tt.return, still so in TTGIR) guarding all the work;
- USE_WHILE: a data-dependent `while start < seq_len` (scf.while, never pipelined) instead of a `for` over
  `range(first, cdiv(seq_len, PAGE))` with a runtime lower bound (scf.for, which the AMD stream pipeliner may take
  at num_stages > 1);
- inside the loop, a scalar load at a loop-varying address (the block table) whose value, widened to int64,
  offsets the pointers of the next tile loads: loads that depend on loads, the pattern pipeliners handle worst;
- USE_DOT: scores and P @ V by `tl.dot` (MFMA, BLOCK_Q >= 16 rows of which most are padding), or by the decode
  form `tl.sum(q[:, None, :] * k[None, :, :], 2)` (3-D broadcasts and reductions, any block size);
- [M, 1] softmax state from `keep_dims=True` reductions, broadcast against [M, N] tiles;
- constexpr epilogues of real models: a logit soft-cap (Gemma 2; tanh written with exp, as vLLM does), ALiBi
  slopes per query head, a sliding window (Mistral) that also moves the loop's start.
The head dimension is a runtime argument (head_size, masked up to BLOCK_D), so the runtime's divisibility
specialisation varies with it; the cache strides are runtime too.
"""
import triton
import triton.language as tl


@triton.jit
def _attend_page(acc, m_i, l_i, q, blk, seq, kv_head, seq_len, head_size, scale, slopes,
                 k_cache_ptr, v_cache_ptr, block_table_ptr,
                 stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh, stride_bt,
                 BLOCK_D: tl.constexpr, PAGE: tl.constexpr, USE_DOT: tl.constexpr, SOFTCAP: tl.constexpr,
                 SLIDING_WINDOW: tl.constexpr, USE_ALIBI: tl.constexpr):
    """One page of the sequence folded into the online softmax; returns the new (acc, m_i, l_i)."""
    RCP_LN2: tl.constexpr = 1.4426950408889634
    offs_t = tl.arange(0, PAGE)
    offs_d = tl.arange(0, BLOCK_D)
    # the page's physical number: a scalar load at a loop-varying address; int64 as vLLM does (big caches)
    page = tl.load(block_table_ptr + seq * stride_bt + blk).to(tl.int64)
    pos = blk * PAGE + offs_t
    kv_mask = (pos[:, None] < seq_len) & (offs_d[None, :] < head_size)
    k = tl.load(k_cache_ptr + page * stride_kp + offs_t[:, None] * stride_kt + kv_head * stride_kh + offs_d[None, :],
                mask=kv_mask, other=0.0)
    v = tl.load(v_cache_ptr + page * stride_vp + offs_t[:, None] * stride_vt + kv_head * stride_vh + offs_d[None, :],
                mask=kv_mask, other=0.0)
    if USE_DOT:
        s = tl.dot(q, tl.trans(k))
    else:
        s = tl.sum(q[:, None, :].to(tl.float32) * k[None, :, :].to(tl.float32), 2)
    s = s * scale
    if SOFTCAP > 0:
        # SOFTCAP * tanh(s / SOFTCAP), tanh from exp (no libdevice): 1 - 2 / (exp(2x) + 1) saturates, never NaN
        s = SOFTCAP * (1.0 - 2.0 / (tl.exp(2.0 * s / SOFTCAP) + 1.0))
    if USE_ALIBI:
        s = s + slopes * (pos - (seq_len - 1)).to(tl.float32)[None, :]
    valid = pos < seq_len
    if SLIDING_WINDOW > 0:
        valid = valid & (seq_len - 1 - pos < SLIDING_WINDOW)
    s = tl.where(valid[None, :], s * RCP_LN2, float("-inf"))  # log2 units from here on
    m_new = tl.maximum(m_i, tl.max(s, 1, keep_dims=True))
    m_new = tl.where(m_new > float("-inf"), m_new, 0.0)  # a row with nothing seen yet: no -inf - -inf
    p = tl.exp2(s - m_new)
    alpha = tl.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1, keep_dims=True)
    if USE_DOT:
        acc = acc * alpha + tl.dot(p.to(v.dtype), v)
    else:
        acc = acc * alpha + tl.sum(p[:, :, None] * v[None, :, :].to(tl.float32), 1)
    return acc, m_new, l_i


@triton.jit
def paged_attention(out_ptr, q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, seq_lens_ptr, alibi_slopes_ptr,
                    scale, head_size, stride_qs, stride_qh, stride_os, stride_oh,
                    stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh, stride_bt,
                    QUERIES_PER_KV: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr,
                    PAGE: tl.constexpr, USE_WHILE: tl.constexpr, USE_DOT: tl.constexpr,
                    SOFTCAP: tl.constexpr = 0.0, SLIDING_WINDOW: tl.constexpr = 0, USE_ALIBI: tl.constexpr = False):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_q = tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, BLOCK_D)
    q_heads = kv_head * QUERIES_PER_KV + offs_q  # the GQA group of this KV head; rows past it are padding
    q_mask = offs_q < QUERIES_PER_KV
    io_mask = q_mask[:, None] & (offs_d[None, :] < head_size)
    out_ptrs = out_ptr + seq * stride_os + q_heads[:, None] * stride_oh + offs_d[None, :]
    seq_len = tl.load(seq_lens_ptr + seq)
    if seq_len == 0:  # an empty slot of the batch: defined output, no work
        tl.store(out_ptrs, tl.zeros((BLOCK_Q, BLOCK_D), dtype=out_ptr.dtype.element_ty), mask=io_mask)
        return
    q = tl.load(q_ptr + seq * stride_qs + q_heads[:, None] * stride_qh + offs_d[None, :], mask=io_mask, other=0.0)
    slopes = tl.zeros((BLOCK_Q, 1), dtype=tl.float32)
    if USE_ALIBI:
        slopes = tl.load(alibi_slopes_ptr + q_heads, mask=q_mask, other=0.0)[:, None]
    m_i = tl.full((BLOCK_Q, 1), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_Q, 1), dtype=tl.float32)
    acc = tl.zeros((BLOCK_Q, BLOCK_D), dtype=tl.float32)
    first = 0
    if SLIDING_WINDOW > 0:  # pages wholly before the window are skipped, as vLLM's kernels do
        first = tl.maximum(seq_len - SLIDING_WINDOW, 0) // PAGE
    if USE_WHILE:
        start = first * PAGE
        while start < seq_len:
            acc, m_i, l_i = _attend_page(acc, m_i, l_i, q, start // PAGE, seq, kv_head, seq_len, head_size, scale,
                                         slopes, k_cache_ptr, v_cache_ptr, block_table_ptr, stride_kp, stride_kt,
                                         stride_kh, stride_vp, stride_vt, stride_vh, stride_bt, BLOCK_D, PAGE,
                                         USE_DOT, SOFTCAP, SLIDING_WINDOW, USE_ALIBI)
            start += PAGE
    else:
        for blk in range(first, tl.cdiv(seq_len, PAGE)):
            acc, m_i, l_i = _attend_page(acc, m_i, l_i, q, blk, seq, kv_head, seq_len, head_size, scale,
                                         slopes, k_cache_ptr, v_cache_ptr, block_table_ptr, stride_kp, stride_kt,
                                         stride_kh, stride_vp, stride_vt, stride_vh, stride_bt, BLOCK_D, PAGE,
                                         USE_DOT, SOFTCAP, SLIDING_WINDOW, USE_ALIBI)
    out = acc / l_i  # l_i >= 1: every row saw its maximum, the newest position is always in the window
    tl.store(out_ptrs, out.to(out_ptr.dtype.element_ty), mask=io_mask)


def reference(out_ptr, q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, seq_lens_ptr, alibi_slopes_ptr, scale,
              head_size, PAGE, QUERIES_PER_KV, SOFTCAP=0.0, SLIDING_WINDOW=0, USE_ALIBI=False, **_):
    """Plain softmax attention over each sequence's gathered keys and values, in float64; empty sequences give 0."""
    import torch
    num_seqs, num_q_heads, _d = q_ptr.shape
    num_kv_heads = k_cache_ptr.shape[2]
    out = torch.zeros(out_ptr.shape, dtype=torch.float64)
    for s in range(num_seqs):
        n = int(seq_lens_ptr[s])
        if n == 0:
            continue
        pages = block_table_ptr[s, :-(-n // PAGE)].long()
        k = k_cache_ptr[pages].double().reshape(-1, num_kv_heads, head_size)[:n]  # [n, kv heads, head]
        v = v_cache_ptr[pages].double().reshape(-1, num_kv_heads, head_size)[:n]
        pos = torch.arange(n, dtype=torch.float64)
        for h in range(num_q_heads):
            kvh = h // QUERIES_PER_KV
            sc = scale * (k[:, kvh] @ q_ptr[s, h].double())
            if SOFTCAP > 0:
                sc = SOFTCAP * torch.tanh(sc / SOFTCAP)
            if USE_ALIBI:
                sc = sc + float(alibi_slopes_ptr[h]) * (pos - (n - 1))
            if SLIDING_WINDOW > 0:
                sc = sc.masked_fill(n - 1 - pos >= SLIDING_WINDOW, float("-inf"))
            out[s, h] = torch.softmax(sc, 0) @ v[:, kvh]
    return out
