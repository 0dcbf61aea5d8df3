"""Status at a glance (gfxhound/report/triage.py `standing`): what the campaign summary, `corpus list/show` and the
nightly say of a finding, from its record, the corpus's triage.json and its drafts; never "new" for a bug the
corpus already records anything of. Run on the checked-in triage.json and finding folders."""
import json
import shutil
import subprocess
from pathlib import Path

from gfxhound.corpus_store import Corpus
from gfxhound.report.triage import Triage, corpus_triage, standing, standing_in

ROOT = Path(__file__).resolve().parents[2]
KNOWN, DRAFTED, FIXED = "93260d1c0e8fc7a2", "caad2c44369ac53f", "eaa292644627f3a9"
SEARCHED = "8b7ca21e99eb75e0"  # 0b24f87e before normaliser 8: triage.json names the old id, an alias


def _copy(tmp_path, *ids) -> Corpus:
    root = tmp_path / "c"
    root.mkdir()
    shutil.copy(ROOT / "corpus" / "triage.json", root / "triage.json")
    for sig in ids:
        shutil.copytree(ROOT / "corpus" / sig, root / sig)
    return Corpus(root)


def test_each_state_from_the_checked_in_triage_and_findings(tmp_path):
    corpus = _copy(tmp_path, KNOWN, DRAFTED, FIXED, SEARCHED)
    triage = corpus_triage(corpus)
    got = {sig: standing_in(corpus, corpus.get(sig), triage) for sig in (KNOWN, DRAFTED, FIXED, SEARCHED)}
    assert got[KNOWN] == {"state": "known upstream", "text": "known upstream: triton-lang/triton#11904 (pr, reported)",
                          "link": "https://github.com/triton-lang/triton/pull/11904"}
    assert got[FIXED]["state"] == "fixed" and got[FIXED]["text"] == "fixed in triton-3.9.0"  # finding.json says "new"
    assert corpus.get(FIXED).status == "new"
    assert got[DRAFTED]["state"] == "drafted"
    assert got[SEARCHED] == {"state": "searched", "text": "not upstream (searched 2026-11-24)", "link": None}
    nothing = corpus.get(SEARCHED)
    nothing.signature, nothing.aliases = "f" * 16, []
    assert standing(nothing, Triage(tmp_path / "none.json"), drafted=False)["state"] == "new"
    nothing.toolchains = ["triton-3.9.0"]  # eaa29264's fixed issue, seen again on the release with the fix
    nothing.signature = FIXED
    assert standing(nothing, triage, drafted=False)["state"] == "regression"


def test_a_fresh_corpus_campaign_marks_known_and_drafted_bugs_not_new(tmp_path):
    """A campaign on an empty corpus that holds only the checked-in triage.json and drafts: the bugs it records
    are new to the corpus, but the summary says 93260d1c is known upstream and caad2c44 drafted."""
    from gfxhound.campaign.stats import with_status
    root = tmp_path / "fresh"
    root.mkdir()
    shutil.copy(ROOT / "corpus" / "triage.json", root / "triage.json")
    shutil.copytree(ROOT / "corpus" / DRAFTED / "draft", root / DRAFTED / "draft")
    corpus = Corpus(root)
    rows = []
    for sig in (KNOWN, DRAFTED, "01f5c6fa9ca3e32d"):
        example = next((ROOT / "corpus" / sig / "examples").iterdir())
        run = json.loads((example / "run.json").read_text())
        run["signature"] = sig
        finding, is_new = corpus.record(run, {"run.json": json.dumps(run)})
        assert is_new
        rows.append({"id": finding.signature, "new": is_new})
    by_id = {r["id"]: r for r in with_status(rows, root)}
    assert by_id[KNOWN]["status"]["state"] == "known upstream" and not by_id[KNOWN]["new"]
    assert by_id[KNOWN]["status"]["link"] == "https://github.com/triton-lang/triton/pull/11904"
    assert by_id[DRAFTED]["status"]["state"] == "drafted" and not by_id[DRAFTED]["new"]
    assert by_id["01f5c6fa9ca3e32d"]["status"]["state"] == "searched"  # triage searched it: recorded, not new


def test_a_draft_kept_under_an_alias_still_counts(tmp_path):
    corpus = _copy(tmp_path, SEARCHED)
    (corpus.path(SEARCHED) / "aliases" / "1234567812345678" / "draft").mkdir(parents=True)
    (corpus.path(SEARCHED) / "aliases" / "1234567812345678" / "draft" / "draft.md").write_text("# d\n")
    assert corpus.drafted(SEARCHED)
    assert standing_in(corpus, corpus.get(SEARCHED), corpus_triage(corpus))["state"] == "drafted"


def test_corpus_list_and_show_print_the_status(tmp_path, gfxhound_bin):
    corpus = _copy(tmp_path, KNOWN, FIXED, DRAFTED)
    listed = subprocess.run([gfxhound_bin, "corpus", "list", "--corpus", str(corpus.root)], capture_output=True,
                            text=True, check=True).stdout
    header = next(line for line in listed.splitlines() if line.startswith("id"))
    assert "status" in header.split()
    rows = {line.split()[0]: line for line in listed.splitlines() if line[:16] in (KNOWN, FIXED, DRAFTED)}
    assert "known upstream: triton-lang/triton#11904" in rows[KNOWN] and "pull/11904" in rows[KNOWN]
    assert "fixed in triton-3.9.0" in rows[FIXED] and "drafted" in rows[DRAFTED]
    as_json = json.loads(subprocess.run([gfxhound_bin, "corpus", "list", "--json", "--corpus", str(corpus.root)],
                                        capture_output=True, text=True, check=True).stdout)
    states = {r["id"]: (r["status"], r["status_link"], r["recorded_status"]) for r in as_json["findings"]}
    assert states[FIXED] == ("fixed", "https://github.com/triton-lang/triton/pull/11019", "new")
    shown = subprocess.run([gfxhound_bin, "corpus", "show", FIXED[:8], "--corpus", str(corpus.root)],
                           capture_output=True, text=True, check=True).stdout
    assert "fixed in triton-3.9.0" in shown.splitlines()[0] and "status new" not in shown


def test_unsupported_findings_are_listed_and_counted_apart(tmp_path, gfxhound_bin):
    """574ae584 (e5a7e633 before normaliser 8): a pass's clean refusal, in a table of its own after the crashes."""
    import io
    from gfxhound.cli.fuzz_summary import print_summary
    from gfxhound.families import headline
    corpus = _copy(tmp_path, KNOWN, "574ae58415d6df55")
    listed = subprocess.run([gfxhound_bin, "corpus", "list", "--corpus", str(corpus.root)], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    title = next(i for i, line in enumerate(listed) if line.startswith("unsupported"))
    assert next(i for i, line in enumerate(listed) if line.startswith("574ae58415d6df55")) > title
    assert next(i for i, line in enumerate(listed) if line.startswith(KNOWN)) < title
    rows = [{"id": f.signature, "verdict": f.verdict, "stage": f.stage, "normalised": f.normalised,
             "configuration": "default", "target": f.targets[0], "new": False, "first_error_line": f.message,
             "status": standing_in(corpus, f, corpus_triage(corpus))} for f in corpus.findings()]
    assert headline(rows).endswith("1 unsupported: a pass refuses what the front end accepted (listed apart)")
    out = io.StringIO()
    print_summary({"kernels": 2, "duration_s": 1, "kernels_per_s": 2, "toolchain": "triton-3.6.0",
                   "targets": ["gfx1100"], "interrupted": False, "verdicts": {"ice": 1, "unsupported": 1},
                   "findings": rows, "user_errors": {}}, out)
    text = out.getvalue().splitlines()
    apart = next(i for i, line in enumerate(text) if line.startswith("unsupported (a pass refused"))
    assert next(i for i, line in enumerate(text) if line.startswith("574ae58415d6df55")) > apart
    assert any(line.startswith("unsupported") and line.split()[-1] == "1" for line in text[:apart])  # counted


def test_the_nightly_page_shows_each_findings_status(tmp_path):
    from gfxhound.report.nightly_report import write_html
    corpus = _copy(tmp_path, KNOWN)
    finding = corpus.get(KNOWN)
    night = {"date": "2026-11-27", "toolchain": "triton-3.9.0", "campaign": {}, "fixed": [], "perf": [],
             "errors": [], "findings": [{"signature": KNOWN, "verdict": "ice", "stage": "amdgcn", "targets": ["gfx942"],
                                         "count": 1, "state": "known", "message": finding.message,
                                         "status": standing_in(corpus, finding, corpus_triage(corpus))}]}
    html = write_html(night, [], tmp_path / "summary.html").read_text()
    assert '<a href="https://github.com/triton-lang/triton/pull/11904">known upstream: triton-lang/triton#11904' in html
