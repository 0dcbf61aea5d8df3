; out[t] = v_cvt_pknorm_i16_f32 of in[t] twice: its pseudocode calls f32_to_snorm, which the guide never defines,
; so the machine refuses it, naming the instruction
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @pknorm(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr float, ptr addrspace(1) %in, i32 %t
  %x = load float, ptr addrspace(1) %p
  %v = call <2 x i16> @llvm.amdgcn.cvt.pknorm.i16(float %x, float %x)
  %q = getelementptr <2 x i16>, ptr addrspace(1) %out, i32 %t
  store <2 x i16> %v, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare <2 x i16> @llvm.amdgcn.cvt.pknorm.i16(float, float)
