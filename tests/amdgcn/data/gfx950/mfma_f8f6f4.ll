; gfx950's f8f6f4 MFMA (decision 48): lane t loads its A and B words from a + 32 * t and b + 32 * t and C from
; c + 4 * (lane's D registers); both scales are the constant 0, so llc selects the unscaled instruction.

define amdgpu_kernel void @m32_fp8_fp8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 4
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 4
  %pc = getelementptr <16 x float>, ptr addrspace(1) %c, i32 %t
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <16 x float> %vc, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <16 x float>, ptr addrspace(1) %d, i32 %t
  store <16 x float> %r, ptr addrspace(1) %pd, align 4
  ret void
}
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <16 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)

define amdgpu_kernel void @m32_bf8_fp8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 4
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 4
  %pc = getelementptr <16 x float>, ptr addrspace(1) %c, i32 %t
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <16 x float> %vc, i32 1, i32 0, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <16 x float>, ptr addrspace(1) %d, i32 %t
  store <16 x float> %r, ptr addrspace(1) %pd, align 4
  ret void
}

define amdgpu_kernel void @m32_fp6_bf6(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %va = load <6 x i32>, ptr addrspace(1) %pa, align 4
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %vb = load <6 x i32>, ptr addrspace(1) %pb, align 4
  %pc = getelementptr <16 x float>, ptr addrspace(1) %c, i32 %t
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v6i32(<6 x i32> %va, <6 x i32> %vb, <16 x float> %vc, i32 2, i32 3, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <16 x float>, ptr addrspace(1) %d, i32 %t
  store <16 x float> %r, ptr addrspace(1) %pd, align 4
  ret void
}
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v6i32.v6i32(<6 x i32>, <6 x i32>, <16 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)

define amdgpu_kernel void @m32_fp4_fp4(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %va = load <4 x i32>, ptr addrspace(1) %pa, align 4
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %vb = load <4 x i32>, ptr addrspace(1) %pb, align 4
  %pc = getelementptr <16 x float>, ptr addrspace(1) %c, i32 %t
  %vc = load <16 x float>, ptr addrspace(1) %pc, align 4
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32(<4 x i32> %va, <4 x i32> %vb, <16 x float> %vc, i32 4, i32 4, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <16 x float>, ptr addrspace(1) %d, i32 %t
  store <16 x float> %r, ptr addrspace(1) %pd, align 4
  ret void
}
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32(<4 x i32>, <4 x i32>, <16 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)

define amdgpu_kernel void @m16_fp8_bf8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 4
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 4
  %pc = getelementptr <4 x float>, ptr addrspace(1) %c, i32 %t
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <4 x float> %vc, i32 0, i32 1, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <4 x float>, ptr addrspace(1) %d, i32 %t
  store <4 x float> %r, ptr addrspace(1) %pd, align 4
  ret void
}
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <4 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)

define amdgpu_kernel void @m16_fp4_fp6(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %va = load <4 x i32>, ptr addrspace(1) %pa, align 4
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %vb = load <6 x i32>, ptr addrspace(1) %pb, align 4
  %pc = getelementptr <4 x float>, ptr addrspace(1) %c, i32 %t
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v6i32(<4 x i32> %va, <6 x i32> %vb, <4 x float> %vc, i32 4, i32 2, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <4 x float>, ptr addrspace(1) %d, i32 %t
  store <4 x float> %r, ptr addrspace(1) %pd, align 4
  ret void
}
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v6i32(<4 x i32>, <6 x i32>, <4 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)

declare i32 @llvm.amdgcn.workitem.id.x()
