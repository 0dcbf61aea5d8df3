#!/usr/bin/env python3
"""Hand-minimised repro: AMD stream pipeliner, a loop-carried scalar loses its last update when the K-loop runs no
more iterations than the pipeline peels (num_stages - 1)

`c = s` before a K-loop with a `tl.dot`; inside it, `c = v` with `v` computed before the loop. After the loop
`c == v` whenever the loop ran at least once, so with s = 2 (v = 2 >> 2 = 0) the kernel returns before its stores.
Compiled for an AMD target with num_stages=3 and K = 200, BLOCK_K = 128 (2 iterations), the pipelined loop runs
0 times and the 2 iterations run in the peeled prologue and epilogue: the epilogue updates the accumulator, but the
value compared after the loop is the `scf.for`'s own result for `c`, which is still `s`. So `c != 2` is false and
the kernel stores where it should return. With num_stages=2, or 3 iterations, it returns.

Expected: out[0] stays 0 (the kernel returns). On an AMD GPU (a ROCm build of torch) the script launches the
kernel and checks. Without one it needs only triton: it compiles the kernel for gfx942, gfx950 and gfx90a (or the
targets given as arguments) and reads the TTGIR: the bug is a pipelined loop (its epilogue stages are `scf.if`s
after the `scf.for`) whose result for `c` feeds the `arith.cmpi ne ..., %c2_i32` directly. Exit 1 = bug present
(on a target named), 0 = not, 125 = cannot test.
"""
import re
import subprocess
import sys

WAVE = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1100": 32, "gfx1201": 32, "gfx1250": 32}
DEFAULT = ("gfx942", "gfx950", "gfx90a")
K, BLOCK_K, STAGES = 200, 128, 3

try:
    import triton
    import triton.language as tl
except Exception as exc:  # noqa: BLE001 - no Triton here: this Python cannot test
    print(f"cannot test: {type(exc).__name__}: {exc}")
    sys.exit(125)


@triton.jit
def kernel(a_ptr, b_ptr, out_ptr, K, s, stride_a, stride_b, BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, 32)
    offs_n = tl.arange(0, 16)
    acc = tl.zeros([32, 16], tl.float32)
    v = s >> (s & 31)            # 0 for s = 2
    c = s
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        offs_k = k * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_a + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_b + offs_n[None, :], mask=offs_k[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
        c = v                    # after the loop, c == v whenever the loop ran
    if c != 2:
        return
    tl.store(out_ptr + offs_n, s + tl.zeros([16], tl.int32))
    tl.store(out_ptr + 16 + offs_m[:, None] * 16 + offs_n[None, :], acc)


def on_amd_gpu(torch):
    a = torch.ones(32, K, device="cuda")
    b = torch.ones(K, 16, device="cuda")
    out = torch.zeros(16 + 32 * 16, dtype=torch.int32, device="cuda")
    kernel[(1,)](a, b, out, K, 2, K, 16, BLOCK_K=BLOCK_K, num_stages=STAGES)
    print(f"out[0] = {out[0].item()}, expected 0 (c == 0 after the loop, so the kernel returns)")
    return 1 if out[0].item() else 0


def ttgir(arch):
    """The kernel's TTGIR for `arch` (run in a child process: an abort in the compiler ends only the child)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*i32", "K": "i32", "s": "i32", "stride_a": "i32",
                 "stride_b": "i32", "BLOCK_K": "constexpr"}
    src = ASTSource(kernel, signature, {"BLOCK_K": BLOCK_K})
    return triton.compile(src, target=GPUTarget("hip", arch, WAVE[arch]), options={"num_stages": STAGES}).asm["ttgir"]


def statically(arch):
    """(1 bug, 0 not, 125 cannot test; the line printed) from the TTGIR for `arch`."""
    child = subprocess.run([sys.executable, __file__, "--ttgir", arch], capture_output=True, text=True, timeout=600)
    if child.returncode != 0:
        lines = [line for line in child.stderr.splitlines() if line.strip()]
        return 125, f"{arch}: cannot test: {(lines[-1:] or [f'exit {child.returncode}'])[0].strip()[:200]}"
    text = child.stdout
    loop = re.search(r"(%[\w.]+):\d+ = scf\.for ", text)
    compare = re.search(r"= arith\.cmpi ne, (%[\w.#]+), %c2_i32", text)
    if not loop or not compare:
        return 125, f"{arch}: cannot test: no scf.for or no `c != 2` compare in the TTGIR"
    after = text[loop.end():compare.start()]
    pipelined = "scf.if" in after      # the peeled epilogue stages, between the loop and the compare
    if not pipelined:
        return 125, f"{arch}: cannot test: the loop is not pipelined (no epilogue stage after it)"
    if compare.group(1).startswith(loop.group(1) + "#"):
        return 1, (f"{arch}: `c != 2` reads the pipelined loop's own result ({compare.group(1)}), which is still s "
                   f"when the {-(-K // BLOCK_K)} iterations all run in the peeled stages: the kernel stores where it "
                   "should return")
    return 0, f"{arch}: `c != 2` reads {compare.group(1)}, not the pipelined loop's own result"


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
    results = []
    for arch in targets:
        rc, line = statically(arch)
        print(line)
        results.append(rc)
    if 1 in results:
        print(f"bug present on {', '.join(t for t, r in zip(targets, results) if r == 1)}")
        return 1
    if 0 in results:
        print("not reproduced: the value compared after the loop is not the pipelined loop's stale result")
        return 0
    return 125


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ttgir"]:
        print(ttgir(sys.argv[2]))
        sys.exit(0)
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - anything but the bug is not the bug
        said = str(exc).strip().splitlines()
        print(f"cannot test: {type(exc).__name__}: {said[-1][:200] if said else ''}")
        sys.exit(125)
