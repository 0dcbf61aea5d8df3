; Constants on packed operands (decision 38): llc writes `v_pk_add_f32 v[0:1], v[0:1], 1.0 op_sel_hi:[1,0]` and
; the f16 form with `op_sel_hi:[1,0]` for a splat constant: the inline constant is one element's value in the
; low element. Each lane adds 1.0 to a <2 x float> and a <2 x half>, and multiplies a <2 x float> by 0.1 (a literal).
; An integer inline constant on a 16-bit packed op is different: `v_pk_add_u16 v1, v1, -1` adds -1 to both halves
; (the constant is the 32-bit sign-extended value, op_sel_hi picking its high half).
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @pkconst(ptr addrspace(1) %a, ptr addrspace(1) %h, ptr addrspace(1) %o, ptr addrspace(1) %oh, ptr addrspace(1) %om, ptr addrspace(1) %s, ptr addrspace(1) %os) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %t to i64
  %pa = getelementptr <2 x float>, ptr addrspace(1) %a, i64 %t64
  %x = load <2 x float>, ptr addrspace(1) %pa
  %y = fadd <2 x float> %x, <float 1.0, float 1.0>
  %po = getelementptr <2 x float>, ptr addrspace(1) %o, i64 %t64
  store <2 x float> %y, ptr addrspace(1) %po
  %m = fmul <2 x float> %x, <float 0x3FB99999A0000000, float 0x3FB99999A0000000>
  %pm = getelementptr <2 x float>, ptr addrspace(1) %om, i64 %t64
  store <2 x float> %m, ptr addrspace(1) %pm
  %ph = getelementptr <2 x half>, ptr addrspace(1) %h, i64 %t64
  %xh = load <2 x half>, ptr addrspace(1) %ph
  %yh = fadd <2 x half> %xh, <half 1.0, half 1.0>
  %poh = getelementptr <2 x half>, ptr addrspace(1) %oh, i64 %t64
  store <2 x half> %yh, ptr addrspace(1) %poh
  %ps = getelementptr <2 x i16>, ptr addrspace(1) %s, i64 %t64
  %xs = load <2 x i16>, ptr addrspace(1) %ps
  %ys = add <2 x i16> %xs, <i16 -1, i16 -1>
  %pos = getelementptr <2 x i16>, ptr addrspace(1) %os, i64 %t64
  store <2 x i16> %ys, ptr addrspace(1) %pos
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
