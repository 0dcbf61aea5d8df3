; Decision 39: llc selects fneg/fabs of the chosen float into the input modifiers of an untyped select:
; `v_cndmask_b32_e64 v1, |v2|, -v1, vcc`. r = x < y ? -x : |y|.
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @cndmask_negabs(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %o) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %t to i64
  %pa = getelementptr float, ptr addrspace(1) %a, i64 %t64
  %pb = getelementptr float, ptr addrspace(1) %b, i64 %t64
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %c = fcmp olt float %x, %y
  %nx = fneg float %x
  %ay = call float @llvm.fabs.f32(float %y)
  %r = select i1 %c, float %nx, float %ay
  %po = getelementptr float, ptr addrspace(1) %o, i64 %t64
  store float %r, ptr addrspace(1) %po
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.fabs.f32(float)
