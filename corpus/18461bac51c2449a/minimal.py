#!/usr/bin/env python3
"""Hand-minimised repro: `tl.dot_scaled` ignores the scale of a bf16 (or fp16) operand on AMD targets

With `x` (bf16 [32, 64]) and `y` (bf16 [64, 32]) all ones and every e8m0 scale of `x` 128 (= 2.0),
`tl.dot_scaled(x, x_scale, "bf16", y, None, "bf16")` is 2 * 64 = 128 in every element: Triton's interpreter gives
128, and the NVIDIA backend's TTGIR multiplies `x` by the scale before the `tt.dot`. Compiled for an AMD target
with Triton 3.9.0 (gfx90a, gfx942, gfx950, gfx1100, gfx1201 and gfx1250 alike) the scale is never loaded: the
TTGIR has a plain `tt.dot` of `x` and `y`, so every element would be 64 (read from the TTGIR; not run on an AMD
GPU). An fp16 operand with a scale loses it the same way.

Expected: the TTGIR loads `x`, `x_scale` and `y` (3 loads) and multiplies `x` by its scale; run, every element is
128.0.

On an AMD GPU (with a ROCm build of torch) the script runs the kernel and checks every element. Without one it
needs only triton: it compiles the kernel for gfx90a, gfx942, gfx950 and gfx1250 (or the targets given as
arguments, e.g. `python minimal.py gfx1100 gfx1201`) and reads the TTGIR: three loads and an `arith.mulf` (the
kernel's only float multiply: x times the broadcast scale) when the scale is applied, two loads and no multiply when
it is dropped. Exit 1 = the scale is dropped (on a target named), 0 = it is loaded and multiplied in on every target
that compiles the kernel, 125 = cannot test (no target compiles it, or anything else goes wrong).
"""
import re
import subprocess
import sys

WAVE = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1250": 32, "gfx1100": 32, "gfx1201": 32}  # wave size
DEFAULT = ("gfx90a", "gfx942", "gfx950", "gfx1250")
M = N = 32
K = 64

try:
    import triton
    import triton.language as tl
except Exception as exc:  # noqa: BLE001 - no Triton here: this Python cannot test
    print(f"cannot test: {type(exc).__name__}: {exc}")
    sys.exit(125)


@triton.jit
def scaled_dot(x_ptr, x_scale_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k, g = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K), tl.arange(0, K // 32)
    x = tl.load(x_ptr + m[:, None] * K + k[None, :])
    x_scale = tl.load(x_scale_ptr + m[:, None] * (K // 32) + g[None, :])
    y = tl.load(y_ptr + k[:, None] * N + n[None, :])
    tl.store(out_ptr + m[:, None] * N + n[None, :], tl.dot_scaled(x, x_scale, "bf16", y, None, "bf16"))


def on_amd_gpu(torch):
    x = torch.ones(M, K, dtype=torch.bfloat16, device="cuda")
    x_scale = torch.full((M, K // 32), 128, dtype=torch.uint8, device="cuda")
    y = torch.ones(K, N, dtype=torch.bfloat16, device="cuda")
    out = torch.zeros(M, N, dtype=torch.float32, device="cuda")
    scaled_dot[(1,)](x, x_scale, y, out, M=M, N=N, K=K)
    values = sorted(set(out.flatten().tolist()))
    print(f"out: {values if len(values) > 1 else f'every element {values[0]}'}, expected every element {2.0 * K}")
    return 0 if values == [2.0 * K] else 1


def ttgir(arch):
    """The kernel's TTGIR for `arch` (run in a child process: an abort in the compiler ends only the child)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"x_ptr": "*bf16", "x_scale_ptr": "*u8", "y_ptr": "*bf16", "out_ptr": "*fp32",
                 "M": "constexpr", "N": "constexpr", "K": "constexpr"}
    src = ASTSource(scaled_dot, signature, {"M": M, "N": N, "K": K})
    return triton.compile(src, target=GPUTarget("hip", arch, WAVE[arch])).asm["ttgir"]


def statically(arch):
    """(1 when the TTGIR for `arch` never loads the scale, 0 when it does, 125 when it does not compile; the line
    printed)."""
    child = subprocess.run([sys.executable, __file__, "--ttgir", arch], capture_output=True, text=True, timeout=600)
    if child.returncode != 0:  # MLIR's own diagnostic, else the last line: why this release cannot test `arch`
        lines = [line for line in child.stderr.splitlines() if line.strip()]
        errors = [line.split("error: ", 1)[1] for line in lines
                  if "error: " in line and "Failures have been detected" not in line]
        return 125, f"{arch}: cannot test: {(errors or lines[-1:] or [f'exit {child.returncode}'])[0].strip()[:200]}"
    loads = len(re.findall(r"= (?:tt\.load|amdgpu?\.buffer_load) ", child.stdout))
    multiplies = len(re.findall(r"= arith\.mulf ", child.stdout))  # the kernel has no float multiply of its own
    if loads == 3 and multiplies:
        return 0, (f"{arch}: the TTGIR loads x, x_scale and y (3 loads) and multiplies x by the scale (arith.mulf) "
                   "before the dot")
    if loads == 3:
        return 125, f"{arch}: cannot test: the TTGIR loads the scale but has no arith.mulf: this script cannot tell"
    return 1 if loads == 2 else 125, (f"{arch}: the TTGIR has {loads} loads, 3 expected: the scale is never loaded, "
                                      f"so every element would be x @ y = {float(K)} where {2.0 * K} is expected")


def main():
    targets = sys.argv[1:] or list(DEFAULT)
    if any(t not in WAVE for t in targets):
        print(f"cannot test: targets must be among {', '.join(WAVE)}")
        return 125
    try:
        import torch
        if torch.cuda.is_available() and getattr(torch.version, "hip", None):
            return on_amd_gpu(torch)
    except ImportError:
        pass
    results, said = [], []
    for arch in targets:
        rc, line = statically(arch)
        print(line)
        results.append(rc)
        said.append(line)
    if 1 in results:
        dropped = [t for t, r in zip(targets, results) if r == 1]
        print(f"bug present: the scale is dropped for {', '.join(dropped)}")
        return 1
    if 0 in results:
        print("not reproduced: every target that compiles the kernel loads the scale and multiplies x by it")
        return 0
    print(f"cannot test: no target compiles the kernel ({said[0].replace(': cannot test', '')})")
    return 125


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ttgir"]:
        print(ttgir(sys.argv[2]))
        sys.exit(0)
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - anything but the dropped scale is not the bug
        said = str(exc).strip().splitlines()
        print(f"cannot test: {type(exc).__name__}: {said[-1][:200] if said else ''}")
        sys.exit(125)
