# Compiles reduced.ll with the AMDGPU code generator of the installed Triton (3.4 or later; the fault showed
# with Triton 3.9.0's, LLVM 6bc4aaf6641c56ee104f6200c96a6a571bc77052), through the call Triton makes, and
# prints the assembly. Run: python codegen.py reduced.ll
import sys

try:
    import triton.backends.amd.compiler as compiler
    from triton._C.libtriton import amd, llvm
except ImportError as exc:  # not the bug: this Python cannot run the reproducer
    print("other failure (cannot test):", exc)
    sys.exit(125)

try:
    ir = open(sys.argv[1]).read()
    if hasattr(compiler, "compile_amdgpu"):  # Triton 3.9 on: the AMD code generator it pins
        asm = compiler.compile_amdgpu(ir, "amdgpu9.42-amd-amdhsa", "gfx942", "", flags=[],
                                      enable_fp_fusion=True, disable_optimization=False,
                                      canonicalize_gep=False, disabled_passes="", dump_ir=False,
                                      enable_timing=False)
    else:  # Triton 3.4 to 3.8: the LLVM in libtriton; from 3.8, translate_to_asm takes one more False
        llvm.init_targets()
        falses = llvm.translate_to_asm.__doc__.split("->")[0].count(":") - 6  # its pybind signature
        asm = llvm.translate_to_asm(ir, amd.TARGET_TRIPLE, "gfx942", "", [], True, *[False] * falses)
except Exception as exc:  # IR this Triton cannot read, a call it does not have: not the bug
    print("other failure (cannot test):", exc)
    sys.exit(125)
print(asm)

# The check, in the repro protocol: exit 1 when the fault shows, 0 when it does not, 125 when this build
# cannot test for it. The fault: no s_waitcnt vmcnt(0) between global_atomic_smax and the buffer_inv sc1 after
# it.
ATOMIC, WAIT, BEFORE = "global_atomic_smax", ["s_waitcnt", "vmcnt(0)"], "buffer_inv sc1"
code = [line.split(";")[0].strip() for line in asm.splitlines()]
atomic = next((i for i, line in enumerate(code) if line.startswith(ATOMIC)), None)
after = code[atomic + 1:] if atomic is not None else []
before = next((i for i, line in enumerate(after) if line.startswith(BEFORE)), None)
if before is None:
    print(f"other failure (cannot test): no {ATOMIC} followed by {BEFORE}")
    sys.exit(125)
if any(all(part in line for part in WAIT) for line in after[:before]):
    print("not reproduced: s_waitcnt vmcnt(0) is between global_atomic_smax and buffer_inv sc1")
    sys.exit(0)
print("reproduced: no s_waitcnt vmcnt(0) between global_atomic_smax and buffer_inv sc1")
sys.exit(1)
