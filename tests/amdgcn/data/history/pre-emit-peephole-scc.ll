; LLVM PR #215829 `[AMDGPU] Fix si-pre-emit-peephole to preserve S_AND when SCC is alive` (2026-08-12), issue
;   #215745.
; The bug: after v_cmp_gt_i64 vcc, .. the pass deletes `s_and_b64 vcc, exec, vcc` although the SCC it writes is
;   read later by s_cselect_b32 (the uniform i64 select of the inner loop's bound on the branch's compare): the
;   selects read a stale SCC from an earlier s_addc_u32, and on the first outer iteration the bound is 0.
;   With carg = 6, out[0] is 1116118955; the code stores -536200262.
; Buggy code generators: Debian llc-22.1.8 and llc-19 at -O1/-O2 (also Triton 3.4.0-3.8.0); -O0 is right.
; Fixed: Triton 3.9.0 (bundled LLVM b010a18d) keeps the s_and_b64.
; gfxhound emulate --mcpu gfx942 --opt 0,2 --launch 'out: i32[512] out; A: i32[512]; carg: 6; grid: 1; block: 64'
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @sccand(ptr addrspace(1) %out, ptr addrspace(1) %A, i64 %carg) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %cnt = add i64 %carg, -1
  br label %outer
outer:
  %k = phi i64 [ 1, %entry ], [ %k1, %latch ]
  %kgtn = icmp sgt i64 %k, %cnt
  %bound = select i1 %kgtn, i64 0, i64 %cnt
  br i1 %kgtn, label %exit, label %inner
inner:
  %r = phi i64 [ %k, %outer ], [ %r1, %inner ]
  %acc = phi i32 [ 0, %outer ], [ %acc1, %inner ]
  %rm = and i64 %r, 7
  %off = shl i64 %rm, 6
  %ix = add i64 %off, %t64
  %p = getelementptr i32, ptr addrspace(1) %A, i64 %ix
  %v = load i32, ptr addrspace(1) %p
  %acc1 = add i32 %acc, %v
  %r1 = add i64 %r, 1
  %done = icmp sge i64 %r1, %bound
  br i1 %done, label %latch, label %inner
latch:
  %km = sub i64 %k, 1
  %km7 = and i64 %km, 7
  %oo = shl i64 %km7, 6
  %oix = add i64 %oo, %t64
  %q = getelementptr i32, ptr addrspace(1) %out, i64 %oix
  store i32 %acc1, ptr addrspace(1) %q
  %k1 = add i64 %k, 1
  br label %outer
exit:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
