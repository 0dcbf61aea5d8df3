; LLVM PR #140608 `AMDGPU: Fix tracking subreg defs when folding through reg_sequence` (2025-05, fixes issue
;   #139317), or its sibling in the same stack, PR #140582 `AMDGPU: Check for subreg match when folding through
;   reg_sequence` (fixes #139908): not pinned to one of the two.
; The bug: si-fold-operands folds the immediate of the wrong half of a REG_SEQUENCE into a use of the other
;   half: the xor of an i64 with the bitcast <4 x i16> constant <u1, -1, 14690, -32768> takes -1 for its high
;   dword instead of 0x80003962 (v_xor_b32_e32 v3, -1, v3): in0 = 0, u1 = 7 gives 0xffffffffffff0007 instead
;   of 0x80003962ffff0007.
; Buggy code generator: Triton 3.4.0 (bundled LLVM 8957e64a); Debian llc-22 at -O0 and -O2 is right.
; Fixed: Triton 3.5.1 (bundled LLVM 7d5de303), which also compiles issue #139317's test right.
; Found by the history mining (generated kernels through every code generator at hand), reduced by hand.
; gfxhound emulate --mcpu gfx942 --opt 0,2 --triton 3.4.0 --launch 'in0: u64[64]; out0: u64[64] out; u1: 7; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %in0, ptr addrspace(1) %out0, i32 %u1) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gidx = zext i32 %tid to i64
  %p = getelementptr i64, ptr addrspace(1) %in0, i64 %gidx
  %x = load i64, ptr addrspace(1) %p
  %xv = bitcast i64 %x to <4 x i16>
  %lo = trunc i32 %u1 to i16
  %c = insertelement <4 x i16> <i16 0, i16 -1, i16 14690, i16 -32768>, i16 %lo, i32 0
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %inext, %body ]
  %acc = phi <4 x i16> [ %c, %entry ], [ %accn, %body ]
  %more = icmp ult i32 %i, 1
  br i1 %more, label %body, label %done
body:
  %accn = mul <4 x i16> %acc, %xv
  %inext = add i32 %i, 1
  br label %head
done:
  %ci = bitcast <4 x i16> %c to i64
  %v = xor i64 %x, %ci
  %ai = bitcast <4 x i16> %acc to i64
  %r = add i64 %v, %ai
  %po = getelementptr i64, ptr addrspace(1) %out0, i64 %gidx
  store i64 %r, ptr addrspace(1) %po
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
