; A direct call to an amdgpu_kernel: llc 14 to 19 stop with "LLVM ERROR: Unsupported calling convention for call";
; llc 22's IR verifier rejects the input ("calling convention does not permit calls"), so it cannot test.
define amdgpu_kernel void @k() {
  ret void
}

define void @f() {
  call amdgpu_kernel void @k()
  ret void
}
