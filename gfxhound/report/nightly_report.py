"""Nightly report: one night's record (findings, fixes, perf regressions, harness errors) rendered twice, as JUnit XML
for CI systems, which read nothing else, and as a static HTML page with trend charts for the people who triage. Both
come from the same night record, so the red CI job and the page a person opens can never disagree; the page is
self-contained (inline CSS and SVG, no scripts or fetched assets) so it can be archived or mailed as one file.
"""
from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

from junit_xml import TestCase, TestSuite, to_xml_report_string

from gfxhound.atomic import write_atomic

# ANSI colour sequences whole, then control characters other than \t and \n, C1 controls, lone surrogates and the
# two XML non-characters: what breaks CI XML parsers (as lit strips them from its reports)
_BAD_XML = re.compile("\x1b\\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
STATES = ("new", "known", "flaky")
COLOURS = {"new": "#d62728", "known": "#8c8c8c", "flaky": "#ff9f1c", "throughput": "#1f6fb4"}


def _clean(value) -> str:
    return _BAD_XML.sub("", str(value))


def _e(value) -> str:
    return html.escape("" if value is None else _clean(value), quote=True)


def _state(finding: dict) -> str:
    return finding.get("state") if finding.get("state") in STATES else "new"  # an unknown state is not hidden


def _short(message, limit: int = 100) -> str:
    lines = [line.strip() for line in _clean(message or "").splitlines() if line.strip()]
    text = re.sub(r"\s+", " ", lines[0]) if lines else ""
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


_atomic_write = write_atomic  # gfxhound/atomic.py


def _finding_case(f: dict) -> TestCase:
    sig, short = _clean(f["signature"]), _short(f.get("message"))
    case = TestCase(f"{sig[:12]} {short}".strip(), classname=_clean(f"gfxhound.{f.get('verdict', 'unknown')}"))
    state = _state(f)
    if state == "known":
        case.add_skipped_info(message=_clean(f"known: {f.get('known_issue') or 'no issue URL'}"))
    elif state == "flaky":
        case.add_skipped_info(message=_clean(f"flaky: {f.get('reproductions', '?')} reproductions"))
    else:
        details = [f"signature: {sig}", f"stage: {f.get('stage')}", f"targets: {', '.join(f.get('targets', []))}",
                   f"count: {f.get('count')}", f"reproductions: {f.get('reproductions')}",
                   f"bisect: {f.get('bisect') or 'not bisected'}", f"draft: {f.get('draft') or 'none'}",
                   f"reduced: {f.get('reduced')}", "", f"message: {f.get('message', '')}"]
        case.add_failure_info(message=short, output=_clean("\n".join(details)), failure_type=f"{state} finding")
    return case


def _campaign_case(night: dict) -> TestCase:
    c = night.get("campaign", {})
    verdicts = ", ".join(f"{k}={v}" for k, v in sorted(c.get("verdicts", {}).items()))
    out = (f"toolchain: {night.get('toolchain')} (previous {night.get('previous_toolchain')})\n"
           f"targets: {', '.join(night.get('targets', []))}\nkernels: {c.get('kernels', 0)}\n"
           f"kernels/s: {c.get('kernels_per_s', 0)}\nverdicts: {verdicts}")
    return TestCase("campaign", classname="gfxhound.campaign", elapsed_sec=night.get("duration_s"), stdout=_clean(out))


def _perf_case(p: dict) -> TestCase:
    name = _clean(f"{p.get('kernel')} {p.get('target')} {p.get('metric')}")
    case = TestCase(name, classname="gfxhound.perf")
    case.add_failure_info(message=_clean(f"{p.get('metric')} {p.get('old')} -> {p.get('new')} "
                                         f"(+{100 * float(p.get('growth', 0)):.0f}%)"), failure_type="perf regression")
    return case


def write_junit(night: dict, path: Path) -> Path:
    date = _clean(night.get("date", "unknown"))
    cases = [_finding_case(f) for f in night.get("findings", [])]
    cases += [TestCase(_clean(f"fixed {str(x['signature'])[:12]}"), classname="gfxhound.fixed",
                       stdout=_clean(f"fixed_in: {x.get('fixed_in')}\nmessage: {x.get('message', '')}"))
              for x in night.get("fixed", [])]
    cases.append(_campaign_case(night))
    if night.get("errors"):
        errors = TestCase("harness errors", classname="gfxhound.harness")
        errors.add_failure_info(message=_clean(f"{len(night['errors'])} stage(s) failed"),
                                output=_clean("\n".join(night["errors"])), failure_type="harness error")
        cases.append(errors)
    props = {k: _clean(night[k] if not isinstance(night[k], list) else " ".join(night[k]))
             for k in ("toolchain", "previous_toolchain", "targets", "shards") if night.get(k) is not None}
    stamp = _clean(night["started"]) if night.get("started") else None
    suites = [TestSuite(f"gfxhound nightly {date}", cases, timestamp=stamp, properties=props)]
    if night.get("perf"):
        suites.append(TestSuite(f"gfxhound perf {date}", [_perf_case(p) for p in night["perf"]], timestamp=stamp))
    return _atomic_write(path, to_xml_report_string(suites, prettyprint=True, encoding="utf-8"))


def history_row(night: dict) -> dict:
    findings = night.get("findings", [])
    states = {s: sum(1 for f in findings if _state(f) == s) for s in STATES}
    campaign = night.get("campaign", {})
    return {"date": night.get("date"), "toolchain": night.get("toolchain"), "kernels": campaign.get("kernels", 0),
            "kernels_per_s": campaign.get("kernels_per_s", 0.0), **states, "fixed": len(night.get("fixed", [])),
            "perf_regressions": len(night.get("perf", [])), "findings": len(findings)}


def append_history(history_path: Path, night: dict) -> list:
    """A rerun of the same date replaces that night's row instead of counting it twice."""
    history_path = Path(history_path)
    history = json.loads(history_path.read_text()) if history_path.exists() else []
    if not isinstance(history, list):
        raise ValueError(f"{history_path}: expected a JSON list of nightly rows")
    row = history_row(night)
    history = [r for r in history if r.get("date") != row["date"]] + [row]
    _atomic_write(history_path, json.dumps(history, indent=1) + "\n")
    return history


def _nice_max(value: float, integer: bool = False) -> float:
    """The top of the y axis: four times a round step (1, 2, 2.5 or 5 x 10^k), so the grid lines get round labels."""
    raw = max(float(value), 1e-9) / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    steps = [m * magnitude for m in ((1, 2, 3, 5, 10) if integer else (1, 2, 2.5, 5, 10))]
    if integer:
        steps = [s for s in steps if s >= 1 and float(s).is_integer()] or [1]
    return 4 * next(s for s in steps if s >= raw)


def _frame(rows: list, ymax: float, ylabel: str, title: str, w=1180, h=250, ml=64, mr=16, mt=34, mb=58):
    """Axes, grid, title and date labels; returns (svg parts, x(i), y(v), slot width)."""
    pw, ph, n = w - ml - mr, h - mt - mb, len(rows)
    slot = pw / n
    x = lambda i: ml + slot * (i + 0.5)  # noqa: E731
    y = lambda v: mt + ph - ph * v / ymax  # noqa: E731
    e = _e
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
             f'aria-label="{e(title)}">', f'<text x="{ml}" y="20" class="ct">{e(title)}</text>',
             f'<text transform="translate(16 {mt + ph / 2}) rotate(-90)" text-anchor="middle" class="al">'
             f'{e(ylabel)}</text>']
    for k in range(5):
        v = ymax * k / 4
        parts.append(f'<line x1="{ml}" x2="{w - mr}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
                     f'<text x="{ml - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{v:g}</text>')
    every = max(1, -(-n // 16))
    for i, r in enumerate(rows):
        if (n - 1 - i) % every == 0:  # counted back from tonight, which is always labelled
            parts.append(f'<text transform="translate({x(i):.1f} {mt + ph + 14}) rotate(-35)" text-anchor="end" '
                         f'class="tick">{e(r.get("date", "?"))}</text>')
    parts.append(f'<line x1="{ml}" x2="{w - mr}" y1="{mt + ph}" y2="{mt + ph}" class="axis"/>')
    return parts, x, y, slot


def _findings_chart(rows: list) -> str:
    ymax = _nice_max(max(sum(r.get(s, 0) for s in STATES) for r in rows), integer=True)
    parts, x, y, slot = _frame(rows, ymax, "findings", "Findings per night (new / known / flaky)")
    bar = min(44.0, slot * 0.7)
    for i, r in enumerate(rows):
        base, d, tip = 0, _e(r.get("date")), _e(", ".join(f"{s} {r.get(s, 0)}" for s in STATES))
        parts.append(f'<g class="night" data-date="{d}"><title>{d}: {tip}</title>')
        for s in STATES:
            v = r.get(s, 0)
            if v:
                parts.append(f'<rect x="{x(i) - bar / 2:.1f}" y="{y(base + v):.1f}" width="{bar:.1f}" '
                             f'height="{y(base) - y(base + v):.1f}" fill="{COLOURS[s]}"/>')
            base += v
        parts.append("</g>")
    legend = "".join(f'<rect x="{894 + 90 * k}" y="10" width="12" height="12" fill="{COLOURS[s]}"/>'
                     f'<text x="{910 + 90 * k}" y="21" class="tick">{s}</text>' for k, s in enumerate(STATES))
    return "\n".join(parts + [legend, "</svg>"])


def _throughput_chart(rows: list) -> str:
    ymax = _nice_max(max(float(r.get("kernels_per_s") or 0) for r in rows))
    parts, x, y, _ = _frame(rows, ymax, "kernels / s", "Throughput per night (kernels/s)")
    pts = [(x(i), y(float(r.get("kernels_per_s") or 0))) for i, r in enumerate(rows)]
    if len(pts) > 1:
        parts.append(f'<polyline fill="none" stroke="{COLOURS["throughput"]}" stroke-width="2" points="'
                     + " ".join(f"{px:.1f},{py:.1f}" for px, py in pts) + '"/>')
    for (px, py), r in zip(pts, rows):
        d, tip = _e(r.get("date")), _e(f'{r.get("kernels_per_s")} kernels/s, {r.get("kernels")} kernels')
        parts.append(f'<g class="night" data-date="{d}"><title>{d}: {tip}</title>'
                     f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{COLOURS["throughput"]}"/></g>')
    return "\n".join(parts + ["</svg>"])


CSS = """body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1d1d1f}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
dl.facts{display:grid;grid-template-columns:repeat(4,auto 1fr);gap:2px 10px;margin:0}dt{color:#666}dd{margin:0}
.badges span{display:inline-block;padding:2px 10px;margin:8px 6px 0 0;border-radius:10px;background:#eee}
.badges .new{background:#fbd5d5}.badges .flaky{background:#ffe8c2}table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f6;white-space:nowrap}td:last-child{overflow-wrap:anywhere;min-width:14em}td code{white-space:nowrap}
code{font:12px ui-monospace,Menlo,Consolas,monospace}p.none{color:#888;margin:4px 0}
svg .ct{font-weight:600;font-size:13px}svg .tick{font-size:11px;fill:#444}svg .al{font-size:12px;fill:#444}
svg .grid{stroke:#eee}svg .axis{stroke:#888}svg{display:block;margin:6px 0}"""


def _link(href, text, external=False) -> str:
    if not href:
        return ""
    if external:
        ok = re.match(r"https?://", str(href))
        return f'<a href="{_e(href)}">{_e(text)}</a>' if ok else _e(href)
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", str(href)):  # not a relative path: shown, not linked
        return _e(href)
    return f'<a href="{_e(quote(str(href), safe="/._-~"))}">{_e(text)}</a>'


def _table(title: str, headers: list, rows: list, anchor: str) -> str:
    if not rows:
        body = '<p class="none">none</p>'
    else:
        head = "".join(f"<th>{_e(h)}</th>" for h in headers)
        body = ("<table><thead><tr>" + head + "</tr></thead><tbody>"
                + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows) + "</tbody></table>")
    return f'<section id="{anchor}"><h2>{_e(title)} ({len(rows)})</h2>{body}</section>'


def _finding_cells(f: dict, extra: list) -> list:
    return ([f'<code title="{_e(f.get("signature"))}">{_e(str(f.get("signature"))[:16])}</code>',
             _e(f.get("verdict")), _e(f.get("stage")), _e(", ".join(f.get("targets", []))), _e(f.get("count"))]
            + extra + [f'<span title="{_e(f.get("message"))}">{_e(_short(f.get("message")))}</span>'])


def _status(f: dict) -> str:
    """A finding's status at a glance (report/triage.py `standing`): new, known upstream with its link, drafted,
    fixed in a release; a night recorded before it had one shows a dash."""
    status = f.get("status") or {}
    if not status.get("text"):
        return "\u2014"
    return _link(status.get("link"), status["text"], external=True) if status.get("link") else _e(status["text"])


def _sections(night: dict) -> str:
    by = {s: [f for f in night.get("findings", []) if _state(f) == s] for s in STATES}
    base = ["signature", "verdict", "stage", "targets", "count"]
    new = [_finding_cells(f, [_status(f), _e(f.get("reproductions")), _e(f.get("bisect") or "\u2014"),
                              _link(f.get("draft"), "draft") or "\u2014"]) for f in by["new"]]
    flaky = [_finding_cells(f, [_e(f.get("reproductions")), _e("" if f.get("flaky_rate") is None
                                                               else f"{100 * f['flaky_rate']:.0f}%"),
                                _link(f.get("draft"), "draft") or "\u2014"]) for f in by["flaky"]]
    known = [_finding_cells(f, [_status(f), _link(f.get("known_issue"), f.get("known_issue"), external=True)
                                or "\u2014"]) for f in by["known"]]
    fixed = [[f"<code>{_e(str(x.get('signature'))[:16])}</code>", _e(_short(x.get("message"))), _e(x.get("fixed_in"))]
             for x in night.get("fixed", [])]
    perf = [[_e(p.get("kernel")), _e(p.get("target")), _e(p.get("metric")), _e(p.get("old")), _e(p.get("new")),
             _e(f"+{100 * float(p.get('growth', 0)):.0f}%")] for p in night.get("perf", [])]
    errors = [[_e(err)] for err in night.get("errors", [])]
    return "\n".join([
        _table("New findings", base + ["status", "reproductions", "bisect", "draft", "message"], new, "new"),
        _table("Flaky", base + ["reproductions", "flaky rate", "draft", "message"], flaky, "flaky"),
        _table("Known", base + ["status", "known issue", "message"], known, "known"),
        _table("Fixed", ["signature", "message", "fixed in"], fixed, "fixed"),
        _table("Perf regressions", ["kernel", "target", "metric", "old", "new", "growth"], perf, "perf"),
        _table("Harness errors", ["error"], errors, "errors")])


def _header(night: dict) -> str:
    c, row, secs = night.get("campaign", {}), history_row(night), int(float(night.get("duration_s") or 0))
    prev = f" (previous {night['previous_toolchain']})" if night.get("previous_toolchain") else ""
    facts = [("date", night.get("date")), ("toolchain", f"{night.get('toolchain')}{prev}"),
             ("targets", ", ".join(night.get("targets", []))), ("shards", night.get("shards")),
             ("duration", f"{secs // 3600}h {secs % 3600 // 60:02d}m {secs % 60:02d}s"),
             ("kernels", c.get("kernels")), ("kernels/s", c.get("kernels_per_s")),
             ("verdicts", ", ".join(f"{k} {v}" for k, v in sorted(c.get("verdicts", {}).items())))]
    badges = "".join(f'<span class="{k}">{k.replace("_", " ")} <b>{row[k]}</b></span>'
                     for k in ("new", "known", "flaky", "fixed", "perf_regressions"))
    return (f"<header><h1>gfxhound nightly {_e(night.get('date'))}</h1><dl class=\"facts\">"
            + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
            + f'</dl><div class="badges">{badges}<span>errors <b>{len(night.get("errors", []))}</b></span></div>'
              "</header>")


def write_html(night: dict, history: list, path: Path) -> Path:
    """`history` holds earlier nights' rows (history_row); a row for this night's date is replaced by this night.
    The charts show the last 60 nights."""
    rows = [r for r in history if r.get("date") != night.get("date")] + [history_row(night)]
    rows = sorted(rows, key=lambda r: str(r.get("date")))[-60:]
    charts = (f'<section id="trends"><h2>Trends ({len(rows)} night{"s" if len(rows) != 1 else ""})</h2>'
              f"{_findings_chart(rows)}\n{_throughput_chart(rows)}</section>")
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>gfxhound nightly '
            f"{_e(night.get('date'))}</title><style>{CSS}</style></head><body>\n{_header(night)}\n"
            f"{_sections(night)}\n{charts}\n</body></html>\n")
    return _atomic_write(path, page)


def screenshot(html: Path, png: Path, timeout: float = 120) -> Path:
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser") if shutil.which(b)), None)
    if browser is None:
        raise RuntimeError("no chromium on PATH (apt-get install -y chromium)")
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gfxhound-chromium-") as profile:
        tmp = Path(profile) / "screenshot.png"
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={profile}", f"--screenshot={tmp}", "--window-size=1280,1600",
               Path(html).resolve().as_uri()]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"chromium screenshot timed out after {timeout:g}s") from None
        if out.returncode != 0 or not tmp.exists():
            last = (out.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"chromium exited {out.returncode} without a screenshot: {last[:200]}")
        write_atomic(png, tmp.read_bytes())  # a reader of the nightly's folder never sees half a picture
    return png
