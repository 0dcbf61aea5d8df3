; LLVM PR #198729 `[AMDGPU] Only fold mul24+add into V_MAD_U64_U32 when operands fit in 24 bits` (2026-05).
; The bug: the i64 `(zext (x & 0xffffff)) * (zext (y & 0xffffff)) + zext c` is selected as one
;   v_mad_u64_u32 on x and y with the AND masks stripped, as for a 24-bit multiply, but the instruction
;   multiplies all 32 bits: inputs 0xffffffff give 0xffffffff00000000 instead of 0x10000fe000000.
; Buggy code generators: Triton 3.4.0-3.7.1 (bundled LLVM up to 1f126a6d) and Debian llc-22.1.8 -O1/-O2
;   (llc-19 too; llc-16 is right); -O0 is right.
; Fixed: Triton 3.8.0 (bundled LLVM 5f07f818): v_mul_u32_u24 / v_mul_hi_u32_u24, then v_lshl_add_u64.
; gfxhound emulate --codegen triton --triton 3.7.1 --mcpu gfx942 --opt 0 \
;   --launch 'a: i32[64]; b: i32[64]; c: i32[64]; out: u64[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @mad24(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %pc = getelementptr i32, ptr addrspace(1) %c, i64 %idx
  %x0 = load i32, ptr addrspace(1) %pa
  %y0 = load i32, ptr addrspace(1) %pb
  %c0 = load i32, ptr addrspace(1) %pc
  %x = and i32 %x0, 16777215
  %y = and i32 %y0, 16777215
  %x64 = zext i32 %x to i64
  %y64 = zext i32 %y to i64
  %c64 = zext i32 %c0 to i64
  %m = mul i64 %x64, %y64
  %r = add i64 %m, %c64
  %q = getelementptr i64, ptr addrspace(1) %out, i64 %idx
  store i64 %r, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
