"""The parts of a draft a cold review of four drafts asked for, each on its own: a Set-up line the sandbox reads as
the draft means it, a hand-written script's docstring that speaks in the draft once (title, summary, expected)
and not again in the reproducer, a Bisection section in a reader's words that quotes what the pasted reproducer
prints at the releases it names, the targets that were checked, and no "Also fails the same way" that repeats the
release already checked. No Triton compile runs here (stand-in scripts and the corpus's own records)."""
import sys
import textwrap
from pathlib import Path

import pytest

from gfxhound.corpus_store import Corpus
from gfxhound.report import draft_parts, drafts
from gfxhound.report.draft_casts import _pick, _table, checked_by_values
from gfxhound.report.draft_parts import Draft, bisection, checked_targets, said_at, setup
from gfxhound.report.draft_check import Checked
from gfxhound.report.draft_prose import by_hand
from gfxhound.report.draft_text import actual
from gfxhound.report.sandbox import _missing
from gfxhound.report.sandbox_draft import plan
from gfxhound.report.upstream_lint import lint

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Corpus(ROOT / "corpus")


def _draft(command_section: str) -> str:
    return (f"# t\n\n## Reproducer\n```python\nimport triton\n```\n\n## Command\n{command_section}\n```sh\n"
            "python minimal.py   # exit 1 = the bug is present\n```\n\n## Environment\n- triton-3.9.0 (wheel)\n")


@pytest.mark.parametrize("code, pip, torch", [
    ("import triton\n", "pip install triton==3.9.0", None),
    ("import sys\nimport torch\nimport triton\n", "pip install triton==3.9.0 torch", "2.13.0"),
    ("import triton\n\n\ndef main():\n    import torch\n    if getattr(torch.version, 'hip', None):\n"
     "        pass\n", "pip install triton==3.9.0", None),
])
def test_the_set_up_line_says_what_to_install_and_the_sandbox_reads_it_so(code, pip, torch):
    """torch is in the pip line where the script cannot start without it; where it imports torch only to run on
    an AMD GPU, a sentence says so and the sandbox (which installs what an `install` sentence names) leaves it out:
    the reader without a GPU runs the triton-only path, and so does the check."""
    line = setup("3.9.0", code, "minimal.py")
    assert line.startswith(f"Set-up: `{pip}`, and the reproducer above saved as `minimal.py`."), line
    assert ("ROCm build of torch" in line) == ("hip" in code)
    read = plan(_draft(line))
    assert read.files["minimal.py"][1].startswith("block 1, which the draft says to save as minimal.py")
    assert read.requirements.get("triton") == "3.9.0" and read.requirements.get("torch") == torch
    assert not read.reasons, read.reasons


def test_an_attached_file_is_named_as_attached_not_as_the_block_above():
    line = setup("3.9.0", "import torch\n", "repro.py", attached=True)
    assert line == "Set-up: `pip install triton==3.9.0 torch`, and `repro.py` (attached) in the working directory."


SCRIPT = '''#!/usr/bin/env python3
"""Hand-minimised repro: `tl.dot_scaled` ignores
the scale of a bf16 operand

With `x` all ones and every scale 2.0, every element must be 128; it
would be 64.

Expected: 3 loads; every element 128.0.

Exit 1 = the bug, 0 = not, 125 = cannot test.
"""
import sys
'''


def test_a_hand_written_scripts_docstring_says_its_part_once():
    found = by_hand(SCRIPT)
    assert found.title == "[AMD] `tl.dot_scaled` ignores the scale of a bf16 operand"
    assert found.summary == "With `x` all ones and every scale 2.0, every element must be 128; it would be 64."
    assert found.expected == "Expected: 3 loads; every element 128.0."
    assert found.code == '#!/usr/bin/env python3\n"""Exit 1 = the bug, 0 = not, 125 = cannot test."""\nimport sys\n'
    tagged = by_hand(SCRIPT.replace("repro: `tl", "repro: [FRONTEND] `tl"))
    assert tagged.title.startswith("[FRONTEND] `tl.dot_scaled`")
    assert by_hand("import sys\n") is None and by_hand('"""Just a docstring."""\n') is None


BOUNDARY = {"kind": "triton-releases", "mode": "regression", "range": "3.4.0..3.9.0", "first_new": "3.8.0",
            "last_old": "3.7.1", "verdict": "boundary", "testable": ["3.6.0", "3.9.0"], "untested_between": [],
            "candidates": ["3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0"],
            "ends_moved": [{"end": "old", "from": "3.4.0", "to": "3.6.0", "why": {
                "3.4.0": "cannot test: a different failure (ice in llir: RuntimeError: PassManager::run failed | "
                         "python: /project/MFMA.cpp:775: LogicalResult convertScaledMFMA(...)",
                "3.5.1": "cannot test: a different failure (ice in llir: RuntimeError: PassManager::run failed | "
                         "python: /project/MFMA.cpp:871: LogicalResult convertScaledMFMA(...)"}}]}


def test_the_bisection_quotes_what_the_pasted_reproducer_prints_there_in_plain_words():
    """b0f7a29c: the record's probes ran the fuzzer's kernel (an MFMA.cpp assertion on 3.4.0); the pasted snippet
    prints an LLVM translation error there. The section quotes the snippet's, once for both releases."""
    said = {"3.4.0": (125, 'other failure (cannot test): loc("/tmp/a/snippet.py":20:22): error: LLVM Translation '
                           "failed for operation: builtin.unrealized_conversion_cast"),
            "3.5.1": (125, 'other failure (cannot test): loc("b_scale"("/tmp/b/snippet.py":20:22)): error: LLVM '
                           "Translation failed for operation: builtin.unrealized_conversion_cast")}
    text = bisection([BOUNDARY], said)
    assert text == ("- Triton releases (3.4.0..3.9.0): first release with the bug: **3.8.0** (last good: 3.7.1).\n"
                    "  - With 3.4.0 and 3.5.1 the reproducer above stops at another error first, `LLVM Translation "
                    "failed for operation: builtin.unrealized_conversion_cast` (exit 125), so the bug cannot show "
                    "there.")
    unrun = bisection([BOUNDARY])  # no venv of those releases here: nothing quoted that the reader would not see
    assert "MFMA.cpp" not in unrun and "3.4.0 and 3.5.1 cannot show the bug" in unrun
    for one in (text, unrun):
        assert lint("t", one) == []


def test_an_assertion_quoted_from_a_release_keeps_its_backticks_inside_the_code_span():
    record = dict(BOUNDARY, ends_moved=[], untested_between=["3.6.0"], last_old="3.5.1")
    said = {"3.6.0": (125, "other failure (cannot test): python: /project/x/CanonicalizePointers.cpp:1375: virtual "
                           "LogicalResult f(): Assertion `a == b && \"same\"' failed.")}
    assert "`` CanonicalizePointers.cpp:1375: Assertion `a == b && \"same\"' failed. `` (exit 125)" in \
        bisection([record], said)


def test_the_checked_in_bisections_read_without_the_records_words():
    for sig in ("18461bac51c2449a", "b0f7a29c2d2a6366", "caad2c44369ac53f"):
        text = (CORPUS.draft_dir(sig) / "draft.md").read_text()
        assert "end moved" not in text and "said instead" not in text, sig
        assert "MFMA.cpp:775" not in text  # b0f7a29c: what only the fuzzer's kernel printed on 3.4.0


def test_said_at_runs_the_pasted_files_at_each_release_the_bisection_could_not_test(monkeypatch):
    monkeypatch.setattr(draft_parts, "release_python", lambda version: sys.executable)
    script = "import sys\nprint('other failure (cannot test): error: no such op')\nsys.exit(125)\n"
    said = said_at([BOUNDARY], {"snippet.py": script}, ["python", "snippet.py"], None, 60)
    assert said == {v: (125, "other failure (cannot test): error: no such op") for v in ("3.4.0", "3.5.1")}
    monkeypatch.setattr(draft_parts, "release_python", lambda version: None)  # no venv: nothing run, nothing said
    assert said_at([BOUNDARY], {"snippet.py": script}, ["python", "snippet.py"], None, 60) == {}


class _Finding:
    targets = ["gfx1100", "gfx90a", "gfx942"]


def test_the_targets_checked_are_the_reproducers_and_the_fuzzers():
    assert checked_targets('GPUTarget("hip", "gfx942", 64)\nTARGETS = ("gfx90a", "gfx1100")', _Finding) == \
        "Targets checked: gfx942, gfx90a, gfx1100"
    assert checked_targets('TARGET = "gfx942"', _Finding) == \
        "Targets checked: gfx942 (the reproducer); the fuzzer found it on gfx1100, gfx90a, gfx942"
    assert checked_targets("import triton", _Finding) == ""


def test_a_table_of_wrong_codes_counts_nothing_the_reader_cannot_see():
    """f18e7742: "6 of the 22 wrong values" counted the fuzzer's own table, which the draft never shows, and each
    row's "every target checked" said nothing. The table is led by where its rows come from; a targets column
    only where the rows differ in their targets."""
    rows = [{"value": 2.0 ** -k, "stored": 0, "expected": 0x3f80 - 0x80 * k, "target": t}
            for k in range(1, 10) for t in ("gfx942", "gfx950")]
    picked, by_value = _pick(rows, 2.0 ** -1)
    table = _table(picked, by_value, "bf16", True, "Other wrong values, with the codes:")
    assert table.startswith("Other wrong values, with the codes:\n\n| value | stored | expected |\n|---|---|---|\n")
    assert len(picked) == 6 and " of the " not in table and "every target" not in table and "targets" not in table
    rows.append({"value": 2.0 ** -12, "stored": 0, "expected": 0x3980, "target": "gfx942"})
    picked, by_value = _pick(rows, 2.0 ** -1)
    assert "| value | stored | expected | targets |" in _table(picked, by_value, "bf16", True, "lead")
    assert lint("t", table) == []


VALUES_SCRIPT = """import sys
VALUES = (3e-7,
          2**-17)
CODES = {9e-41: (0x0000, 0x0001), 1e-20: (0x0000, 0x1e3d), 6.3e-30: (0x0f00, 0x0f00)}
wrong = 0
for s in VALUES:
    got, want = CODES.get(s, (0, 0x34a1))
    print(f"S = {s!r}: constant 0x{got:04x}, bf16(S) = 0x{want:04x}" + ("   WRONG" if got != want else ""))
    wrong += got != want
sys.exit(1 if wrong else 0)
"""


def test_more_values_are_the_ones_the_pasted_reproducer_prints_wrong_with_values_changed():
    """The table's rows are checked by the reproducer as pasted, its VALUES line set to them: a row it does not
    print as wrong with both codes is left out, and a value it already checks is not repeated."""
    from gfxhound.oracle.cast_table import Probe
    rows = [{"value": v, "stored": stored, "expected": expected, "target": "gfx942"}
            for v, stored, expected in ((9.183549615799121e-41, 0, 1), (1.0005576689441423e-20, 0, 0x1e3d),
                                        (6.310887241768095e-30, 0, 0x0f00), (2.998858690261841e-07, 0, 0x34a1))]
    probe = Probe("constant", "bf16", 2.998858690261841e-07)
    shown, by_value, line = checked_by_values(VALUES_SCRIPT, rows, probe, sys.executable, 60, None)
    assert [v for v, _, _ in shown] == [9.183549615799121e-41, 1.0005576689441423e-20]  # 6.3e-30: no WRONG there
    assert line == "VALUES = (9e-41, 1e-20)"
    assert checked_by_values("import sys\nsys.exit(1)\n", rows, probe, sys.executable, 60, None) is None


OUTPUT = """#blocked = #ttg.blocked<{sizePerThread = [1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @kernel() {
    tt.return
  }
}

{-#
  external_resources: {
    mlir_reproducer: {
      pipeline: "builtin.module(tritongpu-coalesce)",
    }
  }
#-}
<tmp>/snippet.py:22:1: error: Failures have been detected while processing an MLIR pass pipeline
def kernel(a_ptr):
^
Traceback (most recent call last):
  File "<tmp>/snippet.py", line 38, in <module>
    triton.compile(src)
RuntimeError: PassManager::run failed
reproduced: TritonAMDGPUAccelerateMatmul failed without a diagnostic of its own
"""


def test_an_actual_block_says_what_it_leaves_out_and_quotes_the_rest():
    """The MLIR reproducer Triton prints is left out, and the lead says so (a cold review counted what b0f7a29c's
    block did not quote); the traceback is quoted whole, as Triton's bug form asks; a script's own lines, IR
    included, are quoted as printed (0df07642's evidence had been filtered out as an IR dump)."""
    block = actual(OUTPUT, "python snippet.py")
    lead, text = block.split("\n", 1)
    assert lead == ("Actual (`python snippet.py`; abridged: 13 lines of the MLIR reproducer Triton prints omitted, "
                    "at the `...`):")
    assert text.startswith("```\n...\n<tmp>/snippet.py:22:1: error: ") and '  File "<tmp>/snippet.py", line 38' in text
    quoted = text.strip("`\n")
    assert _missing(quoted, OUTPUT) == ([], {})  # the sandbox reads `...` as an elision: every other line printed
    script = "triton 3.9.0: 2 loaded\n    %30 = load <1 x i8>, ptr addrspace(1) %27\n        %108 = icmp eq i8 %31, -1\n"
    assert actual(script, "python minimal.py") == f"Actual (`python minimal.py`):\n```\n{script.rstrip()}\n```"
    long = "\n".join(f"line {i}" for i in range(1, 101))
    lead, text = actual(long, "python x.py", limit=30).split("\n", 1)
    assert lead == "Actual (`python x.py`; abridged: lines 21 to 90 of its output omitted, at the `...`):"
    assert text.splitlines()[20:23] == ["line 20", "...", "line 91"]


def test_a_finding_without_a_bisection_says_what_the_reproducer_did_at_each_release(monkeypatch):
    """0df07642 had no bisect.json and its Bisection section said "Not bisected ...: a maintainer asks since when
    first" while its Cause named the releases it had run at. Now the pasted reproducer runs at each release venv
    at hand, and the section says what it did, in order, and what follows."""
    monkeypatch.setattr(draft_parts, "cached_releases", lambda: {v: sys.executable for v in ("3.6.0", "3.7.1",
                                                                                            "3.8.0", "3.9.0")})
    script = "import sys\n"  # what each release's run answers, in order, stands in for the script's runs
    answers = iter([(125, "cannot test: lhs_scale must be a tensor of shape [16, 1]"),
                    (125, "cannot test: lhs_scale must be a tensor of shape [16, 1]"), (1, "bug present: x"),
                    (1, "bug present: x")])

    def run_pasted(files, argv, timeout, env=None):
        rc, line = next(answers)
        return Checked(rc, line + "\n", "")
    monkeypatch.setattr("gfxhound.report.draft_check.run_pasted", run_pasted)
    text = draft_parts.bisection_section([], ({"minimal.py": script}, ["python", "minimal.py"]), None, 60)
    assert text == ("Not bisected by commit. The reproducer above, run with each Triton release from 3.6.0 to 3.9.0:\n"
                    "- 3.6.0 and 3.7.1: it stops at another error first, `lhs_scale must be a tensor of shape "
                    "[16, 1]` (exit 125), so the bug cannot show there.\n"
                    "- 3.8.0 and 3.9.0: present (exit 1).\n"
                    "So 3.8.0 is the first release where it can show.")
    assert "Not bisected yet" not in text and lint("t", text) == []
    said = {"3.7.1": (0, "not reproduced"), "3.8.0": (1, "bug present"), "3.9.0": (1, "bug present")}
    assert draft_parts.measured_text(said).endswith("First release with the bug: **3.8.0** (last good: 3.7.1).")
    assert plan("## Bisection\n" + draft_parts.measured_text(said)).last_good == "3.7.1"  # the sandbox runs it too
    monkeypatch.setattr(draft_parts, "cached_releases", lambda: {})
    assert draft_parts.bisection_section([], ({"minimal.py": script}, ["python", "minimal.py"]), None, 60) == \
        draft_parts.NOT_BISECTED
    assert "a maintainer asks" not in draft_parts.NOT_BISECTED


def test_a_release_range_that_starts_where_the_bug_can_show_says_so():
    record = dict(BOUNDARY, first_new=None, last_old=None, verdict="present-throughout", testable=["3.6.0", "3.9.0"])
    said = {v: (125, "cannot test: error: no such op") for v in ("3.4.0", "3.5.1")}
    assert bisection([record], said).splitlines()[-1] == "  - So 3.6.0 is the first release where it can show."


def test_the_checked_in_0df07642_draft_shows_its_evidence_and_its_releases():
    text = (CORPUS.draft_dir("0df076421fd38e34") / "draft.md").read_text()
    actual_block = text.split("Actual (`python minimal.py`", 1)[1].split("```", 2)[1]
    assert "icmp eq i8 %31, -1" in actual_block and "reaches NO fmul" in actual_block and "abridged" not in text
    section = text.split("## Bisection\n", 1)[1].split("\n## ", 1)[0]
    assert "Not bisected" not in section and "So 3.8.0 is the first release where it can show." in section
    assert "lhs_scale must be a tensor of shape [..., 16, 1]" in section


def test_the_newest_triton_is_news_only_when_it_is_another_release(monkeypatch, tmp_path):
    """The fuzzer's venv and a bisection venv of the same release are two interpreters and one Triton: no "Also
    fails the same way with triton 3.9.0" under a check that already ran 3.9.0 (three drafts had it)."""
    finding = CORPUS.get("b0f7a29c")
    body = "## Summary\nx\n\n## Command\n<!-- checked before this draft was written: `python snippet.py` with " \
           "triton 3.9.0 exited 1 (present) -->\n\n## Expected vs actual\ny\n"
    calls = []
    monkeypatch.setattr(drafts, "_triton", lambda *a: calls.append(a[2]) or Draft(
        "triton-lang/triton", "t", body, True, "ran"))
    newest = str(tmp_path / "venv" / "bin" / "python")
    versions = {newest: "triton 3.9.0"}  # any other interpreter (this one, as build() types it): 3.9.0
    monkeypatch.setattr(drafts, "_triton_version", lambda python: versions.get(python, "triton 3.9.0"))
    same = drafts.build(CORPUS, finding, drafts.TRITON, python=sys.executable, newest=newest)
    assert same.newest is None and "Also fails" not in same.body and len(calls) == 1
    versions[newest] = "triton 3.10.0"
    later = drafts.build(CORPUS, finding, drafts.TRITON, python=sys.executable, newest=newest)
    assert later.newest["toolchain"] == "triton 3.10.0" and "Also fails the same way with triton 3.10.0." in later.body


def test_every_checked_in_draft_has_a_set_up_line_in_its_command_section():
    for draft in sorted((ROOT / "corpus").glob("*/draft/draft.md")):
        command = draft.read_text().split("## Command\n", 1)[1].split("\n## ", 1)[0]
        assert command.startswith("Set-up"), draft
        assert "saved as `" in textwrap.dedent(command).splitlines()[0], draft


def test_an_llc_release_that_cannot_test_is_quoted_as_llc_says_it():
    """An LLVM draft's command is the `llc` line: what llc printed at the older release is what the reader sees."""
    record = {"kind": "llvm-releases", "candidates": ["19.1.7", "22.1.8"], "first_new": None,
              "verdict": "present-throughout", "testable": ["22.1.8", "22.1.8"],
              "ends_moved": [{"end": "old", "from": "19.1.7", "to": "22.1.8", "why": {
                  "19.1.7": "exit 1: 'gfx950' is not a recognized processor for this target (ignoring processor)"}}]}
    assert bisection([record]).splitlines()[1] == (
        "  - 19.1.7 cannot show the bug: `llc` exits 1 there with `'gfx950' is not a recognized processor for this "
        "target (ignoring processor)`.")


LISTING = """\t.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"
\t.text
kernel:                                 ; @kernel
; %bb.0:
\tglobal_atomic_smax v0, v1, s[0:1]
\tbuffer_inv sc1
\ts_endpgm
.Lfunc_end0:
\t.size\tkernel, .Lfunc_end0-kernel
amdhsa.target:   amdgpu9.42-amd-amdhsa-unknown-gfx942
reproduced: no s_waitcnt vmcnt(0) between global_atomic_smax and buffer_inv sc1
"""


def test_an_llvm_drafts_output_is_the_kernels_instructions_and_says_what_it_leaves_out():
    """f311e39e's Output block quoted 16 of the 210 lines `python codegen.py reduced.ll` prints as if they were all
    of it: the lead now says which lines it keeps and how many it leaves out, and the verdict line is quoted."""
    from gfxhound.report.draft_codegen import _output
    lead, block = _output({"lang": "asm"}, Checked(1, LISTING, ""))
    assert lead == ("Output (`python codegen.py reduced.ll`; abridged: the kernel's instructions and labels, from "
                    "`kernel:` to `s_endpgm`, without the assembler's directives and `;` comments; 2 lines before "
                    "them and 3 lines of directives and metadata after them omitted, each at a `...`):")
    assert block.splitlines() == ["```asm", "...", "kernel:", "\tglobal_atomic_smax v0, v1, s[0:1]",
                                  "\tbuffer_inv sc1", "\ts_endpgm", "...",
                                  "reproduced: no s_waitcnt vmcnt(0) between global_atomic_smax and buffer_inv sc1",
                                  "```"]
    assert _missing("\n".join(block.splitlines()[1:-1]), LISTING, "asm") == ([], {})


def test_the_checked_in_f311e39e_draft_says_it_shows_with_the_amdgcn_triple_too():
    text = (CORPUS.draft_dir("f311e39e1081bf24") / "draft.md").read_text()
    assert "With `amdgcn-amd-amdhsa` instead" in text and "rejects it (`unable to get target for " in text
    assert "Output (`python codegen.py reduced.ll`; abridged: " in text
