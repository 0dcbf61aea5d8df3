"""The identities of what the machine-code executor finds in LLVM's code for a Triton kernel (--backend emulate):
a wrong result where the IR is right, and a hazard. Apart from signature.py's compiler and Triton keys because
their stage is the machine code's, and both are provisional until reduction at the LLVM IR layer regroups them."""
from __future__ import annotations

from gfxhound.signature import signature_hash

__all__ = ["MACHINE_CODE_STAGE", "hazard_signature", "machine_code_signature"]

MACHINE_CODE_STAGE = "machine-code"  # a wrong result of LLVM's code for IR the IR executor judged right


def machine_code_signature(target, ops, fallback):
    """An LLVM AMDGPU miscompile met through a Triton kernel (the IR right, its machine code not): provisional, by
    the target and the kernel's op multiset, apart from Triton's own wrong results by its stage; reduction at
    the LLVM IR layer regroups it."""
    assert ops or fallback, "a machine-code signature needs the kernel's ops or a fallback"
    normalised = f"{target} machine code: " + (" ".join(sorted(ops)) if ops else f"kernel {fallback}")
    return normalised, signature_hash("miscompile", MACHINE_CODE_STAGE, normalised, [])


def hazard_signature(target, key):
    """A hazard in LLVM's machine code met through a Triton kernel (values right, but a register read before the
    s_waitcnt that retires its load, or a wait-state row of the ISA guide broken): keyed by the target and the
    instructions of the first such pair (oracle/emulate_machine.py hazard_key), not the kernel, so one missing
    wait in LLVM is one finding across kernels."""
    assert key, "a hazard signature needs the instructions that make it"
    normalised = f"{target} machine code hazard: {key}"
    return normalised, signature_hash("hazard", MACHINE_CODE_STAGE, normalised, [])
