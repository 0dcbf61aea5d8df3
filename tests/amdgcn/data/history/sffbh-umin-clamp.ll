; LLVM PR #201795 `[AMDGPU] Fix umin(sffbh(x), bitwidth) fold when x may be all-ones` (2026-06-05); the fold came
;   with PR #187694 (CTLS lowering, 2026-03-20).
; The bug: ctlz(x ^ (x >> 31)) (the count of leading sign bits) is selected as v_ffbh_i32 with the clamp
;   umin(.., 32) dropped; v_ffbh_i32 gives -1 for an all-ones input, so x = -1 gives 0xffffffff instead of 32.
; Buggy code generator: Triton 3.8.0 (bundled LLVM 5f07f818) only; llc-22 and Triton 3.4.0-3.7.1 predate the fold.
; Fixed: Triton 3.9.0 (bundled LLVM b010a18d): v_ffbh_i32, then v_min_u32 v1, 32, v1.
; gfxhound emulate --mcpu gfx942 --opt 0,2 --triton 3.8.0 --launch 'a: i32[64]; b: i32[64]; out: i32[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @sffbh(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %x0 = load i32, ptr addrspace(1) %pa
  %y = load i32, ptr addrspace(1) %pb
  %x = or i32 %x0, 1
  %s = ashr i32 %x, 31
  %t = xor i32 %x, %s
  %c = call i32 @llvm.ctlz.i32(i32 %t, i1 false)
  %q = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  store i32 %c, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.ctlz.i32(i32, i1)
