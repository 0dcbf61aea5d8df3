; out[i] = in[i + shift] through raw buffer loads with the buffer's size as its bound (out of range reads 0)
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @buffer(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %nbytes, i32 %shift) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %nb64 = zext i32 %nbytes to i64
  %rin = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 %nb64, i32 159744)
  %rout = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %out, i16 0, i64 256, i32 159744)
  %j = add i32 %t, %shift
  %off = shl i32 %j, 2
  %x = call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %rin, i32 %off, i32 0, i32 0)
  %o = shl i32 %t, 2
  %y = add i32 %x, 1
  call void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32 %y, ptr addrspace(8) %rout, i32 %o, i32 0, i32 0)
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8), i32, i32, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32, ptr addrspace(8), i32, i32, i32)
