; LLVM PR #106920 `[AMDGPU] Fix SDWA commuting` (yxsamliu, 2024-09-01); the PR text names no commit hash.
; The bug: SDWA instructions had no reverse opcode, so commuting V_SUB_U32_sdwa kept V_SUB_U32_sdwa
;   (and did not swap src0_sel/src1_sel); MachineCSE then took sub(y, x) for a copy of sub(x, y).
;   Here the 16-bit masks fold into both subtractions (SIPeepholeSDWA), machine-cse merges them, and
;   -O2 stores x - w into both outputs: one v_sub_u32_sdwa ... src0_sel:WORD_0 src1_sel:WORD_0.
; Buggy code generator: Debian llc-19 -mcpu=gfx942 at -O1/-O2 (llc-16 forms no SDWA here and is right).
; Fixed: llc-22 (-mcpu=gfx942).
; gfxhound emulate --llc /usr/bin/llc-19 --mcpu gfx942 --opt 0,2 \
;   --launch 'a: u32[64]; b: u32[64]; d1: u32[64] out; d2: u32[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @sub_both_ways_u16(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d1, ptr addrspace(1) %d2) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %va = load i32, ptr addrspace(1) %pa
  %vb = load i32, ptr addrspace(1) %pb
  %x = and i32 %va, 65535
  %w = and i32 %vb, 65535
  %s1 = sub i32 %x, %w                    ; x - w
  %s2 = sub i32 %w, %x                    ; w - x, the commuted subtraction
  %q1 = getelementptr i32, ptr addrspace(1) %d1, i64 %idx
  %q2 = getelementptr i32, ptr addrspace(1) %d2, i64 %idx
  store i32 %s1, ptr addrspace(1) %q1
  store i32 %s2, ptr addrspace(1) %q2
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
