; out[t] = in[t] + in[t's row neighbour]: llvm.amdgcn.update.dpp with a row shift, and a quad permutation of a float
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @dpp(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %in, i64 %idx
  %x = load i32, ptr addrspace(1) %p
  ; row_shl:1 (dpp_ctrl 0x101), row_mask 0xf, bank_mask 0xf, bound_ctrl
  %y = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x, i32 257, i32 15, i32 15, i1 true)
  ; quad_perm:[1,0,3,2] (dpp_ctrl 0xb1), row_mask 0xa, bank_mask 0x5
  %f = bitcast i32 %x to float
  %g = call float @llvm.amdgcn.update.dpp.f32(float 1.0, float %f, i32 177, i32 10, i32 5, i1 false)
  ; fptosi of an out-of-range float is poison (LangRef): freeze it, so random input bits stay defined
  %gi0 = fptosi float %g to i32
  %gi = freeze i32 %gi0
  %s = add i32 %y, %gi
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  store i32 %s, ptr addrspace(1) %po
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare float @llvm.amdgcn.update.dpp.f32(float, float, i32, i32, i32, i1)
