
define void @autogen_SD1578() {
BB:
  %A.as5 = alloca <8 x float>, align 32, addrspace(5)
  %A = addrspacecast <8 x float> addrspace(5)* %A.as5 to <8 x float>*
  %L = load i8, i8* null, align 1
  ret void

CF176:                                            ; No predecessors!
  %L12 = load <8 x float>, <8 x float>* %A, align 32
  br label %CF165

CF165:                                            ; preds = %CF176
  br label %CF

CF:                                               ; preds = %CF180, %CF177, %CF, %CF165
  %L18 = load <1 x i16>, <1 x i16>* null, align 2
  br i1 false, label %CF, label %CF177

CF177:                                            ; preds = %CF
  br i1 false, label %CF, label %CF164

CF164:                                            ; preds = %CF168, %CF164, %CF177
  %L26 = load <8 x float>, <8 x float>* %A, align 32
  store i8 %L, i8* null, align 1
  br label %CF164

CF168:                                            ; No predecessors!
  %L41 = load i16, i16* null, align 2
  store <8 x float> %L12, <8 x float>* %A, align 32
  br label %CF164

CF180:                                            ; No predecessors!
  br label %CF
}
