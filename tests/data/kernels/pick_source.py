"""A kernel that picks its source pointer per program (a paged-attention prefix's pattern), with parts its compile
crash does not need (an unused helper, a mask, an epilogue flag): the source-level reducer's test input.

On Triton 3.8-3.9 for AMD, the `tl.where` between two pointer tensors in one arm of the `if` crashes
canonicalize-pointers (docs/findings.md); the reducer must keep that and drop the rest."""
import triton
import triton.language as tl


@triton.jit
def _unused_helper(x, y):
    """Not called."""
    return x * y + 1


@triton.jit
def pick(a_ptr, b_ptr, out_ptr, flags_ptr, n, scale, BLOCK: tl.constexpr, EXTRA: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    flag = tl.load(flags_ptr + pid)
    if flag > 0:
        p = a_ptr + offs
    else:
        p = tl.where(flag < -1, b_ptr + offs, a_ptr + offs)
    x = tl.load(p, mask=mask, other=0.0)
    y = x * scale
    if EXTRA:
        y = y + 1.0
    tl.store(out_ptr + offs, y, mask=mask)


def reference(a_ptr, b_ptr, out_ptr, flags_ptr, n, scale, BLOCK, EXTRA, **_):
    import torch
    out = torch.empty_like(a_ptr)
    for p in range(-(-n // BLOCK)):
        s = slice(p * BLOCK, min(n, (p + 1) * BLOCK))
        src = a_ptr if flags_ptr[p] > 0 or flags_ptr[p] >= -1 else b_ptr
        out[s] = src[s] * scale + (1.0 if EXTRA else 0.0)
    return out
