; out[t] = in[t] + lds[255 - t] after every lane wrote lds[t]: an LDS array (group segment size 1024), a barrier
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [256 x float] poison, align 4

define amdgpu_kernel void @lds_barrier(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %pi = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %v = load float, ptr addrspace(1) %pi
  %pl = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %t
  store float %v, ptr addrspace(3) %pl
  call void @llvm.amdgcn.s.barrier()
  %r = sub i32 255, %t
  %pr = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %r
  %w = load float, ptr addrspace(3) %pr
  %s = fadd float %v, %w
  %po = getelementptr float, ptr addrspace(1) %out, i64 %idx
  store float %s, ptr addrspace(1) %po
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" }
