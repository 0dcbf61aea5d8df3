"""Small Triton kernels and a compile-and-emulate helper shared by the executor's tests (test_emulate*.py)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from gfxhound import compat
from gfxhound.executors.llvm_ir.launch import EmulatedKernel

TYPES = {torch.float16: "*fp16", torch.float32: "*fp32", torch.bfloat16: "*bf16", torch.int32: "*i32",
         torch.int8: "*i8", torch.uint8: "*u8", torch.float64: "*fp64"}


def emulate(fn, grid, values, constexprs, arch="gfx942", edit=None, **options):
    """Compile `fn` for `arch` as the runtime would for these values and run it on the executor."""
    args = []
    for name, value in zip(fn.arg_names, list(values) + [None] * len(fn.arg_names)):
        if name in constexprs:
            args.append({"name": name, "kind": "constexpr", "value": constexprs[name]})
        elif isinstance(value, torch.Tensor):
            args.append({"name": name, "kind": "ptr", "type": TYPES[value.dtype],
                         "value": value.numel() * value.element_size()})
        elif isinstance(value, float):
            args.append({"name": name, "kind": "float", "type": "fp32", "value": value})
        else:
            args.append({"name": name, "kind": "int", "type": "i32", "value": value})
    compiled = compat.compile_for_amd(fn, args, arch, dict(options))
    if edit is not None:
        compiled.asm["llir"] = edit(compiled.asm["llir"])
    signature, _, _ = compat.specialise(args)
    keep = [i for i, a in enumerate(a for a in args if a["kind"] != "constexpr") if signature[a["name"]] != "constexpr"]
    EmulatedKernel(compiled, arch, keep)[grid](*values)
    return compiled


@triton.jit
def _masked_add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=1.0)
    b = tl.load(y + offs, mask=mask, other=2.0)
    tl.store(out + offs, a * b + a, mask=mask)


@triton.jit
def _row_sum(x, out, N: tl.constexpr, M: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    v = tl.load(x + rows[:, None] * N + cols[None, :])
    tl.store(out + rows, tl.sum(v, axis=1))
    tl.store(out + M + cols, tl.max(v, axis=0))


@triton.jit
def _dot(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + om[:, None] * K + ok[None, :])
    y = tl.load(b + ok[:, None] * N + on[None, :])
    tl.store(c + om[:, None] * N + on[None, :], tl.dot(x, y))


@triton.jit
def _transpose(x, out, N: tl.constexpr):
    r, c = tl.arange(0, N), tl.arange(0, N)
    v = tl.load(x + r[:, None] * N + c[None, :])
    tl.store(out + r[:, None] * N + c[None, :], tl.trans(v) + 1)


@triton.jit
def _contended_atomics(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0)
    tl.atomic_add(out + (offs % 7), v, mask=offs < n)
    tl.atomic_max(out + 7 + (offs % 3), v, mask=offs < n)


@triton.jit
def _scan_and_early_exit(x, out, limit, N: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= limit:  # a divergent early return, uniform per workgroup
        return
    offs = tl.arange(0, N)
    v = tl.load(x + pid * N + offs)
    tl.store(out + pid * N + offs, tl.cumsum(v, axis=0))


@triton.jit
def _to_fp8(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    tl.store(out + offs, v.to(tl.float8e4b8).to(tl.float32))


@triton.jit
def _to_fp16_rtz(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.load(x + offs).to(tl.float16, fp_downcast_rounding="rtz"))


@triton.jit
def _cast(x, out, N: tl.constexpr, DST: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.load(x + offs).to(DST))
