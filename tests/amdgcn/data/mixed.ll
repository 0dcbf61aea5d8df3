; syntax the other kernels lack: f16 vectors (packed math, op_sel), absolute value and negation modifiers, clamp,
; fma with a literal, an MFMA on accumulation registers, a readlane and a 64-bit float constant
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @mixed(ptr addrspace(1) %in, ptr addrspace(1) %h, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %x = load float, ptr addrspace(1) %p
  %ax = call float @llvm.fabs.f32(float %x)
  %nx = fneg float %ax
  %f = call float @llvm.fma.f32(float %nx, float %x, float 3.25)
  %c = call float @llvm.maxnum.f32(float %f, float 0.0)
  %cl = call float @llvm.minnum.f32(float %c, float 1.0)
  %ph = getelementptr <2 x half>, ptr addrspace(1) %h, i64 %idx
  %hv = load <2 x half>, ptr addrspace(1) %ph
  %sw = shufflevector <2 x half> %hv, <2 x half> poison, <2 x i32> <i32 1, i32 0>
  %hm = fmul <2 x half> %hv, %sw
  %ha = fadd <2 x half> %hm, <half 0xH3800, half 0xH4400>
  %h0 = extractelement <2 x half> %ha, i32 0
  %h1 = extractelement <2 x half> %ha, i32 1
  %hs = fadd half %h0, %h1
  %hf = fpext half %hs to float
  %acc = call <4 x float> @llvm.amdgcn.mfma.f32.4x4x1f32(float %x, float %cl, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %a0 = extractelement <4 x float> %acc, i32 0
  %a3 = extractelement <4 x float> %acc, i32 3
  %lane = call i32 @llvm.amdgcn.readlane.i32(i32 %t, i32 5)
  %lf = sitofp i32 %lane to float
  %s1 = fadd float %a0, %a3
  %s2 = fadd float %s1, %hf
  %s3 = fadd float %s2, %lf
  %d = fpext float %s3 to double
  %dd = fmul double %d, 0x3FC45F306DC9C882
  %r = fptrunc double %dd to float
  %po = getelementptr float, ptr addrspace(1) %out, i64 %idx
  store float %r, ptr addrspace(1) %po
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.fabs.f32(float)
declare float @llvm.fma.f32(float, float, float)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.minnum.f32(float, float)
declare <4 x float> @llvm.amdgcn.mfma.f32.4x4x1f32(float, float, <4 x float>, i32, i32, i32)
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
