; lds_barrier.ll without its barrier: each lane reads lds[255 - t], written by another wave with no barrier in
; between -- a race, which shows as outputs that change with the order the machine runs the waves in
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [256 x float] poison, align 4

define amdgpu_kernel void @lds_race(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %pi = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %v = load float, ptr addrspace(1) %pi
  %pl = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %t
  store float %v, ptr addrspace(3) %pl
  %r = sub i32 255, %t
  %pr = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %r
  %w = load float, ptr addrspace(3) %pr
  %s = fadd float %v, %w
  %po = getelementptr float, ptr addrspace(1) %out, i64 %idx
  store float %s, ptr addrspace(1) %po
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" }
