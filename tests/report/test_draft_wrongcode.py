"""LLVM wrong-code drafts (gfxhound/report/draft_wrongcode.py): `gfxhound emulate FILE.ll --draft DIR --witness RE`
on a real open LLVM 22 bug (a <4 x i16> shl whose element 0 is stored zero-extended: llc keeps the packed register
whole, so element 1 lands in bits 31:16), then `gfxhound report DIR --check`: the draft run as pasted in the
maintainer's sandbox, with only llc and grep from /usr/bin."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.report import sandbox_draft

GFXHOUND = str(Path(sys.executable).parent / "gfxhound")
pytestmark = pytest.mark.skipif(not shutil.which("llc-22"), reason="needs Debian's llc-22 on PATH")

# the open LLVM 22.1.8 bug of docs/findings.md (also in tests/amdgcn/test_llvm_layer.py)
V4 = (Path(__file__).parents[1] / "data" / "llvm" / "v4i16-shift-zext-llc22.ll").read_text()
LAUNCH = "out: u32[64] out; s: 5; grid: 1; block: 64"
# the register the packed shift wrote is stored whole as the i32 zext of element 0
WITNESS = r"v_pk_lshlrev_b16 (v\d+),[^\n]*\n(\s*s_nop[^\n]*\n)?\s*global_store_dword v\d+, \1,"


def emulate(tmp_path, witness, *more):
    ll = tmp_path / "v4.ll"
    ll.write_text(V4)
    folder = tmp_path / "draft"
    done = subprocess.run([GFXHOUND, "emulate", str(ll), "--launch", LAUNCH, "--opt", "0,2", "--draft", str(folder),
                           "--witness", witness, *more], capture_output=True, text=True, timeout=300)
    return done, folder


def check(folder, *more):
    return subprocess.run([GFXHOUND, "report", str(folder), "--check", *more], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def drafted(tmp_path_factory):
    done, folder = emulate(tmp_path_factory.mktemp("wrongcode"), WITNESS)
    assert done.returncode == 1, done.stderr  # the comparison's own code: the IR and llc's code disagree
    return done, folder


def test_the_draft_shows_the_ir_the_command_the_values_and_the_layer(drafted):
    done, folder = drafted
    assert sorted(p.name for p in folder.iterdir()) == ["draft.md", "reduced.ll"]
    assert (folder / "reduced.ll").read_text() == V4
    text = (folder / "draft.md").read_text()
    title = text.splitlines()[1]
    assert title.startswith("# [AMDGPU] ") and "gfx942" in title and "gfx950" in title
    assert "0x80000000" in title and "where the IR gives 0" in title
    assert text.splitlines()[3].startswith("<!-- Draft for a person to review")
    assert f"saved as `reduced.ll`:\n```llvm\n{V4}```" in text
    command = text.split("## Command")[1].split("```sh\n")[1].split("```")[0]
    assert command.splitlines()[0] == "llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -O2 reduced.ll -o reduced.s"
    assert command.splitlines()[1].startswith("grep -E '^v4:|") and "v_pk_lshlrev_b16" in command.splitlines()[1]
    assert command.splitlines()[-1] == f"! grep -Pzq '{WITNESS}' reduced.s"
    output = text.split("## Output")[1].split("```asm\n")[1].split("```")[0]
    assert output.splitlines() == ["v4:                                     ; @v4", "\tv_pk_lshrrev_b16 v1, s2, v1",
                                   "\tv_pk_lshlrev_b16 v1, v1, v1", "\tglobal_store_dword v0, v1, s[0:1]"]
    expected = text.split("## Expected")[1].split("## ")[0]
    assert "`s` = 5" in expected and "`out`: 64 x u32" in expected
    assert "| `out[0]` | 0 | 2147483648 (0x80000000) |" in expected
    assert "`llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -O2 -global-isel -global-isel-abort=1 reduced.ll -o -`: " \
           "right; the pattern does not match" in text
    assert "So the fault is in: SelectionDAG instruction selection" in text
    assert "- gfx942: -O0: wrong; -O2: wrong" in text and "- gfx950: -O0: wrong; -O2: wrong" in text
    assert "LLVM version 22." in text.split("## Environment")[1]
    assert "## How this was found" in text and "no AMD GPU" in text and "ISA pseudocode" in text
    assert "/tmp/" not in text and "gfxhound emulate" not in text and text.count("gfxhound") == 2  # banner, credit
    assert "its command block exits 1 here" in done.stdout and "warning" not in done.stderr


def test_the_maintainers_sandbox_finds_the_draft_ready(drafted):
    _, folder = drafted
    ran = check(folder)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert "block 2 sh (Command): ran with no Python package (the tools from /usr/bin): exit 1" in ran.stdout
    assert "block 3 asm (Output): output of block 2: every quoted line printed" in lines
    assert any("not run at a last good release: no bisection" in line for line in lines)
    assert lines[-1] == "verdict: ready"
    document = json.loads(check(folder, "--json").stdout)
    assert document["ready"] and document["signature"] is None and document["requirements"] == {}


def test_a_witness_that_does_not_match_leaves_the_draft_not_ready(tmp_path):
    done, folder = emulate(tmp_path, r"v_and_b32_e32 v\d+, 0xffff, v\d+\n\s*global_store_dword")
    assert "--witness does not match" in done.stderr
    assert "**The block did not exit 1 when this draft was written" in (folder / "draft.md").read_text()
    ran = check(folder)
    assert ran.returncode == 1 and ran.stdout.splitlines()[-2] == "verdict: NOT READY", ran.stdout
    assert "nothing shows the bug by its exit code (block 2 exits 0)" in ran.stdout


def test_draft_without_a_witness_is_one_line_saying_why(tmp_path):
    ll = tmp_path / "v4.ll"
    ll.write_text(V4)
    for extra, words in ((["--draft", str(tmp_path / "d")], "--draft needs --witness REGEX"),
                         (["--witness", "x"], "--witness goes with --draft DIR"),
                         (["--draft", str(tmp_path / "d"), "--witness", "("], "not a regular expression")):
        done = subprocess.run([GFXHOUND, "emulate", str(ll), "--launch", LAUNCH, *extra], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert words in done.stderr
    assert not (tmp_path / "d").exists()


def test_a_draft_whose_commands_run_no_python_needs_no_triton_release():
    text = ("# t\n\n## Test case\nsaved as `reduced.ll`:\n```llvm\ndefine void @f() {\n  ret void\n}\n```\n\n"
            "## Command\n```sh\nllc-22 -O2 reduced.ll -o reduced.s\n! grep -q x reduced.s\n```\n")
    plan = sandbox_draft.plan(text)
    assert plan.tools_only and plan.requirements == {} and not plan.reasons
    python = sandbox_draft.plan(text.replace("llc-22 -O2", "python3 run.py && llc-22 -O2"))
    assert not python.tools_only and any("names no Triton release" in r for r in python.reasons)
