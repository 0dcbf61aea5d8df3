; LLVM PR #80622 `[AMDGPU] Use correct number of bits needed for div/rem shrinking` (choikwa, 2024-02-04).
;   The PR text names no commit hash.
; The bug: AMDGPUCodeGenPrepare shrank an i64 sdiv whose operands are sign-extended i32 values (32 bits
;   used) into the 24-bit path (v_cvt_f32_i32, v_rcp_iflag_f32, one correction step), which is only exact
;   for |operands| < 2^24: e.g. 0x8b2b01e7 / 1 gives 0x8b2b0200.
; Buggy code generator: Debian llc-16 (and llc-15) -mcpu=gfx940 at -O1/-O2; -O0 (no CodeGenPrepare) is right.
; Fixed: llc-19 and llc-22 (-mcpu=gfx942) use the 32-bit expansion.
; gfxhound emulate --llc /usr/bin/llc-16 --mcpu gfx940 --opt 0,2 \
;   --launch 'a: i32[64]; b: i32[64]; out: i64[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @sdiv64_sext32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
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
  %q64 = sdiv i64 %x64, %d64
  %q = getelementptr i64, ptr addrspace(1) %out, i64 %idx
  store i64 %q64, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
