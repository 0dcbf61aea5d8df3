	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.text
	.globl	syntax
	.p2align	8
	.type	syntax,@function
syntax:                                 ; hand-written: forms llc's outputs for the fixtures do not all show
	s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)
	s_mov_b32 m0, -16
	s_mov_b64 exec, -1
	s_mov_b32 vcc_lo, exec_hi
	s_mov_b32 ttmp4, 64
	s_mov_b64 ttmp[4:5], s[0:1]
	v_mov_b32_e32 v0, -4.0
	v_mov_b32_e32 v1, 0x41
	v_readlane_b32 s1, v0, m0
	v_cmp_eq_u32_e64 s[2:3], 0, v0
	v_add_co_u32_e64 v2, s[4:5], v0, v1
	v_addc_co_u32_e32 v3, vcc, v0, v1, vcc
	v_cndmask_b32_e64 v4, 0, 1, s[2:3]
	v_add_f32_e64 v5, |v0|, -v1 mul:2
	v_add_f32_e64 v5, v0, v1 clamp div:2
	v_pk_fma_f16 v6, v0, v1, v2 neg_lo:[1,0,0] neg_hi:[0,1,0]
	v_pk_add_f32 v[6:7], v[0:1], v[2:3] op_sel_hi:[1,0]
	v_add_u32_sdwa v7, sext(v0), v1 dst_sel:BYTE_0 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:WORD_0
	v_mov_b32_dpp v8, v0 row_shr:3 row_mask:0x3 bank_mask:0xc
	v_mov_b32_dpp v8, v0 row_bcast:15 row_mask:0xf bank_mask:0xf
	ds_write2_b32 v0, v1, v2 offset0:1 offset1:2
	ds_read_b64 v[10:11], v0 offset:65528
	ds_swizzle_b32 v9, v0 offset:swizzle(QUAD_PERM,1,0,3,2)
	global_load_dword v9, v0, s[0:1] offset:-16 sc0 sc1 nt
	global_store_dword v[0:1], v9, off offset:4095
	buffer_load_dword v9, v0, s[8:11], 0 offen offset:4
	scratch_store_dword off, v9, s0 offset:8
	buffer_wbl2 sc0 sc1
	v_accvgpr_write_b32 a0, v0
	v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15] cbsz:1 abid:1 blgp:2
	s_getpc_b64 s[6:7]
	s_add_u32 s6, s6, syntax@rel32@lo+4
	s_addc_u32 s7, s7, syntax@rel32@hi+12
	s_cmp_eq_u32 s0, 0
	s_cbranch_scc1 .LBB0_1
	s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
.LBB0_1:
	s_nop 7
	s_endpgm
.Lfunc_end0:
	.size	syntax, .Lfunc_end0-syntax
