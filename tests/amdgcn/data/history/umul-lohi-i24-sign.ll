; LLVM PR #105831 `[AMDGPU] Fix sign confusion in performMulLoHiCombine` (jayfoad, 2024-08-23;
;   `/cherry-pick d0fe52d` in the PR thread: fix commit d0fe52d, the only form of its hash the thread gives).
; The bug: UMUL_LOHI of two values known to be sign-extended 24-bit numbers was selected as
;   v_mul_i32_i24 / v_mul_hi_i32_i24 (a signed 24-bit multiply), so the high half of the unsigned
;   product of two negative 24-bit numbers (zero-extended to i64) comes out signed.
; Buggy code generator: Debian llc-16 (and llc-15) -mcpu=gfx940 at -O1/-O2 (v_mul_hi_i32_i24); -O0 is right.
; Fixed: llc-19 and llc-22 (-mcpu=gfx942): v_mul_hi_u32 / v_mad_u64_u32.
; gfxhound emulate --llc /usr/bin/llc-16 --mcpu gfx940 --opt 0,2 \
;   --launch 'a: i32[64]; b: i32[64]; out: u64[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @umul_lohi_i24(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %x = load i32, ptr addrspace(1) %pa
  %v = load i32, ptr addrspace(1) %pb
  ; sign-extend the low 24 bits: both operands are i24 values to the DAG
  %xs = shl i32 %x, 8
  %xa = ashr i32 %xs, 8
  %vs = shl i32 %v, 8
  %va = ashr i32 %vs, 8
  ; ... but the multiply is unsigned (zext to i64): an UMUL_LOHI
  %x64 = zext i32 %xa to i64
  %v64 = zext i32 %va to i64
  %m = mul i64 %x64, %v64
  %q = getelementptr i64, ptr addrspace(1) %out, i64 %idx
  store i64 %m, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
