; out[t] = the f32 value of in[t]'s low fp8 byte (llvm.amdgcn.cvt.f32.fp8): FNUZ E4M3 on gfx942, OCP E4M3 on
; gfx950 (machine_fp8.py on the machine, its own conversion on the IR executor)
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
