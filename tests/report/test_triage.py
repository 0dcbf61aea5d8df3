"""The triage file (gfxhound/report/triage.py, docs/triage.md): format 1 read with defaults and written as format 2,
bad entries refused in one line, regressions judged within one product, the "Known upstream" lines a draft gets,
`gfxhound triage add/searched/list`, and `gfxhound report` refusing a finding that is known and fixed upstream
unless it was seen on a toolchain with the fix (then the draft says it is a regression)."""
import json
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from gfxhound.report.triage import KnownIssue, SearchRecord, Triage, TriageError, parse_ref, toolchain_version

ROOT = Path(__file__).resolve().parents[2]
LLC_SIG = "28f1b1b801f666bf"  # an llc crash with a reduced .ll: its draft runs llc-22 for a second, no Triton compile


def _finding(toolchains=("triton-3.9.0",), message="LLVM ERROR: x", signature=LLC_SIG):
    return SimpleNamespace(signature=signature, aliases=[], normalised=message, message=message,
                           toolchains=list(toolchains))


def _triage(tmp_path, data) -> Triage:
    path = tmp_path / "triage.json"
    path.write_text(json.dumps(data))
    return Triage(path)


def test_format_1_is_read_with_defaults_and_written_as_format_2(tmp_path):
    triage = _triage(tmp_path, {"format": 1, "issues": [
        {"repo": "llvm/llvm-project", "number": 7, "title": "t", "state": "fixed", "signature": "28f1b1b8",
         "match": None, "note": "", "fixed_in": "triton-3.9.0"}]})
    [issue] = triage.issues
    assert (issue.kind, issue.url, issue.checked) == ("issue", "https://github.com/llvm/llvm-project/issues/7", None)
    assert triage.searched == []
    triage.add_search(SearchRecord("2026-11-24", ["first query", "second query"], signature="0b24f87e"))
    data = json.loads(triage.path.read_text())
    assert data["format"] == 2 and set(data) == {"format", "issues", "searched"}
    assert data["issues"][0]["kind"] == "issue" and data["issues"][0]["url"].endswith("/issues/7")
    assert data["searched"][0] == {"checked": "2026-11-24", "queries": ["first query", "second query"],
                                   "signature": "0b24f87e", "match": None,
                                   "trackers": ["triton-lang/triton", "llvm/llvm-project"], "result": "no match",
                                   "related": [], "note": ""}
    again = Triage(triage.path)
    assert again.issues == triage.issues and again.searched == triage.searched
    pr = KnownIssue("triton-lang/triton", 11019, "", "fixed", "eaa29264", kind="pr")
    assert pr.url == "https://github.com/triton-lang/triton/pull/11019" and pr.ref == "triton-lang/triton#11019"


@pytest.mark.parametrize("data, words", [
    ({"format": 2, "issues": [{"repo": "a/b", "number": 1, "title": "", "state": "fixed", "signature": "28f1b1b8",
                               "kind": "patch"}]}, "kind 'patch' is not one of issue, pr"),
    ({"format": 2, "issues": [{"repo": "a/b", "number": 1, "title": "", "state": "fixed", "signature": "28f1b1b8",
                               "checked": "24.11.2026"}]}, "is not a date"),
    ({"format": 2, "issues": [{"repo": "a/b", "number": 1, "title": "", "state": "fixed", "signature": "28f1b1b8",
                               "url": "github.com/a/b/issues/1"}]}, "must be an https:// address"),
    ({"format": 2, "issues": [], "searched": [{"signature": "28f1b1b8", "checked": "2026-11-24", "queries": []}]},
     "list the queries used"),
    ({"format": 2, "issues": [], "searched": [{"signature": "28f1b1b8", "checked": "2026-11-24", "queries": ["q"],
                                               "result": "match"}]}, "a match is an issues entry"),
    ({"format": 2, "issues": [], "searched": [{"signature": "28f1b1b8", "checked": "2026-11-24", "queries": ["q"],
                                               "related": [{"ref": "a/b#1"}]}]}, "needs ref and why"),
    ({"format": 2, "issues": [], "searched": [{"signature": "28f1b1b8", "queries": ["q"]}]}, "lacks a field"),
    ({"format": 2, "issues": [], "seen": []}, "unknown top-level field(s) seen"),
    ({"format": 3, "issues": []}, "format 3 is newer than this gfxhound"),
])
def test_bad_entries_are_refused_in_one_line(tmp_path, data, words):
    with pytest.raises(TriageError) as caught:
        _triage(tmp_path, data)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_regression_is_judged_within_one_product():
    assert toolchain_version("pytorch-triton-rocm-3.9.0")[0] == "triton"
    assert toolchain_version("llvm-22.1.8")[0] == "llvm" and toolchain_version("llvm@6bc4aaf6") is None
    triage = Triage(Path("/nonexistent/triage.json"))
    on_39 = _finding(["triton-3.6.0", "triton-3.9.0"])
    for fixed_in, regression in (("triton-3.8.0", True), ("triton-3.9.0", True), ("triton-3.10.0", False),
                                 ("llvm-24.0.0git", False), ("llvm@6bc4aaf6", False), (None, False)):
        issue = KnownIssue("llvm/llvm-project", 1, "", "fixed", LLC_SIG[:8], fixed_in=fixed_in)
        triage.issues = [issue]
        assert (triage.known(on_39) is None) == regression, fixed_in
        assert (triage.regression(on_39) is issue) == regression, fixed_in
    assert triage.known(_finding(["pytorch-triton-rocm-3.9.0"])) is issue


def test_a_draft_says_what_the_trackers_know():
    triage = Triage(Path("/nonexistent/triage.json"))
    finding = _finding(["triton-3.9.0"], message="gfx942: acquire-agent:wait-before-inv: missing x")
    assert triage.draft_lines(finding) == []  # never searched: the draft says nothing about the trackers
    triage.searched = [SearchRecord("2026-01-02", ["old"], match="wait-before-inv"),
                       SearchRecord("2026-11-24", ["q one", "q two"], match="wait-before-inv",
                                    related=[{"ref": "llvm/llvm-project#220694", "why": "a candidate origin"}])]
    lines = triage.draft_lines(finding)
    assert lines[0] == "Searched triton-lang/triton and llvm/llvm-project on 2026-11-24: no matching report found."
    assert "q one" not in lines[0]  # the queries are the triage record's, not the maintainer's reading
    assert lines[1] == "Related but not the same bug: llvm/llvm-project#220694: a candidate origin"
    triage.searched = []
    triage.issues = [KnownIssue("triton-lang/triton", 5, "", "fixed", LLC_SIG, kind="pr", fixed_in="triton-3.8.0")]
    assert triage.draft_lines(finding) == [
        "Regression: triton-lang/triton#5 (pr, https://github.com/triton-lang/triton/pull/5) was fixed in "
        "triton-3.8.0, but this bug was seen on triton-3.9.0, which is at or after the fix."]


def test_issue_references_name_their_kind():
    assert parse_ref("https://github.com/llvm/llvm-project/pull/180290") == ("llvm/llvm-project", 180290, "pr")
    assert parse_ref("https://github.com/llvm/llvm-project/issues/180212/") == ("llvm/llvm-project", 180212, "issue")
    assert parse_ref("triton-lang/triton#9055") == ("triton-lang/triton", 9055, None)
    with pytest.raises(TriageError):
        parse_ref("triton#9055")


def _corpus(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / LLC_SIG, corpus / LLC_SIG)
    return corpus


def _cli(gfxhound_bin, *argv):
    return subprocess.run([gfxhound_bin, *argv], capture_output=True, text=True, timeout=300)


def test_triage_add_and_searched_record_kind_fixed_in_url_and_date(tmp_path, gfxhound_bin):
    corpus = str(_corpus(tmp_path))
    added = _cli(gfxhound_bin, "triage", "add", "28f1b1b8", "--corpus", corpus, "--issue",
                 "https://github.com/llvm/llvm-project/pull/180290", "--state", "fixed", "--fixed-in",
                 "llvm-24.0.0git", "--title", "split legalization", "--note", "same message and node")
    assert added.returncode == 0, added.stderr
    assert "llvm/llvm-project#180290 [fixed, fixed in llvm-24.0.0git] (pr) recorded" in added.stdout
    searched = _cli(gfxhound_bin, "triage", "searched", "--match", "wait-before-inv", "--corpus", corpus,
                    "--query", "buffer_inv waitcnt", "--query", "SIInsertWaitcnts soft wait",
                    "--related", "https://github.com/llvm/llvm-project/pull/220694=a candidate origin",
                    "--checked", "2026-11-24")
    assert searched.returncode == 0, searched.stderr
    data = json.loads((Path(corpus) / "triage.json").read_text())
    [issue], [search] = data["issues"], data["searched"]
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    assert (issue["kind"], issue["url"], issue["fixed_in"], issue["checked"], issue["signature"], issue["note"]) == (
        "pr", "https://github.com/llvm/llvm-project/pull/180290", "llvm-24.0.0git", today, LLC_SIG,
        "same message and node")
    assert search["queries"] == ["buffer_inv waitcnt", "SIInsertWaitcnts soft wait"]
    assert search["related"] == [{"ref": "llvm/llvm-project#220694", "why": "a candidate origin",
                                  "url": "https://github.com/llvm/llvm-project/pull/220694"}]
    listing = _cli(gfxhound_bin, "triage", "list", "--corpus", corpus).stdout.splitlines()
    assert listing == ["llvm/llvm-project#180290 [fixed, pr, fixed in llvm-24.0.0git] split legalization -> 28f1b1b8",
                       "searched 2026-11-24 (2 queries): no match -> no finding here"]
    for argv, words in ((["--issue", "llvm/llvm-project#1", "--fixed-in", "llvm-23.1.0"], "--fixed-in goes with"),
                        (["--issue", "https://github.com/a/b/pull/1", "--kind", "issue"], "disagrees with the URL"),
                        (["--issue", "llvm/llvm-project#1", "--checked", "yesterday"], "is not a date")):
        bad = _cli(gfxhound_bin, "triage", "add", "28f1b1b8", "--corpus", corpus, *argv)
        assert bad.returncode == 2 and words in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    no_query = _cli(gfxhound_bin, "triage", "searched", "28f1b1b8", "--corpus", corpus)
    assert no_query.returncode == 2 and "list the queries used" in no_query.stderr


def _write(corpus, issues=(), searched=()):
    (corpus / "triage.json").write_text(json.dumps({"format": 2, "issues": list(issues), "searched": list(searched)}))


FIXED = {"repo": "llvm/llvm-project", "number": 180290, "kind": "pr", "title": "", "state": "fixed",
         "signature": LLC_SIG, "fixed_in": "llvm-24.0.0git", "checked": "2026-11-24"}


def test_report_refuses_a_bug_known_and_fixed_upstream(tmp_path, gfxhound_bin):
    corpus = _corpus(tmp_path)
    _write(corpus, [FIXED])
    refused = _cli(gfxhound_bin, "report", "28f1b1b8", "--corpus", str(corpus), "--out", str(tmp_path / "d"))
    assert refused.returncode == 2 and not (tmp_path / "d").exists() and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == (
        "gfxhound: 28f1b1b8 is known and fixed upstream: llvm/llvm-project#180290 (pr, fixed in llvm-24.0.0git, "
        "https://github.com/llvm/llvm-project/pull/180290); not drafted as new (--force drafts it)")
    forced = _cli(gfxhound_bin, "report", "28f1b1b8", "--corpus", str(corpus), "--out", str(tmp_path / "f"), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "- Already tracked upstream: llvm/llvm-project#180290 (pr, fixed, fixed in llvm-24.0.0git" in \
        (tmp_path / "f" / "draft.md").read_text()


def test_a_regression_of_a_fixed_bug_is_drafted_and_says_so(tmp_path, gfxhound_bin):
    corpus = _corpus(tmp_path)  # the finding was seen through triton-3.9.0
    _write(corpus, [dict(FIXED, fixed_in="triton-3.8.0")])
    proc = _cli(gfxhound_bin, "report", "28f1b1b8", "--corpus", str(corpus), "--out", str(tmp_path / "d"), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["title"].startswith("[regression] [AMDGPU]")
    draft = (tmp_path / "d" / "draft.md").read_text()
    section = draft[draft.index("## Known upstream"):draft.index("## Environment")]
    assert "Regression: llvm/llvm-project#180290 (pr, https://github.com/llvm/llvm-project/pull/180290) was fixed " \
           "in triton-3.8.0, but this bug was seen on triton-3.9.0" in section


def test_a_draft_of_a_searched_bug_says_searched_not_found(tmp_path, gfxhound_bin):
    corpus = _corpus(tmp_path)
    _write(corpus, searched=[{"signature": LLC_SIG[:8], "checked": "2026-11-24", "queries": ["split operand"]}])
    proc = _cli(gfxhound_bin, "report", "28f1b1b8", "--corpus", str(corpus), "--out", str(tmp_path / "d"))
    assert proc.returncode == 0, proc.stderr
    assert "- Searched triton-lang/triton and llvm/llvm-project on 2026-11-24: no matching report found." \
        in (tmp_path / "d" / "draft.md").read_text()


def test_the_checked_in_triage_file_reads_and_covers_its_findings():
    from gfxhound.corpus_store import Corpus
    triage = Triage(ROOT / "corpus" / "triage.json")
    findings = Corpus(ROOT / "corpus").findings()
    for entry in [*triage.issues, *triage.searched]:
        assert entry.checked and (entry.note or getattr(entry, "queries", None)), entry
    covered = {f.signature for f in findings if any(e.covers(f) for e in [*triage.issues, *triage.searched])}
    assert covered == {f.signature for f in findings}  # every checked-in finding was looked up
    assert all(len(s.queries) >= 3 for s in triage.searched)
