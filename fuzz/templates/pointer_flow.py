"""Pointers as values, and control flow as real kernels write it: a per-row-block "pick a source, reduce it, write
it centred" kernel, written as a gfxhound `--kernel` template.

Modelled on: vLLM's prefix-prefill and paged-attention kernels (a pointer chosen per program between the KV cache
and the fresh K/V, per-lane `tl.where` between cache and new positions, a data-dependent number of blocks per
sequence), fused MoE (a per-program flag that writes what it must and returns early, `expert == -1`), layer norm's
two passes over column blocks (a row statistic from the first pass, used by the second), and the i32-vs-i64 offset
split kernels write once tensors pass 2 GiB (`offs.to(tl.int64)`).

Why it exists: Triton AMD's pointer canonicalisation (`tritonamdgpu-canonicalize-pointers`) and buffer-op conversion
(`tritonamdgpu-convert-buffer-ops`) rewrite `ptr = base + offsets` through `scf.if`, `scf.for`, `scf.while` and
`arith.select`, and AMD passes restructure `if`s around loops; generated kernels rarely carry pointers through
them. Every condition here is a fresh per-program runtime value (`modes[pid, i]`, one per `if`, 0..3), and every
branch has a side effect (a store or an atomic) so the `if`s stay `scf.if` rather than folding to selects:
- `scf.if` yielding a pointer tensor and its step: an if/elif/else chain between `a` (i32 offsets), `b` (i64
  offsets) and a base chosen by a scalar condition (`b_ptr if c else a_ptr`) or by `tl.where` between two pointer
  tensors (SELECT_FORM);
- `scf.for` (`tl.range(num_stages=LOOP_STAGES)`, runtime trip count) carrying a pointer tensor that walks the
  column blocks cyclically from a per-program start, its step chosen each iteration by a loop-varying condition
  (wrap back at the last block), as an `scf.if` with an atomic or as a select (WRAP_FORM);
- an early `return` (EARLY_RETURN) between the loops, which leaves the rest of the function in `cf` blocks;
- `scf.while` (USE_WHILE; else an `scf.for` over the same runtime count) carrying two pointer tensors and an
  accumulator, reading through `tl.where(lane_mask, a_ptrs, src_ptrs)` (BLEND), storing and counting with an atomic.
Found with it (Triton 3.8.0 and 3.9.0, gfx942/gfx950): SELECT_FORM "where" asserts in canonicalize-pointers'
ConvertSCFIfOp ("ifOp types must match in both arms") whenever the pointer arguments carry tt.pointer_range=32:
one arm yields a fat pointer, the other a select between two bases (kin of triton#9859 and triton#10381).
Outputs: out[M, N] (the centred rows, first counts[p] column blocks), stats[M, 2] (the first pass's statistic, the
second pass's sum of squares), hits[8] (branch counters, shared by programs: atomics).
"""
import triton
import triton.language as tl


@triton.jit
def _second_pass_block(src, pa, sq, j, shift, rows, cols, row_ok, split, out_ptr, hits_ptr, N, stride_om, stride_on,
                       step, a_step, BLOCK_N: tl.constexpr, BLEND: tl.constexpr):
    """One column block of the second pass: read (through a per-lane choice of pointer), centre, store, accumulate."""
    c = j * BLOCK_N + cols
    m = row_ok[:, None] & (c[None, :] < N)
    rd = src
    if BLEND:  # columns before `split` come from `a`, the rest from the chosen source (cache prefix + fresh tail)
        rd = tl.where(c[None, :] < split, pa, src)
    x = tl.load(rd, mask=m, other=0.0).to(tl.float32) - shift[:, None]
    x = tl.where(m, x, 0.0)
    tl.store(out_ptr + rows[:, None] * stride_om + c[None, :] * stride_on, x, mask=m)
    tl.atomic_add(hits_ptr + 6, 1)  # iterations run, over all programs
    return src + step, pa + a_step, sq + tl.sum(x * x, axis=1)


@triton.jit
def pointer_flow(a_ptr, b_ptr, modes_ptr, counts_ptr, out_ptr, stats_ptr, hits_ptr, M, N,
                 stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, OFFSET_I64: tl.constexpr, SELECT_FORM: tl.constexpr,
                 WRAP_FORM: tl.constexpr, USE_WHILE: tl.constexpr, EARLY_RETURN: tl.constexpr, BLEND: tl.constexpr,
                 LOOP_STAGES: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    modes = modes_ptr + pid * 4
    STEP: tl.constexpr = tl.int64 if OFFSET_I64 else tl.int32
    # the source of this row block: a pointer tensor and its column-block step, yielded by an if/elif/else
    which = tl.load(modes + 0)
    if which == 0:  # a, 32-bit offsets
        src = a_ptr + (rows[:, None] * stride_am + cols[None, :] * stride_an)
        step = tl.full((), BLOCK_N, STEP) * stride_an
        tl.atomic_add(hits_ptr + 0, 1)
    elif which == 1:  # b, 64-bit offsets
        src = b_ptr + (rows[:, None].to(tl.int64) * stride_bm + cols[None, :] * stride_bn)
        step = tl.full((), BLOCK_N, STEP) * stride_bn
        tl.atomic_add(hits_ptr + 1, 1)
    else:  # 2: a, 3: b, chosen by a scalar condition
        from_b = which == 3
        r = rows[:, None].to(STEP)
        if SELECT_FORM == "scalar":  # a scalar pointer selected, then offset
            base = b_ptr if from_b else a_ptr
            sm = stride_bm if from_b else stride_am
            sn = stride_bn if from_b else stride_an
            src = base + (r * sm + cols[None, :] * sn)
        else:  # a select between two pointer tensors
            src = tl.where(from_b, b_ptr + (r * stride_bm + cols[None, :] * stride_bn),
                           a_ptr + (r * stride_am + cols[None, :] * stride_an))
            sn = tl.where(from_b, stride_bn, stride_an)
        step = tl.full((), BLOCK_N, STEP) * sn
        tl.atomic_add(hits_ptr + which, 1)
    # first pass: row sums, walking the column blocks cyclically from a per-program start
    nb = tl.cdiv(N, BLOCK_N)
    first = pid % nb
    ptrs = src + first * step
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, nb, num_stages=LOOP_STAGES):
        blk = (first + k) % nb
        x = tl.load(ptrs, mask=row_ok[:, None] & (blk * BLOCK_N + cols[None, :] < N), other=0.0)
        acc += x.to(tl.float32)
        if WRAP_FORM == "if":
            if blk == nb - 1:  # back to column block 0
                ptrs += (1 - nb) * step
                tl.atomic_add(hits_ptr + 5, 1)
            else:
                ptrs += step
        else:
            ptrs += tl.where(blk == nb - 1, (1 - nb) * step, step)
    total = tl.sum(acc, axis=1)
    if EARLY_RETURN:
        if tl.load(modes + 2) == 3:  # nothing more to do for this program (fused MoE's expert -1)
            tl.store(stats_ptr + rows * 2, -total, mask=row_ok)
            tl.atomic_add(hits_ptr + 4, 1)
            return
    # the shift, computed in a branch, is used by the loop below
    if tl.load(modes + 1) % 2 == 1:
        shift = total / N
        tl.store(stats_ptr + rows * 2, shift, mask=row_ok)
    else:
        shift = tl.zeros_like(total)
        tl.store(stats_ptr + rows * 2, total, mask=row_ok)
    # second pass over a data-dependent number of column blocks
    n = tl.load(counts_ptr + pid)
    split = tl.load(modes + 3) * N // 3
    pa = a_ptr + (rows[:, None].to(STEP) * stride_am + cols[None, :] * stride_an)
    a_step = BLOCK_N * stride_an
    sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
    if USE_WHILE:
        j = 0
        while j < n:
            src, pa, sq = _second_pass_block(src, pa, sq, j, shift, rows, cols, row_ok, split, out_ptr, hits_ptr, N,
                                             stride_om, stride_on, step, a_step, BLOCK_N, BLEND)
            j += 1
    else:
        for j in range(0, n):
            src, pa, sq = _second_pass_block(src, pa, sq, j, shift, rows, cols, row_ok, split, out_ptr, hits_ptr, N,
                                             stride_om, stride_on, step, a_step, BLOCK_N, BLEND)
    tl.store(stats_ptr + rows * 2 + 1, sq, mask=row_ok)


def reference(a_ptr, b_ptr, modes_ptr, counts_ptr, M, N, BLOCK_M, BLOCK_N, WRAP_FORM, EARLY_RETURN, BLEND, **_):
    """The same per-program walk in float64 (sums in any order), integers exact."""
    import torch
    a, b = a_ptr.double(), b_ptr.double()
    out = torch.zeros(M, N, dtype=torch.float64)
    stats = torch.zeros(M, 2, dtype=torch.float64)
    hits = torch.zeros(8, dtype=torch.int32)
    for p in range(-(-M // BLOCK_M)):
        which, how, skip, mix = (int(v) for v in modes_ptr[p])
        rows = slice(p * BLOCK_M, min(M, (p + 1) * BLOCK_M))
        src = b if which in (1, 3) else a
        hits[which] += 1
        hits[5] += WRAP_FORM == "if"
        total = src[rows].sum(1)
        if EARLY_RETURN and skip == 3:
            stats[rows, 0] = -total
            hits[4] += 1
            continue
        shift = total / N if how % 2 == 1 else torch.zeros_like(total)
        stats[rows, 0] = shift if how % 2 == 1 else total
        n = int(counts_ptr[p])
        width = min(N, n * BLOCK_N)
        x = src[rows, :width].clone()
        if BLEND:
            split = mix * N // 3
            x[:, :split] = a[rows, :min(split, width)]
        x = x - shift[:, None]
        out[rows, :width] = x
        stats[rows, 1] = (x * x).sum(1)
        hits[6] += n
    return out.float(), stats.float(), hits
