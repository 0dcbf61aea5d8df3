; c = A x B for one 16x16x16 f16 MFMA, A and B each loaded as 4 halves per lane, C zero
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @mfma(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <4 x half>, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr <4 x half>, ptr addrspace(1) %b, i32 %t
  %x = load <4 x half>, ptr addrspace(1) %pa
  %y = load <4 x half>, ptr addrspace(1) %pb
  %acc = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %x, <4 x half> %y, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %pc = getelementptr <4 x float>, ptr addrspace(1) %c, i32 %t
  store <4 x float> %acc, ptr addrspace(1) %pc
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32, i32, i32)
