"""gfxhound.executors.amdgcn.abi: the start state of llc-22's real kernels, checked against the code llc wrote for them
(the register the code loads kernargs through is the one the ABI names, the prologue loads exactly the SGPRs
the preload fills, the registers the code uses fit the counts the descriptor gives)."""
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.abi import AbiError, KernelABI, SgprSlot, kernel_abi, kernel_abis
from gfxhound.executors.amdgcn.asm import parse_program
from gfxhound.executors.amdgcn.asm_operands import Imm, Reg

DATA = Path(__file__).parent / "data"
BOTH = pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
LEVELS = pytest.mark.parametrize("opt", [0, 2])


def build(kernel, mcpu="gfx942", opt=2):
    text = codegen.from_ll(DATA / f"{kernel}.ll", mcpu, opt).text
    program = parse_program(text)
    return kernel_abi(text, kernel, program), program.function(kernel)


def loads(instructions, base: Reg):
    """(destination, byte offset) of each s_load through `base`."""
    return [(i.operands[0], i.operands[2].value) for i in instructions
            if i.mnemonic.startswith("s_load_") and i.operands[1] == base and isinstance(i.operands[2], Imm)]


@BOTH
@LEVELS
def test_default_kernel_sgprs_and_kernarg_layout(mcpu, opt):
    abi, fn = build("add_i32", mcpu, opt)
    assert abi.processor == mcpu and abi.wavefront_size == 64 and abi.architected_flat_scratch
    assert [(s.what, s.first, s.count, s.user) for s in abi.sgprs] == [
        ("dispatch_ptr", 0, 2, True), ("queue_ptr", 2, 2, True), ("kernarg_segment_ptr", 4, 2, True),
        ("dispatch_id", 6, 2, True), ("workgroup_id_x", 8, 1, False), ("workgroup_id_y", 9, 1, False),
        ("workgroup_id_z", 10, 1, False)]
    assert abi.user_sgpr_count == 8 and abi.preload is None and abi.preload_entry is None
    visible = [(a.name, a.offset, a.size, a.value_kind, a.address_space) for a in abi.kernargs if not a.hidden]
    assert visible == [("a", 0, 8, "global_buffer", "global"), ("b", 8, 8, "global_buffer", "global"),
                       ("c", 16, 8, "global_buffer", "global"), ("n", 24, 4, "by_value", "")]
    assert abi.kernarg("n").offset == 24 and abi.kernarg_size == 288
    assert {a.value_kind for a in abi.kernargs if a.hidden} >= {"hidden_block_count_x", "hidden_group_size_x"}
    assert abi.group_segment_size == 0 and abi.private_segment_size == 0 and abi.workitem_id == 2


def test_the_code_loads_n_through_the_kernarg_pointer_the_abi_names():
    abi, fn = build("add_i32")
    slot = abi.sgpr("kernarg_segment_ptr")
    assert (Reg("s", 0), abi.kernarg("n").offset) in loads(fn.instructions, Reg("s", slot.first, 2))
    wg = abi.sgpr("workgroup_id_x").first
    assert fn.instructions[2].render() == f"v_lshl_add_u32 v0, s{wg}, 8, v0"  # wg * 256 + tid


@BOTH
def test_grid_without_dispatch_pointer_packs_the_workitem_ids(mcpu):
    abi, fn = build("grid_2d", mcpu)
    assert [(s.what, s.first) for s in abi.sgprs][:3] == \
        [("kernarg_segment_ptr", 0), ("workgroup_id_x", 2), ("workgroup_id_y", 3)]
    assert abi.workitem_id == 1 and abi.packed_workitem_ids
    assert abi.workitem_vgprs(5, 7, 9) == ((0, 5 | 7 << 10),)  # z is not enabled: reads 0
    assert "v_bfe_u32 v0, v0, 10, 10" in [i.render() for i in fn.instructions]  # the code unpacks y
    assert loads(fn.instructions, Reg("s", 0, 2)) == [(Reg("s", 4, 2), 0), (Reg("s", 6), abi.kernarg("width").offset)]


def test_an_unpacked_target_with_a_private_segment_buffer_orders_the_user_sgprs():
    """gfx908 (absolute flat scratch, unpacked ids): the buffer s[0:3] first, flat scratch init after the
    kernarg pointer, workgroup ids after user_sgpr_count; y in v1. The code reads s8, s9 and v1."""
    abi, fn = build("grid_2d", "gfx908")
    assert [(s.what, s.first, s.count) for s in abi.sgprs][:5] == [
        ("private_segment_buffer", 0, 4), ("kernarg_segment_ptr", 4, 2), ("flat_scratch_init", 6, 2),
        ("workgroup_id_x", 8, 1), ("workgroup_id_y", 9, 1)]
    assert not abi.packed_workitem_ids and abi.workitem_vgprs(5, 7) == ((0, 5), (1, 7))
    assert [i.render() for i in fn.instructions if i.mnemonic == "v_lshl_add_u32"] == \
        ["v_lshl_add_u32 v0, s8, 4, v0", "v_lshl_add_u32 v1, s9, 4, v1"]


@BOTH
@LEVELS
def test_kernarg_preload_and_both_entries(mcpu, opt):
    abi, fn = build("preload", mcpu, opt)
    assert abi.sgpr("kernarg_segment_ptr") == SgprSlot("kernarg_segment_ptr", 0, 2, True)
    assert abi.preload == SgprSlot("kernarg_preload", 2, 3, True, 0)  # out (2 dwords) and v
    assert abi.sgpr("workgroup_id_x").first == 5 == abi.user_sgpr_count
    assert abi.entry == 0 and abi.preload_entry is not None
    jump = fn.instructions[abi.preload_entry - 1]
    assert jump.mnemonic == "s_branch" and jump.target == abi.preload_entry
    # the compatibility prologue loads, through the kernarg pointer, exactly what the firmware would preload
    prologue = fn.instructions[:abi.preload_entry]
    loaded = {}
    for dest, offset in loads(prologue, Reg("s", 0, 2)):
        for k in range(dest.count):
            loaded[dest.index + k] = offset + 4 * k
    slot = abi.preload
    assert loaded == {slot.first + k: slot.kernarg_offset + 4 * k for k in range(slot.count)}
    kernargs = (0x1122334455667788).to_bytes(8, "little") + (7).to_bytes(4, "little")
    assert abi.preloaded_values(kernargs) == ((2, 0x55667788), (3, 0x11223344), (4, 7))


def test_lds_size_and_register_counts_cover_the_code():
    abi, _ = build("lds_barrier", "gfx950")
    assert abi.group_segment_size == 1024 and abi.max_flat_workgroup_size == 256
    for mcpu in ("gfx942", "gfx950"):
        abi, fn = build("mixed", mcpu)
        regs = [op for i in fn.instructions for op in i.operands if isinstance(op, Reg)]
        top = {f: max((r.last for r in regs if r.file == f), default=-1) + 1 for f in "sva"}
        assert top["v"] <= abi.accum_offset and top["a"] <= abi.agpr_count and top["a"] >= 1
        assert abi.accum_offset + abi.agpr_count <= abi.next_free_vgpr
        assert top["s"] <= abi.next_free_sgpr


def test_json_round_trip_and_a_newer_format():
    abi, _ = build("preload")
    assert KernelABI.from_json(abi.to_json()) == abi
    with pytest.raises(ValueError, match="newer"):
        KernelABI.from_json({**abi.to_json(), "format": 9})


def test_the_code_object_gives_the_same_start(tmp_path):
    import subprocess
    obj = tmp_path / "preload.o"
    subprocess.run([codegen.find_llc(), "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O2", "-filetype=obj",
                    str(DATA / "preload.ll"), "-o", str(obj)], check=True, timeout=60)
    text = codegen.from_object(obj).text
    from_o = kernel_abi(text)
    from_s, fn_s = build("preload")
    assert (from_o.sgprs, from_o.kernargs, from_o.user_sgpr_count) == (from_s.sgprs, from_s.kernargs, 5)
    fn_o = parse_program(text).function("preload")
    assert [i.render() for i in fn_o.instructions[from_o.preload_entry:]] == \
        [i.render() for i in fn_s.instructions[from_s.preload_entry:]]


def _text(descriptor: str, meta: str = "") -> str:
    meta = meta or ("amdhsa.kernels:\n  - .name: k\n    .args:\n      - .offset: 0\n        .size: 8\n"
                    "        .value_kind: global_buffer\n        .address_space: global\n"
                    "amdhsa.target: amdgcn-amd-amdhsa--gfx942\n")
    return (f'\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\t.text\n\t.type k,@function\nk:\n\ts_endpgm\n'
            f"\t.size k, 4\n\t.section .rodata\n.amdhsa_kernel k\n{descriptor}.end_amdhsa_kernel\n"
            f"\t.amdgpu_metadata\n---\n{meta}...\n\t.end_amdgpu_metadata\n")


def test_descriptor_expressions_over_set_symbols():
    text = _text("\t.amdhsa_group_segment_fixed_size 0\n\t.amdhsa_private_segment_fixed_size 0\n"
                 "\t.amdhsa_user_sgpr_kernarg_segment_ptr 1\n\t.amdhsa_next_free_vgpr max(k.num_vgpr + 2, 1)\n"
                 "\t.amdhsa_next_free_sgpr totalnumsgprs(k.numbered_sgpr)\n") + "\t.set k.num_vgpr, 5\n"
    abi = kernel_abi(text)
    assert abi.next_free_vgpr == 7 and abi.next_free_sgpr is None  # a function it does not know: None
    assert abi.sgprs[:2] == (SgprSlot("kernarg_segment_ptr", 0, 2, True), SgprSlot("workgroup_id_x", 2, 1, False))


@pytest.mark.parametrize("descriptor, meta, message", [
    ("\t.amdhsa_group_segment_fixed_size 0\n\t.amdhsa_private_segment_fixed_size 0\n"
     "\t.amdhsa_user_sgpr_dispatch_ptr 1\n\t.amdhsa_user_sgpr_kernarg_segment_ptr 1\n\t.amdhsa_user_sgpr_count 2\n",
     "", "user_sgpr_count 2 is fewer than the 4 user SGPRs"),
    ("\t.amdhsa_private_segment_fixed_size 0\n", "", "no .amdhsa_group_segment_fixed_size"),
    ("\t.amdhsa_group_segment_fixed_size 0\n\t.amdhsa_private_segment_fixed_size 0\n",
     "amdhsa.kernels:\n  - .name: other\n", "kernel k: no .amdgpu_metadata entry"),
    ("\t.amdhsa_group_segment_fixed_size 0\n\t.amdhsa_private_segment_fixed_size 0\n"
     "\t.amdhsa_user_sgpr_private_segment_buffer 1\n", "", "architected flat scratch"),
    ("\t.amdhsa_group_segment_fixed_size 0\n\t.amdhsa_private_segment_fixed_size 0\n"
     "\t.amdhsa_user_sgpr_dispatch_ptr f(x)\n", "", ".amdhsa_user_sgpr_dispatch_ptr f\\(x\\) is not a number"),
    ("\t.amdhsa_group_segment_fixed_size 0\n\t.amdhsa_private_segment_fixed_size 0\n",
     "amdhsa.kernels:\n  - .name: k\n    .args:\n      - .size: 4\n", "a metadata argument without an offset"),
])
def test_descriptors_the_start_cannot_be_set_up_from(descriptor, meta, message):
    with pytest.raises(AbiError, match=message) as info:
        kernel_abi(_text(descriptor, meta))
    assert "\n" not in str(info.value)


def test_a_text_of_two_kernels_wants_a_name(tmp_path):
    ll = tmp_path / "two.ll"
    ll.write_text('target triple = "amdgcn-amd-amdhsa"\n'
                  "define amdgpu_kernel void @one(ptr addrspace(1) %p) {\n  store i32 1, ptr addrspace(1) %p\n"
                  "  ret void\n}\n"
                  "define amdgpu_kernel void @two(i32 %x, ptr addrspace(1) %p) {\n  store i32 %x, ptr addrspace(1) %p\n"
                  "  ret void\n}\n")
    text = codegen.from_ll(ll, "gfx942").text
    abis = kernel_abis(text)
    assert list(abis) == ["one", "two"] and abis["two"].kernarg("p").offset == 8
    with pytest.raises(AbiError, match="2 kernels in the text \\(one, two\\): name one"):
        kernel_abi(text)
    with pytest.raises(AbiError, match="no kernel 'nope'"):
        kernel_abi(text, "nope")
