; out[t] = v + t with both arguments `inreg`: kernarg preload (gfx942/gfx950), SGPRs after the kernarg pointer hold
; the first kernarg dwords, and a compatibility prologue at the entry loads them for firmware without preload
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @preload(ptr addrspace(1) inreg %out, i32 inreg %v) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  %s = add i32 %v, %t
  store i32 %s, ptr addrspace(1) %p
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" }
