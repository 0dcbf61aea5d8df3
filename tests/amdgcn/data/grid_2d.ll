; out[y * width + x] = x * 3 + y for a 2-D grid: workgroup ids x and y, the workitem ids x and y (packed in v0 on
; gfx942/gfx950), no dispatch or queue pointer
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @grid_2d(ptr addrspace(1) %out, i32 %width) #0 {
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %bx = call i32 @llvm.amdgcn.workgroup.id.x()
  %by = call i32 @llvm.amdgcn.workgroup.id.y()
  %bx16 = shl i32 %bx, 4
  %by16 = shl i32 %by, 4
  %x = add i32 %bx16, %tx
  %y = add i32 %by16, %ty
  %row = mul i32 %y, %width
  %i = add i32 %row, %x
  %x3 = mul i32 %x, 3
  %v = add i32 %x3, %y
  %idx = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  store i32 %v, ptr addrspace(1) %p
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()

attributes #0 = { "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-z" "amdgpu-flat-work-group-size"="1,256" }
