"""Spec-level reduction of a wrong result, with the oracle as the interestingness test: a generated kernel made
wrong by a planted bug (a load off by one, mutation testing of the reducer) shrinks to a few lines that are
still wrong, and the reduced finding is regrouped under the reduced kernel's own signature."""
import json
import subprocess

from planted import planted_finding


def test_a_planted_wrong_result_reduces_and_is_regrouped(tmp_path, gfxhound_bin):
    corpus, finding, rendered = planted_finding(tmp_path / "corpus")
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
