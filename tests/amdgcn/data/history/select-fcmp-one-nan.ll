; LLVM PR #213029 `[AMDGPU] Fix miscompile in performSelectCombine for fcmp one with NaN` (2026-07-30).
; The bug: `select (fcmp one x, K), y, K` is combined into a select on x itself where x equals K, so for a NaN x
;   (fcmp one is false, the select must give K = 12345.0) the code gives x (NaN).
; Buggy code generators: Debian llc-22.1.8 -O1/-O2 and Triton 3.5.1-3.8.0; llc-19, Triton 3.4.0 and -O0 are right.
; Fixed: Triton 3.9.0 (bundled LLVM b010a18d): v_cndmask_b32 between y and K.
; x is loaded as an i32 and bitcast, so the inputs' boundary patterns (0xffffffff) give NaNs.
; gfxhound emulate --mcpu gfx942 --opt 0,2 --launch 'a: i32[64]; b: fp32[64]; out: fp32[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @selone(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr float, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr float, ptr addrspace(1) %b, i64 %idx
  %xi = load i32, ptr addrspace(1) %pa
  %x = bitcast i32 %xi to float
  %y = load float, ptr addrspace(1) %pb
  %c = fcmp one float %x, 1.234500e+04
  %r = select i1 %c, float %y, float 1.234500e+04
  %q = getelementptr float, ptr addrspace(1) %out, i64 %idx
  store float %r, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
