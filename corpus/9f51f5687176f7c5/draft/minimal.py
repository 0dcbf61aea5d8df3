#!/usr/bin/env python3
"""tl.dot_scaled with e8m0 scales in groups of 16 (scale tensors [M, K // 16] and [N, K // 16], which
`deduce_scale_factor` accepts) on gfx950.

On an AMD GPU (with a ROCm build of torch) the script runs the kernel and checks every element against the same
product computed with torch. Without one it needs only triton: it compiles the kernel for gfx950 and gfx942 and
reads the TTGIR. On gfx942 the scaled dot is decomposed and every scale is multiplied in (arith.mulf); on gfx950
the TTGIR keeps `tt.dot_scaled` on an MFMA encoding with the [32, 8] scale tensors, which lowers to
v_mfma_scale_f32_32x32x64_f8f6f4: that instruction applies one e8m0 scale per 32 K elements, so 16-element groups
cannot be honoured. Exit 1 = the bug is present, 0 = absent, 125 = cannot test here.
"""
import subprocess
import sys

M = N = 32
K = 128
G = 16  # elements per scale

try:
    import triton
    import triton.language as tl
except Exception as exc:  # noqa: BLE001 - no Triton here: this Python cannot test
    print(f"cannot test: {type(exc).__name__}: {exc}")
    sys.exit(125)


@triton.jit
def scaled_dot(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
               K: tl.constexpr, G: tl.constexpr):
    m, n, k, g = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K), tl.arange(0, K // G)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    a_scale = tl.load(a_scale_ptr + m[:, None] * (K // G) + g[None, :])
    b_scale = tl.load(b_scale_ptr + n[:, None] * (K // G) + g[None, :])
    tl.store(out_ptr + m[:, None] * N + n[None, :], tl.dot_scaled(a, a_scale, "e4m3", b, b_scale, "e4m3"))


def on_amd_gpu(torch):
    gen = torch.Generator().manual_seed(0)
    a = (torch.randn(M, K, generator=gen) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(K, N, generator=gen) * 2).to(torch.float8_e4m3fn)
    a_scale = torch.randint(124, 131, (M, K // G), generator=gen, dtype=torch.uint8)
    b_scale = torch.randint(124, 131, (N, K // G), generator=gen, dtype=torch.uint8)
    want = (a.double() * torch.repeat_interleave(2.0 ** (a_scale.double() - 127), G, 1)) @ \
        (b.double() * torch.repeat_interleave(2.0 ** (b_scale.double() - 127), G, 1).T)
    out = torch.zeros(M, N, dtype=torch.float32, device="cuda")
    scaled_dot[(1,)](a.cuda(), a_scale.cuda(), b.cuda(), b_scale.cuda(), out, M=M, N=N, K=K, G=G)
    err = float((out.cpu().double() - want).abs().max())
    print(f"max |out - reference| = {err:.4g} (reference max {float(want.abs().max()):.4g})")
    return 1 if err > 1e-2 * float(want.abs().max()) else 0


def ttgir(arch):
    """The kernel's TTGIR for `arch` (run in a child process: an abort in the compiler ends only the child)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp8e4nv", "b_scale_ptr": "*u8",
                 "out_ptr": "*fp32", "M": "constexpr", "N": "constexpr", "K": "constexpr", "G": "constexpr"}
    src = ASTSource(scaled_dot, signature, {"M": M, "N": N, "K": K, "G": G})
    return triton.compile(src, target=GPUTarget("hip", arch, 64)).asm["ttgir"]


def read(arch):
    child = subprocess.run([sys.executable, __file__, "--ttgir", arch], capture_output=True, text=True, timeout=600)
    if child.returncode != 0:
        lines = [line for line in child.stderr.splitlines() if line.strip()]
        return None, f"{arch}: cannot test: {(lines[-1:] or [f'exit {child.returncode}'])[0].strip()[:200]}"
    return child.stdout, ""


def main():
    try:
        import torch
        if torch.cuda.is_available() and getattr(torch.version, "hip", None):
            return on_amd_gpu(torch)
    except ImportError:
        pass
    text950, why = read("gfx950")
    if text950 is None:
        print(why)
        return 125
    scaled = [line for line in text950.splitlines() if "tt.dot_scaled" in line]
    scales_16 = f"tensor<{M}x{K // G}xi8"
    kept = [line for line in scaled if scales_16 in line and "amd_mfma" in text950]
    text942, _ = read("gfx942")
    if text942 is not None:
        print(f"gfx942: {'the TTGIR has no tt.dot_scaled (decomposed: the scales are applied before a plain dot)' if 'tt.dot_scaled' not in text942 else 'the TTGIR keeps tt.dot_scaled'}")
    if kept:
        print(f"gfx950: the TTGIR keeps tt.dot_scaled on an MFMA encoding with {scales_16}> scales (one e8m0 scale "
              f"per {G} K elements); it lowers to v_mfma_scale_f32_32x32x64_f8f6f4, whose scales cover 32 K elements "
              "each, so the 16-element groups are not honoured")
        print("bug present")
        return 1
    print(f"not reproduced: gfx950's TTGIR {'has no tt.dot_scaled' if not scaled else 'does not keep the 16-group scales'}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ttgir"]:
        print(ttgir(sys.argv[2]))
        sys.exit(0)
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - anything else is not the bug
        said = str(exc).strip().splitlines()
        print(f"cannot test: {type(exc).__name__}: {said[-1][:200] if said else ''}")
        sys.exit(125)
