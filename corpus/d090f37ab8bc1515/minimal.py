#!/usr/bin/env python3
"""Hand-minimised repro: a shared-memory race between the two warp groups of the chained-dot block ping-pong (gfx942, num_warps=8, num_stages=4).

This flash-attention loop (dot, max, exp2, sum, dot), compiled for gfx942 with num_warps=8 and num_stages=4, gets
the chained-dot ping-pong: waves 4-7 execute one extra `s_barrier` before the loop (`amdg.cond_barrier`) and waves
0-3 one after it, so for the whole loop the k-th barrier of one group meets the (k+1)-th of the other. The two dots
have different layouts (`warpsPerCTA` [8, 1] and [2, 4]), so the loop converts `alpha[:, None]` through shared
memory (`ds_write_b32` / `s_barrier` / `ds_read_b32 ... offset:32768`) and, one barrier later in the same
iteration, stores `p` for the second dot at the same bytes (`s_barrier` / `ds_write_b16 ... offset:32768`). One
barrier apart, the first instruction after a barrier is the `alpha` read in one group and the `p` write in the other:
nothing orders them (a write-after-read race). Without ping-pong (`TRITON_HIP_USE_BLOCK_PINGPONG=0`), with
num_stages=3 or with num_warps=4 there is no offset and no race.

Without an AMD GPU the kernel is compiled for gfx942 and its LLVM IR run by gfxhound's CPU executor (this
repository: `pip install -e .`), which runs each wave separately between barriers and pairs their k-th barriers
as the hardware counts them; its race check names the two accesses. Under an interpreter without torch (an older
Triton's venv) it compiles here and runs the IR under $GFXHOUND_EMULATOR_PYTHON. On an AMD GPU it runs the kernel
200 times and compares with torch (the race is latent: it need not show). Exit 0 = no race, 1 = race (or wrong
result), 125 = cannot test.
"""
import json
import os
import subprocess
import sys
import tempfile
import types

try:
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"cannot test: {exc}")
    sys.exit(125)

BLOCK_M, BLOCK_N, D, N_CTX, PROGRAMS = 64, 64, 128, 1024, 2
OPTIONS = {"num_warps": 8, "num_stages": 4}


@triton.jit
def attn(Q, K, V, O, N_CTX, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + (start + offs_n)[None, :] * D + offs_d[:, None])
        qk = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + (start + offs_n)[:, None] * D + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


def tensors(torch, device):
    torch.manual_seed(0)
    m = PROGRAMS * BLOCK_M
    q = (torch.randn(m, D) * 0.5).half().to(device)
    k = (torch.randn(N_CTX, D) * 0.5).half().to(device)
    v = torch.randn(N_CTX, D).half().to(device)
    s = q.float() @ k.float().T
    p = torch.exp2(s - s.max(1, keepdim=True).values)
    return q, k, v, torch.zeros(m, D, dtype=torch.float16, device=device), (p @ v.float()) / p.sum(1, keepdim=True)


def on_amd_gpu(torch):
    q, k, v, out, ref = tensors(torch, "cuda")
    for _ in range(200):
        attn[(PROGRAMS,)](q, k, v, out, N_CTX, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D=D, **OPTIONS)
        wrong = int(((out.float() - ref).abs() > 0.05).sum())
        if wrong:
            print(f"{wrong} of {out.numel()} outputs wrong")
            return 1
    print("200 runs correct (a latent race need not show on hardware)")
    return 0


def compiled_ir():
    """(LLVM IR, metadata) of the kernel for gfx942, compiled with this interpreter's Triton (no GPU), the pointer
    arguments 16-byte aligned as the runtime specialises them."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "N_CTX": "i32",
                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "D": "constexpr"}
    constexprs = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "D": D}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}
    try:
        src = ASTSource(attn, signature, constexprs, attrs)
    except TypeError:  # releases whose ASTSource takes no attrs
        src = ASTSource(attn, signature, constexprs)
    c = triton.compile(src, target=GPUTarget("hip", "gfx942", 64), options=OPTIONS)
    md = c.metadata
    meta = {k: getattr(md, k, 0) or 0 for k in ("name", "num_warps", "shared", "warp_size", "global_scratch_size",
                                                 "profile_scratch_size")}
    meta["pingpong"] = "cond_barrier" in c.asm["ttgir"]
    return c.asm["llir"], meta


def emulate(llir, meta):
    """Run the IR on gfxhound's executor (needs torch and numpy here)."""
    import torch
    try:
        from gfxhound.oracle.emulate.launch import EmulatedKernel
        from gfxhound.oracle.emulate.memory import EmulatedRace
    except ImportError as exc:
        print(f"cannot test without an AMD GPU: gfxhound's executor is not importable ({exc})")
        return 125
    q, k, v, out, ref = tensors(torch, "cpu")
    compiled = types.SimpleNamespace(asm={"llir": llir}, metadata=types.SimpleNamespace(**meta))
    try:
        EmulatedKernel(compiled, "gfx942", range(5))[(PROGRAMS, 1, 1)](q, k, v, out, N_CTX)
    except EmulatedRace as exc:
        print(f"LDS race (ping-pong {'on' if meta['pingpong'] else 'off'}): {exc}")
        return 1
    wrong = int(((out.float() - ref).abs() > 0.05).sum())
    print(f"no race; ping-pong {'on' if meta['pingpong'] else 'off'}; {wrong} of {out.numel()} outputs wrong")
    return 1 if wrong else 0


def main():
    if "--emulate-ir" in sys.argv:  # the second half of an older release's check: IR and metadata from a file
        data = json.load(open(sys.argv[sys.argv.index("--emulate-ir") + 1]))
        return emulate(data["llir"], data["meta"])
    try:
        import torch
        if torch.cuda.is_available() and getattr(torch.version, "hip", None) \
                and os.environ.get("GFXHOUND_EMULATE") != "1":
            return on_amd_gpu(torch)
        can_emulate = True
    except ImportError:
        can_emulate = False
    try:
        llir, meta = compiled_ir()
    except Exception as exc:  # noqa: BLE001 - a release that cannot compile this cannot test it
        print(f"cannot test: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160]}")
        return 125
    if can_emulate:
        return emulate(llir, meta)
    python = os.environ.get("GFXHOUND_EMULATOR_PYTHON")
    if not python:
        print("cannot test: no torch here; set GFXHOUND_EMULATOR_PYTHON to a Python with gfxhound and torch")
        return 125
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"llir": llir, "meta": meta}, f)
    run = subprocess.run([python, os.path.abspath(__file__), "--emulate-ir", f.name], capture_output=True, text=True,
                         timeout=600)
    os.unlink(f.name)
    print(run.stdout.strip() or run.stderr.strip()[-300:])
    return run.returncode if run.returncode in (0, 1) else 125


if __name__ == "__main__":
    sys.exit(main())
