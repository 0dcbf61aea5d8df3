"""NVIDIA (H100, Triton 3.6.0): `acc = tl.abs(tl.dot(a, b, acc))` in a K loop gives wrong values for fp16 and tf32
operands (docs/findings.md). Prints, per configuration, the largest relative error against a float64 reference
and the number of elements off by more than 1% (tf32 without the abs already exceeds 1% on a few small values).
Needs a GPU: `python docs/gpu-repros/abs_accumulator_dot.py`.
"""
import torch, triton, triton.language as tl

@triton.jit
def absacc(a_ptr, b_ptr, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr, ABS: tl.constexpr):
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ok = k * BK + tl.arange(0, BK)
        a = tl.load(a_ptr + om[:, None] * K + ok[None, :], mask=(om < M)[:, None] & (ok < K)[None, :], other=0.0)
        b = tl.load(b_ptr + ok[:, None] * N + on[None, :], mask=(ok < K)[:, None] & (on < N)[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        if ABS:
            acc = tl.abs(acc)
    tl.store(out + om[:, None] * N + on[None, :], acc, mask=(om < M)[:, None] & (on < N)[None, :])

def ref(a, b, BK, ABS):
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64)
    for k0 in range(0, a.shape[1], BK):
        acc = a[:, k0:k0+BK].double() @ b[k0:k0+BK].double() + acc
        if ABS: acc = acc.abs()
    return acc

torch.manual_seed(0)
for dt, M, N, K, BM, BN, BK, nw in ((torch.float16, 29, 48, 221, 64, 16, 128, 8), (torch.float32, 64, 128, 128, 64, 128, 64, 8), (torch.float32, 51, 11, 37, 64, 32, 32, 16)):
    a = torch.randn(M, K, dtype=dt); b = torch.randn(K, N, dtype=dt)
    for prec in (("ieee",) if dt == torch.float16 else ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")):
        for ABS in (False, True):
            for ns in (1, 3):
                for dbg in ((False, True) if dt == torch.float16 else (False,)):
                    o = torch.full((M, N), float("nan"), device="cuda")
                    try:
                        absacc[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a.cuda(), b.cuda(), o, M, N, K, BM, BN, BK, prec, ABS, num_warps=nw, num_stages=ns, debug=dbg)
                        torch.cuda.synchronize()
                        r = ref(a, b, BK, ABS)
                        err = ((o.cpu().double() - r).abs() / r.abs().clamp(min=1e-3)).max().item()
                        bad = int(((o.cpu().double() - r).abs() > 1e-2 * r.abs() + 1e-3).sum())
                        print(f"{str(dt)[6:]} {M}x{N}x{K} blk {BM}x{BN}x{BK} w{nw} {prec:7s} abs={ABS:d} stages={ns} debug={dbg:d}: max rel err {err:.2e}, {bad} bad")
                    except Exception as exc:
                        print(f"{prec} abs={ABS} stages={ns} debug={dbg}: {type(exc).__name__}: {str(exc)[:100]}")
