"""Spec-level reduction of a wrong result, with the oracle as the interestingness test: a generated kernel made
wrong by a planted bug (a load off by one, mutation testing of the reducer) shrinks to a few lines that are
still wrong, and the reduced finding is regrouped under the reduced kernel's own signature."""
import json
import subprocess

from gfxhound.corpus_store import Corpus
from gfxhound.fuzz.capabilities import Capabilities, assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.render import render
from gfxhound.oracle.exec_repro import render_exec_repro
from gfxhound.oracle.inputs import make_inputs
from gfxhound.oracle.limitations import INTERPRETER_PRECISIONS, excluded_features
from gfxhound.oracle.planted import PLANTS
from gfxhound.oracle.pool import CompilePool
from gfxhound.oracle.run_task import reference
from gfxhound.reduce.miscompile import ExecutionTest
import re


def _interpret_caps():
    data = assume_all("gfx942").to_json()
    data["features"] = sorted(set(data["features"]) | set(excluded_features("interpret")))
    data["input_precisions"] = [p for p in data["input_precisions"] if p in INTERPRETER_PRECISIONS]
    data.update(knobs={}, env_knobs={})
    return Capabilities.from_json(data)


def test_a_planted_wrong_result_reduces_and_is_regrouped(tmp_path, gfxhound_bin):
    caps = _interpret_caps()
    pool = CompilePool(2, 120, {"TRITON_INTERPRET": "1", "PYTHONWARNINGS": "ignore"})
    test = ExecutionTest(pool, caps.to_json(), "gfx942", "interpret", "test", plant="off-by-one")
    try:
        for spec in spec_stream(caps, 21):
            rendered = render(spec, caps)
            if rendered.body_lines < 12 or not re.search(PLANTS["off-by-one"].pattern, rendered.source):
                continue
            execution = test.judge(spec)
            if execution.verdict == "miscompile":
                break
        else:
            raise AssertionError("no generated kernel became wrong under the plant")
    finally:
        pool.close()
    corpus = Corpus(tmp_path / "corpus")
    repro = render_exec_repro(rendered, spec, make_inputs(spec), reference(spec, caps, "interpret"),
                              execution.to_json())
    finding, _ = corpus.record(execution.to_json(), {"spec.json": spec.dumps(), "run.json": execution.dumps(),
                                                     "caps.json": caps.dumps(), "repro.py": repro})
    proc = subprocess.run([gfxhound_bin, "reduce", finding.signature[:10], "--corpus", str(tmp_path / "corpus"),
                           "--plant", "off-by-one", "--json", "-j", "2", "--timeout", "300"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["body_lines_after"] <= 6 < rendered.body_lines == summary["body_lines_before"], summary
    assert summary["repro_exit"] == 1  # the reduced repro (with the plant in its kernel) is still wrong
    assert summary["regrouped_signature"] != finding.signature  # fewer ops: the provisional signature moves
    kernel = (tmp_path / "corpus" / finding.signature / "reduced" / "spec" / "kernel.py").read_text()
    assert "tl.load(in_0 + 1 + (" in kernel
