; gfx950's transposing LDS reads (decision 47): each lane stores 16 bytes of `in` at LDS byte 16 * lane, then
; reads through ds.read.tr* at the LDS byte address addr[lane] and stores its result at out + 16 * lane.
@lds = internal addrspace(3) global [256 x i32] poison, align 16

define amdgpu_kernel void @tr16(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <4 x i32>, ptr addrspace(1) %in, i32 %t
  %v = load <4 x i32>, ptr addrspace(1) %gi, align 16
  %li = getelementptr <4 x i32>, ptr addrspace(3) @lds, i32 %t
  store <4 x i32> %v, ptr addrspace(3) %li, align 16
  call void @llvm.amdgcn.s.barrier()
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %t
  %a = load i32, ptr addrspace(1) %ga, align 4
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %a
  %r = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %go = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %t
  store <4 x i16> %r, ptr addrspace(1) %go, align 16
  ret void
}
declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))

define amdgpu_kernel void @tr8(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <4 x i32>, ptr addrspace(1) %in, i32 %t
  %v = load <4 x i32>, ptr addrspace(1) %gi, align 16
  %li = getelementptr <4 x i32>, ptr addrspace(3) @lds, i32 %t
  store <4 x i32> %v, ptr addrspace(3) %li, align 16
  call void @llvm.amdgcn.s.barrier()
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %t
  %a = load i32, ptr addrspace(1) %ga, align 4
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %a
  %r = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  %go = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %t
  store <2 x i32> %r, ptr addrspace(1) %go, align 16
  ret void
}
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))

define amdgpu_kernel void @tr4(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <4 x i32>, ptr addrspace(1) %in, i32 %t
  %v = load <4 x i32>, ptr addrspace(1) %gi, align 16
  %li = getelementptr <4 x i32>, ptr addrspace(3) @lds, i32 %t
  store <4 x i32> %v, ptr addrspace(3) %li, align 16
  call void @llvm.amdgcn.s.barrier()
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %t
  %a = load i32, ptr addrspace(1) %ga, align 4
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %a
  %r = call <2 x i32> @llvm.amdgcn.ds.read.tr4.b64.v2i32(ptr addrspace(3) %p)
  %go = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %t
  store <2 x i32> %r, ptr addrspace(1) %go, align 16
  ret void
}
declare <2 x i32> @llvm.amdgcn.ds.read.tr4.b64.v2i32(ptr addrspace(3))

define amdgpu_kernel void @tr6(ptr addrspace(1) %in, ptr addrspace(1) %addr, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %gi = getelementptr <4 x i32>, ptr addrspace(1) %in, i32 %t
  %v = load <4 x i32>, ptr addrspace(1) %gi, align 16
  %li = getelementptr <4 x i32>, ptr addrspace(3) @lds, i32 %t
  store <4 x i32> %v, ptr addrspace(3) %li, align 16
  call void @llvm.amdgcn.s.barrier()
  %ga = getelementptr i32, ptr addrspace(1) %addr, i32 %t
  %a = load i32, ptr addrspace(1) %ga, align 4
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %a
  %r = call <3 x i32> @llvm.amdgcn.ds.read.tr6.b96.v3i32(ptr addrspace(3) %p)
  %go = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %t
  store <3 x i32> %r, ptr addrspace(1) %go, align 16
  ret void
}
declare <3 x i32> @llvm.amdgcn.ds.read.tr6.b96.v3i32(ptr addrspace(3))

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
