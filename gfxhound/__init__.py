"""gfxhound: fuzz, judge, reduce, bisect and report bugs in Triton's AMD backend and LLVM's AMDGPU backend; this
folder is the ground floor every stage stands on (spec, records, signature, corpus, protocol, toolchain)."""
