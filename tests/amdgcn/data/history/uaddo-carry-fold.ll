; LLVM PR #204362 `[AMDGPU][DAGCombiner] Fix UADDO/USUBO_CARRY carry-out miscompile and remove redundant AMDGPU
;   combine` (2026-06-17; commit 1416b5f6de966f29e6b9c4f868c330e693ce8952).
; The bug: `uadd.with.overflow((x + y), carry(uadd(u, v)))` is folded into one v_addc_co_u32 of x, y and the first
;   carry, whose carry-out is taken as the second overflow: with every input 0xffffffff the overflow is 0 (x + y
;   wraps first, then adding the carry 1 gives 0xffffffff without a carry), the folded code says 1.
; Buggy code generators: Debian llc-22.1.8 and llc-19 at -O1/-O2 (also Triton 3.4.0-3.8.0); -O0 is right.
; Fixed: Triton 3.9.0 (bundled LLVM b010a18d): v_add_u32, then v_addc_co_u32 v1, vcc, 0, v1, vcc.
; gfxhound emulate --mcpu gfx942 --opt 0,2 --launch \
;   'a: i32[64]; b: i32[64]; c: i32[64]; d: i32[64]; out: u32[64] out; ovf: i32[64] out; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @uaddoc2(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d, ptr addrspace(1) %out, ptr addrspace(1) %ovf) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %tid to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %pc = getelementptr i32, ptr addrspace(1) %c, i64 %idx
  %pd = getelementptr i32, ptr addrspace(1) %d, i64 %idx
  %x = load i32, ptr addrspace(1) %pa
  %y = load i32, ptr addrspace(1) %pb
  %u = load i32, ptr addrspace(1) %pc
  %v = load i32, ptr addrspace(1) %pd
  %r1 = call { i32, i1 } @llvm.uadd.with.overflow.i32(i32 %u, i32 %v)
  %c1 = extractvalue { i32, i1 } %r1, 1
  %c1z = zext i1 %c1 to i32
  %s = add i32 %x, %y
  %r2 = call { i32, i1 } @llvm.uadd.with.overflow.i32(i32 %s, i32 %c1z)
  %sum = extractvalue { i32, i1 } %r2, 0
  %c2 = extractvalue { i32, i1 } %r2, 1
  %c2z = zext i1 %c2 to i32
  %q = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  store i32 %sum, ptr addrspace(1) %q
  %q2 = getelementptr i32, ptr addrspace(1) %ovf, i64 %idx
  store i32 %c2z, ptr addrspace(1) %q2
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare { i32, i1 } @llvm.uadd.with.overflow.i32(i32, i32)
