target triple = "amdgpu9.42-amd-amdhsa"

define amdgpu_kernel void @kernel(ptr addrspace(1) %p0, i32 %v0) {
  fence acquire
  %1 = atomicrmw max ptr addrspace(1) %p0, i32 %v0 syncscope("agent") acquire, align 4
  ret void
}
