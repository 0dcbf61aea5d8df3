; LLVM PR #116733 `[AMDGPU] prevent shrinking udiv/urem if either operand is in (SignedMax,UnsignedMax]`
;   (choikwa, 2024-11-19), first landed as ce6e955ac374f2b86cbbb73b2f32174dffd85f25, reverted twice and
;   relanded as PR #119325 `Reapply [AMDGPU] prevent shrinking udiv/urem if either operand exceeds signed max`.
; The bug: AMDGPUCodeGenPrepare's getDivNumBits counted sign bits for an unsigned division too, so an i64
;   udiv of two sign-extended i32 values (33 sign bits each) was shrunk to a 32-bit udiv with a zero high
;   half: 0xffffffffbac0495f / 0x7fffffff gives 1 instead of 0x200000003.
; Buggy code generator: Debian llc-19 -mcpu=gfx942 at -O1/-O2 (also llc-15/16 at gfx940); -O0 is right.
; Fixed: llc-22 (-mcpu=gfx942) keeps the 64-bit expansion.
; gfxhound emulate --llc /usr/bin/llc-19 --mcpu gfx942 --opt 0,2 \
;   --launch 'a: i32[64]; b: i32[64]; out: u64[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @udiv64_sext(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %x = load i32, ptr addrspace(1) %pa
  %d0 = load i32, ptr addrspace(1) %pb
  %d = or i32 %d0, 1                      ; never zero
  %x64 = sext i32 %x to i64
  %d64 = sext i32 %d to i64
  %q64 = udiv i64 %x64, %d64
  %q = getelementptr i64, ptr addrspace(1) %out, i64 %idx
  store i64 %q64, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
