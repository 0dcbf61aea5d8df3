; out[t] = the f32 value of in[t]'s low fp8 byte (llvm.amdgcn.cvt.f32.fp8): the machine does not model fp8
; (gfx942's FNUZ and gfx950's OCP formats differ, and the pseudocode table is CDNA4's), so its run is unresolved
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @fp8(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %t
  %x = load i32, ptr addrspace(1) %p
  %f = call float @llvm.amdgcn.cvt.f32.fp8(i32 %x, i32 0)
  %q = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %f, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.amdgcn.cvt.f32.fp8(i32, i32)
