"""The static memory-model oracle (oracle/memory_model.py) on real Triton 3.9 output: every sem x scope of scalar
and 64-lane atomic_add, a cas/xchg spin lock and a volatile load pass clean on gfx942, gfx950 and gfx90a; a wait,
writeback or invalidate taken out of them is reported, including through Triton's own kernel override; and small
hand-written sequences pin down the counter model."""
import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest
import triton
import triton.language as tl

from gfxhound import compat
from gfxhound.oracle import memory_model as mm
from gfxhound.oracle.memory_model_plant import remove_fence_wait

ARCHES = ("gfx942", "gfx950", "gfx90a")
SEMS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("cta", "gpu", "sys")
LLVM_SCOPE = {"cta": "workgroup", "gpu": "agent", "sys": "system"}


@triton.jit
def add_scalar(p, v, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_add(p, v, sem=SEM, scope=SCOPE)


@triton.jit
def add_vector(p, v, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_add(p + tl.arange(0, 64), v, sem=SEM, scope=SCOPE)


@triton.jit
def spin(lock, data, out, SCOPE: tl.constexpr):
    while tl.atomic_cas(lock, 0, 1, sem="acquire", scope=SCOPE) != 0:
        pass
    tl.store(out, tl.load(data))
    tl.atomic_xchg(lock, 0, sem="release", scope=SCOPE)


@triton.jit
def vload(p, out):
    tl.store(out, tl.load(p, volatile=True))


def _ptr(name):
    return {"name": name, "kind": "ptr", "type": "*i32", "value": 4096}


def _const(name, value):
    return {"name": name, "kind": "constexpr", "value": value}


def _kernels():
    """(name, jit fn, args, sem, scope) of every kernel the survey in docs/memory-model.md covers."""
    out = []
    for sem in SEMS:
        for scope in SCOPES:
            args = [_ptr("p"), {"name": "v", "kind": "int", "type": "i32", "value": 3},
                    _const("SEM", sem), _const("SCOPE", scope)]
            out.append(("scalar", add_scalar, args, sem, scope))
            out.append(("vector", add_vector, args, sem, scope))
    for scope in SCOPES:
        out.append(("spin", spin, [_ptr("lock"), _ptr("data"), _ptr("out"), _const("SCOPE", scope)], "spin", scope))
    out.append(("vload", vload, [_ptr("p"), _ptr("out")], "volatile", "-"))
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """{(arch, name, sem, scope): (amdgcn, llir)}: each kernel compiled once, in a cache of its own."""
    cache = tmp_path_factory.mktemp("triton-cache")
    out = {}
    with compat.environment({"TRITON_CACHE_DIR": str(cache), "TRITON_DEFAULT_FP_FUSION": "1"}):
        for arch in ARCHES:
            for name, fn, args, sem, scope in _kernels():
                c = compat.compile_for_amd(fn, args, arch, {})
                out[(arch, name, sem, scope)] = (c.asm["amdgcn"], c.asm["llir"])
    return out


def test_the_standalone_check_a_repro_embeds_needs_only_the_standard_library_and_agrees(compiled):
    """A memory-model finding's repro execs `standalone_source()` in an empty namespace (fuzz/repro.py): the pasted
    modules import nothing of gfxhound, and the text reports what the module does, planted violations included."""
    import ast
    source = mm.standalone_source()
    for node in ast.parse(source).body:  # (standalone_source's own imports sit in the function the repro never calls)
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module.split(".")[0] in sys.stdlib_module_names, ast.unparse(node)
        if isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] in sys.stdlib_module_names for a in node.names), ast.unparse(node)
    checker = {}
    exec(source, checker)
    for (arch, name, sem, scope), (asm, llir) in compiled.items():
        texts = [asm] + ([remove_fence_wait(asm)[0]] if _plantable(arch, "acq_rel" if name == "spin" else sem,
                                                                   scope) else [])
        for text in texts:
            for ir in (None, llir):
                assert checker["check"](text, arch, ir).to_json() == mm.check(text, arch, ir).to_json()


def _count(asm, *mnemonics):
    return sum(1 for line in asm.splitlines() if line.strip().split(" ")[0] in mnemonics
               and not line.strip().startswith((";", ".")))


def _cache_ops(arch, sem, scope):
    """(writebacks, invalidate sequences) AMDGPUUsage's table asks for around one atomic of this sem and scope."""
    if scope == "cta" or sem == "relaxed":
        return 0, 0
    releases, acquires = sem in ("release", "acq_rel"), sem in ("acquire", "acq_rel")
    needs_wb = scope in ("gpu", "sys") if arch != "gfx90a" else scope == "sys"
    return int(releases and needs_wb), int(acquires)


@pytest.mark.parametrize("arch", ARCHES)
def test_every_triton_atomic_passes_clean_with_the_counts_it_has(compiled, arch):
    for name, _, _, sem, scope in _kernels():
        asm, llir = compiled[(arch, name, sem, scope)]
        for report in (mm.check(asm, arch), mm.check(asm, arch, llir)):
            assert report.table == ("gfx90a" if arch == "gfx90a" else "gfx942")
            assert report.unsupported is None
            assert report.violations == [], (name, sem, scope, [v.message() for v in report.violations])
            assert report.atomics == {"scalar": 1, "vector": 1, "spin": 2, "vload": 0}[name], (name, sem, scope)
            assert report.fences == 0, (name, sem, scope)
        wbl2 = _count(asm, "buffer_wbl2")
        inv = _count(asm, "buffer_inv", "buffer_wbinvl1_vol")
        if name in ("scalar", "vector"):
            assert (wbl2, inv) == _cache_ops(arch, sem, scope), (name, sem, scope)
            vector_buffer = name == "vector" and arch != "gfx90a" and scope != "sys"
            assert _count(asm, "buffer_atomic_add" if vector_buffer else "global_atomic_add") == 1
        if name == "spin":
            assert (wbl2, inv) == (_cache_ops(arch, "release", scope)[0], _cache_ops(arch, "acquire", scope)[1])
            assert _count(asm, "global_atomic_cmpswap") == 1 and _count(asm, "global_atomic_swap") == 1
        if name == "vload":  # a volatile load is not an acquire: no invalidate, nothing to check
            assert (wbl2, inv) == (0, 0)


def _plantable(arch, sem, scope):
    return sum(_cache_ops(arch, sem, scope)) > 0


@pytest.mark.parametrize("arch", ARCHES)
def test_removing_the_fence_wait_is_reported(compiled, arch):
    planted = 0
    for name, _, _, sem, scope in _kernels():
        asm, llir = compiled[(arch, name, sem, scope)]
        wanted = _plantable(arch, "acq_rel" if name == "spin" else sem, scope)
        if not wanted:
            with pytest.raises(ValueError):
                remove_fence_wait(asm)
            continue
        new, line = remove_fence_wait(asm)
        assert asm.splitlines()[line - 1].strip() == "s_waitcnt vmcnt(0)"
        assert new.splitlines() == asm.splitlines()[:line - 1] + asm.splitlines()[line:]
        for report in (mm.check(new, arch), mm.check(new, arch, llir)):
            rules = {v.rule.split(":")[1] for v in report.violations}
            assert rules & {"wait-before-inv", "wait-after-wbl2"}, (name, sem, scope, report.violations)
            scopes = {v.rule.split(":")[0].rsplit("-", 1)[1] for v in report.violations}
            assert scopes == {LLVM_SCOPE[scope]}
        planted += 1
    # gfx942/gfx950: {acquire, release, acq_rel} x {gpu, sys} x {scalar, vector} + spin gpu/sys;
    # gfx90a has no agent-scope writeback, so release/gpu leaves nothing visible to remove
    assert planted == {"gfx90a": 12}.get(arch, 14)


def _drop(text, line_text, nth=0):
    lines = text.split("\n")
    index = [i for i, line in enumerate(lines) if line.strip() == line_text][nth]
    return "\n".join(lines[:index] + lines[index + 1:])


@pytest.mark.parametrize("arch, kernel, removed, nth, rule", [
    ("gfx942", ("scalar", "release", "gpu"), "buffer_wbl2 sc1", 0, "release-agent:wbl2-missing"),
    ("gfx950", ("scalar", "acq_rel", "sys"), "buffer_wbl2 sc0 sc1", 0, "release-system:wbl2-missing"),
    ("gfx942", ("scalar", "acquire", "gpu"), "buffer_inv sc1", 0, "acquire-agent:inv-missing"),
    ("gfx942", ("spin", "spin", "gpu"), "buffer_inv sc1", 0, "acquire-agent:inv-missing"),
    ("gfx942", ("spin", "spin", "sys"), "buffer_wbl2 sc0 sc1", 0, "release-system:wbl2-missing"),
    ("gfx942", ("vector", "acq_rel", "gpu"), "buffer_inv sc1", 0, "fence-acquire-agent:inv-missing"),
    ("gfx942", ("vector", "release", "gpu"), "buffer_wbl2 sc1", 0, "fence-release-agent:wbl2-missing"),
    ("gfx90a", ("spin", "spin", "gpu"), "s_waitcnt vmcnt(0)", 2, "release-agent:wait-before-atomic"),
    ("gfx90a", ("spin", "spin", "sys"), "buffer_invl2", 0, "acquire-system:inv-missing"),
])
def test_what_only_the_llvm_ir_says_is_checked_with_it(compiled, arch, kernel, removed, nth, rule):
    """Without the IR an atomic with no writeback looks relaxed; with it, the missing piece is named."""
    asm, llir = compiled[(arch,) + kernel]
    new = _drop(asm, removed, nth)
    assert mm.check(new, arch).violations == []
    got = mm.check(new, arch, llir).violations
    assert [v.rule for v in got] == [rule]


def test_a_system_atomic_without_sc1_is_reported(compiled):
    asm, llir = compiled[("gfx942", "scalar", "relaxed", "sys")]
    new = asm.replace("global_atomic_add v0, v1, s[2:3] sc1", "global_atomic_add v0, v1, s[2:3]")
    assert new != asm
    assert [v.rule for v in mm.check(new, "gfx942", llir).violations] == ["atomic-system:sc1-missing"]


# ---- Triton's own override: the hsaco is assembled from the edited amdgcn ----

KERNEL_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def spin(lock, data, out, SCOPE: tl.constexpr):
    while tl.atomic_cas(lock, 0, 1, sem="acquire", scope=SCOPE) != 0:
        pass
    tl.store(out, tl.load(data))
    tl.atomic_xchg(lock, 0, sem="release", scope=SCOPE)


@triton.jit
def add_scalar(p, v, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_add(p, v, sem=SEM, scope=SCOPE)
'''

COMPILE_SCRIPT = '''
import json, sys
sys.path.insert(0, sys.argv[1])
from mmkernels import add_scalar, spin
from gfxhound.compat import compile_for_amd
ptr = lambda n: {"name": n, "kind": "ptr", "type": "*i32", "value": 4096}
const = lambda n, v: {"name": n, "kind": "constexpr", "value": v}
out = {}
for name, fn, args in [
        ("spin", spin, [ptr("lock"), ptr("data"), ptr("out"), const("SCOPE", "gpu")]),
        ("add_scalar", add_scalar, [ptr("p"), {"name": "v", "kind": "int", "type": "i32", "value": 3},
                                    const("SEM", "release"), const("SCOPE", "sys")])]:
    c = compile_for_amd(fn, args, "gfx942", {})
    out[name] = {"amdgcn": c.asm["amdgcn"], "hsaco": c.asm["hsaco"].hex()}
json.dump(out, open(sys.argv[2], "w"))
'''


def _text_section(elf):
    """The bytes of an ELF64 little-endian file's .text section."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for name, _, _, _, offset, size in headers:
        if elf[names_at + name:elf.index(b"\0", names_at + name)] == b".text":
            return elf[offset:offset + size]
    raise AssertionError("no .text section")


def _waits_vmcnt0(text):
    """How many ``s_waitcnt vmcnt(0)`` (GFX9 SOPP encoding 0xBF8C0F70) the machine code holds."""
    words = struct.unpack_from(f"<{len(text) // 4}I", text)
    return sum(1 for w in words if w == 0xBF8C0F70)


def _compile_in_subprocess(tmp_path, tag, env):
    out = tmp_path / f"{tag}.json"
    proc = subprocess.run([sys.executable, str(tmp_path / "compile.py"), str(tmp_path), str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, **env, "TRITON_CACHE_DIR": str(tmp_path / f"cache-{tag}")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout


def test_a_wait_removed_through_triton_kernel_override_is_reported(tmp_path, worker_env):
    """TRITON_KERNEL_DUMP + TRITON_DUMP_DIR write each stage as <dir>/<hash>/<kernel>.<stage>; TRITON_KERNEL_OVERRIDE
    + TRITON_OVERRIDE_DIR read the same layout back in place of a stage (triton/compiler/compiler.py)."""
    (tmp_path / "mmkernels.py").write_text(KERNEL_SOURCE)
    (tmp_path / "compile.py").write_text(textwrap.dedent(COMPILE_SCRIPT))
    dump, override = tmp_path / "dump", tmp_path / "override"
    first, _ = _compile_in_subprocess(tmp_path, "dump", {**worker_env, "TRITON_KERNEL_DUMP": "1",
                                                         "TRITON_DUMP_DIR": str(dump)})
    expected = {}
    for name, want_rule in (("spin", "acquire-agent:wait-before-inv"),
                            ("add_scalar", "release-system:wait-after-wbl2")):
        [dumped] = list(dump.glob(f"*/{name}.amdgcn"))
        assert dumped.read_text() == first[name]["amdgcn"]
        assert mm.check(first[name]["amdgcn"], "gfx942").violations == []
        edited, line = remove_fence_wait(dumped.read_text())
        target = override / dumped.parent.name / dumped.name
        target.parent.mkdir(parents=True)
        target.write_text(edited)
        expected[name] = (edited, line, want_rule)
    second, stdout = _compile_in_subprocess(tmp_path, "override", {**worker_env, "TRITON_KERNEL_OVERRIDE": "1",
                                                                   "TRITON_OVERRIDE_DIR": str(override)})
    assert stdout.count("Overriding kernel with file") == 2
    for name, (edited, line, want_rule) in expected.items():
        asm = second[name]["amdgcn"]
        assert asm == edited
        got = mm.check(asm, "gfx942").violations
        assert [v.rule for v in got] == [want_rule]
        assert asm.splitlines()[got[0].line - 1].strip() == got[0].instruction and "_atomic_" in got[0].instruction
        before = _waits_vmcnt0(_text_section(bytes.fromhex(first[name]["hsaco"])))
        after = _waits_vmcnt0(_text_section(bytes.fromhex(second[name]["hsaco"])))
        assert (before, after) == (first[name]["amdgcn"].count("s_waitcnt vmcnt(0)\n"), before - 1)


# ---- hand-written sequences (gfx942 unless said) ----

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


@triton.jit
def add_two_per_thread(p, v, SCOPE: tl.constexpr):
    tl.atomic_add(p + tl.arange(0, 128), v, sem="acquire", scope=SCOPE)


@pytest.mark.skipif(triton.__version__ != "3.9.0", reason="a fact about Triton 3.9.0's LLVM")
@pytest.mark.parametrize("arch", ARCHES)
def test_triton_3_9_drops_the_acquire_wait_of_a_second_atomic_on_gfx942_and_gfx950(arch, tmp_path):
    """A real finding: with two elements per thread Triton emits two ``atomicrmw add ... acquire``; on gfx942/gfx950
    the second ``global_atomic_add`` is followed by ``buffer_inv sc0 sc1`` with no ``s_waitcnt vmcnt(0)`` between
    (AMDGPUUsage GFX942, atomicrmw acquire system: the wait must come before the buffer_inv). gfx90a keeps it."""
    args = [_ptr("p"), {"name": "v", "kind": "int", "type": "i32", "value": 3}, _const("SCOPE", "sys")]
    with compat.environment({"TRITON_CACHE_DIR": str(tmp_path), "TRITON_DEFAULT_FP_FUSION": "1"}):
        c = compat.compile_for_amd(add_two_per_thread, args, arch, {"num_warps": 1})
    asm = c.asm["amdgcn"]
    assert c.asm["llir"].count("acquire, align 4") == 2 and mm.check(asm, arch).atomics == 2
    got = mm.check(asm, arch, c.asm["llir"]).violations
    if arch == "gfx90a":
        assert got == []
        return
    [v] = got
    assert v.rule == "acquire-system:wait-before-inv"
    assert v.instruction == "global_atomic_add v0, v1, s[2:3] offset:256 sc1"
    assert asm.splitlines()[v.line].strip() == "buffer_inv sc0 sc1"
