@triton.jit
def _second_pass_block(src, pa, sq, shift, step, a_step):
    rd = src
    x = tl.load(rd).to(tl.float32) - shift[:, None]
    return (src + step, pa + a_step, sq + tl.sum(x * x))


@triton.jit
def pointer_flow(a_ptr, b_ptr, modes_ptr, stats_ptr, N, stride_am, stride_an, stride_bm, stride_bn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, OFFSET_I64: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    modes = modes_ptr + pid * 4
    STEP: tl.constexpr = tl.int64 if OFFSET_I64 else tl.int32
    which = tl.load(modes + 0)
    if which == 1:
        src = b_ptr + (rows[:, None].to(tl.int64) * stride_bm + cols[None, :] * stride_bn)
        step = tl.full((), BLOCK_N, STEP) * stride_bn
    else:
        from_b = which == 3
        r = rows[:, None].to(STEP)
        src = tl.where(from_b, b_ptr + (r * stride_bm + cols[None, :] * stride_bn), a_ptr + (r * stride_am + cols[None, :] * stride_an))
        sn = tl.where(from_b, stride_bn, stride_an)
        step = tl.full((), BLOCK_N, STEP) * sn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    total = tl.sum(acc, axis=1)
    shift = total / N
    pa = a_ptr + (rows[:, None].to(STEP) * stride_am + cols[None, :] * stride_an)
    a_step = BLOCK_N * stride_an
    sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
    src, pa, sq = _second_pass_block(src, pa, sq, shift, step, a_step)
    tl.store(stats_ptr + rows * 2 + 1, sq)


kernel = pointer_flow
