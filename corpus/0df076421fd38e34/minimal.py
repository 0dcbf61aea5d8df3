#!/usr/bin/env python3
"""Hand-minimised repro: on CDNA3 (gfx942), tl.dot_scaled with an mxfp4 (e2m1) operand and 16-element scale groups applies only the first scale of each 32 to the fp4 side.

e8m0 scales with K // 16 columns on both sides; the fp8 side's are applied right, the fp4 side's second column is
not. Runs the kernel on an
AMD GPU; without one, compiles it for gfx942 and runs the LLVM IR on the CPU executor of gfxhound, the fuzzer that
found this (`pip install -e .` in its repository). Exit 0 = right, 1 = wrong, 125 = cannot test (before 3.8.0
16-element groups are rejected).
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


def scales(raw, fmt):
    """Scale factors: an e8m0 code is a power of two, 2^(code - 127)."""
    assert fmt == "e8m0"
    return 2.0 ** (raw.double() - 127)


def reference(a, a_scale, b, b_scale, fmt, group_a=16):
    """The product as tl.dot_scaled defines it (float64), the fp4 side's scales grouped by `group_a`."""
    x = torch.empty(M, K, dtype=torch.float64)
    x[:, 0::2], x[:, 1::2] = FP4[(a & 15).long()], FP4[(a >> 4).long()]
    x = x * scales(a_scale, fmt)[:, torch.arange(K) // group_a]
    y = b.view(torch.float8_e4m3fn).double() * scales(b_scale, "e8m0")[:, torch.arange(K) // 16].T
    return x @ y


def run(args, fmt):
    """The kernel's output: on an AMD GPU, or compiled for gfx942 and run on gfxhound's CPU executor."""
    out = torch.zeros(M, N)
    if torch.cuda.is_available() and torch.version.hip:
        dev = [t.cuda() for t in typed(args, fmt)] + [out.cuda()]
        kernel[(1,)](*dev, M=M, N=N, K=K)
        return dev[-1].cpu()
    try:
        from gfxhound import compat
        from gfxhound.oracle.emulate.launch import EmulatedKernel
    except ImportError as exc:
        print(f"cannot test: no AMD GPU, and gfxhound's executor is not importable ({exc})")
        sys.exit(125)
    spec = [{"name": n, "kind": "ptr", "type": t, "value": v.numel() * v.element_size()}
            for n, t, v in zip(("a", "a_scale", "b", "b_scale", "out"), (("*u8", scale_type(fmt), "*fp8e4nv", "*u8", "*fp32")),
                               args + [out])]
    spec += [{"name": n, "kind": "constexpr", "value": v} for n, v in (("M", M), ("N", N), ("K", K))]
    compiled = compat.compile_for_amd(kernel, spec, "gfx942", {"num_warps": 4})
    EmulatedKernel(compiled, "gfx942", [0, 1, 2, 3, 4])[(1,)](*args, out)
    return out


def scale_type(fmt):
    return "*u8"


def typed(args, fmt):
    """The tensors as the kernel takes them: the fp8 operand as float8_e4m3fn, codes as uint8."""
    a, a_scale, b, b_scale = args
    return [a, a_scale, b.view(torch.float8_e4m3fn), b_scale]


def check(fmt):
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(0, 256, (M, K // 2), generator=gen, dtype=torch.uint8)
    b = torch.randn(K, N, generator=gen).clamp(-8, 8).to(torch.float8_e4m3fn).view(torch.uint8)
    a_scale = torch.randint(124, 128, (M, K // 16), generator=gen, dtype=torch.uint8)  # e8m0 codes
    a_scale[:, 1] = a_scale[:, 0] + 1  # column 1 one power of two above column 0
    b_scale = torch.randint(124, 129, (N, K // 16), generator=gen, dtype=torch.uint8)  # e8m0 on the fp8 side
    args = [a, a_scale, b, b_scale]
    try:
        got = run(args, fmt).double()
    except triton.CompilationError as exc:  # before 3.8.0: "lhs_scale must be a tensor of shape [..., 16, 1]"
        print(f"{fmt} scales: cannot test: triton {triton.__version__} rejects the kernel: "
              f"{str(exc).strip().splitlines()[-1]}")
        return 125
    right, first_only = reference(*args, fmt), reference(*args, fmt, group_a=32)
    close = (lambda x, y: torch.allclose(x, y, rtol=1e-5, atol=1e-3))
    verdict = ("right" if close(got, right) else "wrong: the fp4 side's second scale column is ignored"
               if close(got, first_only) else "wrong (another way)")
    print(f"{fmt} scales, 16-element groups, triton {triton.__version__}: largest difference from the right product "
          f"{(got - right).abs().max().item():.4g}, from the product with a_scale's column 0 only "
          f"{(got - first_only).abs().max().item():.4g}: {verdict}")
    return 0 if verdict == "right" else 1


def main():
    return check("e8m0")


if __name__ == "__main__":
    sys.exit(main())
