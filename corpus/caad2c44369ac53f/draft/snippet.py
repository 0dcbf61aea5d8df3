"""Compiles the kernel for gfx942 as the Triton runtime would."""
import os
import subprocess
import sys


def cannot_test(kind, exc, tb):  # an exception outside the compile is not the bug: say what it was
    print("other failure (cannot test):", f"{kind.__name__}: {exc}".strip().splitlines()[0][:300], flush=True)
    os._exit(125)


if "--child" not in sys.argv:  # the child's own failure is read from its output, below
    sys.excepthook = cannot_test

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def kernel(a_ptr, b_ptr, c):
    offs = tl.arange(0, 16)
    if c == 1:
        p = a_ptr + offs
    else:
        p = tl.where(c == 2, a_ptr + offs, b_ptr + offs)  # a select between two bases in one arm
    tl.store(p, 1.0)


# tt.pointer_range=32 is what the HIP runtime attaches to every tensor under 2 GB (AMDGCN_USE_BUFFER_OPS=1, the
# default); without it, or with the tl.where outside the if, this compiles
if "--child" in sys.argv:  # the compile, in a child process: an LLVM abort ends the process it is in
    src = ASTSource(kernel, signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c": "i32"},
                    attrs={(0,): [["tt.pointer_range", 32]], (1,): [["tt.pointer_range", 32]]})
    triton.compile(src, target=GPUTarget("hip", "gfx942", 64))
    sys.exit(0)


# The check, in the repro protocol: exit 1 when the compile fails with the error this report is about,
# 0 when the kernel compiles, 125 on any other failure (this build cannot test for the bug).
BUG = ["ifOp types must match in both arms"]  # every part is in the failure's output
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
    print("reproduced:", next((line for line in output.splitlines() if BUG[0] in line), BUG[0]).strip())
    sys.exit(1)
lines = output.strip().splitlines() or [f"exit {child.returncode}"]
errors = [line for line in lines if "error" in line.lower() or "Assertion" in line]
print("other failure (cannot test):", (errors or lines[-1:])[0].strip())
sys.exit(125)
