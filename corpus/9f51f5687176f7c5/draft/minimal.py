#!/usr/bin/env python3
"""tl.dot_scaled with e8m0 scales in groups of 16 (scale tensors [M, K // 16] and [N, K // 16], which the frontend's
deduce_scale_factor accepts) on gfx950.

On a gfx950 GPU (with a ROCm build of torch) the script runs the kernel and compares every element with the same
product computed by torch in float64. Anywhere else it needs only triton: it compiles the kernel for gfx950 with
16-element and with 32-element scale groups and compares the MFMA instructions of the two. The CDNA4 scaled MFMA
(v_mfma_scale_f32_*_f8f6f4) applies one e8m0 scale per 32 K elements; when the 16-group kernel is the same
sequence of them as the 32-group kernel, half of its scales cannot be applied.
Exit 1 = the bug is present, 0 = absent (right results, or the compile rejects 16-element groups), 125 = cannot
test here.
"""
import re
import subprocess
import sys

M = N = 32
K = 128

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


def run_on_gpu():
    """(child process) Run the 16-group kernel on the GPU and compare with torch; exit 1 wrong, 0 right."""
    import torch
    gen, g = torch.Generator().manual_seed(0), 16
    a = (torch.randn(M, K, generator=gen) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(K, N, generator=gen) * 2).to(torch.float8_e4m3fn)
    a_scale = torch.randint(124, 131, (M, K // g), generator=gen, dtype=torch.uint8)
    b_scale = torch.randint(124, 131, (N, K // g), generator=gen, dtype=torch.uint8)
    want = (a.double() * torch.repeat_interleave(2.0 ** (a_scale.double() - 127), g, 1)) @ \
        (b.double() * torch.repeat_interleave(2.0 ** (b_scale.double() - 127), g, 1).T)
    out = torch.zeros(M, N, dtype=torch.float32, device="cuda")
    scaled_dot[(1,)](a.cuda(), a_scale.cuda(), b.cuda(), b_scale.cuda(), out, M=M, N=N, K=K, G=g)
    err, size = float((out.cpu().double() - want).abs().max()), float(want.abs().max())
    print(f"max |out - reference| = {err:.4g} (reference max {size:.4g})")
    return 0 if err <= 1e-2 * size else 1     # a NaN error is not <= anything: wrong


def mfma_sequence(g):
    """(child process) Print the gfx950 assembly's v_mfma instructions for scale groups of `g`."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp8e4nv", "b_scale_ptr": "*u8",
                 "out_ptr": "*fp32", "M": "constexpr", "N": "constexpr", "K": "constexpr", "G": "constexpr"}
    src = ASTSource(scaled_dot, signature, {"M": M, "N": N, "K": K, "G": g})
    asm = triton.compile(src, target=GPUTarget("hip", "gfx950", 64)).asm["amdgcn"]
    print("\n".join(line.split()[0] for line in asm.splitlines() if line.strip().startswith("v_mfma")))
    return 0


def child(*args):
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def on_gfx950():
    try:
        import torch
        return bool(torch.cuda.is_available() and getattr(torch.version, "hip", None)
                    and torch.cuda.get_device_properties(0).gcnArchName.startswith("gfx950"))
    except Exception:  # noqa: BLE001 - no usable torch: compile only
        return False


def main():
    if on_gfx950():
        rc, out, err = child("--gpu")
        print(out.strip() or err.strip().splitlines()[-1:])
        return rc if rc in (0, 1) else 125
    seqs = {}
    for g in (16, 32):
        rc, out, err = child("--mfma", str(g))
        if rc != 0:
            last = ([line for line in err.splitlines() if line.strip()] or [f"exit {rc}"])[-1].strip()
            if g == 16 and re.search(r"scale", last, re.I):
                print(f"gfx950 rejects 16-element scale groups: {last[:200]}")
                return 0
            print(f"cannot test: gfx950, groups of {g}: {last[:200]}")
            return 125
        seqs[g] = out.split()
    for g in (16, 32):
        names = sorted(set(seqs[g]))
        print(f"gfx950, scale groups of {g}: {len(seqs[g])} x {', '.join(names) or 'no MFMA'}")
    scaled = seqs[16] and all(name.startswith("v_mfma_scale_f32_") for name in seqs[16])
    if scaled and seqs[16] == seqs[32]:
        blocks = sum(int(re.search(r"x(\d+)_f8f6f4", n).group(1)) for n in seqs[16]) // 32
        print(f"the 16-group kernel is the 32-group kernel's MFMA sequence: one scale per 32 K elements, "
              f"{blocks} scales a row applied where {K // 16} are given")
        print("bug present")
        return 1
    print("not reproduced: the 16-group kernel does not use the 32-group kernel's scaled MFMA sequence")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--gpu"]:
        sys.exit(run_on_gpu())
    if sys.argv[1:2] == ["--mfma"]:
        sys.exit(mfma_sequence(int(sys.argv[2])))
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - anything else is not the bug
        said = str(exc).strip().splitlines()
        print(f"cannot test: {type(exc).__name__}: {said[-1][:200] if said else ''}")
        sys.exit(125)
