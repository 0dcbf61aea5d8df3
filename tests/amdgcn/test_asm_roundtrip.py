"""The decoded records drop nothing: every instruction of every fixture's llc output (gfx942 and gfx950, -O0 and
-O2) and of the hand-written syntax.s, printed again from its records alone, assembles with llvm-mc to the same
bytes as the statement llc wrote. llvm-mc only encodes here; no semantics come from it."""
import re
import subprocess
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import parse_program, strip_comment

DATA = Path(__file__).parent / "data"
LLVM_MC = Path(codegen.DEFAULT_LLC).with_name("llvm-mc")
KERNELS = sorted(p.stem for p in DATA.glob("*.ll"))
pytestmark = pytest.mark.skipif(not LLVM_MC.exists(), reason="no llvm-mc of LLVM 22")


def encodings(statements: list, mcpu: str) -> list:
    """llvm-mc's encoding of each statement, in order (a label operand shows as fixup bytes, the same both ways)."""
    proc = subprocess.run([str(LLVM_MC), "-triple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "--show-encoding"],
                          input="\n".join(statements) + "\n", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "error" not in proc.stderr, proc.stderr[:2000]
    found = re.findall(r"; encoding: (\[[^\]]*\])", proc.stdout)
    assert len(found) == len(statements), proc.stdout[-2000:]
    return found


def check_round_trip(text: str, mcpu: str) -> int:
    lines = text.splitlines()
    program = parse_program(text)
    instructions = [i for fn in program.functions for i in fn.instructions]
    written = [strip_comment(lines[i.line - 1]).strip() for i in instructions]
    rendered = [i.render() for i in instructions]
    before, after = encodings(written, mcpu), encodings(rendered, mcpu)
    for statement, again, a, b in zip(written, rendered, before, after):
        assert a == b, f"{statement!r} encodes {a}, its records print {again!r}, which encodes {b}"
    return len(instructions)


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("opt", [0, 2])
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_instruction_of_llc_output_round_trips(kernel, opt, mcpu):
    text = codegen.from_ll(DATA / f"{kernel}.ll", mcpu, opt).text
    assert check_round_trip(text, mcpu) >= 8


def test_hand_written_syntax_round_trips():
    assert check_round_trip((DATA / "syntax.s").read_text(), "gfx942") == 38


def test_a_changed_record_changes_the_encoding():
    """The comparison can fail: a wrong offset or a dropped modifier assembles to other bytes."""
    base = "global_load_dword v9, v0, s[0:1] offset:-16 sc0 sc1 nt"
    a, b, c = encodings([base, base.replace("-16", "-12"), base.replace(" nt", "")], "gfx942")
    assert a != b and a != c
