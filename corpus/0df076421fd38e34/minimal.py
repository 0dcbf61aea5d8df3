#!/usr/bin/env python3
"""Hand-minimised repro: on CDNA3 (gfx942), tl.dot_scaled with an mxfp4 (e2m1) operand and 16-element scale groups applies only the first scale of each 32 to the fp4 side.

`a` is e2m1 [16, 32] with e8m0 scales [16, 2] (K // 16 columns), `b` is e4m3 [32, 16] with e8m0 scales [16, 2].
Each lane's 8 fp4 values are K = 4q..4q+3 and 16+4q..16+4q+3, so they need both scale columns of their row; the
fp4 conversion multiplies all 8 by column 0's scale. `a_scale[row, 1]` is loaded, but in the gfx942 LLVM IR it
feeds only the NaN check (`icmp eq i8 ..., -1`) and no `fmul`. The fp8 side's two scale columns are both applied.

Expected: in the gfx942 LLVM IR each of the two `a_scale` values a lane loads reaches an `fmul` (each scales the
4 fp4 values of its 16-element group), as the fp8 side's do; run, the product equals the float64 reference.

On an AMD GPU the script runs the kernel and compares it with a float64 reference (torch needed there). Without
one it needs only triton: it compiles the kernel for gfx942 and, in the LLVM IR, follows each value loaded from
a_scale through its uses (casts, shifts, insert/extractelement, shufflevector, selects' data operands) and reports
whether it reaches an `fmul`, with the IR lines that show it. Controls: the fp8 side's b_scale in the same
kernel, and a_scale with 32-element groups, where every loaded scale reaches an `fmul`.
Exit 0 = every loaded scale is applied (right), 1 = a loaded a_scale value never reaches a multiply (the bug),
125 = cannot test (before Triton 3.8.0 the kernel does not compile for gfx942; or the IR is not one the script can
follow, or a control fails).
"""
import re
import subprocess
import sys

try:
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"cannot test: {exc}")
    sys.exit(125)

M, N, K = 16, 16, 32
FP4_VALUES = [0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6]  # e2m1 codes 0..15


@triton.jit
def kernel(a, a_scale, b, b_scale, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, G: tl.constexpr):
    # G: the number of K elements that share one e8m0 scale (16 here, 32 for the control)
    offs_m, offs_n = tl.arange(0, M), tl.arange(0, N)
    offs_h, offs_k, offs_s = tl.arange(0, K // 2), tl.arange(0, K), tl.arange(0, K // G)
    x = tl.load(a + offs_m[:, None] * (K // 2) + offs_h[None, :])
    xs = tl.load(a_scale + offs_m[:, None] * (K // G) + offs_s[None, :])
    y = tl.load(b + offs_k[:, None] * N + offs_n[None, :])
    ys = tl.load(b_scale + offs_n[:, None] * (K // G) + offs_s[None, :])
    acc = tl.dot_scaled(x, xs, "e2m1", y, ys, "e4m3", tl.zeros([M, N], tl.float32))
    tl.store(out + offs_m[:, None] * N + offs_n[None, :], acc)


# ---- on an AMD GPU: run the kernel, compare with the float64 reference ----------------------------------------

def scales(raw, fmt):
    """Scale factors: an e8m0 code is a power of two, 2^(code - 127)."""
    assert fmt == "e8m0"
    return 2.0 ** (raw.double() - 127)


def reference(a, a_scale, b, b_scale, fmt, group_a=16):
    """The product as tl.dot_scaled defines it (float64), the fp4 side's scales grouped by `group_a`."""
    import torch
    FP4 = torch.tensor(FP4_VALUES, dtype=torch.float64)
    x = torch.empty(M, K, dtype=torch.float64)
    x[:, 0::2], x[:, 1::2] = FP4[(a & 15).long()], FP4[(a >> 4).long()]
    x = x * scales(a_scale, fmt)[:, torch.arange(K) // group_a]
    y = b.view(torch.float8_e4m3fn).double() * scales(b_scale, "e8m0")[:, torch.arange(K) // 16].T
    return x @ y


def on_amd_gpu(fmt="e8m0"):
    import torch
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(0, 256, (M, K // 2), generator=gen, dtype=torch.uint8)
    b = torch.randn(K, N, generator=gen).clamp(-8, 8).to(torch.float8_e4m3fn).view(torch.uint8)
    a_scale = torch.randint(124, 128, (M, K // 16), generator=gen, dtype=torch.uint8)  # e8m0 codes
    a_scale[:, 1] = a_scale[:, 0] + 1  # column 1 one power of two above column 0
    b_scale = torch.randint(124, 129, (N, K // 16), generator=gen, dtype=torch.uint8)  # e8m0 on the fp8 side
    args = [a, a_scale, b, b_scale]
    out = torch.zeros(M, N, device="cuda")
    dev = [a.cuda(), a_scale.cuda(), b.view(torch.float8_e4m3fn).cuda(), b_scale.cuda(), out]
    try:
        kernel[(1,)](*dev, M=M, N=N, K=K, G=16)
    except triton.CompilationError as exc:  # before 3.8.0: "lhs_scale must be a tensor of shape [..., 16, 1]"
        print(f"cannot test: triton {triton.__version__} rejects the kernel: {str(exc).strip().splitlines()[-1]}")
        return 125
    got = out.cpu().double()
    right, first_only = reference(*args, fmt), reference(*args, fmt, group_a=32)
    close = (lambda x, y: torch.allclose(x, y, rtol=1e-5, atol=1e-3))
    verdict = ("right" if close(got, right) else "wrong: the fp4 side's second scale column is ignored"
               if close(got, first_only) else "wrong (another way)")
    print(f"{fmt} scales, 16-element groups, triton {triton.__version__}: largest difference from the right product "
          f"{(got - right).abs().max().item():.4g}, from the product with a_scale's column 0 only "
          f"{(got - first_only).abs().max().item():.4g}: {verdict}")
    return {"right": 0, "wrong: the fp4 side's second scale column is ignored": 1}.get(verdict, 125)


# ---- without one: compile for gfx942 and follow the loaded scales through the LLVM IR -------------------------

class CannotCompile(Exception):
    pass


def compile_llir(group):
    """The kernel's gfx942 LLVM IR with `group`-element scale groups, compiled in a child process (an assertion in
    the compiler ends only the child), or CannotCompile with the compiler's own words."""
    child = subprocess.run([sys.executable, __file__, "--llir", str(group)], capture_output=True, text=True,
                           timeout=600)
    if child.returncode != 0:
        raise CannotCompile(diagnostic(child.stderr) or f"the compile exited {child.returncode}")
    return child.stdout


def diagnostic(stderr):
    """What a failed compile says, without a release's paths or line numbers: an assertion (with the function and
    file it is in), else an LLVM error, else an MLIR error, else the last line (a CompilationError's message)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        found = re.search(r"/(\w+\.cpp):\d+: .*?([\w:~]+)\(.*: Assertion `(.*)' failed", line)
        if found:
            return f"Assertion `{found.group(3)}` failed in {found.group(2).split('::')[-1]} ({found.group(1)})"
    errors = [line for line in lines if line.startswith("LLVM ERROR: ")] + [
        line.split("error: ", 1)[1] for line in lines if "error: " in line and "Failures have been detected" not in line]
    return (errors or lines[-1:] or [""])[0][:300]


def llir(group):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"a": "*u8", "a_scale": "*u8", "b": "*fp8e4nv", "b_scale": "*u8", "out": "*fp32",
                 "M": "constexpr", "N": "constexpr", "K": "constexpr", "G": "constexpr"}
    src = ASTSource(kernel, signature, {"M": M, "N": N, "K": K, "G": group})
    return triton.compile(src, target=GPUTarget("hip", "gfx942", 64)).asm["llir"]


def split_operands(text):
    """Split an instruction's operand list at the commas outside (), <>, [] and {}."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "(<[{"
        depth -= ch in ")>]}"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()]


def parse(llir):
    """The kernel's parameters and its instructions: (result or None, opcode, callee, operands, text)."""
    params = re.findall(r"(%[\w.]+)[,)]", re.search(r"^define [^(]*@\w+\((.*)\)[^)]*\{$", llir, re.M).group(1))
    insts = []
    for line in llir[llir.index("define "):].splitlines()[1:]:
        if line.startswith("}"):
            break
        text = line.strip().split(", !")[0]  # drop the !dbg metadata
        if not text or text.startswith(";") or re.match(r"[\w.]+:", text):  # a comment or a block's label
            continue
        m = re.match(r"(%[\w.]+) = (.*)", text)
        result, rhs = (m.group(1), m.group(2)) if m else (None, text)
        words = rhs.replace("tail call", "call").split()
        callee = re.search(r"(@[\w.]+)\(", rhs).group(1) if words[0] == "call" else ""
        args = rhs[rhs.index("(", rhs.index(callee)) + 1:rhs.rindex(")")] if callee else rhs.split(None, 1)[-1]
        insts.append((result, words[0], callee, split_operands(args), text))
    return params, insts


def uses_of(value, operand):
    return re.search(re.escape(value) + r"(?![\w.])", operand) is not None


def scale_loads(param, insts):
    """The values loaded from the buffer `param` points to: (load, the value to follow, its address's lines)."""
    derived, loads = {param: []}, []
    for result, op, callee, operands, text in insts:
        base = next((p for p in derived for o in operands if uses_of(p, o)), None)
        if base is None:
            continue
        if op in ("getelementptr", "addrspacecast", "bitcast", "select", "phi") or "make.buffer.rsrc" in callee:
            derived[result] = derived[base] + [text]
        elif op == "load" or "buffer.load" in callee:
            vector = re.match(r"(?:tail )?(?:call|load) <(\d+) x ", text.split("= ", 1)[1])
            if vector and int(vector.group(1)) > 1:
                # a vector of scales: follow each element from its extractelement
                users = [i for i in insts if any(uses_of(result, o) for o in i[3])]
                if not all(u[1] == "extractelement" and re.search(r"i\d+ \d+$", u[3][-1]) for u in users):
                    raise ValueError(f"cannot follow the elements of: {text}")
                loads += [(text, u[0], derived[base]) for u in users]
            else:
                loads.append((text, result, derived[base]))
    return loads


def follow(start, insts):
    """Breadth-first through the uses of `start`: the path to the first fmul that takes it, else all it reaches."""
    parent, queue = {start: None}, [start]
    while queue:
        value = queue.pop(0)
        for result, op, callee, operands, text in insts:
            if not any(uses_of(value, o) for o in operands) or (result and result in parent):
                continue
            if op == "fmul" or "ldexp" in callee:
                path, v = [text], value
                while v is not None:
                    path.append(next(t for r, *_, t in insts if r == v) if v != start else None)
                    v = parent[v]
                return True, [t for t in reversed(path) if t]
            if op in ("icmp", "fcmp") or (op == "select" and uses_of(value, operands[0])) or "mfma" in callee:
                parent[result] = value  # a test of the scale, a select's condition, or the dot itself: not a multiply
            elif result is None:  # a store or call without a result: the value leaves what the script can follow
                raise ValueError(f"cannot follow the scale through: {text}")
            else:
                parent[result] = value
                queue.append(result)
    return False, [text for result, *_, text in insts if result in parent and result != start]  # all it reaches


def analyse(llir, index):
    """For each value loaded from the scale argument at position `index`: (load, address, reaches an fmul, path)."""
    params, insts = parse(llir)
    found = []
    for load, value, address in scale_loads(params[index], insts):
        element = [] if load.startswith(value + " =") else [next(t for r, *_, t in insts if r == value)]
        found.append((load, address, *follow(value, insts), element))
    return found


def show(name, found, full):
    applied = sum(reaches for _, _, reaches, _, _ in found)
    print(f"  {name}: {len(found)} loaded per lane, {applied} of them reach an fmul")
    for load, address, reaches, path, element in found:
        print(f"    {load}")
        for t in (address + element) if full else []:
            print(f"      {'element' if t in element else 'address'}: {t}")
        if reaches:
            print("      reaches an fmul" + (" through:" if full else ":"))
            print("\n".join(f"        {t}" for t in (path if full else path[-1:])))
        else:
            print("      reaches NO fmul; all it reaches (up to a compare):")
            print("\n".join(f"        {t}" + ("   (the e8m0 NaN check: code 0xFF)" if re.search(
                r"icmp eq i8 %[\w.]+, -1$", t) else "") for t in path) or "        (nothing)")
    return len(found), applied


def column(found):
    """'a_scale[row, 1] ' where the unused load's address is 1 byte past the used one's (scale rows are 2 bytes)."""
    used = [address[-1].split(" = ")[0] for _, address, reaches, _, _ in found if reaches and address]
    unused = [address[-1] for _, address, reaches, _, _ in found if not reaches and address]
    pattern = r"getelementptr i8, ptr addrspace\(1\) (%[\w.]+), i64 1$"
    if len(used) == len(unused) == 1 and re.search(pattern, unused[0]) and re.search(pattern, unused[0])[1] == used[0]:
        return "a_scale[row, 1] (the byte after the a_scale[row, 0] that is used) "
    return "an a_scale value "


def statically():
    try:
        llir16 = compile_llir(16)
    except CannotCompile as exc:  # before 3.8.0 (3.6.0, 3.7.1: "lhs_scale must be a tensor of shape [..., 16, 1]")
        print(f"cannot test: this Triton does not compile the kernel for gfx942: {exc}")
        return 125
    try:
        fp4, fp8, fp4_32 = analyse(llir16, 1), analyse(llir16, 3), analyse(compile_llir(32), 1)
    except Exception as exc:  # noqa: BLE001 - an IR this script cannot follow
        print(f"cannot test: triton {triton.__version__}: {type(exc).__name__}: {exc}")
        return 125
    print(f"triton {triton.__version__}, gfx942 LLVM IR: the values each lane loads from the scales, and whether "
          "they reach an fmul")
    loaded, applied = show("a_scale (fp4 side), 16-element groups", fp4, True)
    controls = [show("control: b_scale (fp8 side), 16-element groups, same kernel", fp8, False),
                show("control: a_scale (fp4 side), 32-element groups", fp4_32, False)]
    if not loaded or any(not n or n != k for n, k in controls):
        print("cannot test: no a_scale load found, or a control has a loaded scale that reaches no fmul: the IR "
              "is not one this script can read")
        return 125
    print(f"16-element groups: {loaded - applied} of the {loaded} a_scale values each lane loads reach no fmul "
          f"(controls: b_scale {controls[0][1]} of {controls[0][0]}, a_scale with 32-element groups "
          f"{controls[1][1]} of {controls[1][0]})")
    if applied < loaded:
        print(f"bug present: {column(fp4)}is loaded but never multiplied into the fp4 values; the 8 fp4 values of "
              "a lane, which span both scale columns, are all scaled by the other one")
        return 1
    print("right: every loaded a_scale value is multiplied into the fp4 values")
    return 0


def main():
    try:
        import torch
        if torch.cuda.is_available() and getattr(torch.version, "hip", None):
            return on_amd_gpu()
    except ImportError:
        pass
    return statically()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--llir"]:  # the child compile_llir starts
        sys.stdout.write(llir(int(sys.argv[2])))
        sys.exit(0)
    try:
        sys.exit(main())
    except Exception as exc:  # noqa: BLE001 - anything but the described failure is not the bug: one line, 125
        said = str(exc).strip().splitlines()
        print(f"cannot test: {type(exc).__name__}: {said[-1][:200] if said else ''}")
        sys.exit(125)
