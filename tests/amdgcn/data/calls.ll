; c[t] = f(a[t], t) with f = x * y + 3 kept out of line (noinline): s_getpc/s_swappc, the callee's s_setpc, a stack
target triple = "amdgcn-amd-amdhsa"
define internal i32 @f(i32 %x, i32 %y) #0 {
  %m = mul i32 %x, %y
  %r = add i32 %m, 3
  ret i32 %r
}
define amdgpu_kernel void @calls(ptr addrspace(1) %a, ptr addrspace(1) %c) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %a, i32 %t
  %x = load i32, ptr addrspace(1) %p
  %r = call i32 @f(i32 %x, i32 %t)
  %q = getelementptr i32, ptr addrspace(1) %c, i32 %t
  store i32 %r, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
attributes #0 = { noinline }
