; 16-bit LDS stores at an offset (ds_write_b16 ... offset:512) and 64-bit reads across four waves with a barrier
target triple = "amdgcn-amd-amdhsa"
@smem = internal addrspace(3) global [512 x half] undef, align 16
define amdgpu_kernel void @lds16(ptr addrspace(1) %a, ptr addrspace(1) %c) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr half, ptr addrspace(1) %a, i32 %t
  %x = load half, ptr addrspace(1) %pa
  %i = xor i32 %t, 37
  %ps = getelementptr half, ptr addrspace(3) @smem, i32 %i
  store half %x, ptr addrspace(3) %ps
  %i2 = add i32 %i, 256
  %ps2 = getelementptr half, ptr addrspace(3) @smem, i32 %i2
  store half %x, ptr addrspace(3) %ps2
  call void @llvm.amdgcn.s.barrier()
  %j = and i32 %t, 127
  %k = shl i32 %j, 2
  %pr = getelementptr half, ptr addrspace(3) @smem, i32 %k
  %v = load <4 x half>, ptr addrspace(3) %pr, align 8
  %pc = getelementptr <4 x half>, ptr addrspace(1) %c, i32 %t
  store <4 x half> %v, ptr addrspace(1) %pc
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
