; c[i] = a[i] + b[i] for i < n: global loads/stores, a bounds check (exec masking), the kernarg pointer
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @add_i32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 256
  %i = add i32 %base, %tid
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %idx
  %pc = getelementptr i32, ptr addrspace(1) %c, i64 %idx
  %x = load i32, ptr addrspace(1) %pa
  %y = load i32, ptr addrspace(1) %pb
  %s = add i32 %x, %y
  store i32 %s, ptr addrspace(1) %pc
  br label %exit
exit:
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
