"""Writing a draft into a folder that holds an earlier one: the earlier draft's attachments that the new one does
not have go (a reader takes every file in the folder as part of the report), and nothing else there is touched
(`--out` may name a folder of the user's)."""
from gfxhound.report.draft_parts import Draft
from gfxhound.report.drafts import write


def test_a_regenerated_draft_drops_what_it_no_longer_attaches_and_keeps_the_users_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    write(Draft("triton-lang/triton", "t", "body", True, "ran", {"snippet.py": "a", "repro.py": "harness"}), tmp_path)
    assert (tmp_path / "repro.py").exists()
    write(Draft("triton-lang/triton", "t", "body", True, "ran", {"snippet.py": "b"}), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["draft.md", "notes.txt", "snippet.py"]
    assert (tmp_path / "snippet.py").read_text() == "b" and (tmp_path / "notes.txt").read_text() == "mine\n"
