; Triton's way of masking an LDS write (triton-lang/triton#9679, #10588): the address of a masked-off lane is
; 0x7fffffff, past the allocation, and the hardware drops the write. Every lane writes 1 to its slot, then the even
; lanes write 2 and the odd lanes write 3 at 0x7fffffff; out[t] = the slot: 2 for even t, 1 for odd t.
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [64 x i32] poison, align 4

define amdgpu_kernel void @lds_oob_store(ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %t
  store volatile i32 1, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %odd = and i32 %t, 1
  %even = icmp eq i32 %odd, 0
  %p = select i1 %even, ptr addrspace(3) %slot, ptr addrspace(3) inttoptr (i32 2147483647 to ptr addrspace(3))
  %v = select i1 %even, i32 2, i32 3
  store volatile i32 %v, ptr addrspace(3) %p
  call void @llvm.amdgcn.s.barrier()
  %r = load volatile i32, ptr addrspace(3) %slot
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
