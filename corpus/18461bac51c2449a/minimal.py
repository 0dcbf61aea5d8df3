#!/usr/bin/env python3
"""Hand-minimised repro: `tl.dot_scaled` ignores the scale of a bf16 (or fp16) operand on AMD targets.

With `x` (bf16 [32, 64]) and `y` (bf16 [64, 32]) all ones and every e8m0 scale of `x` 128 (= 2.0),
`tl.dot_scaled(x, x_scale, "bf16", y, None, "bf16")` must be 2 * 64 = 128 in every element: Triton's interpreter and
the NVIDIA backend give 128 (their TTGIR multiplies `x` by the scale before the `tt.dot`). Compiled for an AMD
target the scale is never loaded: the TTGIR has a plain `tt.dot` of `x` and `y`, which gives 64.

On an AMD GPU the script runs the kernel; without one it compiles for gfx942 and gfx950 and counts the loads in the
TTGIR (three when the scale is read, two when it is dropped). Exit 0 = correct, 1 = bug present, 125 = cannot test.
"""
import re
import sys

try:
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"cannot test: {exc}")
    sys.exit(125)

M = N = 32
K = 64


@triton.jit
def scaled_dot(x_ptr, x_scale_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k, g = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K), tl.arange(0, K // 32)
    x = tl.load(x_ptr + m[:, None] * K + k[None, :])
    x_scale = tl.load(x_scale_ptr + m[:, None] * (K // 32) + g[None, :])
    y = tl.load(y_ptr + k[:, None] * N + n[None, :])
    tl.store(out_ptr + m[:, None] * N + n[None, :], tl.dot_scaled(x, x_scale, "bf16", y, None, "bf16"))


def on_amd_gpu():
    import torch
    x = torch.ones(M, K, dtype=torch.bfloat16, device="cuda")
    x_scale = torch.full((M, K // 32), 128, dtype=torch.uint8, device="cuda")
    y = torch.ones(K, N, dtype=torch.bfloat16, device="cuda")
    out = torch.zeros(M, N, dtype=torch.float32, device="cuda")
    scaled_dot[(1,)](x, x_scale, y, out, M=M, N=N, K=K)
    got = out[0, 0].item()
    print(f"out[0, 0] = {got}, expected {2.0 * K}")
    return 0 if (out == 2.0 * K).all() else 1


def statically(arch):
    """1 when the TTGIR for `arch` never loads the scale, 0 when it does, 125 when it does not compile."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"x_ptr": "*bf16", "x_scale_ptr": "*u8", "y_ptr": "*bf16", "out_ptr": "*fp32",
                 "M": "constexpr", "N": "constexpr", "K": "constexpr"}
    try:
        src = ASTSource(scaled_dot, signature, {"M": M, "N": N, "K": K})
        ttgir = triton.compile(src, target=GPUTarget("hip", arch, 64)).asm["ttgir"]
    except Exception as exc:  # noqa: BLE001 - a release that cannot compile this cannot test it
        print(f"{arch}: cannot test: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160]}")
        return 125
    loads = len(re.findall(r"= (?:tt\.load|amdgpu?\.buffer_load) ", ttgir))
    if loads == 3:
        print(f"{arch}: the TTGIR loads x, x_scale and y (3 loads): the scale reaches the dot")
        return 0
    print(f"{arch}: the TTGIR has {loads} loads, 3 expected: the scale is never loaded, so every element is "
          f"x @ y = {float(K)} where {2.0 * K} is expected")
    return 1 if loads == 2 else 125


def main():
    try:
        import torch
        if torch.cuda.is_available() and getattr(torch.version, "hip", None):
            return on_amd_gpu()
    except ImportError:
        pass
    results = [statically(arch) for arch in ("gfx942", "gfx950")]
    if 1 in results:
        return 1
    return 0 if 0 in results else 125


if __name__ == "__main__":
    sys.exit(main())
