; c = A x B for one gfx950 16x16x32 f16 MFMA (gfx950 only: not in the data/*.ll set every target compiles)
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @mfma(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x half>, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr <8 x half>, ptr addrspace(1) %b, i32 %t
  %x = load <8 x half>, ptr addrspace(1) %pa
  %y = load <8 x half>, ptr addrspace(1) %pb
  %acc = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half> %x, <8 x half> %y, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %pc = getelementptr <4 x float>, ptr addrspace(1) %c, i32 %t
  store <4 x float> %acc, ptr addrspace(1) %pc
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32, i32, i32)
