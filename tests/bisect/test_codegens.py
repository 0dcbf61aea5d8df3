"""The reduced IR through each release's own code generator (bisect/codegens.py): real releases, the real defect.

The gfx942 IR of tests/data/llvm/buffer-inv-triton39.ll (two acquire atomics) loses its `s_waitcnt vmcnt(0)`
before the second `buffer_inv` only in Triton 3.9.0's pinned AMD code generator; Triton 3.4.0's bundled LLVM keeps
it. The survey must say so and turn it into an LLVM revision range."""
import json
import shutil
import sys
from pathlib import Path

import pytest
import triton

from gfxhound.bisect.codegens import llvm_range, survey
from gfxhound.corpus_store.layout import Reduction
from gfxhound.codegen import triton_codegen
from gfxhound.reduce.through import memory_model_property

ROOT = Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "llvm" / "buffer-inv-triton39.ll"


def _row(version, present, llvm=None):
    return {"version": version, "present": present, "llvm": f"rev{version}" if llvm is None else llvm}


def test_a_range_needs_absent_then_present_once():
    rows = [_row("3.4.0", False), _row("3.5.1", None), _row("3.8.0", False), _row("3.9.0", True)]
    span = llvm_range(rows)
    assert span["good"]["version"] == "3.8.0" and span["bad"]["version"] == "3.9.0"
    assert span["compare"].endswith("/compare/rev3.8.0...rev3.9.0")
    assert llvm_range([_row("3.4.0", True), _row("3.9.0", True)]) is None  # no release without it
    assert llvm_range([_row("3.4.0", False), _row("3.8.0", True), _row("3.9.0", False)]) is None  # not monotone
    assert llvm_range([_row("3.4.0", False), _row("3.9.0", True, llvm="")]) is None  # no revision to name


@pytest.mark.skipif(triton.__version__ != "3.9.0", reason="the defect is in Triton 3.9.0's code generator")
def test_the_buffer_inv_defect_is_placed_between_two_llvm_revisions(tmp_path, old_python):
    codegen = triton_codegen(sys.executable, "gfx942")
    level = tmp_path / "reduced" / "llvm-ir"
    level.mkdir(parents=True)
    shutil.copyfile(IR, level / "reduced.ll")
    record = {"codegen": codegen.to_json(),
              "property": memory_model_property(codegen, "gfx942: wait-before-inv vmcnt")}
    (level / "reduce.json").write_text(json.dumps(record))
    pythons = {"3.4.0": old_python, "3.6.0": None, "3.9.0": sys.executable}
    found = survey(Reduction(level), list(pythons), pythons.get)
    rows = {r["version"]: r for r in found["rows"]}
    assert rows["3.4.0"]["present"] is False and rows["3.9.0"]["present"] is True, found
    assert rows["3.6.0"]["present"] is None and "no venv" in rows["3.6.0"]["shows"]
    assert rows["3.4.0"]["llvm"] == "8957e64a"  # the LLVM 3.4.0 was built with, as its library spells it
    assert rows["3.9.0"]["llvm"] == codegen.revision.split("-")[0]
    assert found["range"]["compare"] == ("https://github.com/llvm/llvm-project/compare/8957e64a..."
                                         f"{codegen.revision.split('-')[0]}")
