"""LLVM release bisection over Debian's llc packages (llvm-14, 15, 16, 19, 22; `make tools` installs them), on two
real AMDGPU backend bugs found with llvm-stress (tests/data/llvm, docs/findings.md): a segfault in "Rename
Disconnected Subregister Components" in llc 14 and 15 that 16 fixed, and a PromoteAlloca use-after-free that
only llc 19 has. A processor an old llc does not know is a skip, never "good".

Releases answer instead of refusing: an end that cannot test (llc 14 cannot parse opaque pointers or does not know
gfx1100, llc 22's verifier rejects a call to a kernel) moves inward, and the record says which end moved and why;
ends in the same state give "present (absent) in every testable release". No probe writes beside the input."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.bisect.llvm_releases import installed, llc_candidates
from gfxhound.cli import build_parser

DATA = Path(__file__).resolve().parents[1] / "data" / "llvm"
ROOT = Path(__file__).resolve().parents[2]
FLAGS = "-mtriple=amdgcn-amd-amdhsa -mcpu=gfx900 -O2"
MAJORS = [14, 15, 16, 19, 22]

needs_llcs = pytest.mark.skipif(not set(MAJORS) <= {m for m, _ in installed()},
                                reason="needs Debian's llvm-14, 15, 16, 19 and 22 (make tools)")


def _bisect(gfxhound_bin, tmp_path, *args, flags=FLAGS):
    proc = subprocess.run([gfxhound_bin, "bisect", *args, "--llc-args", flags, "--cache", str(tmp_path / "cache"),
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), proc.stderr


def _input(tmp_path, name):
    """A copy of a checked-in .ll in a folder of its own, to see that nothing is written beside it."""
    (tmp_path / "in").mkdir(exist_ok=True)
    return str(shutil.copy(DATA / name, tmp_path / "in" / name))


def _moved(record):
    return [(m["end"], m["from"].split(".")[0], m["to"].split(".")[0]) for m in record["ends_moved"]]


@needs_llcs
def test_a_crash_fixed_between_releases_is_named(tmp_path, gfxhound_bin):
    record, progress = _bisect(gfxhound_bin, tmp_path, "--ll", _input(tmp_path, "segv-llc14-15.ll"), "--llc",
                               "14..22", "--fix")
    assert record["kind"] == "llvm-releases" and record["mode"] == "fix"
    assert record["first_new"].startswith("16.") and record["last_old"].startswith("15.")
    outcomes = {p["candidate"].split(".")[0]: p["outcome"] for p in record["probes"]}
    assert outcomes["14"] == "present" and outcomes["22"] == "absent"
    assert "Rename Disconnected Subregister Components" in next(p["detail"] for p in record["probes"]
                                                                if p["outcome"] == "present")
    assert "step 1 (of about 5): llc 22." in progress
    assert record["verdict"] == "boundary" and record["ends_moved"] == []
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["segv-llc14-15.ll"]  # llc's .s went elsewhere


@needs_llcs
def test_a_regression_in_one_release_is_named(tmp_path, gfxhound_bin):
    record, _ = _bisect(gfxhound_bin, tmp_path, "--ll", _input(tmp_path, "promote-alloca-llc19.ll"), "--llc",
                        "14..19")
    assert record["first_new"].startswith("19.") and record["last_old"].startswith("16.")
    assert record["confidence"] == 1.0 and record["untested_between"] == []
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["promote-alloca-llc19.ll"]


@needs_llcs
def test_an_end_that_cannot_parse_the_ir_moves_inward(tmp_path, gfxhound_bin):
    """The segfault in opaque-pointer syntax: llc 14 cannot parse it, so the bad end of the fix moves to 15; the
    flags are one word (`--llc-args -mcpu=gfx900`), as a user types them."""
    record, progress = _bisect(gfxhound_bin, tmp_path, "--ll", _input(tmp_path, "segv-llc15-opaque.ll"), "--llc",
                               "14..22", "--fix", flags="-mcpu=gfx900")
    assert record["llc_args"] == ["-mcpu=gfx900"] and record["verdict"] == "boundary"
    assert record["first_new"].startswith("16.") and record["last_old"].startswith("15.")
    assert _moved(record) == [("old", "14", "15")] and record["testable"][0].startswith("15.")
    [why] = record["ends_moved"][0]["why"].values()
    assert "expected type" in why
    plain = subprocess.run([gfxhound_bin, "bisect", "--ll", _input(tmp_path, "segv-llc15-opaque.ll"), "--llc",
                            "14..22", "--fix", "--llc-args", "-mcpu=gfx900", "--cache", str(tmp_path / "cache")],
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and "first llc without the bug: llc 16." in plain.stdout
    assert "the bad end moved from 14." in plain.stdout  # a fix's old end is its bad end


@needs_llcs
def test_a_crash_in_every_release_that_can_test_it_is_present_throughout(tmp_path, gfxhound_bin):
    """llc 22's verifier rejects the call to a kernel that llc 14 to 19 crash on: the bad end moves to 19, and every
    release from 14 to 19 is probed before the answer says "present in every testable release"."""
    record, _ = _bisect(gfxhound_bin, tmp_path, "--ll", _input(tmp_path, "kernel-call-llc14-19.ll"), "--llc",
                        "14..22")
    assert (record["verdict"], record["first_new"], record["last_old"]) == ("present-throughout", None, None)
    assert _moved(record) == [("new", "22", "19")]
    assert "cannot be verified" in record["ends_moved"][0]["why"][record["ends_moved"][0]["from"]]
    assert {p["candidate"].split(".")[0]: p["outcome"] for p in record["probes"]} == {
        "14": "present", "15": "present", "16": "present", "19": "present", "22": "skip"}
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["kernel-call-llc14-19.ll"]


@needs_llcs
def test_a_bug_in_no_testable_release_is_absent_throughout(tmp_path, gfxhound_bin):
    """llc 14 does not know gfx1100: the good end moves to 15, and 15 and 16 compile the PromoteAlloca IR."""
    record, _ = _bisect(gfxhound_bin, tmp_path, "--ll", _input(tmp_path, "promote-alloca-llc19.ll"), "--llc",
                        "14..16", flags="-mtriple=amdgcn-amd-amdhsa -mcpu=gfx1100 -O2")
    assert record["verdict"] == "absent-throughout" and _moved(record) == [("old", "14", "15")]
    assert "'gfx1100' is not a recognized processor" in record["ends_moved"][0]["why"][record["ends_moved"][0]["from"]]


@needs_llcs
def test_an_llc_that_does_not_know_the_processor_cannot_test(tmp_path, gfxhound_bin):
    """The gfx950 crash: only llc 22 knows gfx950. Over 19..22 the good end moves to 22 (the answer: present in the
    one release that can test it, written to the finding's bisect.json); over 14..19 none can, one line."""
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "28f1b1b801f666bf", corpus / "28f1b1b801f666bf")
    proc = subprocess.run([gfxhound_bin, "bisect", "28f1b1b8", "--llc", "19..22", "--corpus", str(corpus),
                           "--cache", str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("the bug is present in every testable release: only llc 22.")
    saved = json.loads((corpus / "28f1b1b801f666bf" / "bisect.json").read_text())
    assert saved["verdict"] == "present-throughout" and _moved(saved) == [("old", "19", "22")]
    assert "not a recognized processor" in saved["ends_moved"][0]["why"][saved["ends_moved"][0]["from"]]
    from gfxhound.corpus_store import Corpus
    from gfxhound.report.draft_parts import bisection  # the issue draft's Bisection section says the same
    section = bisection(Corpus(corpus).bisections("28f1b1b801f666bf"))
    assert "**present in every testable release** (only 22." in section
    assert re.search(r"19\.[\d.]+ cannot show the bug: `llc` exits 1 there", section)
    proc = subprocess.run([gfxhound_bin, "bisect", "28f1b1b8", "--llc", "14..19", "--corpus", str(corpus),
                           "--cache", str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and re.search(r"none of 14\.[\d.]+\.\.19\.[\d.]+ can test the bug", last)
    assert "not a recognized processor" in last and len(proc.stderr.strip().splitlines()) == 5  # 4 probes, 1 error


def test_llc_args_are_taken_as_typed_by_the_command_line_parser():
    parse = build_parser().parse_args
    args = parse(["bisect", "--ll", "x.ll", "--llc", "14..22", "--llc-args", "-mtriple=amdgcn-amd-amdhsa", "--json"])
    assert (args.llc_args, args.llc, args.json) == ("-mtriple=amdgcn-amd-amdhsa", "14..22", True)
    assert parse(["bisect", "--llc-args", "-O2", "--ll", "x.ll"]).llc_args == "-O2"
    assert parse(["bisect", "--llc-args=-mcpu=gfx900 -O2"]).llc_args == "-mcpu=gfx900 -O2"
    assert parse(["bisect", "--llc-args", "-mcpu=gfx900 -O2"]).llc_args == "-mcpu=gfx900 -O2"
    for forgot in (["--llc-args", "--json"], ["--llc-args"]):  # a forgotten value is still an error
        with pytest.raises(SystemExit):
            parse(["bisect", *forgot])


def test_llc_ranges_and_lists(tmp_path):
    have = [m for m, _ in installed()]
    if len(have) < 2:
        pytest.skip("needs two Debian llvm-N packages")
    chosen = llc_candidates(f"{have[0]}..{have[-1]}")
    assert [label.split(".")[0] for label, _ in chosen] == [str(m) for m in have]
    from gfxhound.bisect.llvm_releases import LlcError
    with pytest.raises(LlcError, match="no llc 99 here"):
        llc_candidates(f"{have[0]}..99")
    with pytest.raises(LlcError, match="at least two"):
        llc_candidates(chosen[0][1])
