"""The lint of what upstream sees (gfxhound/report/upstream_lint.py): each kind of harness leak in a draft's title,
body or attachments is flagged; a clean draft, which may say once, where it says how the bug was found, that
gfxhound found it, is not."""
import pytest

from gfxhound.report.upstream_lint import MAX_ATTACHMENT_LINES, lint

CLEAN_TITLE = "[AMD] ConvertTritonAMDGPUToLLVM: assertion `numElements` failed in ConvertFpCastOpToLLVM.cpp"
CLEAN_BODY = """<!-- Draft for a person to review. Written by gfxhound, an automated fuzzer. -->

## Summary
Compiling the kernel below for any AMD target fails with an internal compiler error.

## Command
```sh
python snippet.py   # the reproducer above, saved as snippet.py; exit 1 = the bug is present, 0 = absent
llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -O3 reduced.ll -o -
```
<!-- checked before this draft was written: `python snippet.py` with triton 3.9.0 exited 1 (present) -->

## Expected vs actual
```
python3: /project/third_party/amd/lib/TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp:2490: Assertion failed.
<tmp>/snippet.py:9:1: error: Failures have been detected while processing an MLIR pass pipeline
0x00007f3a9c2b1d40 llvm::sys::PrintStackTrace
```
The change is in LLVM between 5f07f818 and 6bc4aaf6641c56ee104f6200c96a6a571bc77052 (triton-lang/triton#10534).
See `test/Conversion/amd/fp_to_fp.mlir` and llvm/docs/AMDGPUUsage.rst.

## How this was found
Found by gfxhound, a fuzzer of Triton's AMD backend, in its conversion table. Its reducer shrank the
generated kernel's body from 50 to 11 lines.
"""
CLEAN_FILES = {"snippet.py": "import triton\n" * 40, "reduced.ll": "define void @k() {\n  ret void\n}\n"}


def test_a_clean_draft_is_not_flagged():
    assert lint(CLEAN_TITLE, CLEAN_BODY, CLEAN_FILES) == []


@pytest.mark.parametrize("leak, kind", [
    ("It is `pointer_flow` (gfxhound/fuzz/templates/pointer_flow.py).", "project path"),
    ("the record in corpus/01f5c6fa9ca3e32d/bisect.json", "project path"),
    ("see docs/upstream-style.md", "project path"),
    ("Signature `01f5c6fa9ca3e32d`.", "finding id"),
    ("reported separately; gfxhound finding `41ca2f05`", "finding id"),
    ("(29 more in the finding's table.json.)", "internal file"),
    ("written from its finding.json and spec.json", "internal file"),
    ("**Not bisected:** run `gfxhound bisect ID --triton OLD..NEW` before filing", "harness command"),
    ("gfxhound's conversion table (`gfxhound casts`)", "harness command"),
    ("the fuzzer that found this (`pip install -e .` in its repository)", "harness command"),
    ("        from gfxhound.executors.llvm_ir.launch import EmulatedKernel", "harness command"),
    ("set GFXHOUND_EMULATOR_PYTHON to a Python with torch", "harness command"),
    ("File \"/work/main/oracle/x.py\", line 3", "machine path"),
    ("wrote /tmp/gfxhound-draft-abc/snippet.py", "machine path"),
    ("python /root/snippet.py", "machine path"),
    ("`python repro.py`   # exit 1 = the bug is present", "internal file"),
    # what a cold review of four drafts read as machine output nobody reviewed
    ("  - The older end moved from 3.4.0 to 3.6.0; what the releases before that said instead:", "harness jargon"),
    ("- Targets the fuzzer saw it on: gfx942", "harness jargon"),
    ("It is `pointer_flow` (one of the fuzzer's kernel templates).", "harness jargon"),
    ("| 3e-07 | 0x0000 (0.0) | 0x34a1 | all above |\n\n(16 more wrong values not shown.)", "harness jargon"),
    ("## Summary\n22 of 50 values wrong in gfxhound's table, below.", "harness name"),
    # a count of a list the draft never shows (f18e7742's "6 of the 22 wrong values": the fuzzer's own table)
    ("## Wrong codes\n6 of the 22 wrong values, with the code stored and the code expected:", "unseen count"),
])
def test_each_kind_of_leak_in_the_body_is_flagged(leak, kind):
    found = lint(CLEAN_TITLE, CLEAN_BODY + leak + "\n", CLEAN_FILES)
    assert any(f.startswith(f"{kind} in body") for f in found), found


def test_a_leak_in_the_title_or_an_attachment_is_flagged_where_it_is():
    assert lint(CLEAN_TITLE + " (finding 01f5c6fa)", CLEAN_BODY, CLEAN_FILES) == ["finding id in title: 01f5c6fa"]
    files = dict(CLEAN_FILES, **{"snippet.py": "# gfxhound repro 51094ae1f1a097e7\nimport triton\n"})
    assert lint(CLEAN_TITLE, CLEAN_BODY, files) == ["finding id in snippet.py: 51094ae1f1a097e7",
                                                    "harness name in snippet.py: gfxhound"]


def test_the_generated_harness_attached_is_flagged_whatever_its_size():
    harness = ('#!/usr/bin/env python3\n"""gfxhound repro 51094ae1f1a097e7 for gfx942: ice."""\n'
               "# the repro protocol (gfxhound/protocol.py): what this script's exit says\nimport sys\n")
    found = lint(CLEAN_TITLE, CLEAN_BODY + "`repro.py` (attached) compiles the file.\n",
                 dict(CLEAN_FILES, **{"repro.py": harness}))
    assert any(f.startswith("attachment repro.py: the generated harness (4 lines)") for f in found), found
    assert "internal file in body: repro.py (the generated harness)" in found and len(found) == 2, found


def test_an_attachment_over_the_limit_is_flagged():
    big = "; a line\n" * (MAX_ATTACHMENT_LINES + 1)
    found = lint(CLEAN_TITLE, CLEAN_BODY, dict(CLEAN_FILES, **{"reduced.ll": big}))
    assert found == [f"attachment reduced.ll: {MAX_ATTACHMENT_LINES + 1} lines (over {MAX_ATTACHMENT_LINES})"]


def test_a_person_s_own_repro_py_may_be_named():
    files = dict(CLEAN_FILES, **{"repro.py": "import triton\n"})
    assert lint(CLEAN_TITLE, CLEAN_BODY + "Run `python repro.py`.\n", files) == []


def test_the_fuzzer_is_named_once_where_the_draft_says_how_it_was_found():
    """The banner (a hidden comment) and one mention under `## How this was found` are the attribution; a second
    mention there, one anywhere else in the body, and one in the title or a pasted script are flagged."""
    twice = CLEAN_BODY.replace("Its reducer", "gfxhound's reducer")
    assert [f.split(":")[0] for f in lint(CLEAN_TITLE, twice, CLEAN_FILES)] == ["harness name in body"]
    cause = CLEAN_BODY.replace("## How this was found", "## Cause\ngfxhound's CPU executor agrees.\n\n"
                                                        "## How this was found")
    assert [f.split(":")[0] for f in lint(CLEAN_TITLE, cause, CLEAN_FILES)] == ["harness name in body"]
    assert lint(CLEAN_TITLE + " (gfxhound)", CLEAN_BODY, CLEAN_FILES) == ["harness name in title: gfxhound"]
    files = dict(CLEAN_FILES, **{"snippet.py": "# the kernel gfxhound's reducer left\nimport triton\n"})
    assert lint(CLEAN_TITLE, CLEAN_BODY, files) == ["harness name in snippet.py: gfxhound's"]


def test_a_line_repeating_the_release_already_checked_is_flagged_and_a_newer_one_is_not():
    checked = "<!-- checked before this draft was written: `python snippet.py` with triton 3.8.0 exited 1 (present) -->"
    body = CLEAN_BODY.replace("<!-- checked before this draft was written: `python snippet.py` with triton 3.9.0 "
                              "exited 1 (present) -->", checked + "\nAlso fails the same way with triton {}.")
    assert lint(CLEAN_TITLE, body.format("3.9.0"), CLEAN_FILES) == []
    assert lint(CLEAN_TITLE, body.format("3.8.0"), CLEAN_FILES) == [
        "repeated release in body: Also fails the same way with triton 3.8.0. (the check above already ran "
        "triton 3.8.0)"]


def test_the_checked_in_drafts_are_clean():
    """Every draft in the corpus passes the lint as written (what `gfxhound report` refuses to call clean)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "corpus"
    drafts = sorted(root.glob("*/draft/draft.md"))
    assert len(drafts) >= 8
    for draft in drafts:
        _, title, body = draft.read_text().split("\n", 2)
        files = {p.name: p.read_text() for p in draft.parent.iterdir() if p.name != "draft.md"}
        assert lint(title.removeprefix("# "), body, files) == [], draft


def test_a_count_the_reader_can_check_is_not_flagged():
    """"1 of the 2 a_scale values" where the output block above shows the 2: the reader sees what is counted."""
    body = CLEAN_BODY + "```\na_scale: 2 loaded per lane, 1 of them reach an fmul\n```\n1 of the 2 a_scale values " \
                        "each lane loads reaches no fmul.\n"
    assert lint(CLEAN_TITLE, body, CLEAN_FILES) == []
