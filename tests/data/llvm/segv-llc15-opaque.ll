; segv-llc14-15.ll in opaque-pointer syntax (`ptr`): llc 14 cannot parse it ("expected type"), llc 15 still crashes.
target triple = "amdgcn-amd-amdhsa"

define void @autogen_SD3076(i32 %0, i1 %Cmp39) {
BB:
  br label %CF248

CF248:                                            ; preds = %CF248, %BB
  %L12 = load <8 x float>, ptr null, align 32
  %Shuff14 = shufflevector <8 x float> %L12, <8 x float> undef, <8 x i32> <i32 undef, i32 1, i32 undef, i32 5, i32 7, i32 9, i32 undef, i32 13>
  br i1 false, label %CF248, label %CF249

CF249:                                            ; preds = %CF249, %CF248
  %Se22 = sext i1 false to i32
  %B36 = frem <8 x float> %Shuff14, %L12
  %Cmp391 = icmp eq i32 %0, 0
  br i1 %Cmp39, label %CF249, label %CF250

CF250:                                            ; preds = %CF249
  br label %CF245

CF245:                                            ; preds = %CF250
  store <8 x float> %B36, ptr null, align 32
  ret void

CF254:                                            ; preds = %CF254
  br label %CF254

CF258:                                            ; No predecessors!
  ret void
}
