"""gfxhound.executors.amdgcn.codegen: LLVM IR to assembly through Debian's llc-22 and Triton's own code generator, a .s as
is, and a code object through llvm-objdump/llvm-readobj; every case runs the real tools."""
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import parse_program
from gfxhound.executors.amdgcn.codegen import Assembly, CodegenError

DATA = Path(__file__).parent / "data"
LLC = codegen.find_llc() if Path(codegen.DEFAULT_LLC).exists() or shutil.which("llc-22") else None
pytestmark = pytest.mark.skipif(LLC is None, reason="no llc-22 (Debian's llvm-22)")


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_llc_at_each_level_names_the_command_and_the_processor(mcpu, opt):
    out = codegen.from_ll(DATA / "add_i32.ll", mcpu, opt)
    assert out.source == "llc" and out.opt == f"O{opt}" and out.mcpu == mcpu
    assert out.command[0] == LLC and out.command[-1] == str((DATA / "add_i32.ll").resolve())
    assert f"-mcpu={mcpu}" in out.command and f"-O{opt}" in out.command and "-mtriple=amdgcn-amd-amdhsa" in out.command
    assert out.tool.startswith("LLVM version 22")
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{mcpu}"' in out.text
    assert parse_program(out.text).function("add_i32").instructions[-1].mnemonic == "s_endpgm"


def test_levels_differ_where_they_should():
    """-O0 keeps values in VGPR lanes around the branch (v_writelane spills); -O2 does not."""
    o0 = codegen.from_ll(DATA / "add_i32.ll", "gfx942", 0).text
    o2 = codegen.from_ll(DATA / "add_i32.ll", "gfx942", "-O2").text
    assert "v_writelane_b32" in o0 and "v_writelane_b32" not in o2


def test_assembly_json_round_trip():
    out = codegen.from_ll(DATA / "loop.ll", "gfx950", "O1")
    back = Assembly.from_json(out.to_json())
    assert back == out and back.command == out.command
    with pytest.raises(ValueError, match="newer"):
        Assembly.from_json({**out.to_json(), "format": 99})


@pytest.mark.parametrize("bad, message", [
    (dict(mcpu="gfx942", opt=4), "optimisation level 4"),
    (dict(mcpu="sm_90", opt=2), "processor 'sm_90'"),
])
def test_bad_requests_are_one_line_errors(bad, message):
    with pytest.raises(CodegenError, match=message) as info:
        codegen.from_ll(DATA / "add_i32.ll", **bad)
    assert "\n" not in str(info.value)


def test_ir_llc_rejects_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.ll"
    bad.write_text("define amdgpu_kernel void @k() {\n  %x = add i32 %nope, 1\n  ret void\n}\n")
    with pytest.raises(CodegenError, match="could not compile bad.ll") as info:
        codegen.from_ll(bad, "gfx942")
    assert "\n" not in str(info.value) and "nope" in str(info.value)
    with pytest.raises(CodegenError, match="no such file"):
        codegen.from_ll(tmp_path / "missing.ll", "gfx942")


def test_a_dot_s_is_taken_as_is_with_its_processor(tmp_path):
    text = codegen.from_ll(DATA / "dpp.ll", "gfx950", 2).text
    path = tmp_path / "dpp.s"
    path.write_text(text)
    out = codegen.load(path)
    assert out.source == "s" and out.text == text and out.mcpu == "gfx950"


def _object(tmp_path, name, mcpu="gfx942"):
    path = tmp_path / f"{name}.o"
    subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-O2", "-filetype=obj",
                    str(DATA / f"{name}.ll"), "-o", str(path)], check=True, timeout=60)
    return path


def test_a_code_object_decodes_to_the_same_instructions_as_the_dot_s(tmp_path):
    """The object's disassembly, its branches made labels, is instruction for instruction what llc printed."""
    s = parse_program(codegen.from_ll(DATA / "loop.ll", "gfx942", 2).text).function("loop")
    out = codegen.load(_object(tmp_path, "loop"))
    assert out.source == "o" and out.mcpu == "gfx942" and out.command[1] == "-d"
    o = parse_program(out.text).function("loop")
    assert [i.render() for i in o.instructions if i.target is None] == \
        [i.render() for i in s.instructions if i.target is None]
    assert [(i.index, i.target) for i in o.instructions if i.target is not None] == \
        [(i.index, i.target) for i in s.instructions if i.target is not None] == [(6, 21), (19, 10)]


def test_a_code_object_with_an_unlinked_call_is_refused(tmp_path):
    ll = tmp_path / "call.ll"
    ll.write_text("""target triple = "amdgcn-amd-amdhsa"
define void @f(ptr addrspace(1) %p) noinline {
  store i32 1, ptr addrspace(1) %p
  ret void
}
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  call void @f(ptr addrspace(1) %p)
  ret void
}
""")
    obj = tmp_path / "call.o"
    subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj", str(ll), "-o", str(obj)],
                   check=True, timeout=60)
    with pytest.raises(CodegenError, match="relocations in .text"):
        codegen.load(obj)


def test_triton_code_generator_path():
    triton = pytest.importorskip("triton")
    pytest.importorskip("triton.backends.amd.compiler")
    out = codegen.from_ll_triton(DATA / "add_i32.ll", "gfx942")
    assert out.source == "triton" and out.tool.startswith(f"triton {triton.__version__} (")
    program = parse_program(out.text)
    assert program.processor == "gfx942"
    fn = program.function("add_i32")
    assert fn.instructions[0].render() == "s_load_dword s0, s[4:5], 0x18"  # n, at kernarg offset 24


def test_unknown_suffix_is_refused(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text("")
    with pytest.raises(CodegenError, match="want a .ll, .s or .o"):
        codegen.load(path, "gfx942")
