"""Corpus store: real files under tmp_path, real subprocesses for the kill and concurrency tests."""
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gfxhound.corpus_store import FINDING_FORMAT, Corpus, CorpusError, Finding

REPO = Path(__file__).resolve().parents[2]


def execution(sig="a1b2c3d4e5f60718", spec="5pec0001", **kw):
    e = dict(signature=sig, verdict="crash", stage="llir", message="LLVM ERROR: boom", normalised="LLVM ERROR: N",
             spec_hash=spec, target="gfx942", toolchain="triton-3.4.0")
    e.update(kw)
    return e


def files(spec="5pec0001"):
    return {"spec.json": json.dumps({"hash": spec}), "repro.py": "print('repro')\n", "run.json": b"{}",
            "caps.json": "{}"}


def run_script(code, root, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(root), *args], env=env, cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_new_then_repeat(tmp_path):
    c = Corpus(tmp_path / "corpus")
    f1, new1 = c.record(execution(time="2025-01-01T00:00:00+00:00"), files())
    f2, new2 = c.record(execution(time="2025-01-02T00:00:00+00:00", toolchain="triton-3.3.1"), files())
    assert (new1, new2) == (True, False)
    assert f2.count == 2 and f2.examples == ["5pec0001"]
    assert f2.first_seen.startswith("2025-01-01") and f2.last_seen.startswith("2025-01-02")
    assert f2.toolchains == ["triton-3.3.1", "triton-3.4.0"]
    [loaded] = Corpus(tmp_path / "corpus").findings()
    assert loaded == f2
    ex = c.example_dirs(f2.signature)
    assert [p.name for p in ex] == ["5pec0001"]
    assert (ex[0] / "repro.py").read_text() == "print('repro')\n" and (ex[0] / "run.json").read_bytes() == b"{}"


def test_different_spec_adds_example_and_max_respected(tmp_path):
    c = Corpus(tmp_path)
    for i in range(5):
        f, _ = c.record(execution(spec=f"spec{i}", target=f"gfx9{i}"), files(f"spec{i}"), max_examples=3)
    assert f.examples == ["spec0", "spec1", "spec2"] and f.count == 5
    assert f.targets == [f"gfx9{i}" for i in range(5)]
    assert sorted(p.name for p in (c.path(f.signature) / "examples").iterdir()) == ["spec0", "spec1", "spec2"]


def test_ir_files_copied(tmp_path):
    ir = tmp_path / "ir_src"
    ir.mkdir()
    for name in ("k.ttir", "k.ttgir", "k.llir", "k.amdgcn"):
        (ir / name).write_text(f"// {name}\n")
    (ir / "subdir").mkdir()
    c = Corpus(tmp_path / "c")
    f, _ = c.record(execution(), files(), ir_dir=ir)
    got = c.example_dirs(f.signature)[0] / "ir"
    assert sorted(p.name for p in got.iterdir()) == ["k.amdgcn", "k.llir", "k.ttgir", "k.ttir"]
    assert (got / "k.llir").read_text() == "// k.llir\n"


def test_temp_leftovers_ignored_and_cleaned_only_when_unlocked(tmp_path):
    c = Corpus(tmp_path)
    f, _ = c.record(execution(), files())
    sd = c.path(f.signature)
    strays = [tmp_path / ".tmp-xyz", sd / "finding.json.tmp-1", sd / "examples" / ".tmp-spec9.123"]
    strays[0].mkdir()
    (strays[0] / "finding.json").write_text("{garbage")
    strays[1].write_text("{half")
    strays[2].mkdir()
    # Held lock = a live writer: its temps must survive, but loading still works and ignores them.
    fd = os.open(tmp_path / ".lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert [x.signature for x in Corpus(tmp_path).findings()] == [f.signature]
        assert c.clean_temp() == [] and all(p.exists() for p in strays)
    finally:
        os.close(fd)
    assert [p.name for p in c.example_dirs(f.signature)] == ["5pec0001"]
    assert sorted(c.clean_temp()) == sorted(strays)
    assert not any(p.exists() for p in strays)
    assert Corpus(tmp_path).findings()[0] == f


KILLED_WRITER = """
    import os, sys
    from gfxhound.corpus_store import Corpus
    c = Corpus(sys.argv[1])
    big = os.urandom(2 << 20)
    i = int(sys.argv[2])
    while True:
        c.record(dict(signature="sig%d" % (i % 5), verdict="crash", stage="llir", message="m", normalised="m",
                      spec_hash="spec%05d" % i, target="gfx942", toolchain="triton-3.4.0"),
                 {"spec.json": "{}", "big.bin": big, "repro.py": big}, max_examples=1000)
        print("recorded", flush=True)
        i += 1
"""


def check_invariants(c):
    found = c.findings()
    for f in found:
        listed = [c.path(f.signature) / "examples" / spec for spec in f.examples]
        assert listed == c.example_dirs(f.signature)[:len(listed)]
        for ex in c.example_dirs(f.signature):  # listed ones and any a killed writer renamed in but never listed
            assert (ex / "spec.json").read_text() == "{}"
            assert (ex / "big.bin").stat().st_size == (ex / "repro.py").stat().st_size == 2 << 20
    return found


def test_killed_writers_leave_loadable_corpus(tmp_path):
    """Three writers in turn, each SIGKILLed mid-campaign while this process keeps reading the corpus.

    Reading during the run catches a finding.json written in place (a reader would see it truncated) and an
    example dir that appears before it is complete; checking again after each kill, and letting the next writer
    adopt what the last one left, catches the same torn states left behind by the kill. Most kills land inside
    a write (a `.tmp-` entry is left)."""
    root = tmp_path / "corpus"
    c = Corpus(root)
    for rnd in range(3):
        proc = run_script(KILLED_WRITER, root, str(rnd * 1000))
        try:
            assert proc.stdout.readline().strip() == "recorded", proc.stderr.read()
            deadline = time.monotonic() + 0.4
            while time.monotonic() < deadline:
                check_invariants(c)
                time.sleep(0.01)  # leave the writer the lock most of the time, so the kill lands inside a write
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
        for sd in root.iterdir():
            if (sd / "finding.json").exists():
                Finding.from_json(json.loads((sd / "finding.json").read_text()))
        found = check_invariants(c)
        assert found and sum(f.count for f in found) >= rnd + 1
        assert not [p for p in root.rglob("*") if ".tmp-" in p.name]  # findings() cleaned the torn write
    assert {e for f in found for e in f.examples} >= {"spec00000", "spec01000", "spec02000"}
    shutil.rmtree(root)  # ~100 MB; pytest keeps the last few tmp_path trees


def test_corrupt_finding_json_names_path(tmp_path):
    c = Corpus(tmp_path)
    f, _ = c.record(execution(), files())
    p = c.path(f.signature) / "finding.json"
    p.write_text('{"signature": ')
    with pytest.raises(CorpusError, match="corrupt") as ei:
        c.findings()
    assert str(p) in str(ei.value)
    with pytest.raises(CorpusError):  # must not be overwritten blindly
        c.record(execution(), files())
    assert p.read_text() == '{"signature": '
    p.write_text(json.dumps({"signature": f.signature, "format": 1}))
    with pytest.raises(CorpusError, match="missing fields"):
        c.findings()


def test_format_too_new(tmp_path):
    c = Corpus(tmp_path)
    f, _ = c.record(execution(), files())
    data = f.to_json()
    data["format"] = FINDING_FORMAT + 1
    (c.path(f.signature) / "finding.json").write_text(json.dumps(data))
    with pytest.raises(CorpusError, match="upgrade gfxhound"):
        c.findings()
    with pytest.raises(CorpusError, match="upgrade"):
        Finding.from_json(data)


def test_get_by_prefix(tmp_path):
    c = Corpus(tmp_path)
    for sig in ("abc111", "abc222", "def333"):
        c.record(execution(sig=sig), files())
    assert c.get("abc1").signature == "abc111"
    assert c.get("d").signature == "def333"
    with pytest.raises(CorpusError, match="ambiguous: matches abc111, abc222"):
        c.get("abc")
    with pytest.raises(CorpusError, match="no finding matches"):
        c.get("ffff")


def test_root_is_a_file(tmp_path):
    p = tmp_path / "notadir"
    p.write_text("x")
    with pytest.raises(CorpusError, match="not a directory"):
        Corpus(p)
    assert Corpus(tmp_path / "absent").findings() == []
    assert not (tmp_path / "absent").exists()


def test_merge(tmp_path):
    a, b = Corpus(tmp_path / "a"), Corpus(tmp_path / "b")
    a.record(execution(sig="shared", spec="s1", time="2025-02-01T00:00:00+00:00"), files("s1"))
    a.record(execution(sig="shared", spec="s2", time="2025-02-03T00:00:00+00:00"), files("s2"))
    a.record(execution(sig="onlya", spec="s9"), files("s9"))
    b.record(execution(sig="shared", spec="s2", time="2025-01-15T00:00:00+00:00", target="gfx950"), files("s2"))
    b.record(execution(sig="shared", spec="s3", time="2025-02-05T00:00:00+00:00",
                       toolchain="triton-3.5.0"), {**files("s3"), "repro.py": "b's repro"})
    b.record(execution(sig="onlyb", spec="s7"), files("s7"))
    assert a.merge_from(b) == (1, 1)
    by = {f.signature: f for f in Corpus(tmp_path / "a").findings()}
    assert set(by) == {"shared", "onlya", "onlyb"}
    s = by["shared"]
    assert s.count == 4 and s.examples == ["s1", "s2", "s3"]
    assert s.first_seen.startswith("2025-01-15") and s.last_seen.startswith("2025-02-05")
    assert s.targets == ["gfx942", "gfx950"] and s.toolchains == ["triton-3.4.0", "triton-3.5.0"]
    assert (a.path("shared") / "examples" / "s3" / "repro.py").read_text() == "b's repro"
    assert (a.path("shared") / "examples" / "s2" / "repro.py").read_text() == "print('repro')\n"
    assert by["onlyb"].count == 1 and (a.path("onlyb") / "examples" / "s7" / "spec.json").is_file()
    assert by["onlya"].count == 1
    assert sorted((f.signature, f.count) for f in b.findings()) == [("onlyb", 1), ("shared", 2)]  # source untouched
    with pytest.raises(CorpusError, match="itself"):
        a.merge_from(Corpus(tmp_path / "a"))


def test_concurrent_writers_lose_no_counts(tmp_path):
    code = """
        import sys
        from gfxhound.corpus_store import Corpus
        c = Corpus(sys.argv[1])
        for i in range(50):
            c.record(dict(signature="samesig", verdict="crash", stage="llir", message="m", normalised="m",
                          spec_hash="spec%d" % (i % 8), target="gfx942", toolchain="triton-3.4.0"),
                     {"spec.json": "{}"}, max_examples=5)
    """
    procs = [run_script(code, tmp_path), run_script(code, tmp_path)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    [f] = Corpus(tmp_path).findings()
    assert f.count == 100
    assert len(f.examples) == 5 and len(set(f.examples)) == 5
