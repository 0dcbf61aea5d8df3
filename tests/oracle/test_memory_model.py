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
