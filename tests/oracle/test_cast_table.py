"""The conversion table: its expected codes agree with PyTorch's conversions code by code, and on Triton 3.9.0 it
flags the two wrong conversions it found (and passes the right ones) with real compiles for gfx942."""
import json
import math
import subprocess
import sys

import pytest
import torch

from gfxhound.corpus_store import Corpus
from gfxhound.oracle.cast_findings import record, render_repro
from gfxhound.oracle.cast_sweep import Result, run_table
from gfxhound.oracle.cast_table import FP8, Probe, bits_of, expected_code, probes
from gfxhound.oracle.formats import BY_DTYPE

TORCH_FP8 = {"fp8e5": torch.float8_e5m2, "fp8e4nv": torch.float8_e4m3fn, "fp8e5b16": torch.float8_e5m2fnuz,
             "fp8e4b8": torch.float8_e4m3fnuz}


@pytest.mark.parametrize("dst", FP8)
def test_expected_codes_agree_with_torch_on_every_exact_value(dst):
    for code in range(128):
        value = BY_DTYPE[dst].decode(code)
        if not math.isfinite(value) or value == 0:
            continue
        for v in (value, -value):
            probe = Probe("cast", dst, v, "fp32", "rtne", bits_of("fp32", v))
            want = torch.tensor([v], dtype=torch.float64).to(TORCH_FP8[dst]).view(torch.uint8).item()
            assert expected_code(probe) == want, (dst, v)
            assert expected_code(Probe("cast", dst, v, "fp32", "rtz", bits_of("fp32", v))) == want


def test_ties_and_zeros():
    e5 = lambda v, r: expected_code(Probe("cast", "fp8e5", v, "fp16", r, bits_of("fp16", v)))  # noqa: E731
    assert (e5(1.125, "rtne"), e5(1.125, "rtz")) == (0x3C, 0x3C)  # between 1.0 (even) and 1.25
    assert (e5(1.375, "rtne"), e5(1.375, "rtz")) == (0x3E, 0x3D)  # between 1.25 and 1.5 (even)
    assert e5(-0.0, "rtz") == 0x80  # OCP keeps the sign of zero
    assert expected_code(Probe("cast", "fp8e5b16", -0.0, "fp16", "rtz", 0x8000)) == 0x00  # fnuz: 0x80 is NaN
    assert expected_code(Probe("constant", "bf16", 2.0 ** -17)) == 0x3700


def test_probes_are_distinct_exact_and_built_from_their_bits():
    chosen = probes(limit=6)
    assert len({p.key() for p in chosen}) == len(chosen)
    for p in chosen:
        if p.kind == "cast" and not math.isnan(p.value):
            assert bits_of(p.src, p.value) == p.bits
            assert p.value == 0 or -p.value in {q.value for q in chosen if q.what() == p.what()}
    nans = [p for p in chosen if p.kind == "cast" and math.isnan(p.value)]
    assert len(nans) == 2 * 3 * 4 * 2  # both signs, every source, format and rounding
    assert not any(math.isinf(p.value) for p in chosen)  # saturating infinity is a choice, not a wrong code
    assert any(p.value == 1.0 for p in chosen if p.what() == "fp16 -> fp8e5b16 (rtz)")


CASES = [  # (probe, status on Triton 3.9.0 for gfx942)
    (Probe("cast", "fp8e5b16", 1.0, "fp16", "rtz", bits_of("fp16", 1.0)), "wrong"),  # the OCP code, 0.5
    (Probe("cast", "fp8e5", 1.0, "fp16", "rtz", bits_of("fp16", 1.0)), "pass"),
    (Probe("constant", "bf16", 2.0 ** -17), "wrong"),  # the front end rounds it to 6 decimals first
    (Probe("constant", "bf16", 1.0), "pass"),
    (Probe("cast", "fp8e5b16", 1.0, "fp16", "rtne", bits_of("fp16", 1.0)), "unfolded"),  # a gfx942 instruction
    (Probe("cast", "fp8e4nv", 1.0, "fp32", "rtz", bits_of("fp32", 1.0)), "crash"),  # the rtz assertion
]


@pytest.fixture(scope="module")
def table():
    import triton
    if triton.__version__ != "3.9.0":
        pytest.skip("the expectations are Triton 3.9.0's")
    return run_table([p for p, _ in CASES], ["gfx942"], sys.executable)


def test_the_table_judges_real_compiles(table):
    assert table.version == "3.9.0"
    assert [r.status for r in table.results] == [s for _, s in CASES]
    wrong = table.results[0]
    assert (wrong.code, wrong.expected) == (0x3C, 0x40)


def test_findings_repros_and_the_summary(table, tmp_path, old_python, worker_env):
    corpus = Corpus(tmp_path / "corpus")
    found = record(corpus, table, "triton-3.9.0")
    assert [f.normalised.split(":")[0] for f, new in found] == ["fp16 -> fp8e5b16 (rtz)", "bf16 constant"]
    assert all(new for _, new in found)
    again = record(corpus, table, "triton-3.9.0")  # a rerun counts into the same findings
    assert [f.signature for f, _ in again] == [f.signature for f, _ in found] and not any(n for _, n in again)
    finding = found[0][0]
    rows = json.loads((corpus.path(finding.signature) / "table.json").read_text())
    assert rows["judged"] == {"gfx942": 1} and rows["rows"][0]["stored"] == 0x3C
    repro = corpus.examples(finding.signature)[0].repro
    run = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "stored 0x3c, expected 0x40" in run.stdout
    # the same repro under Triton 3.4.0, which refuses the conversion with a diagnostic: absent
    run = subprocess.run([old_python, str(repro)], capture_output=True, text=True, timeout=300,
                         env={**worker_env, "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0 and "refuses the conversion" in run.stdout
    good = tmp_path / "good.py"
    good.write_text(render_repro(Result(CASES[1][0], "gfx942", "wrong", 0x3D, 0x3C), "triton-3.9.0"))
    run = subprocess.run([sys.executable, str(good)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0  # the compiler stores 0x3c, which is right: absent


def test_a_compile_that_kills_its_process_is_one_crash_and_the_batch_goes_on(old_python, worker_env, monkeypatch):
    """Triton 3.4.0 aborts (an LLVM assertion, SIGABRT) on bf16 -> fp8e4nv for gfx1201: that probe is a crash
    with the assertion's text, and the probe after it in the same batch is still compiled and judged."""
    for key, value in worker_env.items():
        monkeypatch.setenv(key, value)
    crashing = Probe("cast", "fp8e4nv", 1.0, "bf16", "rtne", bits_of("bf16", 1.0))
    table = run_table([crashing, Probe("constant", "fp16", 1.0)], ["gfx1201"], old_python)
    assert [r.status for r in table.results] == ["crash", "pass"]
    assert "exit -6" in table.results[0].detail and "Assertion" in table.results[0].detail
