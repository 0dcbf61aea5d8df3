"""The nightly report: JUnit XML that CI parsers accept, a self-contained HTML page, the history file, a screenshot."""
import json
import os
from datetime import date, timedelta
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from gfxhound.report import nightly_report as nr

CONTROL = "\x1b[31m"  # an ANSI colour escape from a compiler's stderr: \x1b is illegal in XML 1.0


def finding(sig, state, verdict="ice", **kw):
    base = {"signature": sig, "verdict": verdict, "stage": "llir", "message": f"RuntimeError: failure {sig[:4]}",
            "targets": ["gfx942"], "count": 3, "state": state, "known_issue": None, "reproductions": "3/3",
            "flaky_rate": None, "draft": None, "bisect": None, "reduced": True}
    return {**base, **kw}


def sample_night(day="2026-11-22", errors=("reduce 1234abcd: timed out",)):
    return {
        "format": 1, "date": day, "started": f"{day}T02:00:00+00:00", "duration_s": 3725.0,
        "toolchain": "triton-3.9.0", "previous_toolchain": "triton-3.8.0", "targets": ["gfx942", "gfx950"],
        "shards": 2,
        "campaign": {"kernels": 5000, "kernels_per_s": 12.5, "verdicts": {"pass": 4900, "ice": 12, "user_error": 88}},
        "findings": [
            finding("eaa292644627f3a9", "new", message=f"RuntimeError: {CONTROL}LLVM ERROR\x00 cannot select\n"
                    "  at line 2", targets=["gfx942", "gfx950"], count=9,
                    draft="drafts/eaa292644627f3a9/draft.md", bisect="first bad: triton 3.5.0 (last good 3.4.0)"),
            finding("0123456789abcdef", "new", verdict="miscompile", stage="execute", message="x" * 300),
            finding("fedcba9876543210", "known", known_issue="https://github.com/triton-lang/triton/issues/1"),
            finding("1111222233334444", "flaky", reproductions="1/3", flaky_rate=1 / 3),
        ],
        "fixed": [{"signature": "99998888777766665555", "message": "AssertionError: layout", "fixed_in": "3.9.0"}],
        "perf": [{"kernel": "perf-03", "target": "gfx942", "metric": "vgpr_count", "old": 64, "new": 96,
                  "growth": 0.5}],
        "errors": list(errors),
    }


def synthetic_history(n):
    """n earlier nights, ending the night before sample_night()."""
    first = date(2026, 11, 22) - timedelta(days=n)
    return [{"date": (first + timedelta(days=i)).isoformat(), "toolchain": "triton-3.8.0", "kernels": 4000 + 50 * i,
             "kernels_per_s": 10 + (i % 4), "new": i % 3, "known": 2, "flaky": i % 2, "fixed": 0,
             "perf_regressions": 0, "findings": 2 + i % 3 + i % 2} for i in range(n)]


# ---------------------------------------------------------------- JUnit

def test_junit_counts_names_and_states(tmp_path):
    path = nr.write_junit(sample_night(), tmp_path / "junit.xml")
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["gfxhound nightly 2026-11-22", "gfxhound perf 2026-11-22"]
    main, perf = suites
    # 4 findings + 1 fixed + campaign + harness errors
    assert (main.get("tests"), main.get("failures"), main.get("skipped")) == ("7", "3", "2")
    assert (perf.get("tests"), perf.get("failures")) == ("1", "1")
    cases = {c.get("name"): c for c in main.findall("testcase")}
    new = cases["eaa292644627 RuntimeError: LLVM ERROR cannot select"]
    assert new.get("classname") == "gfxhound.ice"
    failure = new.find("failure")
    assert failure.get("message") == "RuntimeError: LLVM ERROR cannot select"
    for needle in ("gfx942, gfx950", "count: 9", "reproductions: 3/3", "first bad: triton 3.5.0",
                   "drafts/eaa292644627f3a9/draft.md"):
        assert needle in failure.text
    long_name = next(n for n in cases if n.startswith("0123456789ab "))
    assert len(long_name.split(" ", 1)[1]) <= 100 and cases[long_name].get("classname") == "gfxhound.miscompile"
    known = cases["fedcba987654 RuntimeError: failure fedc"].find("skipped")
    assert known.get("message") == "known: https://github.com/triton-lang/triton/issues/1"
    assert cases["111122223333 RuntimeError: failure 1111"].find("skipped").get("message") == "flaky: 1/3 reproductions"
    fixed = cases["fixed 999988887777"]
    assert fixed.find("failure") is None and fixed.find("skipped") is None and "3.9.0" in fixed.find("system-out").text
    campaign = cases["campaign"]
    assert campaign.find("failure") is None
    assert all(s in campaign.find("system-out").text for s in ("kernels: 5000", "kernels/s: 12.5", "ice=12"))
    assert "reduce 1234abcd: timed out" in cases["harness errors"].find("failure").text
    assert "+50%" in perf.find("testcase/failure").get("message")


def test_junit_strips_characters_that_break_xml_parsers(tmp_path):
    night = sample_night()
    night["findings"][0]["stage"] = "llir\ud800"  # a lone surrogate (from a badly decoded log)
    night["errors"] = ["bisect\x07 failed\x0b"]
    text = nr.write_junit(night, tmp_path / "junit.xml").read_text(encoding="utf-8")
    for bad in ("\x1b", "\x00", "\x07", "\x0b", "\ud800", "&#27;", "&#0;"):
        assert bad not in text
    ET.fromstring(text.encode())  # parses
    assert "bisect failed" in text


def test_junit_without_errors_or_perf_has_no_such_cases(tmp_path):
    night = sample_night(errors=())
    night["perf"] = []
    root = ET.parse(nr.write_junit(night, tmp_path / "j.xml")).getroot()
    assert len(root.findall("testsuite")) == 1
    names = [c.get("name") for c in root.iter("testcase")]
    assert "harness errors" not in names and len(names) == 6
    assert list(tmp_path.iterdir()) == [tmp_path / "j.xml"]  # no temp file left behind


# ---------------------------------------------------------------- HTML

class Collector(HTMLParser):
    VOID = {"meta", "br", "hr", "img", "input", "link", "rect", "line", "circle", "polyline"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.headings, self.hrefs, self.svgs, self.tags = [], [], [], [], [], []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "svg":
            self.svgs.append([])
        if tag == "g" and attrs.get("class") == "night":
            self.svgs[-1].append(attrs["data-date"])
        if tag == "a":
            self.hrefs.append(attrs["href"])
        if tag == "h2":
            self._in_h2, self.headings = True, self.headings + [""]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        if self._in_h2:
            self.headings[-1] += data


def parse(path):
    c = Collector()
    c.feed(path.read_text(encoding="utf-8"))
    c.close()
    return c


@pytest.mark.parametrize("earlier", [0, 29])
def test_html_is_balanced_self_contained_and_charts_every_night(tmp_path, earlier):
    night = sample_night()
    page = nr.write_html(night, synthetic_history(earlier), tmp_path / "nightly.html")
    c = parse(page)
    assert not c.errors and c.stack == [], (c.errors, c.stack)
    counts = {t: sum(1 for tag, _ in c.tags if tag == t) for t in ("table", "svg", "section")}
    assert counts == {"table": 6, "svg": 2, "section": 7}
    titles = [h.split(" (")[0] for h in c.headings]
    assert titles == ["New findings", "Flaky", "Known", "Fixed", "Perf regressions", "Harness errors", "Trends"]
    assert "drafts/eaa292644627f3a9/draft.md" in c.hrefs
    assert "https://github.com/triton-lang/triton/issues/1" in c.hrefs
    dates = [r["date"] for r in synthetic_history(earlier)] + ["2026-11-22"]
    assert c.svgs == [dates, dates]  # one data point per night in each chart
    # self-contained: nothing fetched
    assert not [(t, a) for t, a in c.tags if t in ("script", "link", "img", "iframe") or "src" in a]
    text = page.read_text()
    assert "\x1b" not in text and "\x00" not in text
    assert "triton-3.8.0" in text and "1h 02m 05s" in text and "12.5" in text


def test_html_empty_sections_say_none_and_text_is_escaped(tmp_path):
    night = sample_night(errors=())
    night.update(findings=[finding("abcdefabcdef0000", "new", message="<script>alert(1)</script> & co",
                                   draft="javascript:alert(1)")], fixed=[], perf=[])
    history = synthetic_history(3) + [{"date": "2026-11-22", "kernels_per_s": 99, "new": 50}]  # same date: replaced
    page = nr.write_html(night, history, tmp_path / "n.html")
    text = page.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in text
    assert 'href="javascript' not in text
    c = parse(page)
    assert not c.errors
    assert sum(1 for t, _ in c.tags if t == "table") == 1
    assert text.count('<p class="none">none</p>') == 5
    assert c.svgs[0] == ["2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22"]


# ---------------------------------------------------------------- history

def test_history_row_counts():
    assert nr.history_row(sample_night()) == {
        "date": "2026-11-22", "toolchain": "triton-3.9.0", "kernels": 5000, "kernels_per_s": 12.5, "new": 2,
        "known": 1, "flaky": 1, "fixed": 1, "perf_regressions": 1, "findings": 4}


def test_append_history_accumulates_atomically(tmp_path, monkeypatch):
    path = tmp_path / "history.json"
    first = nr.append_history(path, sample_night("2026-11-20"))
    assert [r["date"] for r in first] == ["2026-11-20"]
    second = nr.append_history(path, sample_night("2026-11-21"))
    assert [r["date"] for r in second] == ["2026-11-20", "2026-11-21"] == [r["date"] for r in
                                                                          json.loads(path.read_text())]
    rerun = nr.append_history(path, sample_night("2026-11-21"))
    assert len(rerun) == 2  # the same night twice is one row
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.json"]

    # written through gfxhound/atomic.py (os.replace of a temp file beside it): a crash mid-write leaves the old file
    calls = []
    real_replace = os.replace

    def spy(src, dst):
        calls.append((src, dst))
        assert open(dst).read() == before  # the old content is intact until the rename
        real_replace(src, dst)
    before = path.read_text()
    monkeypatch.setattr(os, "replace", spy)
    nr.append_history(path, sample_night("2026-11-22"))
    assert len(calls) == 1 and str(calls[0][1]) == str(path) and str(calls[0][0]).startswith(str(tmp_path))

    def boom(src, dst):
        raise OSError("disk full")
    before = path.read_text()
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        nr.append_history(path, sample_night("2026-11-23"))
    assert path.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["history.json"]


def test_append_history_refuses_a_file_that_is_not_a_list(tmp_path):
    path = tmp_path / "history.json"
    path.write_text('{"date": "x"}')
    with pytest.raises(ValueError):
        nr.append_history(path, sample_night())


# ---------------------------------------------------------------- screenshot

def test_screenshot_without_chromium_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(nr.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="chromium"):
        nr.screenshot(tmp_path / "a.html", tmp_path / "a.png")


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_screenshot_writes_a_png(tmp_path):
    page = nr.write_html(sample_night(), synthetic_history(10), tmp_path / "nightly.html")
    png = nr.screenshot(page, tmp_path / "out" / "nightly.png", timeout=120)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert sorted(p.name for p in png.parent.iterdir()) == ["nightly.png"]
