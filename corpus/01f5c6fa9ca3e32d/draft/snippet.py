"""Exit 1 when any cast hits one of the assertions or stores a wrong code; 0 when each is refused with the
"Unsupported conversion ... rtz" error or stores the right code; 125 for anything else (this Triton cannot test).
"""
import re
import subprocess
import sys

TARGET = "gfx942"
# source type, destination type, the destination's code for 1.0 (fp8e5b16 and fp8e4b8: bias 16 and 8; fp8e5: 15)
CASES = [("fp32", "fp8e5b16", 0x40), ("fp32", "fp8e4b8", 0x40), ("bf16", "fp8e5", 0x3C), ("fp16", "fp8e5b16", 0x40)]
ASSERTIONS = ['numElements && "number of elements must be greater than zero"', "maybeOutVals.has_value()"]
REFUSED = re.compile(r"Unsupported conversion from '\w+' to '\w+' with rounding mode rtz")

if "--child" in sys.argv:  # one compile, in a child process: an assertion aborts the process it is in
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def kernel(x_ptr, y_ptr):  # 1.0 in x_ptr's element type, cast down to y_ptr's with rtz and stored
        one = tl.full([64], 1.0, x_ptr.dtype.element_ty)
        tl.store(y_ptr + tl.arange(0, 64), one.to(y_ptr.dtype.element_ty, fp_downcast_rounding="rtz"))

    src, dst = sys.argv[-2:]
    compiled = triton.compile(ASTSource(kernel, signature={"x_ptr": f"*{src}", "y_ptr": f"*{dst}"}, constexprs={}),
                              target=GPUTarget("hip", TARGET, 64))
    print("\n".join(line for line in compiled.asm["llir"].splitlines() if "store" in line and "declare" not in line))
    sys.exit(0)


def cast(src, dst, expected):
    """(what this cast shows: 'bug', 'fixed' or 'other', one line saying what happened)."""
    try:
        child = subprocess.run([sys.executable, __file__, "--child", src, dst], capture_output=True, text=True,
                               timeout=300)
    except subprocess.TimeoutExpired:
        return "other", "the compile did not finish in 300 s"
    output = child.stdout + child.stderr
    failed = next((a for a in ASSERTIONS if f"Assertion `{a}' failed" in output), None)
    if failed:
        where = re.search(r"(ConvertFpCastOpToLLVM\.cpp:\d+)", output)
        return "bug", f"assertion `{failed}` failed ({where.group(1) if where else 'ConvertFpCastOpToLLVM.cpp'})"
    refused = REFUSED.search(output)
    if refused:
        return "fixed", f"refused: {refused.group(0)}"
    if child.returncode != 0:
        lines = [line for line in output.splitlines() if "error" in line.lower()] or output.splitlines()[-1:]
        return "other", f"failed otherwise: {lines[0].strip() if lines else f'exit {child.returncode}'}"
    codes = {int(c) & 0xFF for c in re.findall(r"\bi8 (-?\d+)\b", child.stdout)}  # the constant each store stores
    if len(codes) != 1:
        return "other", f"compiled, but the stored code is not a constant in the LLVM IR ({sorted(codes)})"
    code = codes.pop()
    said = f"compiled; 1.0 stored as 0x{code:02x}, expected 0x{expected:02x}"
    return ("fixed", said) if code == expected else ("bug", f"{said}: a wrong code")


def main():
    results = []
    for src, dst, expected in CASES:
        results.append(cast(src, dst, expected))
        print(f"{src} -> {dst} (rtz): {results[-1][1]}")
    shown = [what for what, _ in results]
    if "bug" in shown:
        print(f"reproduced: {shown.count('bug')} of {len(CASES)} rtz casts hit the bug")
        return 1
    if "other" in shown:
        print("other failure (cannot test): a cast failed in another way")
        return 125
    print("not reproduced: every rtz cast is refused as unsupported or stores the right code")
    return 0


try:
    sys.exit(main())
except Exception as exc:  # noqa: BLE001 - anything but the casts' own outcomes is not the bug: one line, 125
    said = str(exc).strip().splitlines()
    print(f"other failure (cannot test): {type(exc).__name__}: {said[-1][:200] if said else ''}")
    sys.exit(125)
