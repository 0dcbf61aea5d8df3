"""Every --json of the corpus, casts, report, verify, perf, nightly, reduce and bisect commands, run for real: stdout
is one JSON object and nothing else, its "format" names a schema under docs/schemas/, and it validates against
that schema (jsonschema, from the test extras)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_corpus import LONG_ID, ROOT, tiny_corpus

from gfxhound.cli.jsonout import format_of


def _jsonschema():
    """jsonschema comes with the test extras; imported where used, so a run of other markers (`-m gpu` on a
    machine without the extras) does not skip this whole module at collection."""
    return pytest.importorskip("jsonschema")


SCHEMAS = ROOT / "docs" / "schemas"
LLC_FINDING = "28f1b1b801f666bf"  # an llc crash: its draft and its replay take a second, no GPU
DATA = ROOT / "tests" / "data" / "llvm"
LLC22, LLVM_REDUCE = Path("/usr/lib/llvm-22/bin/llc"), Path("/usr/lib/llvm-22/bin/llvm-reduce")


def _json(gfxhound_bin, name, *argv, cwd=None, codes=(0,), timeout=600):
    """Run the command, and check its stdout whole against docs/schemas/<name>.json."""
    proc = subprocess.run([gfxhound_bin, *map(str, argv), "--json"], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)
    assert proc.returncode in codes, proc.stderr[-3000:]
    document = json.loads(proc.stdout)  # the whole of stdout: no line before or after it
    assert isinstance(document, dict) and document["format"] == format_of(name)
    schema = json.loads((SCHEMAS / f"{name}.json").read_text())
    jsonschema = _jsonschema()
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
                    .iter_errors(document), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return document


def _copy(tmp_path, *signatures, name="c"):
    for sig in signatures:
        shutil.copytree(ROOT / "corpus" / sig, tmp_path / name / sig)
    return tmp_path / name


MINE = ["corpus-list", "corpus-show", "casts", "report", "report-check", "verify", "perf-measure", "perf-compare",
        "nightly", "reduce", "bisect"]


def test_every_schema_is_a_valid_schema_named_for_its_output():
    assert set(MINE) <= {p.stem for p in SCHEMAS.glob("*.json")}  # other commands' schemas live there too
    for name in MINE:
        schema = json.loads((SCHEMAS / f"{name}.json").read_text())
        _jsonschema().Draft202012Validator.check_schema(schema)
        assert schema["properties"]["format"] == {"const": format_of(name) if name != "report-check" else
                                                  "gfxhound.report-check/1",
                                                  "description": "names this schema and its version"}


def test_corpus_list_and_show(gfxhound_bin, tmp_path):
    listed = _json(gfxhound_bin, "corpus-list", "corpus", "list", "--corpus", ROOT / "corpus")
    assert len(listed["findings"]) == len([p for p in (ROOT / "corpus").iterdir() if len(p.name) == 16])
    tiny = tiny_corpus(tmp_path / "c").root
    rows = _json(gfxhound_bin, "corpus-list", "corpus", "list", "--corpus", tiny)["findings"]
    assert LONG_ID in {r["id"] for r in rows}
    shown = _json(gfxhound_bin, "corpus-show", "corpus", "show", LONG_ID[:6], "--corpus", tiny)
    assert shown["finding"]["signature"] == LONG_ID and len(shown["examples"]) == 1


def test_casts(gfxhound_bin, tmp_path):
    pytest.importorskip("torch")
    summary = _json(gfxhound_bin, "casts", "casts", "--target", "gfx942", "--values", "2", "--sources", "fp16",
                    "--formats", "fp8e5", "--roundings", "rtz", "--no-constants", "--corpus", tmp_path / "c")
    assert summary["probes"] == sum(summary["counts"].values()) > 0


def test_report_drafted_and_known_upstream(gfxhound_bin, tmp_path):
    corpus = _copy(tmp_path, LLC_FINDING)
    drafted = _json(gfxhound_bin, "report", "report", LLC_FINDING[:8], "--corpus", corpus, "--out", tmp_path / "d")
    assert drafted["drafted"] is True and drafted["reproduced"] is True and Path(drafted["draft"]).exists()
    added = subprocess.run([gfxhound_bin, "triage", "add", LLC_FINDING[:8], "--corpus", str(corpus), "--issue",
                            "llvm/llvm-project#12345"], capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    known = _json(gfxhound_bin, "report", "report", LLC_FINDING[:8], "--corpus", corpus, "--out", tmp_path / "e")
    assert known["drafted"] is False and known["known_upstream"]["ref"] == "llvm/llvm-project#12345"
    assert not (tmp_path / "e").exists()


def test_verify(gfxhound_bin, tmp_path):
    corpus = _copy(tmp_path, LLC_FINDING)
    result = _json(gfxhound_bin, "verify", "verify", LLC_FINDING[:8], "--python", sys.executable, "--corpus", corpus)
    assert [r["signature"] for r in result["results"]] == [LLC_FINDING]


def test_perf_measure_and_compare(gfxhound_bin, tmp_path):
    kernels = tmp_path / "set"
    (kernels / "specs").mkdir(parents=True)
    shutil.copy(ROOT / "corpus" / "perfset" / "caps.json", kernels)
    shutil.copy(ROOT / "corpus" / "perfset" / "specs" / "perf-00.json", kernels / "specs")
    old = tmp_path / "old.json"
    measured = _json(gfxhound_bin, "perf-measure", "perf", "measure", "--set", kernels, "--repeat", "1", "--out", old)
    assert json.loads(old.read_text())["kernels"] == measured["kernels"]  # the file is what compare reads
    figures = json.loads(old.read_text())
    figures["kernels"]["perf-00"]["vgpr_count"] = figures["kernels"]["perf-00"].get("vgpr_count", 0) * 2 + 64
    new = tmp_path / "new.json"
    new.write_text(json.dumps(figures))
    compared = _json(gfxhound_bin, "perf-compare", "perf", "compare", old, new, codes=(1,))
    assert [r["metric"] for r in compared["regressions"]] == ["vgpr_count"]


def test_nightly_from_a_shard(gfxhound_bin, tmp_path):
    shard = _copy(tmp_path, LLC_FINDING, name="shard-0")
    (shard / "summary.json").write_text(json.dumps({"kernels": 5, "duration_s": 1.0, "verdicts": {"pass": 4, "ice": 1},
                                                    "toolchain": "triton-3.9.0"}))
    night = _json(gfxhound_bin, "nightly", "nightly", "--from-shards", shard, "--reproductions", "1",
                  "--reduce-seconds", "0", "--no-bisect", "--out", tmp_path / "out", "--corpus", tmp_path / "corpus",
                  "--date", "2026-11-22")
    assert [f["signature"] for f in night["findings"]] == [LLC_FINDING] and night["record_format"] == 1
    assert (tmp_path / "out" / "2026-11-22" / "night.json").exists()


@pytest.mark.skipif(not (LLC22.exists() and LLVM_REDUCE.exists()), reason="needs Debian's llvm-22 (make tools)")
def test_reduce_of_llvm_ir(gfxhound_bin, tmp_path):
    """The checked-in memory-model IR through llc 22 (10 lines: a few seconds of llvm-reduce)."""
    record = _json(gfxhound_bin, "reduce", "reduce", "--ll", DATA / "buffer-inv-triton39.ll", "--memory-model",
                   "--llc-args", "-mcpu=gfx942", "-o", "llc.ll", "-j", "2", cwd=tmp_path)
    assert record["level"] == "llvm-ir" and record["output"] == str(tmp_path / "llc.ll")


def test_bisect_over_llc_releases(gfxhound_bin, tmp_path):
    from gfxhound.bisect.llvm_releases import installed
    majors = sorted(m for m, _ in installed())
    if not {14, 16} <= set(majors):
        pytest.skip("needs Debian's llvm-14 and llvm-16 at least (make tools)")
    (tmp_path / "in").mkdir()
    ll = shutil.copy(DATA / "segv-llc14-15.ll", tmp_path / "in")
    record = _json(gfxhound_bin, "bisect", "bisect", "--ll", ll, "--llc", f"14..{majors[-1]}", "--fix",
                   "--llc-args", "-mtriple=amdgcn-amd-amdhsa -mcpu=gfx900 -O2", "--cache", tmp_path / "cache")
    assert record["kind"] == "llvm-releases" and record["first_new"].startswith("16.")
