"""The nightly driver on a CPU-only machine: a short real run (two shards in parallel on Triton 3.4.0, whose
internal compiler errors make findings) produces a night record, JUnit XML and an HTML summary that parse, drafts
for the new findings, and a merged corpus with no duplicate and no loss; a finding that reproduces k-1 of k times
is listed as flaky with its rate, not reported."""
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gfxhound.corpus_store import Corpus
from gfxhound.report.nightly import Night, NightConfig

ROOT = Path(__file__).resolve().parents[2]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.seen, self.hrefs, self.errors = [], [], [], []

    def handle_starttag(self, tag, attrs):
        if tag not in ("meta", "br", "hr", "img", "link", "input", "circle", "line", "rect", "path", "polyline"):
            self.stack.append(tag)
        self.seen.append(tag)
        self.hrefs += [v for k, v in attrs if k == "href"]

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        elif tag not in ("circle", "line", "rect", "path", "polyline"):
            self.errors.append(tag)


@pytest.mark.slow
def test_a_short_nightly_run(tmp_path, old_python):
    old_gfxhound = str(Path(old_python).parent / "gfxhound")
    out, corpus = tmp_path / "nightly", tmp_path / "corpus"
    proc = subprocess.run([old_gfxhound, "nightly", "--targets", "gfx1100,gfx942", "--budget", "60", "--shards", "2",
                           "--workers", "2", "--seed", "5", "--reproductions", "2", "--reduce-seconds", "15",
                           "--no-bisect", "--perf-set", str(ROOT / "corpus" / "perfset"), "--previous-python",
                           sys.executable, "--out", str(out), "--corpus", str(corpus), "--date", "2026-11-22",
                           "--known", "none", "--json"], capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    night = json.loads(proc.stdout)
    day = out / "2026-11-22"
    assert night["errors"] == [] and night["campaign"]["kernels"] == 120 and night["campaign"]["shards_merged"] == 2
    new = [f for f in night["findings"] if f["state"] == "new"]
    assert new, night["findings"]
    for f in new:
        assert f["reproductions"] == "2/2" and (day / f["draft"]).exists()
        assert "## Reproducer" in (day / f["draft"]).read_text()
    assert "/root/" not in json.dumps(night["findings"])  # scrubbed: the summary is published
    # the shards merged with no duplicate and no loss
    shards = [Corpus(day / "shards" / f"shard-{i}") for i in range(2)]
    merged = {f.signature: f for f in Corpus(corpus).findings()}
    per_shard = {}
    for shard in shards:
        for f in shard.findings():
            per_shard.setdefault(f.signature, []).append(f)
            names = {p.name for p in shard.example_dirs(f.signature)}
            assert names <= {p.name for p in Corpus(corpus).example_dirs(f.signature)}
    assert set(per_shard) == set(merged)
    for sig, found in per_shard.items():
        assert merged[sig].count == sum(f.count for f in found)
    assert len({p.name for p in corpus.iterdir() if len(p.name) == 16}) == len(merged)
    # JUnit: one case per finding, new ones fail; the campaign case passes
    suites = ET.parse(day / "junit.xml").getroot()
    cases = suites.findall(".//testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert len([c for c in cases if c.get("name").split()[0] in {f["signature"][:12] for f in night["findings"]}]) \
        == len(night["findings"])
    assert len(failed) == len(new) + len(night["perf"])
    assert any(c.get("name") == "campaign" and c.find("failure") is None for c in cases)
    # the HTML summary parses, links the drafts, and draws the two trend charts
    tags = _Tags()
    tags.feed((day / "summary.html").read_text())
    assert tags.errors == [] and tags.seen.count("svg") == 2
    assert {f["draft"] for f in new} <= set(tags.hrefs)
    # the perf stage ran against the other toolchain
    assert json.loads((day / "perf-old.json").read_text())["toolchain"] == "triton-3.9.0"
    assert json.loads((day / "perf-new.json").read_text())["toolchain"] == "triton-3.4.0"
    assert json.loads((out / "history.json").read_text())[-1]["kernels"] == 120


def test_a_finding_that_reproduces_k_minus_1_of_k_times_is_flaky(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "eaa292644627f3a9", corpus / "eaa292644627f3a9")
    counter = tmp_path / "runs"
    for example in Corpus(corpus).example_dirs("eaa292644627f3a9"):  # present on two runs of three
        (example / "repro.py").write_text(
            "import pathlib, sys\n"
            f"p = pathlib.Path({str(counter)!r})\n"
            "n = int(p.read_text()) + 1 if p.exists() else 1\n"
            "p.write_text(str(n))\n"
            "sys.exit(0 if n % 3 == 0 else 1)\n")
    night = Night(NightConfig(out=tmp_path / "out", corpus=corpus, targets=["gfx942"], reproductions=3,
                              reduce_s=0, bisect=False), log=lambda line: None)
    night.triage(Corpus(corpus), {"eaa292644627f3a9"}, {"eaa292644627f3a9"})
    [entry] = night.record["findings"]
    assert (entry["state"], entry["reproductions"], entry["flaky_rate"]) == ("flaky", "2/3", 0.667)
    assert entry["draft"] is None  # flaky: listed, not drafted


def test_shard_corpora_from_ci_jobs_merge_with_no_duplicate_and_no_loss(tmp_path):
    """Matrix jobs hand over shard corpora (each with its fuzz summary); the same signature in two shards merges
    into one finding whose count is the sum and whose examples are the union."""
    shards = []
    for i, sigs in enumerate([("eaa292644627f3a9", "28f1b1b801f666bf"), ("eaa292644627f3a9",)]):
        shard = tmp_path / f"shard-{i}"
        for sig in sigs:
            shutil.copytree(ROOT / "corpus" / sig, shard / sig)
        (shard / "summary.json").write_text(json.dumps({"kernels": 50 + i, "duration_s": 10.0, "verdicts": {
            "pass": 49 + i, "ice": 1}, "toolchain": "triton-3.9.0"}))
        shards.append(shard)
    night = Night(NightConfig(out=tmp_path / "out", corpus=tmp_path / "corpus", targets=["gfx942"],
                              from_shards=[str(s) for s in shards], reproductions=1, reduce_s=0, bisect=False),
                  log=lambda line: None)
    corpus, tonight, new = night.campaign()
    merged = {f.signature: f for f in corpus.findings()}
    assert set(merged) == tonight == new == {"eaa292644627f3a9", "28f1b1b801f666bf"}
    single = json.loads((ROOT / "corpus" / "eaa292644627f3a9" / "finding.json").read_text())["count"]
    assert merged["eaa292644627f3a9"].count == 2 * single
    assert {p.name for p in corpus.example_dirs("eaa292644627f3a9")} == \
        {p.name for p in (ROOT / "corpus" / "eaa292644627f3a9" / "examples").iterdir()}
    assert night.record["campaign"]["kernels"] == 101 and night.record["toolchain"] == "triton-3.9.0"
