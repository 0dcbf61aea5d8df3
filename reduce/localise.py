"""Which layer of the toolchain a compiler failure starts in, from what the finding already records.

A maintainer's first question is "whose bug is it": the frontend, an MLIR pass, the lowering to LLVM IR, or LLVM's
code generator (and on Triton 3.9, which of its two LLVMs: core LLVM, or the separately pinned AMD code generator
behind `compile_amdgpu`, FACTS.md). The stage marker a campaign records says where the pipeline stopped; the
traceback says which function was running. This also picks the IR level a reduction works on.
"""
from __future__ import annotations

import re

LAYERS = {
    "frontend": "Triton frontend (Python AST to TTIR)",
    "ttir-passes": "TTIR passes",
    "ttgir-passes": "TTIR to TTGIR conversion and TTGIR passes",
    "llvm-lowering": "TTGIR to LLVM IR lowering (MLIR conversion passes)",
    "llvm-ir-opt": "LLVM IR optimisation (Triton's pinned LLVM)",
    "llvm-codegen": "LLVM code generation (Triton's pinned LLVM)",
    "amd-codegen": "LLVM code generation in the separately pinned AMD code generator (libtriton_amd_codegen)",
    "assemble-link": "assembly and linking of the code object",
    "external-llc": "an external llc (not Triton's LLVM)",
    "execution": "the compiled kernel's execution",
}

# the level a reduction of a failure in this layer works on
REDUCE_LEVEL = {"frontend": "spec", "ttir-passes": "ttir", "ttgir-passes": "ttir", "llvm-lowering": "ttgir",
                "llvm-ir-opt": "ttgir", "llvm-codegen": "llvm-ir", "amd-codegen": "llvm-ir", "assemble-link": "llvm-ir",
                "external-llc": "llvm-ir", "execution": "spec"}


def localise(stage: str, text: str = "", toolchain_has_amd_codegen: bool = False) -> str:
    """The layer (a LAYERS key) for a failure that stopped in `stage` with error text `text`."""
    if stage == "ttir":
        return "frontend" if re.search(r"CompilationError|code_generator\.py|ast_to_ttir", text) else "ttir-passes"
    if stage == "ttgir":
        return "ttgir-passes"
    if stage == "llir":
        return "llvm-ir-opt" if re.search(r"optimize_module|llvm\.optimize", text) else "llvm-lowering"
    if stage == "amdgcn":
        return "amd-codegen" if toolchain_has_amd_codegen else "llvm-codegen"
    if stage == "hsaco":
        return "assemble-link"
    if stage == "llc-verify":
        return "external-llc"
    return "execution"


def has_amd_codegen() -> bool:
    """Whether the installed Triton generates AMD code with its separately pinned code generator (3.9+)."""
    try:
        import triton.backends.amd.compiler as amd
    except ImportError:
        return False
    return hasattr(amd, "compile_amdgpu")
