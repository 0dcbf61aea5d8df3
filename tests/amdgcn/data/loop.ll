; out[t] = sum over k < n of in[k * 64 + t] * 0.5 + 1/(2pi): a loop (a backward branch, scc), inline float constants
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @loop(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %go = icmp sgt i32 %n, 0
  br i1 %go, label %body, label %done
body:
  %k = phi i32 [ 0, %entry ], [ %k1, %body ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %body ]
  %row = shl i32 %k, 6
  %j = add i32 %row, %t
  %jx = zext i32 %j to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %jx
  %x = load float, ptr addrspace(1) %p
  %h = fmul float %x, 0.5
  %a = fadd float %acc, %h
  %acc1 = fadd float %a, 0x3FC45F3060000000
  %k1 = add nuw nsw i32 %k, 1
  %more = icmp slt i32 %k1, %n
  br i1 %more, label %body, label %done
done:
  %res = phi float [ 0.0, %entry ], [ %acc1, %body ]
  %tx = zext i32 %t to i64
  %q = getelementptr float, ptr addrspace(1) %out, i64 %tx
  store float %res, ptr addrspace(1) %q
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
