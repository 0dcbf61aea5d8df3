; LLVM PR #189655 `[AMDGPU][SIFoldOperands] Fix OR -1 fold` (2026-03-31), issue #189677.
; The bug: SIFoldOperands turns `v_or_b32 x, -1` into `v_mov_b32 x` (the fold of an OR with all-ones keeps the
;   wrong operand): `or <2 x i32> <x, 0>, <-1, x>` stores <x, x> instead of <-1, x>; for x = 0 element 0 is 0
;   where it must be 0xffffffff.
; Buggy code generators: Debian llc-22.1.8 -O1/-O2 and Triton 3.6.0-3.7.1; -O0, llc-19 and Triton 3.5.1 are right.
; Fixed: Triton 3.8.0 (bundled LLVM 5f07f818).
; Found by the history mining (generated kernels through every code generator at hand), reduced by hand.
; gfxhound emulate --mcpu gfx942 --opt 0,2 --launch 'in0: u32[64]; out0: u32[128] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %in0, ptr addrspace(1) %out0) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %g = zext i32 %tid to i64
  %p = getelementptr i32, ptr addrspace(1) %in0, i64 %g
  %x = load i32, ptr addrspace(1) %p
  %a = insertelement <2 x i32> <i32 0, i32 0>, i32 %x, i32 0
  %b = insertelement <2 x i32> <i32 -1, i32 7>, i32 %x, i32 1
  %o = or <2 x i32> %a, %b
  %q = getelementptr <2 x i32>, ptr addrspace(1) %out0, i64 %g
  store <2 x i32> %o, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
