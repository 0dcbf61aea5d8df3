"""Reference corpora (`--known`, report/triage.py `Reference`): a campaign into a fresh corpus says what the
checked-in corpus knows of a bug (its triage.json by signature or alias, then its drafts), never "new" for one the
project already tracks upstream or has drafted. Run on the checked-in corpus/ as the reference."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.corpus_store import Corpus
from gfxhound.report.triage import Reference, corpus_triage, references, standing_in

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "corpus"
KNOWN, DRAFTED = "93260d1c0e8fc7a2", "caad2c44369ac53f"  # triton-lang/triton#11904; draft/draft.md
REKEYED = "194da12df9027281"  # triage.json names it by its old id ccd9fd0d (aliases.json: ccd9fd0d -> 194da12d)
LINK = "https://github.com/triton-lang/triton/pull/11904"


def _fresh(tmp_path, *ids, strip_aliases=()) -> Corpus:
    """A fresh corpus holding only the checked-in finding.json of `ids`: no triage.json, no drafts, no aliases."""
    root = tmp_path / "fresh"
    for sig in ids:
        (root / sig).mkdir(parents=True)
        record = json.loads((CHECKED_IN / sig / "finding.json").read_text())
        if sig in strip_aliases:  # as a campaign that met the bug for the first time records it
            record["aliases"] = []
        (root / sig / "finding.json").write_text(json.dumps(record))
    return Corpus(root)


def _new_finding(corpus: Corpus, sig: str = "f" * 16):
    """A finding nothing anywhere records (a copy of 93260d1c's record under another id and message)."""
    record = json.loads((CHECKED_IN / KNOWN / "finding.json").read_text())
    record.update(signature=sig, aliases=[], message="LLVM ERROR: something no one has seen",
                  normalised="LLVM ERROR: something no one has seen")
    (corpus.root / sig).mkdir(parents=True)
    (corpus.root / sig / "finding.json").write_text(json.dumps(record))
    return corpus.get(sig)


def test_a_fresh_corpus_gets_known_upstream_and_drafted_from_the_checked_in_corpus(tmp_path):
    corpus = _fresh(tmp_path, KNOWN, DRAFTED, REKEYED, strip_aliases=(REKEYED,))
    triage = corpus_triage(corpus)
    alone = {sig: standing_in(corpus, corpus.get(sig), triage) for sig in (KNOWN, DRAFTED, REKEYED)}
    assert {s["state"] for s in alone.values()} == {"new"}  # what a fresh corpus said before --known
    refs = references([CHECKED_IN])
    got = {sig: standing_in(corpus, corpus.get(sig), triage, refs) for sig in (KNOWN, DRAFTED, REKEYED)}
    assert got[KNOWN] == {"state": "known upstream", "text": "known upstream: triton-lang/triton#11904 (pr, reported)",
                          "link": LINK, "from": str(CHECKED_IN)}
    assert got[DRAFTED] == {"state": "drafted", "text": f"drafted (in {CHECKED_IN})", "link": None,
                            "from": str(CHECKED_IN)}  # caad2c44 was also searched: its draft is more settled
    # triton#9618 names ccd9fd0d, the id before normaliser 8; the fresh finding has only the new id
    assert got[REKEYED]["state"] == "fixed" and got[REKEYED]["link"].endswith("/pull/9618")
    assert "ccd9fd0d4eb85908" in Reference(CHECKED_IN).ids(corpus.get(REKEYED))
    nobody = _new_finding(corpus)
    assert standing_in(corpus, nobody, triage, refs) == {"state": "new", "text": "new", "link": None}


def test_the_own_corpus_speaks_first_and_a_reference_only_where_it_says_new_or_searched(tmp_path):
    corpus = _fresh(tmp_path, KNOWN, DRAFTED)
    (corpus.root / "triage.json").write_text(json.dumps({"format": 2, "issues": [
        {"repo": "me/fork", "number": 7, "title": "mine", "state": "reported", "signature": KNOWN}], "searched": [
        {"signature": DRAFTED, "checked": "2026-11-01", "queries": ["CanonicalizePointers ConvertSCFIfOp"]}]}))
    refs = references([CHECKED_IN])
    mine = standing_in(corpus, corpus.get(KNOWN), corpus_triage(corpus), refs)
    assert mine["text"] == "known upstream: me/fork#7 (issue, reported)" and "from" not in mine
    searched = standing_in(corpus, corpus.get(DRAFTED), corpus_triage(corpus), refs)
    assert searched["state"] == "drafted" and searched["from"] == str(CHECKED_IN)  # own search < their draft
    nobody = _new_finding(corpus)  # a search of the reference's beats the own corpus's nothing
    other = tmp_path / "other"
    other.mkdir()
    (other / "triage.json").write_text(json.dumps({"format": 2, "issues": [], "searched": [
        {"signature": nobody.signature, "checked": "2026-11-02", "queries": ["q"]}]}))
    got = standing_in(corpus, nobody, corpus_triage(corpus), references([other, CHECKED_IN]))
    assert got == {"state": "searched", "text": "not upstream (searched 2026-11-02)", "link": None,
                   "from": str(other)}


def test_the_campaign_summary_never_calls_a_recorded_bug_new(tmp_path):
    """The acceptance's shape: a campaign into an empty corpus records both bugs as new to it; the summary says
    93260d1c is known upstream and caad2c44 drafted, and `new` (what --fail-on-new reads) is false for both."""
    from gfxhound.campaign.stats import with_status
    root = tmp_path / "fresh"
    corpus = Corpus(root)
    rows = []
    for sig in (KNOWN, DRAFTED):
        example = next((CHECKED_IN / sig / "examples").iterdir())
        run = json.loads((example / "run.json").read_text())
        run["signature"] = sig
        finding, is_new = corpus.record(run, {"run.json": json.dumps(run)})
        assert is_new and finding.signature == sig
        rows.append({"id": sig, "new": is_new})
    by_id = {r["id"]: r for r in with_status(rows, root, [CHECKED_IN])}
    assert by_id[KNOWN]["status"]["state"] == "known upstream" and by_id[KNOWN]["status"]["link"] == LINK
    assert by_id[DRAFTED]["status"]["state"] == "drafted" and by_id[DRAFTED]["status"]["from"] == str(CHECKED_IN)
    assert not by_id[KNOWN]["new"] and not by_id[DRAFTED]["new"]
    assert all(r["new"] for r in with_status(rows, root))  # no reference: new to the corpus, recorded nowhere
    from gfxhound.cli.fuzz_summary import status_cell
    assert status_cell(by_id[KNOWN]) == f"known upstream: triton-lang/triton#11904 (pr, reported) {LINK}"


def test_the_default_reference_is_the_clones_corpus_unless_it_is_the_corpus_itself(tmp_path):
    from gfxhound.cli.common import UserError
    from gfxhound.cli.options import default_known, known_corpora
    assert default_known() == CHECKED_IN
    assert known_corpora(None, tmp_path / "fresh") == [CHECKED_IN]
    assert known_corpora(None, CHECKED_IN) == []  # `corpus list` in the clone: its own records count first anyway
    assert known_corpora(None, ROOT / "corpus" / ".." / "corpus") == []
    assert known_corpora(["none"], tmp_path) == []
    assert known_corpora([str(tmp_path), str(CHECKED_IN), str(tmp_path)], tmp_path / "x") == [tmp_path.resolve(),
                                                                                             CHECKED_IN]
    with pytest.raises(UserError, match="give it alone"):
        known_corpora(["none", str(CHECKED_IN)], tmp_path)
    with pytest.raises(UserError, match="no such corpus directory"):
        known_corpora([str(tmp_path / "missing")], tmp_path)


def test_corpus_list_and_show_of_a_fresh_corpus_through_the_cli(tmp_path, gfxhound_bin):
    corpus = _fresh(tmp_path, KNOWN, DRAFTED)
    root = str(corpus.root)
    listed = subprocess.run([gfxhound_bin, "corpus", "list", "--corpus", root], capture_output=True, text=True,
                            check=True).stdout
    rows = {line.split()[0]: line for line in listed.splitlines() if line[:16] in (KNOWN, DRAFTED)}
    assert "known upstream: triton-lang/triton#11904" in rows[KNOWN] and LINK in rows[KNOWN]
    assert f"drafted (in {CHECKED_IN})" in rows[DRAFTED]
    shown = subprocess.run([gfxhound_bin, "corpus", "show", KNOWN[:8], "--corpus", root], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    assert "known upstream: triton-lang/triton#11904" in shown[0]
    assert f"  status from: {CHECKED_IN} (a reference corpus; --known)" in shown
    shown = subprocess.run([gfxhound_bin, "corpus", "show", DRAFTED[:8], "--corpus", root, "--json"],
                           capture_output=True, text=True, check=True).stdout
    assert json.loads(shown)["status"] == {"state": "drafted", "text": f"drafted (in {CHECKED_IN})", "link": None,
                                           "from": str(CHECKED_IN)}
    as_json = json.loads(subprocess.run([gfxhound_bin, "corpus", "list", "--json", "--corpus", root],
                                        capture_output=True, text=True, check=True).stdout)
    assert {r["id"]: (r["status"], r["status_from"]) for r in as_json["findings"]} == {
        KNOWN: ("known upstream", str(CHECKED_IN)), DRAFTED: ("drafted", str(CHECKED_IN))}
    jsonschema = pytest.importorskip("jsonschema")
    for name, document in (("corpus-list", as_json), ("corpus-show", json.loads(shown))):
        jsonschema.validate(document, json.loads((ROOT / "docs" / "schemas" / f"{name}.json").read_text()))
    off = subprocess.run([gfxhound_bin, "corpus", "list", "--corpus", root, "--known", "none"], capture_output=True,
                         text=True, check=True).stdout
    assert all(" new " in line for line in off.splitlines() if line[:16] in (KNOWN, DRAFTED))
    bad = subprocess.run([gfxhound_bin, "corpus", "list", "--corpus", root, "--known", str(tmp_path / "nope")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--known" in bad.stderr


def test_the_nightly_takes_a_reference_corpus_tracked_issue_as_known(tmp_path):
    from gfxhound.report.nightly import Night, NightConfig
    corpus = _fresh(tmp_path, KNOWN, DRAFTED)
    night = Night(NightConfig(out=tmp_path / "out", corpus=corpus.root, targets=["gfx942"], known=[CHECKED_IN]),
                  log=lambda line: None)
    night.triage(corpus, tonight={KNOWN, DRAFTED}, new=set())
    entries = {e["signature"]: e for e in night.record["findings"]}
    assert entries[KNOWN]["known_issue"] == LINK and entries[KNOWN]["status"]["state"] == "known upstream"
    assert entries[DRAFTED]["status"]["state"] == "drafted" and entries[DRAFTED]["state"] == "known"
