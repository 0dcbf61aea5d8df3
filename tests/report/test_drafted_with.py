"""One root cause, one draft: a finding whose bug another finding's draft reports keeps a pointer to it
(corpus/<id>/drafted_with.json, gfxhound/corpus_store/drafted_with.py). Its status says drafted, `gfxhound report`
names that draft in one line and writes no second one, and `--with ID --why TEXT` records the pointer. On copies
of the checked-in pair: 41ca2f05 (fp16 -> fp8e5b16 rtz stores OCP codes) drafted with 01f5c6fa (the rtz
assertions), one missing guard in ConvertFpCastOpToLLVM.cpp. Nothing here compiles a kernel."""
import json
import shutil
from pathlib import Path

import pytest

from gfxhound.corpus_store import Corpus, CorpusError
from gfxhound.oracle.repro.snippet import constants, triton_snippet
from gfxhound.report.drafts import checks_itself
from gfxhound.report.draft_text import prune_unused

ROOT = Path(__file__).resolve().parents[2]
ASSERTS, WRONG_CODE = "01f5c6fa9ca3e32d", "41ca2f057bae36a8"
THIRD = "b0f7a29c2d2a6366"  # another checked-in finding with a draft of its own


def _copy(tmp_path, *ids, pointer=True) -> Corpus:
    root = tmp_path / "c"
    for sig in ids:
        shutil.copytree(ROOT / "corpus" / sig, root / sig)
        if not pointer:
            (root / sig / "drafted_with.json").unlink(missing_ok=True)
    return Corpus(root)


def _cli(capsys, *argv):
    from gfxhound.cli import main
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code, err, words):
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert words in err, err


def test_the_checked_in_pair_is_one_draft():
    corpus = Corpus(ROOT / "corpus")
    pointer = corpus.drafted_with(WRONG_CODE)
    assert pointer.draft == ASSERTS and pointer.why
    assert corpus.drafted(WRONG_CODE) and not (corpus.draft_dir(WRONG_CODE) / "draft.md").exists()
    assert corpus.drafted_here(ASSERTS) == [WRONG_CODE] and corpus.drafted_with(ASSERTS) is None
    assert json.loads((corpus.path(WRONG_CODE) / "drafted_with.json").read_text())["format"] == 1


def test_drafted_only_while_the_draft_it_points_at_exists(tmp_path):
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE)
    assert corpus.drafted(WRONG_CODE)
    shutil.rmtree(corpus.draft_dir(ASSERTS))
    assert not corpus.drafted(WRONG_CODE) and corpus.drafted_with(WRONG_CODE).draft == ASSERTS


def test_report_of_a_finding_drafted_with_another_is_one_line_and_no_second_draft(tmp_path, capsys):
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE)
    code, out, err = _cli(capsys, "report", WRONG_CODE[:8], "--corpus", corpus.root)
    assert code == 0, err
    assert out.count("\n") == 1 and out.startswith(f"{WRONG_CODE}: drafted with {ASSERTS} (")
    assert corpus.drafted_with(WRONG_CODE).why in out and str(corpus.draft_dir(ASSERTS) / "draft.md") in out
    assert "--force" in out and not corpus.draft_dir(WRONG_CODE).exists()


def test_report_json_of_a_pointer_fits_the_schema(tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE)
    code, out, _ = _cli(capsys, "report", WRONG_CODE[:8], "--corpus", corpus.root, "--json")
    document = json.loads(out)
    assert code == 0 and document["drafted"] is False and document["drafted_with"]["draft"] == ASSERTS
    schema = json.loads((ROOT / "docs" / "schemas" / "report.json").read_text())
    assert not list(jsonschema.Draft202012Validator(schema).iter_errors(document))


def test_a_pointer_to_a_finding_not_drafted_yet_says_how_to_draft_it(tmp_path, capsys):
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE)
    shutil.rmtree(corpus.draft_dir(ASSERTS))
    code, out, _ = _cli(capsys, "report", WRONG_CODE[:8], "--corpus", corpus.root)
    assert code == 0 and out.count("\n") == 1 and f"`gfxhound report {ASSERTS[:8]}` writes it" in out


def test_with_records_the_pointer_from_the_cli(tmp_path, capsys):
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE, pointer=False)
    assert corpus.drafted_with(WRONG_CODE) is None and not corpus.drafted(WRONG_CODE)
    code, out, err = _cli(capsys, "report", WRONG_CODE[:8], "--corpus", corpus.root, "--with", ASSERTS[:8],
                          "--why", "one   missing guard")
    assert code == 0 and out.count("\n") == 1 and f"now drafted with {ASSERTS} (one missing guard)" in out, err
    assert json.loads((corpus.path(WRONG_CODE) / "drafted_with.json").read_text()) == {
        "format": 1, "draft": ASSERTS, "why": "one missing guard"}
    assert corpus.drafted(WRONG_CODE)


@pytest.mark.parametrize("argv, words", [
    (["--with", ASSERTS[:8]], "--with ID and --why TEXT go together"),
    (["--why", "x"], "--with ID and --why TEXT go together"),
    (["--with", WRONG_CODE[:8], "--why", "x"], "cannot be drafted with itself"),
    (["--with", "ffffffff", "--why", "x"], "no finding matches 'ffffffff'"),
    (["--with", ASSERTS[:8], "--why", " "], "say why"),
])
def test_a_wrong_with_is_one_line(tmp_path, capsys, argv, words):
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE, pointer=False)
    _one_line_error(*_cli(capsys, "report", WRONG_CODE[:8], "--corpus", corpus.root, *argv)[::2], words)
    assert corpus.drafted_with(WRONG_CODE) is None


def test_pointers_go_one_hop(tmp_path):
    """A chain would leave a finding pointing at a draft that does not report it: refused both ways."""
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE, THIRD)  # WRONG_CODE -> ASSERTS, as checked in
    with pytest.raises(CorpusError, match=f"{WRONG_CODE[:8]} is itself drafted with {ASSERTS[:8]}"):
        corpus.write_drafted_with(THIRD, WRONG_CODE, "x")
    with pytest.raises(CorpusError, match=f"{WRONG_CODE[:8]} is drafted with {ASSERTS[:8]}"):
        corpus.write_drafted_with(ASSERTS, THIRD, "x")
    with pytest.raises(CorpusError, match=f"{WRONG_CODE[:8]} is itself drafted with {ASSERTS[:8]}"):
        corpus.write_drafted_with(ASSERTS, WRONG_CODE, "x")  # a cycle
    corpus.write_drafted_with(THIRD, ASSERTS, "x")
    assert corpus.drafted_here(ASSERTS) == sorted([WRONG_CODE, THIRD])


def test_a_newer_pointer_format_is_refused_in_one_line(tmp_path, capsys):
    corpus = _copy(tmp_path, ASSERTS, WRONG_CODE)
    (corpus.path(WRONG_CODE) / "drafted_with.json").write_text(json.dumps({"format": 2, "draft": ASSERTS}))
    code, _, err = _cli(capsys, "report", WRONG_CODE[:8], "--corpus", corpus.root)
    _one_line_error(code, err, "has format 2, this gfxhound reads up to 1")


def test_the_merged_reproducer_checks_itself_and_a_bare_snippet_does_not():
    """The merged draft pastes 01f5c6fa's minimal.py as it is (its own repro-protocol check: the old releases'
    'Unsupported conversion ... rtz' refusal is 'absent'); a generated kernel-and-compile snippet is wrapped."""
    corpus = Corpus(ROOT / "corpus")
    assert checks_itself(corpus.minimal(ASSERTS).read_text())
    reduced = corpus.reduction(ASSERTS, "spec")
    bare = triton_snippet(prune_unused(reduced.kernel.read_text()), constants(reduced.repro.read_text()))
    assert not checks_itself(bare)
