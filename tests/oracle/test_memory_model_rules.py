"""The memory-model checker's rules on hand-written AMDGCN and LLVM IR: each required wait, writeback and
invalidate, in any spelling, on every path, and what is out of scope (targets without a table). The checks on
compiled Triton kernels are in test_memory_model.py."""
import json
import textwrap

import pytest

from gfxhound.oracle import memory_model as mm
from gfxhound.oracle.memory_model_plant import remove_fence_wait


def _kernel(body):
    return "\n".join(["\t.type\tk,@function", "k:"] + ["\t" + line if not line.endswith(":") else line
                                                        for line in textwrap.dedent(body).strip().splitlines()]
                     + [".Lfunc_end0:", "\t.size\tk, .Lfunc_end0-k"]) + "\n"


ACQUIRE = """
    s_load_dwordx2 s[2:3], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    global_atomic_add v0, v1, s[2:3]
    {wait}
    buffer_inv sc1
    s_endpgm
"""


@pytest.mark.parametrize("wait", ["s_waitcnt vmcnt(0)", "s_waitcnt vmcnt(0) lgkmcnt(0)",
                                  "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)", "s_waitcnt 0", "s_waitcnt 0x3f70"])
def test_the_acquire_wait_in_any_spelling_counts(wait):
    report = mm.check(_kernel(ACQUIRE.format(wait=wait)), "gfx942")
    assert (report.atomics, report.fences, report.violations) == (1, 0, [])


@pytest.mark.parametrize("wait", ["", "s_waitcnt lgkmcnt(0)", "s_waitcnt vmcnt(1)"])
def test_an_acquire_without_its_wait_is_reported(wait):
    text = _kernel(ACQUIRE.format(wait=wait))
    [v] = mm.check(text, "gfx942").violations
    assert (v.rule, v.instruction, v.missing) == ("acquire-agent:wait-before-inv", "global_atomic_add v0, v1, s[2:3]",
                                                  "s_waitcnt vmcnt(0) before buffer_inv sc1")
    assert text.splitlines()[v.line - 1].strip() == v.instruction
    assert v.message() == ("acquire-agent:wait-before-inv: global_atomic_add: "
                           "missing s_waitcnt vmcnt(0) before buffer_inv sc1")


def test_the_message_is_the_same_for_other_registers_and_lines():
    a = mm.check(_kernel(ACQUIRE.format(wait="")), "gfx942").violations[0]
    b = mm.check(_kernel("s_nop 0\n" + ACQUIRE.format(wait="").replace("v0, v1", "v4, v7")), "gfx942").violations[0]
    assert a.line != b.line and a.instruction != b.instruction and a.message() == b.message()
    assert json.loads(json.dumps(mm.check(_kernel(ACQUIRE.format(wait="")), "gfx950").to_json()))["violations"][0][
        "message"] == a.message()


def test_a_wait_already_satisfied_before_the_writeback_still_needs_one_after_it():
    """The writeback itself is outstanding on vmcnt until waited for: an earlier wait does not cover it."""
    body = """
        global_store_dword v0, v1, s[2:3]
        s_waitcnt vmcnt(0)
        buffer_wbl2 sc0 sc1
        {wait}
        global_atomic_add v0, v1, s[2:3] sc1
        s_endpgm
    """
    assert mm.check(_kernel(body.format(wait="s_waitcnt vmcnt(0)")), "gfx942").violations == []
    [v] = mm.check(_kernel(body.format(wait="")), "gfx942").violations
    assert (v.rule, v.missing) == ("release-system:wait-after-wbl2", "s_waitcnt vmcnt(0) after buffer_wbl2 sc0 sc1")


def test_waits_are_followed_across_blocks_and_every_path_must_have_one():
    """The atomic optimizer puts the atomic under s_cbranch_execz: a wait before the branch covers both paths into
    the invalidate's block; a wait on the fall-through path only leaves the atomic outstanding on the other."""
    body = """
        global_atomic_add v0, v1, s[2:3]
        {before}
        s_cbranch_execz .LBB0_2
        {after}
        v_mov_b32_e32 v5, 0
    .LBB0_2:
        buffer_inv sc1
        s_endpgm
    """
    ok = _kernel(body.format(before="s_waitcnt vmcnt(0) lgkmcnt(0)", after="s_nop 0"))
    assert mm.check(ok, "gfx942").violations == []
    bad = _kernel(body.format(before="s_nop 0", after="s_waitcnt vmcnt(0)"))
    [v] = mm.check(bad, "gfx942").violations
    assert (v.rule, v.instruction) == ("acquire-agent:wait-before-inv", "global_atomic_add v0, v1, s[2:3]")


AGENT_RELEASE_IR = """
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %1 = atomicrmw xchg ptr addrspace(1) %p, i32 0 syncscope("agent") release, align 4
  ret void
}
"""


def test_a_loop_back_edge_brings_its_outstanding_load_to_the_release():
    """gfx90a agent release is a bare wait (no writeback): the IR says the swap is a release, and the load of the
    previous iteration is outstanding at it on the back edge only."""
    body = """
    .LBB0_1:
        {wait}
        global_atomic_swap v0, v1, s[2:3]
        global_load_dword v3, v0, s[4:5]
        s_cbranch_vccnz .LBB0_1
        s_endpgm
    """
    assert mm.check(_kernel(body.format(wait="s_waitcnt vmcnt(0)")), "gfx90a", AGENT_RELEASE_IR).violations == []
    bad = _kernel(body.format(wait="s_nop 0"))
    assert mm.check(bad, "gfx90a").violations == []
    [v] = mm.check(bad, "gfx90a", AGENT_RELEASE_IR).violations
    assert (v.rule, v.missing) == ("release-agent:wait-before-atomic", "s_waitcnt vmcnt(0) before the atomic")
    straight = _kernel(body.format(wait="s_nop 0").replace("s_cbranch_vccnz .LBB0_1", "s_nop 0"))
    assert mm.check(straight, "gfx90a", AGENT_RELEASE_IR).violations == []


SYSTEM_RELEASE_IR = """
define amdgpu_kernel void @k(ptr addrspace(1) %p) !dbg !4 {
  %1 = atomicrmw add ptr addrspace(1) %p, i32 1 release, align 4, !dbg !11
  ret void
}
!11 = !DILocation(line: 7, column: 5, scope: !4)
"""


def test_a_system_release_without_its_writeback_is_reported_with_the_ir():
    body = """
        .loc 1 7 5
        {wb}
        s_waitcnt vmcnt(0)
        global_atomic_add v0, v1, s[2:3] sc1
        s_endpgm
    """
    assert mm.check(_kernel(body.format(wb="buffer_wbl2 sc0 sc1")), "gfx942", SYSTEM_RELEASE_IR).violations == []
    for wb in ("s_nop 0", "buffer_wbl2 sc1"):  # none, or only an agent-scope one
        text = _kernel(body.format(wb=wb))
        assert mm.check(text, "gfx942").violations == []  # the assembly alone cannot tell it is a release
        [v] = mm.check(text, "gfx942", SYSTEM_RELEASE_IR).violations
        assert (v.rule, v.missing) == ("release-system:wbl2-missing", "buffer_wbl2 sc0 sc1 before the atomic")


def test_a_release_needs_lgkmcnt_zero_too_unless_the_scope_is_one_as():
    body = """
        s_waitcnt lgkmcnt(0)
        ds_read_b32 v3, v0
        buffer_wbl2 sc1
        s_waitcnt vmcnt(0)
        global_atomic_add v0, v1, s[2:3]
        s_endpgm
    """
    ir = SYSTEM_RELEASE_IR.replace("i32 1 release", 'i32 1 syncscope("agent") release')
    missing = [v.missing for v in mm.check(_kernel(body), "gfx942", ir).violations]
    assert missing == ["s_waitcnt lgkmcnt(0) after buffer_wbl2 sc1"]
    assert mm.check(_kernel(body), "gfx942", ir.replace('"agent"', '"agent-one-as"')).violations == []


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx908", "sm_90", "gfx9999"])
def test_an_arch_without_an_implemented_table_is_unsupported_and_nothing_is_checked(arch):
    report = mm.check(_kernel(ACQUIRE.format(wait="")), arch)
    assert report.table is None and report.unsupported and arch in report.unsupported
    assert (report.atomics, report.fences, report.violations) == (0, 0, [])
    assert report.to_json()["unsupported"] == report.unsupported


def test_a_target_id_with_features_uses_its_processor_table():
    assert mm.check(_kernel(ACQUIRE.format(wait="")), "gfx942:sramecc+:xnack-").table == "gfx942"


def test_there_is_nothing_to_remove_in_a_kernel_without_a_fence_sequence():
    with pytest.raises(ValueError):
        remove_fence_wait(_kernel("global_atomic_add v0, v1, s[2:3]\ns_waitcnt vmcnt(0)\ns_endpgm"))


def test_the_planted_removal_takes_the_vmcnt_wait_not_a_neighbouring_lgkmcnt_one():
    text = _kernel("""
        global_atomic_add v0, v1, s[2:3]
        s_waitcnt vmcnt(0)
        s_waitcnt lgkmcnt(0)
        buffer_inv sc1
        s_endpgm
    """)
    new, line = remove_fence_wait(text)
    assert text.splitlines()[line - 1].strip() == "s_waitcnt vmcnt(0)"
    assert [v.rule for v in mm.check(new, "gfx942").violations] == ["acquire-agent:wait-before-inv"]


def test_a_location_whose_code_sits_in_a_helper_function_is_satisfied_there():
    """Printf/hostcall helpers are separate functions whose .loc is the call site's: the check spans all of them."""
    ir = ('define amdgpu_kernel void @k() {\n  fence syncscope("agent") acquire, !dbg !13\n  ret void\n}\n'
          "!13 = !DILocation(line: 9, column: 14, scope: !7)\n")
    kernel = "\n".join(["\t.type\tk,@function", "k:", "\t.loc 1 9 14", "\ts_load_dwordx2 s[4:5], s[8:9], 0x50",
                        "\ts_endpgm", ".Lfunc_end0:"])
    helper = "\n".join(["\t.type\thelper,@function", "helper:", "\t.loc 1 9 14", "\tglobal_load_dwordx2 v[6:7], v10, s[4:5]",
                        "\ts_waitcnt vmcnt(0)", "\tbuffer_inv sc1", "\ts_setpc_b64 s[30:31]", ".Lfunc_end1:"])
    assert mm.check(kernel + "\n" + helper + "\n", "gfx942", ir).violations == []
    [v] = mm.check(kernel + "\n", "gfx942", ir).violations
    assert v.rule == "fence-acquire-agent:inv-missing"
