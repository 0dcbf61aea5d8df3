"""The memory-model check's data: which AMDGPUUsage code-sequence table applies to each arch, what each table
requires a release / acquire at each scope to emit, and which GFX9 instructions count on which counter.

Why a module of its own: these are transcribed facts (LLVM ``AMDGPUUsage.rst``, "Memory Model", tables GFX90A and
GFX942; docs/memory-model.md holds the survey), not logic. Adding a target or correcting a row is an edit here and
nowhere else; the scanner (oracle/memory_model_amdgcn.py), the IR reader (oracle/memory_model_llir.py) and the
check (oracle/memory_model.py) only read them. Standard library only: the check is embedded in repro scripts.
"""

# arch -> which AMDGPUUsage code-sequence table applies
TABLES = {"gfx90a": "gfx90a", "gfx942": "gfx942", "gfx950": "gfx942"}
SCOPES = {"workgroup": 1, "agent": 2, "system": 3}
SCOPE_NAMES = {rank: name for name, rank in SCOPES.items()}  # rank 0 (or unknown) is "wavefront"

# release scopes that need an L2 writeback, and its text, per table
WRITEBACK = {"gfx942": {"agent": "buffer_wbl2 sc1", "system": "buffer_wbl2 sc0 sc1"},
             "gfx90a": {"system": "buffer_wbl2"}}
INVALIDATE = {"gfx942": {"agent": "buffer_inv sc1", "system": "buffer_inv sc0 sc1"},
              "gfx90a": {"agent": "buffer_wbinvl1_vol", "system": "buffer_invl2; buffer_wbinvl1_vol"}}

# GFX9 instruction classes (by mnemonic, or mnemonic prefix): invalidates, and what counts on vmcnt / lgkmcnt
INVALIDATES = ("buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_invl2", "buffer_wbinvl1_sc")
VMEM = ("buffer_", "global_", "flat_", "scratch_", "tbuffer_", "image_")
LGKM = ("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_atomic", "s_buffer_atomic", "s_dcache_wb",
        "s_memtime", "s_memrealtime", "ds_", "flat_")
CACHE_BITS = ("sc0", "sc1", "nt", "glc", "slc", "dlc", "scc")  # cache-policy operands kept in a violation's shape

# IR atomicrmw operation -> the asm atomic's opcode stem (``global_atomic_<stem>``)
RMW_STEM = {"xchg": "swap", "add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "max": "smax",
            "min": "smin", "umax": "umax", "umin": "umin", "fadd": "add_f", "fmax": "max_f", "fmin": "min_f",
            "uinc_wrap": "inc", "udec_wrap": "dec"}
