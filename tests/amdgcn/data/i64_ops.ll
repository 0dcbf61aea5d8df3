; 64-bit integer arithmetic: multiply, unsigned divide (a long expansion with carries), shifts, a 64-bit compare
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @i64_ops(ptr addrspace(1) %in, ptr addrspace(1) %out, i64 %d) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %p = getelementptr i64, ptr addrspace(1) %in, i64 %idx
  %x = load i64, ptr addrspace(1) %p
  %m = mul i64 %x, 6364136223846793005
  %q = udiv i64 %m, %d
  %s = ashr i64 %x, 7
  %r = lshr i64 %q, 33
  %a = add i64 %r, %s
  %c = icmp ugt i64 %a, 4294967296
  %v = select i1 %c, i64 %a, i64 -1
  %po = getelementptr i64, ptr addrspace(1) %out, i64 %idx
  store i64 %v, ptr addrspace(1) %po
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
