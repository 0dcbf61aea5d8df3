; c = a / b in f32 (IEEE division: llc expands it to div_scale, rcp, fma refinements, div_fmas, div_fixup)
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @fdiv(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %t
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %q = fdiv float %x, %y
  %pc = getelementptr float, ptr addrspace(1) %c, i32 %t
  store float %q, ptr addrspace(1) %pc
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
