; out[t] = in[t] (a byte) through LDS, loaded by llvm.amdgcn.global.load.lds of 1 byte a lane: the IR executor runs
; it; the machine refuses global_load_lds_ubyte (what a byte form writes to LDS is not in our sources)
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [64 x i8] poison, align 4

define amdgpu_kernel void @load_lds_u8(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i8, ptr addrspace(1) %in, i32 %t
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %p, ptr addrspace(3) @lds, i32 1, i32 0, i32 0)
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  %l = getelementptr [64 x i8], ptr addrspace(3) @lds, i32 0, i32 %t
  %b = load i8, ptr addrspace(3) %l
  %v = zext i8 %b to i32
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
declare void @llvm.amdgcn.s.waitcnt(i32)
