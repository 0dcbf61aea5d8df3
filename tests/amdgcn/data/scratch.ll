; out[t] = a[t] * (k & 7) through a private array (alloca in addrspace(5)): scratch_store/scratch_load
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @scratch(ptr addrspace(1) %a, ptr addrspace(1) %c, i32 %k) {
  %arr = alloca [8 x i32], align 4, addrspace(5)
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %a, i32 %t
  %x = load i32, ptr addrspace(1) %p
  br label %loop
loop:
  %i = phi i32 [0, %0], [%i1, %loop]
  %e = getelementptr [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %v = mul i32 %x, %i
  store volatile i32 %v, ptr addrspace(5) %e
  %i1 = add i32 %i, 1
  %d = icmp ult i32 %i1, 8
  br i1 %d, label %loop, label %out
out:
  %j = and i32 %k, 7
  %e2 = getelementptr [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %j
  %r = load volatile i32, ptr addrspace(5) %e2
  %q = getelementptr i32, ptr addrspace(1) %c, i32 %t
  store i32 %r, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
