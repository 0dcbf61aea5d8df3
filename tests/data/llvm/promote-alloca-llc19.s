	.text
	.amdgcn_target "amdgcn-amd-amdhsa--gfx900"
	.globl	autogen_SD1578                  ; -- Begin function autogen_SD1578
	.p2align	2
	.type	autogen_SD1578,@function
autogen_SD1578:                         ; @autogen_SD1578
; %bb.0:                                ; %BB
	s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
	s_setpc_b64 s[30:31]
.Lfunc_end0:
	.size	autogen_SD1578, .Lfunc_end0-autogen_SD1578
                                        ; -- End function
	.section	.AMDGPU.csdata
; Function info:
; codeLenInByte = 8
; NumSgprs: 36
; NumVgprs: 0
; ScratchSize: 0
; MemoryBound: 0
	.section	".note.GNU-stack"
	.amdgpu_metadata
---
amdhsa.kernels:  []
amdhsa.target:   amdgcn-amd-amdhsa--gfx900
amdhsa.version:
  - 1
  - 1
...

	.end_amdgpu_metadata
