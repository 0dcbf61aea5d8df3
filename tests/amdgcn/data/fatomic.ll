; Float atomics whose tabled pseudocode writes MEM[ADDR] with no address helper (decision 37): a global
; atomic with SADDR and an instruction offset, and a buffer atomic through a resource. Lane t adds x[t] to
; acc[t % 4 + 4] (16 bytes past the pointer: the instruction offset) and, through the buffer, to acc[t % 4].
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @fatomic(ptr addrspace(1) %x, ptr addrspace(1) %acc) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %t to i64
  %px = getelementptr float, ptr addrspace(1) %x, i64 %t64
  %v = load float, ptr addrspace(1) %px
  %slot = and i32 %t, 3
  %s64 = zext i32 %slot to i64
  %hi = getelementptr float, ptr addrspace(1) %acc, i64 4
  %p = getelementptr float, ptr addrspace(1) %hi, i64 %s64
  %old = atomicrmw fadd ptr addrspace(1) %p, float %v syncscope("agent") monotonic
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %acc, i16 0, i64 16, i32 159744)
  %off = shl i32 %slot, 2
  %r = call float @llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32(float %v, ptr addrspace(8) %rsrc, i32 %off, i32 0, i32 0)
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare float @llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32(float, ptr addrspace(8), i32, i32, i32)
