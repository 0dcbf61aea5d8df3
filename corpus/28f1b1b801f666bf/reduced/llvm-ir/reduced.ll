target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgpu9.50-amd-amdhsa"

define amdgpu_kernel void @kernel(<2 x i32> %0) {
.preheader.preheader:
  %1 = tail call i32 @llvm.experimental.vector.extract.last.active.v2i32(<2 x i32> %0, <2 x i1> zeroinitializer, i32 0)
  %2 = tail call i32 @llvm.amdgcn.raw.ptr.buffer.atomic.add.i32(i32 %1, ptr addrspace(8) null, i32 0, i32 0, i32 0)
  ret void
}

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: readwrite)
declare i32 @llvm.amdgcn.raw.ptr.buffer.atomic.add.i32(i32, ptr addrspace(8) captures(none), i32, i32, i32 immarg) #0

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.experimental.vector.extract.last.active.v2i32(<2 x i32>, <2 x i1>, i32) #1

attributes #0 = { nocallback nofree nounwind willreturn memory(argmem: readwrite) }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
