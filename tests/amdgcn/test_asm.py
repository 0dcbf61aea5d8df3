"""gfxhound.executors.amdgcn.asm: llc-22's real output decoded into records (every instruction of every fixture kernel at
-O0 and -O2 for gfx942 and gfx950), known instructions' operands and modifiers, branch targets, and one-line
errors naming the line for what the decode does not know."""
import json
import re
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import AsmError, Program, parse_program, parse_statement
from gfxhound.executors.amdgcn.asm_modifiers import Modifier
from gfxhound.executors.amdgcn.asm_operands import Func, Imm, Label, Reg, Special, Src, Symbol, Waitcnt

DATA = Path(__file__).parent / "data"
KERNELS = sorted(p.stem for p in DATA.glob("*.ll"))


def compiled(kernel, mcpu="gfx942", opt=2):
    return parse_program(codegen.from_ll(DATA / f"{kernel}.ll", mcpu, opt).text)


def find(fn, name):
    """The first instruction written `name` (mnemonic with its suffix)."""
    return next(i for i in fn.instructions if i.name == name)


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_output_decodes_and_every_branch_lands(kernel, opt, mcpu):
    program = compiled(kernel, mcpu, opt)
    names = [f.name for f in program.functions]
    assert program.processor == mcpu and names[-1] == kernel and (len(names) == 1 or kernel == "calls")
    fn = program.function(kernel)
    assert fn.instructions[-1].mnemonic == "s_endpgm"
    assert [i.index for i in fn.instructions] == list(range(len(fn.instructions)))
    for ins in fn.instructions:
        label = [op for op in ins.operands if isinstance(op, Label)]
        assert (ins.target is not None) == bool(label)
        if label:
            assert ins.mnemonic.startswith(("s_branch", "s_cbranch_")) and fn.label(label[0].name) == ins.target
    assert Program.from_json(json.loads(program.dumps())) == program


def test_add_kernel_operands_and_its_bounds_check_branch():
    fn = compiled("add_i32").function("add_i32")
    first = fn.instructions[0]
    assert (first.mnemonic, first.encoding, first.operands) == \
        ("s_load_dword", "", (Reg("s", 0), Reg("s", 4, 2), Imm(24, "0x18")))  # n: kernarg offset 24
    mask = find(fn, "v_and_b32_e32")
    assert (mask.mnemonic, mask.encoding) == ("v_and_b32", "e32")
    assert mask.operands[1] == Imm(0x3FF, "0x3ff") and not mask.operands[1].inline  # a literal
    assert find(fn, "v_cmp_gt_i32_e32").operands[0] == Special("vcc")
    save = find(fn, "s_and_saveexec_b64")
    assert save.operands == (Reg("s", 0, 2), Special("vcc"))
    skip = find(fn, "s_cbranch_execz")
    assert fn.instructions[skip.target].mnemonic == "s_endpgm" and skip.target == len(fn.instructions) - 1
    assert find(fn, "global_load_dword").operands[2] == Special("off")


def test_loop_branches_back_and_inline_floats():
    fn = compiled("loop").function("loop")
    back = [i for i in fn.instructions if i.target is not None and i.target < i.index]
    assert len(back) == 1 and back[0].mnemonic == "s_cbranch_scc1"
    assert fn.instructions[back[0].target].name == "v_lshl_add_u64"  # the loop header's first instruction
    half = find(fn, "v_mul_f32_e32").operands[1]
    assert half == Imm(0.5, "0.5", "float") and half.inline
    user, = [i for i in fn.instructions if any(isinstance(op, Imm) and op.is_inv2pi for op in i.operands)]
    assert user.name == "v_add_f32_e32" and user.operands[1] == Imm(0.15915494309189535, "0.15915494", "float")
    assert user.operands[1].inline


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
def test_i64_kernel_literals_and_64_bit_operands(mcpu, opt):
    fn = compiled("i64_ops", mcpu, opt).function("i64_ops")
    literals = {op.value for i in fn.instructions for op in i.operands if isinstance(op, Imm) and not op.inline}
    assert {0x4C957F2D, 0x5851F42D} <= literals  # the halves of the multiplier 6364136223846793005
    loads = {i.operands[2].value: i.operands[0] for i in fn.instructions if i.name == "s_load_dwordx2"}
    assert loads[0x10].count == 2  # d, the i64 at kernarg offset 16
    shift = find(fn, "v_ashrrev_i64")
    assert shift.operands[0].count == 2 and shift.operands[2].count == 2
    if opt == 2:
        assert shift.operands[1] == Imm(7, "7")
        assert find(fn, "v_cmp_lt_u64_e32").operands == (Special("vcc"), Reg("s", 4, 2), Reg("v", 0, 2))


def test_dpp_controls():
    fn = compiled("dpp", "gfx950").function("dpp")
    quad = find(fn, "v_mov_b32_dpp")
    assert (quad.mnemonic, quad.encoding) == ("v_mov_b32", "dpp")
    assert quad.modifiers == (Modifier("quad_perm", (1, 0, 3, 2)), Modifier("row_mask", 0xA),
                              Modifier("bank_mask", 0x5))
    shift = find(fn, "v_add_u32_dpp")
    assert shift.mod("row_shl") == 1 and shift.mod("bound_ctrl") == 1 and shift.mod("row_mask") == 0xF
    assert shift.mod("quad_perm") is None


def test_modifiers_of_the_mixed_kernel():
    fn = compiled("mixed").function("mixed")
    fma = find(fn, "v_fma_f32")
    assert fma.operands[1] == Src(Reg("v", 1), neg=True, abs=True) and fma.mod("clamp") is True
    pk = find(fn, "v_pk_mul_f16")
    assert pk.mod("op_sel") == (0, 1) and pk.mod("op_sel_hi") == (1, 0)
    sdwa = find(fn, "v_add_f16_sdwa")
    assert (sdwa.encoding, sdwa.mod("src1_sel"), sdwa.mod("dst_unused")) == ("sdwa", "WORD_1", "UNUSED_PAD")
    mfma = next(i for i in fn.instructions if i.mnemonic.startswith("v_mfma"))
    assert mfma.operands[0] == Reg("a", 0, 4) and mfma.operands[3] == Imm(0, "0")
    f64 = find(fn, "v_mul_f64")
    assert f64.operands[2].is_inv2pi and f64.operands[2].text == "0.15915494309189532"
    assert find(fn, "v_readlane_b32").operands == (Reg("s", 2), Reg("v", 0), Imm(5, "5"))


def test_lds_offset_and_waitcnt():
    fn = compiled("lds_barrier").function("lds_barrier")
    read = find(fn, "ds_read_b32")
    assert read.modifiers == (Modifier("offset", 1020),)  # lds[255 - t]: 255 * 4 from the negated index
    assert any(i.mnemonic == "s_barrier" for i in fn.instructions)
    assert find(fn, "s_waitcnt").operands[0] in (Waitcnt(lgkmcnt=0), Waitcnt(vmcnt=0))


def test_preload_prologue_alignment_is_kept():
    fn = compiled("preload").function("preload")
    (index, power), = fn.aligns
    assert power == 8 and fn.instructions[index - 1].mnemonic == "s_branch"
    assert fn.instructions[index - 1].target == index


def test_hand_written_forms():
    program = parse_program((DATA / "syntax.s").read_text())
    assert Program.from_json(json.loads(program.dumps())) == program  # Func, Src, Symbol, Waitcnt records too
    fn = program.function("syntax")
    by_index = fn.instructions
    assert by_index[0].operands[1] == Func("hwreg", ("HW_REG_MODE", 0, 4))
    assert by_index[1].operands == (Special("m0"), Imm(-16, "-16")) and by_index[1].operands[1].inline
    assert by_index[3].operands == (Special("vcc_lo"), Special("exec_hi"))
    assert by_index[5].operands[0] == Reg("ttmp", 4, 2)
    assert by_index[6].operands[1] == Imm(-4.0, "-4.0", "float")
    assert by_index[10].operands[1] == Reg("s", 4, 2)  # VOP3 carry-out sdst
    assert by_index[13].operands[1:] == (Src(Reg("v", 0), abs=True), Src(Reg("v", 1), neg=True))
    assert by_index[13].mod("mul") == 2 and by_index[14].mod("div") == 2 and by_index[14].mod("clamp")
    assert by_index[15].mod("neg_lo") == (1, 0, 0) and by_index[15].mod("neg_hi") == (0, 1, 0)
    assert by_index[17].operands[1] == Src(Reg("v", 0), sext=True) and by_index[17].mod("src0_sel") == "BYTE_1"
    assert by_index[20].mod("offset0") == 1 and by_index[20].mod("offset1") == 2
    assert by_index[22].mod("offset") == Func("swizzle", ("QUAD_PERM", 1, 0, 3, 2))
    assert [m.name for m in by_index[23].modifiers] == ["offset", "sc0", "sc1", "nt"]
    assert by_index[23].mod("offset") == -16
    assert by_index[27].operands == () and by_index[27].mod("sc1")
    assert by_index[31].operands[2] == Symbol("syntax", "rel32@lo", 4)
    assert by_index[35].operands == (Waitcnt(0, 0, 0),)
    assert by_index[34].target == 36 and fn.label(".Lfunc_end0") == len(by_index)


@pytest.mark.parametrize("statement, message", [
    ("v_add_u32_e32 v0, foo(1), v1", "unknown operand 'foo(1)'"),
    ("global_load_dword v0, v1, s[0:1] frobnicate", "unknown modifier 'frobnicate'"),
    ("v_add_f32_e64 v0 clamp, v1, v2", "modifiers 'clamp' before the last operand"),
    ("v_mul_f32_e32 v0, 3.25, v1", "float 3.25 is not an inline constant"),
    ("v_mul_f32_e32 v0, -0.15915494, v1", "float -0.15915494 is not an inline constant"),
    ("v_mov_b32_e32 v0, v[3:1]", "ends before it starts"),
    ("v_mov_b32_dpp v0, v1 quad_perm:1", "quad_perm wants a list"),
    ("v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_7", "unknown dst_sel value"),
    ("V_ADD v0,, v1", "an empty operand"),
])
def test_unknown_syntax_names_the_line(statement, message):
    text = f"\t.text\n\t.type k,@function\nk:\n\ts_nop 0\n\t{statement} ; comment\n\ts_endpgm\n"
    with pytest.raises(AsmError, match=f"^line 5: .*{re.escape(message)}") as info:
        parse_program(text)
    assert "\n" not in str(info.value) and statement in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("\t.text\n\ts_nop 0\n", "line 2: instruction outside a function"),
    ("\t.text\n\t.type k,@function\nk:\n\ts_branch .LBB9_9\n", "line 4: branch target .LBB9_9 is not a label"),
    ("\t.text\n\t.type k,@function\nk:\n\t.long 5\n", "line 4: data directive inside function k"),
    ("\t.type k,@function\n\t.section .rodata\nk:\n\ts_nop 0\n", "line 4: instruction outside a function"),
    ("\t.text\n\t.type k,@function\nk:\n.L1:\n.L1:\n\ts_nop 0\n", "line 5: label .L1 defined twice"),
])
def test_structural_errors(text, message):
    with pytest.raises(AsmError, match=message):
        parse_program(text)


def test_statement_alone():
    ins = parse_statement("v_cndmask_b32_e32 v0, v1, v2, vcc", line=3, index=7)
    assert (ins.name, ins.line, ins.index, ins.operands[-1]) == ("v_cndmask_b32_e32", 3, 7, Special("vcc"))
