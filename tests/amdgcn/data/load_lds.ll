; out[t] = in[t] through LDS, loaded by llvm.amdgcn.global.load.lds (each lane's dword lands at the LDS base + 4 *
; lane): the IR executor (_to_lds) and the machine (decision 49) run it
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [64 x i32] poison, align 4

define amdgpu_kernel void @load_lds(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %t
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %p, ptr addrspace(3) @lds, i32 4, i32 0, i32 0)
  call void @llvm.amdgcn.s.waitcnt(i32 0)
  %l = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %t
  %v = load i32, ptr addrspace(3) %l
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
declare void @llvm.amdgcn.s.waitcnt(i32)
