#!/usr/bin/env python3
"""Hand-minimised repro: a shared-memory race between the two warp groups of the chained-dot block ping-pong (gfx942, num_warps=8, num_stages=4).

This flash-attention loop (dot, max, exp2, sum, dot), compiled for gfx942 with num_warps=8 and num_stages=4, gets
the chained-dot ping-pong: before the loop, waves 4-7 execute one extra `s_barrier` (`amdg.cond_barrier`: an
`s_and_saveexec` on `tid > 255`, an `s_cbranch_execz` and an `s_barrier`) and waves 0-3 skip it, so for the whole
loop the k-th barrier of one group meets the (k+1)-th of the other: code one barrier apart runs at the same time.
The two dots have different layouts (`warpsPerCTA` [8, 1] and [2, 4]), so the loop converts `alpha[:, None]` through
shared memory (`ds_write_b32` / `s_barrier` / `ds_read_b32 ... offset:32768`) and, one barrier later in the same
iteration, stores `p` for the second dot at the same bytes (`s_barrier` / `ds_write_b16 ... offset:32768`). One
barrier apart, the `alpha` read of one group and the `p` write of the other run at once: nothing orders them (a
write-after-read race). Without ping-pong (`TRITON_HIP_USE_BLOCK_PINGPONG=0`), with num_stages=3 or with num_warps=4
there is no offset and no race.

Expected: no LDS read and write of the same bytes one `s_barrier` apart while the two warp groups run one barrier
apart (or no such offset between them), and the kernel's output equal to torch's on every run.

On an AMD GPU (a ROCm build of torch) the script runs the kernel 200 times and compares it with torch (the race is
latent: it need not show), then checks the machine code of the kernel it ran as below. Without one it compiles the
kernel for gfx942 (no GPU needed) and checks the witness in `compiled.asm["amdgcn"]`:
  1. before the loop, a barrier only some waves execute: `s_and_saveexec` on a `v_cmp` of the thread id (v0),
     `s_cbranch_execz`, `s_barrier`; the compare is evaluated for every thread to find which waves take it;
  2. in the loop (found by its back-edge branch), an LDS read and an LDS write with the same `offset:` (the shared
     allocation's start, which the compiler folds into the instruction) with exactly one `s_barrier` between them
     (going round the loop), so that the two groups, one barrier apart, execute them at once.
Exit 1 = both show (the race; on an AMD GPU also a wrong result), 0 = no offset between the waves or no such pair,
125 = cannot test (no Triton, a compile error, machine code this script cannot parse; Triton 3.4 and older link with
an external ld.lld: set TRITON_HIP_LLD_PATH). Arguments `num_warps=N` and `num_stages=N` change the compile options
(default 8 and 4) to check the race-free variants.
"""
import re
import sys

try:
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"cannot test: {exc}")
    sys.exit(125)

BLOCK_M, BLOCK_N, D, N_CTX, PROGRAMS = 64, 64, 128, 1024, 2
OPTIONS = {"num_warps": 8, "num_stages": 4}
WAVE = 64


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


class Unparseable(Exception):
    pass


COMPARE = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
           "lg": lambda a, b: a != b}


def instructions(asm):
    """(line number, text) of every line, comments dropped."""
    return [(n, line.split(";")[0].rstrip()) for n, line in enumerate(asm.splitlines(), 1)]


def find_loop(lines):
    """(index of the header label, index of its last back-edge branch) of the first loop whose body has s_barrier."""
    labels = {}
    for i, (_, text) in enumerate(lines):
        m = re.match(r"(\.LBB\w+):", text)
        if m:
            labels[m.group(1)] = i
    for header_label, header in sorted(labels.items(), key=lambda kv: kv[1]):
        back = [i for i, (_, text) in enumerate(lines) if i > header
                and re.match(rf"\s*s_c?branch\w*\s+{re.escape(header_label)}$", text)]
        if back and any(re.match(r"\s*s_barrier\b", t) for _, t in lines[header:back[-1]]):
            return header, back[-1]
    raise Unparseable("no loop with s_barrier found (no back-edge branch)")


def constant(lines, before, operand):
    """The value of an SGPR or inline/literal operand at lines[before]."""
    if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", operand):
        return int(operand, 0)
    for _, text in reversed(lines[:before]):
        m = re.match(rf"\s*s_mov(?:k)?_[ib]32\s+{re.escape(operand)},\s*(-?(?:0x[0-9a-fA-F]+|\d+))$", text)
        if m:
            return int(m.group(1), 0)
        if re.match(rf"\s*s_\w+\s+{re.escape(operand)},", text):
            break
    raise Unparseable(f"cannot resolve the compare operand {operand}")


def cond_barrier(lines, header, num_warps):
    """The pre-loop barrier under an exec mask: (its lines, waves that execute it), or None when there is none."""
    found = []
    for i in range(header):
        m = re.match(r"\s*s_and_saveexec_b64\s+\S+,\s*(\S+)$", lines[i][1])
        if not m:
            continue
        j = i + 1
        branch = re.match(r"\s*s_cbranch_execz\s+(\.LBB\w+)$", lines[j][1]) if j < header else None
        if not branch:
            continue
        body = [k for k in range(j + 1, header) if lines[k][1].strip()]
        end = next((k for k in body if lines[k][1].startswith(branch.group(1) + ":")), None)
        if end is not None and any(re.match(r"\s*s_barrier\b", lines[k][1]) for k in body if k < end):
            found.append((i, j, [k for k in body if k < end and re.match(r"\s*s_barrier\b", lines[k][1])][0],
                          m.group(1)))
    if not found:
        return None
    if len(found) > 1:
        raise Unparseable(f"{len(found)} barriers under an exec mask before the loop, one expected")
    saveexec, branch, barrier, mask = found[0]
    for c in range(saveexec - 1, -1, -1):
        text = lines[c][1]
        if re.match(rf"\s*\w+\s+{re.escape(mask)}(?=,|\s|$)", text):
            m = re.match(rf"\s*v_cmp_(\w+?)_([ui]32)(?:_e32|_e64)?\s+{re.escape(mask)},\s*(\S+),\s*(\S+)$", text)
            if not m:
                raise Unparseable(f"the exec mask {mask} is not a compare: {text.strip()}")
            op, a, b = m.group(1), m.group(3), m.group(4)
            if op not in COMPARE or "v0" not in (a, b) or (a == "v0") == (b == "v0"):
                raise Unparseable(f"not a compare of the thread id: {text.strip()}")
            if any(re.match(r"\s*v_\w+\s+(v0|v\[0:\d+\]),", t) for _, t in lines[:c]):
                raise Unparseable("v0 (the thread id) is overwritten before the compare")
            value = constant(lines, c, b if a == "v0" else a)
            test = COMPARE[op]
            lanes = [(t, value) if a == "v0" else (value, t) for t in range(num_warps * WAVE)]
            waves = sorted({t // WAVE for t, (x, y) in enumerate(lanes) if test(x, y)})
            operand = b if a == "v0" else a
            note = f"{operand} = {value}, v0 = the thread id" if operand != str(value) else "v0 = the thread id"
            return [lines[k] for k in (c, saveexec, branch, barrier)], waves, note
    raise Unparseable(f"no instruction sets the exec mask {mask}")


def lds_accesses(lines, header, end):
    """(index, kind, offset) of every LDS read or write in the loop with an `offset:` immediate."""
    out = []
    for i in range(header, end + 1):
        m = re.match(r"\s*ds_(read|load|write|store)\w*\s.*\boffset:(\d+)", lines[i][1])
        if m:
            out.append((i, "read" if m.group(1) in ("read", "load") else "write", int(m.group(2))))
    return out


def waves_text(waves):
    """[0, 1, 2, 3] -> "0-3"."""
    runs, start = [], waves[0]
    for a, b in zip(waves, waves[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a != start else f"{a}")
            start = b
    return ", ".join(runs)


def witness(asm, num_warps):
    """1 when the machine code has the race, 0 when not; raises Unparseable. Prints the instructions it found (line
    numbers of the listing), one line each, flush left."""
    lines = instructions(asm)
    header, end = find_loop(lines)
    barriers = [i for i in range(header, end) if re.match(r"\s*s_barrier\b", lines[i][1])]
    loop = (f"loop {lines[header][1].rstrip(':')} (lines {lines[header][0]}-{lines[end][0]}, back edge "
            f"`{lines[end][1].strip()}`, {len(barriers)} s_barrier per iteration)")
    cond = cond_barrier(lines, header, num_warps)
    if cond is None:
        print(f"no barrier under an exec mask before the {loop}: every wave passes the same barriers, no offset")
        return 0
    shown, waves, note = cond
    print(f"before the loop, a barrier under an exec mask ({note}):")
    for n, text in shown:
        print(f"{n}: {text.strip()}")
    others = [w for w in range(num_warps) if w not in waves]
    if not waves or not others:
        print(f"its condition holds for {'no' if not waves else 'every'} wave of {num_warps}: no offset")
        return 0
    print(f"waves {waves_text(waves)} execute it and waves {waves_text(others)} do not, so in the {loop} the k-th "
          f"s_barrier of one group meets the (k+1)-th of the other")
    interval = {}
    count = 0
    for i in range(header, end + 1):
        if re.match(r"\s*s_barrier\b", lines[i][1]):
            count += 1
        interval[i] = count % len(barriers)
    accesses = lds_accesses(lines, header, end)
    pairs = []
    for r, kind_r, off_r in accesses:
        for w, kind_w, off_w in accesses:
            if kind_r == "read" and kind_w == "write" and off_r == off_w and \
                    (interval[w] - interval[r]) % len(barriers) in (1, len(barriers) - 1):
                pairs.append((r, w))
    if not pairs:
        print("no LDS read and write at the same offset one s_barrier apart in the loop: no race")
        return 0
    print(f"{len(pairs)} LDS read/write pairs at the same offset are one s_barrier apart in the loop: the two groups "
          f"execute them at the same time and nothing orders them (a race), e.g.")
    shown = {}
    for r, w in pairs:  # the first with the read before the write, and the first with the write before the read
        first, last = min(r, w), max(r, w)
        between = [k for k in range(first + 1, last) if re.match(r"\s*s_barrier\b", lines[k][1])]
        if len(between) != 1:  # the pair straddles the back edge
            first, last = last, first
            between = [k for k in list(range(first + 1, end + 1)) + list(range(header, last))
                       if re.match(r"\s*s_barrier\b", lines[k][1])]
        shown.setdefault(first == r, (first, between[0], last))
    for read_first, trio in sorted(shown.items(), reverse=True):
        print(" | ".join(f"{lines[k][0]}: {lines[k][1].strip()}" for k in trio) +
              f"   ({'write-after-read' if read_first else 'read-after-write'})")
    return 1


def options():
    opts = dict(OPTIONS)
    for arg in sys.argv[1:]:
        key, _, value = arg.partition("=")
        if key not in opts or not value.isdigit():
            print(f"usage: {sys.argv[0]} [num_warps=N] [num_stages=N]")
            sys.exit(125)
        opts[key] = int(value)
    return opts


def on_amd_gpu(torch, opts):
    torch.manual_seed(0)
    m = PROGRAMS * BLOCK_M
    q = (torch.randn(m, D) * 0.5).half().cuda()
    k = (torch.randn(N_CTX, D) * 0.5).half().cuda()
    v = torch.randn(N_CTX, D).half().cuda()
    s = q.float() @ k.float().T
    p = torch.exp2(s - s.max(1, keepdim=True).values)
    ref = (p @ v.float()) / p.sum(1, keepdim=True)
    out = torch.zeros(m, D, dtype=torch.float16, device="cuda")
    for _ in range(200):
        kernel = attn[(PROGRAMS,)](q, k, v, out, N_CTX, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D=D, **opts)
        torch.cuda.synchronize()
        wrong = int(((out.float() - ref).abs() > 0.05).sum())
        if wrong:
            print(f"{wrong} of {out.numel()} outputs wrong")
            return 1
    arch = getattr(torch.cuda.get_device_properties(0), "gcnArchName", "this GPU")
    print(f"200 runs correct (a latent race need not show on hardware); the machine code for {arch}:")
    try:
        return witness(kernel.asm["amdgcn"], opts["num_warps"])
    except Unparseable as exc:  # no wrong result, and no witness either way: this run cannot say
        print(f"cannot test: cannot check the machine code: {exc}")
        return 125


def main():
    opts = options()
    try:
        import torch
        if torch.cuda.is_available() and getattr(torch.version, "hip", None):
            return on_amd_gpu(torch, opts)
    except ImportError:
        pass
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "N_CTX": "i32",
                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "D": "constexpr"}
    constexprs = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "D": D}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}  # 16-byte aligned pointers, as a launch gives
    try:
        try:
            src = ASTSource(attn, signature, constexprs, attrs)
        except TypeError:  # releases whose ASTSource takes no attrs
            src = ASTSource(attn, signature, constexprs)
        compiled = triton.compile(src, target=GPUTarget("hip", "gfx942", WAVE), options=opts)
        asm = compiled.asm["amdgcn"]
    except Exception as exc:  # noqa: BLE001 - a release that cannot compile this cannot test it
        print(f"cannot test: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}")
        return 125
    print(f"triton {triton.__version__}, gfx942, " + ", ".join(f"{k}={v}" for k, v in opts.items()))
    try:
        return witness(asm, opts["num_warps"])
    except Unparseable as exc:
        print(f"cannot test: {exc}")
        return 125


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - anything but the described failure is not the bug: one line, 125
        said = str(exc).strip().splitlines()
        print(f"cannot test: {type(exc).__name__}: {said[-1][:200] if said else ''}")
        sys.exit(125)
