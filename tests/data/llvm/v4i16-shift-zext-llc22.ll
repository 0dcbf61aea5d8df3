define amdgpu_kernel void @v4(ptr addrspace(1) %out, i16 %s) {
  %a = insertelement <4 x i16> zeroinitializer, i16 %s, i32 0
  %m = and <4 x i16> %a, <i16 15, i16 15, i16 15, i16 15>
  %x = lshr <4 x i16> <i16 1, i16 32767, i16 1, i16 1>, %m
  %k = and <4 x i16> %x, <i16 15, i16 15, i16 15, i16 15>
  %y = shl <4 x i16> %x, %k
  %e = extractelement <4 x i16> %y, i32 0
  %z = zext i16 %e to i32
  store i32 %z, ptr addrspace(1) %out
  ret void
}
