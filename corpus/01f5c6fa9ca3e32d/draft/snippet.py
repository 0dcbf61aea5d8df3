# Compiles for gfx90a as the Triton runtime would; no GPU needed.
import subprocess
import sys

try:
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
except ImportError as exc:  # not the bug: this Python cannot run the reproducer
    print("other failure (cannot test):", exc)
    sys.exit(125)


@triton.jit
def kernel(out_0, sa_0):
    v_1 = tl.minimum(tl.maximum(sa_0, -57344.0), 57344.0).to(tl.float8e5b16, fp_downcast_rounding="rtz")
    v_6 = v_1.to(tl.float32)
    tl.atomic_max(out_0 + 0, v_6, sem="acq_rel", scope="gpu")


if "--child" in sys.argv:  # the compile, in a child process: an LLVM abort ends the process it is in
    src = ASTSource(
        kernel,
        signature={'out_0': '*fp32', 'sa_0': 'fp32'},
        constexprs={},
    )
    triton.compile(src, target=GPUTarget("hip", 'gfx90a', 64))
    sys.exit(0)


# The check, in the repro protocol: exit 1 when the compile fails with the error this report is about,
# 0 when the kernel compiles, 125 on any other failure (this build cannot test for the bug).
BUG = ["number of elements must be greater than zero"]  # every part is in the failure's output
try:
    child = subprocess.run([sys.executable, __file__, "--child"],
                           capture_output=True, text=True, timeout=600)
except subprocess.TimeoutExpired:
    print("other failure (cannot test): the compile did not finish in 600 s")
    sys.exit(125)
output = child.stdout + child.stderr
sys.stderr.write(output)
if child.returncode == 0:
    print("not reproduced: the kernel compiled")
    sys.exit(0)
if all(part in output for part in BUG):
    print("reproduced:", next(line for line in output.splitlines() if BUG[0] in line).strip())
    sys.exit(1)
lines = output.strip().splitlines() or [f"exit {child.returncode}"]
errors = [line for line in lines if "error" in line.lower() or "Assertion" in line]
print("other failure (cannot test):", (errors or lines[-1:])[0].strip())
sys.exit(125)
