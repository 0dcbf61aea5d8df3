; gfx950 (the 16-byte form): out[t] through LDS, loaded by llvm.amdgcn.raw.ptr.buffer.load.lds (SIZE bytes a lane at the LDS base +
; SIZE * lane, the instruction offset 16 added on both sides): decision 49 on the machine, _to_lds on the IR executor
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [272 x i32] poison, align 16

define amdgpu_kernel void @k4(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %r = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 4096, i32 159744)
  %vo = mul i32 %t, 4
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %r, ptr addrspace(3) @lds, i32 4, i32 %vo, i32 0, i32 16, i32 0)
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  %i = add i32 %t, 4
  %l = getelementptr i32, ptr addrspace(3) @lds, i32 %i
  %v = load i32, ptr addrspace(3) %l
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %q
  ret void
}

define amdgpu_kernel void @k16(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %r = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 4096, i32 159744)
  %vo = mul i32 %t, 16
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %r, ptr addrspace(3) @lds, i32 16, i32 %vo, i32 0, i32 16, i32 0)
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  %i = add i32 %t, 4
  %l = getelementptr <4 x i32>, ptr addrspace(3) @lds, i32 0
  %l2 = getelementptr i32, ptr addrspace(3) %l, i32 %i
  %v = load i32, ptr addrspace(3) %l2
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, i32)
declare void @llvm.amdgcn.s.waitcnt(i32)
