"""fuzz/reach_source.py: the matrix's refusals found in a Triton source tree, cited by file:line, and a fact a
source lacks turning its cells back into supported ones. The tree is a sketch written here (each file holds just
the lines a fact reads), so the test runs without a Triton checkout."""
import json

from gfxhound.fuzz.reach_cells import CELLS
from gfxhound.fuzz.reach_source import AMD_TO_LLVM, FACTS, derive, find, main

SKETCH = {
    "lib/Analysis/Utility.cpp": "// scan\n\nbool ScanLoweringHelper::isSupported() {\n  // TODO\n"
                                "  if (!isa<BlockedEncodingAttr>(legacyEncoding))\n    return false;\n  return true;\n}\n",
    "lib/Dialect/TritonGPU/Transforms/Utility.cpp":
        "Value getMemAccessPtr(Operation *op) {\n  if (auto ld = dyn_cast<triton::LoadOp>(op))\n"
        "    return ld.getPtr();\n  if (auto a = dyn_cast<triton::AtomicRMWOp>(op))\n    return a.getPtr();\n"
        "  if (auto st = dyn_cast<triton::StoreOp>(op))\n    return st.getPtr();\n  return nullptr;\n}\n",
    "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp": "  Value ptr = getMemAccessPtr(curr);\n",
    "lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp":
        "bool isLayoutAnchor(Operation *op) {\n  if (isa<LoadOp, StoreOp>(op))\n    return isExpensive(op);\n"
        "  if (isa<DotOp, AtomicRMWOp, AtomicCASOp>(op))\n    return true;\n"
        "  if (auto gatherOp = dyn_cast<GatherOp>(op))\n    return gatherOp.getEfficientLayout();\n  return false;\n}\n",
    "third_party/amd/lib/TritonAMDGPUTransforms/OptimizeEpilogue.cpp": "\nclass BypassEpilogueSMEM : public X {};\n",
    "lib/Dialect/TritonGPU/IR/Dialect.cpp": "  LogicalResult\n  inferSplitOpEncoding(Attribute srcEnc) {}\n",
    AMD_TO_LLVM: "".join(f"    populate{g}ToLLVMPatterns(typeConverter, patterns);\n" for g in
                         ("ConvertLayoutOp", "ElementwiseOp", "ReduceOp", "ScanOp", "ViewOp", "MemoryOp",
                          "HistogramOp", "GatherOp", "LoadStoreOp", "DotOp")),
}


def _tree(tmp_path, drop=(), edit=None):
    for rel, body in SKETCH.items():
        if rel in drop:
            continue
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit(rel, body) if edit else body)
    return tmp_path


def test_every_fact_is_found_with_its_line_and_the_matrix_stands(tmp_path):
    found = find(_tree(tmp_path))
    assert all(found.values()), [k for k, v in found.items() if v is None]
    assert found["scan-blocked-only"]["line"] == 5           # the isa<BlockedEncodingAttr> line
    assert found["atomic-anchored"]["line"] == 4
    assert found["gather-anchored"]["path"].endswith("RemoveLayoutConversions.cpp")
    rows = derive(found)
    assert not [r for r in rows if r["stale"]]
    as_data = {(op, la): (e if isinstance(e, str) else e[0]) for op, c in CELLS.items() for la, e in c.items()
               if la != "where"}
    assert {(r["op"], r["layout"]): r["status"] for r in rows} == as_data
    atomic = next(r for r in rows if (r["op"], r["layout"]) == ("atomic", "MMA"))
    assert atomic["status"] == "never" and any(c.endswith("RemoveLayoutConversions.cpp:4") for c in atomic["cites"])


def test_a_release_whose_scan_takes_every_layout_turns_those_cells_into_supported_ones(tmp_path):
    """A later source lowers scans on other encodings (isSupported no longer tests for blocked only)."""
    def widen(rel, body):
        return body.replace("!isa<BlockedEncodingAttr>(legacyEncoding)", "false") if rel.endswith(
            "Analysis/Utility.cpp") else body
    found = find(_tree(tmp_path, edit=widen))
    assert found["scan-blocked-only"] is None
    stale = {(r["op"], r["layout"]): r for r in derive(found) if r["stale"]}
    assert set(stale) == {("scan", la) for la in ("slice(blocked)", "linear", "MMA", "slice(MMA)")}
    assert all(r["status"] == "lowered" and "scan-blocked-only" in r["reason"] for r in stale.values())


def test_a_pattern_group_passed_as_an_argument_counts_as_registered(tmp_path):
    """Later sources register groups through a helper: populatePatterns7(mlir::triton::populateScanOp..., b)."""
    def passed(rel, body):
        return body.replace("    populateScanOpToLLVMPatterns(typeConverter, patterns);",
                            "    populatePatterns7(mlir::triton::populateScanOpToLLVMPatterns,\n    benefit);") \
            if rel == AMD_TO_LLVM else body
    found = find(_tree(tmp_path, edit=passed))
    assert found["registered:ScanOp"] is not None and not [r for r in derive(found) if r["stale"]]


def test_an_unregistered_pattern_group_makes_its_ops_unsupported(tmp_path):
    def unregister(rel, body):
        return body.replace("populateHistogramOpToLLVMPatterns", "// none") if rel == AMD_TO_LLVM else body
    stale = [r for r in derive(find(_tree(tmp_path, edit=unregister))) if r["stale"]]
    assert stale and {r["op"] for r in stale} == {"histogram"}
    assert all(r["status"] == "unsupported" for r in stale if CELLS["histogram"][r["layout"]] == "lowered")


def test_the_command_exits_1_on_a_missing_fact_2_on_no_tree_and_0_otherwise(tmp_path, capsys):
    root = _tree(tmp_path / "full")
    assert main([str(root)]) == 0
    assert "all" in capsys.readouterr().out
    partial = _tree(tmp_path / "partial", drop=("lib/Dialect/TritonGPU/Transforms/Coalesce.cpp",))
    assert main([str(partial), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["facts"]["coalesce-uses-it"] is None
    assert {(c["op"], c["layout"]) for c in out["cells"] if c["stale"]} == \
        {("atomic", la) for la in ("slice(blocked)", "linear", "MMA", "slice(MMA)")} | \
        {("store", la) for la in ("slice(blocked)", "slice(MMA)")}
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "not a Triton source tree" in capsys.readouterr().err


def test_each_fact_names_a_file_and_says_what_it_shows():
    assert all(f.path and f.pattern and f.says for f in FACTS.values())
