#!/usr/bin/env python3
"""Hand-minimised repro: on CDNA3 (gfx942), tl.dot_scaled with an mxfp4 (e2m1) operand and 16-element scale groups applies only the first scale of each 32 to the fp4 side.

One `tl.dot_scaled(a, a_scale, "e2m1", b, b_scale, "e4m3")`, M = N = 16, K = 32, e8m0 scales with K // 16 = 2
columns (16-element groups, which Triton 3.9 accepts for dot_scaled). On gfx942, which has no MX instructions,
Triton decomposes the dot: `amdg.scaled_upcast_fp4` and `amdg.scaled_upcast_fp8` upcast each side to bf16 with
its scale broadcast along K, then one bf16 MFMA. The TTGIR is right (the scale is broadcast 16 per column), but the
fp4 upcast's software path (`ScaledUpcastToLLVM.cpp`) takes one scale for each group of 8 fp4 values a lane holds,
from the group's first register; with the MFMA operand layout the 8 values of a lane are K = 4q..4q+3 and
16+4q..16+4q+3, so the scale of column 1 is never applied (in the LLVM IR it only feeds the NaN check). The fp8
side converts both scales and is right. 32-element groups are unaffected: both halves share one scale.

The check needs no AMD GPU: two runs whose `a_scale` differ only in column 1 must give different products. On an
AMD GPU it launches the kernel; elsewhere it compiles for gfx942 and runs the LLVM IR on the CPU executor of
gfxhound, the fuzzer that found this (`pip install -e .` in its repository). It prints which grouping the result
follows. Exit 0 = right, 1 = the second scale group ignored (or another wrong result), 125 = cannot test (a
release before 3.8.0 rejects 16-element groups).
"""
import sys

try:
    import torch
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"cannot test: {exc}")
    sys.exit(125)

M, N, K = 16, 16, 32
FP4 = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], dtype=torch.float64)


@triton.jit
def kernel(a, a_scale, b, b_scale, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m, offs_n = tl.arange(0, M), tl.arange(0, N)
    offs_h, offs_k, offs_s = tl.arange(0, K // 2), tl.arange(0, K), tl.arange(0, K // 16)
    x = tl.load(a + offs_m[:, None] * (K // 2) + offs_h[None, :])
    xs = tl.load(a_scale + offs_m[:, None] * (K // 16) + offs_s[None, :])
    y = tl.load(b + offs_k[:, None] * N + offs_n[None, :])
    ys = tl.load(b_scale + offs_n[:, None] * (K // 16) + offs_s[None, :])
    acc = tl.dot_scaled(x, xs, "e2m1", y, ys, "e4m3", tl.zeros([M, N], tl.float32))
    tl.store(out + offs_m[:, None] * N + offs_n[None, :], acc)


def reference(a, a_scale, b, b_scale, group_a=16):
    """The product as tl.dot_scaled defines it (float64), the fp4 side's scales grouped by `group_a`."""
    x = torch.empty(M, K, dtype=torch.float64)
    x[:, 0::2], x[:, 1::2] = FP4[(a & 15).long()], FP4[(a >> 4).long()]
    x = x * 2.0 ** (a_scale.long()[:, torch.arange(K) // group_a] - 127)
    y = b.view(torch.float8_e4m3fn).double() * 2.0 ** (b_scale.long()[:, torch.arange(K) // 16].T - 127)
    return x @ y


def run(args):
    """The kernel's output: on an AMD GPU, or compiled for gfx942 and run on gfxhound's CPU executor."""
    out = torch.zeros(M, N)
    if torch.cuda.is_available() and torch.version.hip:
        dev = [t.cuda() for t in args] + [out.cuda()]
        kernel[(1,)](*dev, M=M, N=N, K=K)
        return dev[-1].cpu()
    try:
        from gfxhound import compat
        from gfxhound.oracle.emulate.launch import EmulatedKernel
    except ImportError as exc:
        print(f"cannot test: no AMD GPU, and gfxhound's executor is not importable ({exc})")
        sys.exit(125)
    spec = [{"name": n, "kind": "ptr", "type": t, "value": v.numel() * v.element_size()}
            for n, t, v in zip(("a", "a_scale", "b", "b_scale", "out"), ("*u8", "*u8", "*fp8e4nv", "*u8", "*fp32"),
                               args + [out])]
    spec += [{"name": n, "kind": "constexpr", "value": v} for n, v in (("M", M), ("N", N), ("K", K))]
    compiled = compat.compile_for_amd(kernel, spec, "gfx942", {"num_warps": 4})
    EmulatedKernel(compiled, "gfx942", [0, 1, 2, 3, 4])[(1,)](*[t.view(torch.uint8) if t.dtype != torch.float32 else t
                                                                  for t in args], out)
    return out


def main():
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(0, 256, (M, K // 2), generator=gen, dtype=torch.uint8)
    a_scale = torch.randint(124, 129, (M, K // 16), generator=gen, dtype=torch.uint8)
    a_scale[:, 1] = a_scale[:, 0] + 1  # column 1 scales K 16..31 by twice column 0's factor
    b = torch.randn(K, N, generator=gen).clamp(-8, 8).to(torch.float8_e4m3fn).view(torch.uint8)
    b_scale = torch.randint(124, 129, (N, K // 16), generator=gen, dtype=torch.uint8)
    try:
        got = run([a, a_scale, b, b_scale]).double()
    except triton.CompilationError as exc:  # before 3.8.0: "lhs_scale must be a tensor of shape [..., 16, 1]"
        print(f"cannot test: triton {triton.__version__} rejects the kernel: {str(exc).strip().splitlines()[-1]}")
        return 125
    right, first_only = reference(a, a_scale, b, b_scale), reference(a, a_scale, b, b_scale, group_a=32)
    print(f"triton {triton.__version__}: largest difference from the product with 16-element groups "
          f"{(got - right).abs().max().item():.4g}, from the product with only column 0 of a_scale "
          f"{(got - first_only).abs().max().item():.4g}")
    if torch.allclose(got, right, rtol=1e-5, atol=1e-3):
        print("right: each 16-element group has its own scale")
        return 0
    print("wrong: " + ("a_scale's second column is ignored (the fp4 side is scaled as if by 32-element groups)"
                       if torch.allclose(got, first_only, rtol=1e-5, atol=1e-3) else "another wrong result"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
