"""Bug identity, normaliser version 8 (docs/identity.md): an assertion in a generic header is named by the pass that
hit it; a pass's clean refusal is `unsupported`, one finding per (pass, message template); an unreduced wrong result
is keyed by the op behind its first wrong output; a scaled dot's reduced shape keeps its operand formats and scale
layout. Compiler output in tests/data/identity/ is real (Triton 3.4.0 and 3.6.0 campaigns and replays, trimmed to
its diagnostics and traceback)."""
import json
import shutil
from pathlib import Path

import pytest

from gfxhound.corpus_store import FINDING_FORMAT, Corpus, CorpusError, Finding
from gfxhound.corpus_store.migrate import migrate
from gfxhound.fuzz.forced import forced
from gfxhound.oracle.memory_model_tables import TABLES
from gfxhound.records import EXECUTION_FORMAT, Execution
from gfxhound.signature import (GENERIC_HEADERS, NORMALISER_VERSION, headline, normalise, summarise,
                                wrong_result_signature)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "identity"


def _out(name):
    return (DATA / name).read_text()


def test_generic_header_assertions_are_named_by_the_pass_that_hit_them():
    seen = {name: summarise(_out(name), "exception") for name in
            ("arrayref-3.6.0.txt", "smallvector-3.6.0.txt", "casting-pingpong-3.6.0.txt", "smallvector-3.4.0.txt")}
    passes = {"arrayref-3.6.0.txt": "TritonAMDGPUCanonicalizePointers",
              "smallvector-3.6.0.txt": "ConvertTritonAMDGPUToLLVM",
              "casting-pingpong-3.6.0.txt": "TritonAMDGPUBlockPingpong",
              "smallvector-3.4.0.txt": "ConvertTritonAMDGPUToLLVM"}
    for name, got in seen.items():
        assert got["verdict"] == "ice"
        assert got["normalised"].endswith(f"[pass {passes[name]}]"), (name, got["normalised"])
        assert headline(got["message"]).split(":")[0] in GENERIC_HEADERS  # a person still reads the assertion
    # the same assertion through another pass is another bug
    text = _out("smallvector-3.6.0.txt")
    other = summarise(text.replace("`ConvertTritonAMDGPUToLLVM`", "`TritonAMDGPUStreamPipeline`"), "exception")
    assert other["signature"] != seen["smallvector-3.6.0.txt"]["signature"]


def test_a_long_assertion_keeps_its_pass_through_the_normaliser_cut():
    got = summarise(_out("storageuniquer-after-diagnostic-3.4.0.txt"), "exception")
    assert len(got["normalised"]) <= 400 and got["normalised"].endswith("[pass TritonAMDGPUAccelerateMatmul]")
    assert got["verdict"] == "ice"  # a clean diagnostic followed by an assertion is a crash, not a refusal
    assert normalise("x" * 500) == "x" * 400  # other messages are cut as before


# an LLVM stack dump as a debug build prints it (release builds print none): the frames around a real assertion
STACK = """ #0 0x00007f5a1c2e4a3b llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) /src/llvm/lib/Support/Unix/Signals.inc:723:13
 #1 0x00007f5a1c2e2690 llvm::sys::RunSignalHandlers() /src/llvm/lib/Support/Signals.cpp:106:18
 #2 0x00007f5a1c2e50ea SignalHandler(int) /src/llvm/lib/Support/Unix/Signals.inc:413:1
 #3 0x00007f5a2a442520 (/lib/x86_64-linux-gnu/libc.so.6+0x42520)
 #4 0x00007f5a2a4969fc pthread_kill (/lib/x86_64-linux-gnu/libc.so.6+0x969fc)
 #5 0x00007f5a2a4287f2 abort (/lib/x86_64-linux-gnu/libc.so.6+0x287f2)
 #6 0x00007f5a2a42871b __assert_fail_base (/lib/x86_64-linux-gnu/libc.so.6+0x2871b)
 #7 0x00007f5a1b0c1d2e llvm::ArrayRef<mlir::ValueRange>::operator[](unsigned long) const /src/llvm/include/llvm/ADT/ArrayRef.h:253:7
 #8 0x00007f5a1b0c1d2e {caller} /src/triton/third_party/amd/lib/TritonAMDGPUTransforms/CanonicalizePointers.cpp:1210:31
 #9 0x00007f5a1b0d40aa mlir::ConversionPatternRewriter::replaceOp(mlir::Operation*, mlir::ValueRange) /src/mlir/lib/Transforms/Utils/DialectConversion.cpp:1800:3
"""


def test_a_stack_dump_adds_the_first_frame_outside_the_generic_code():
    text = _out("arrayref-3.6.0.txt")
    a = summarise(text + STACK.format(caller="mlir::(anonymous namespace)::ConvertSCFForOp::matchAndRewrite_("
                                             "mlir::scf::ForOp, OneToNOpAdaptor) const"), "exception")
    b = summarise(text + STACK.format(caller="mlir::(anonymous namespace)::ConvertSCFIfOp::matchAndRewrite_("
                                             "mlir::scf::IfOp, OneToNOpAdaptor) const"), "exception")
    assert a["normalised"].endswith("[pass TritonAMDGPUCanonicalizePointers, frame "
                                    "mlir::(anonymous namespace)::ConvertSCFForOp::matchAndRewrite_]"), a["normalised"]
    assert a["signature"] != b["signature"]  # one pass, two call sites of the generic header: two bugs


def test_an_assertion_outside_the_generic_headers_keeps_its_checked_in_id():
    """caad2c44's CanonicalizePointers.cpp assertion names its own code: version 8 leaves its id as it was."""
    example = next((ROOT / "corpus" / "caad2c44369ac53f" / "examples").iterdir())
    got = summarise((example / "output.txt").read_text(), "exception")
    assert got["signature"] == "caad2c44369ac53f" and "[pass" not in got["normalised"]


def test_a_pass_refusing_cleanly_is_unsupported_once_per_pass_and_template():
    fnuz = summarise(_out("unsupported-conversion-e4m3fnuz-3.6.0.txt"), "exception")
    fn = summarise(_out("unsupported-conversion-e4m3fn-3.6.0.txt"), "exception")
    assert fnuz["verdict"] == fn["verdict"] == "unsupported"
    assert fnuz["signature"] == fn["signature"]  # f8E4M3FNUZ and f8E4M3FN: one template of one converter
    assert fnuz["normalised"] == ("Unsupported conversion from '<type>' to '<type>' with rounding mode rtz "
                                  "[pass ConvertTritonAMDGPUToLLVM]")
    assert "'f8E4M3FNUZ'" in fnuz["message"]  # the record keeps the real types
    kinds = {name: summarise(_out(name), "exception") for name in
             ("nyi-upcast-mxfp-3.6.0.txt", "no-matrix-core-3.6.0.txt", "dotscaleop-3.6.0.txt")}
    assert {k["verdict"] for k in kinds.values()} == {"unsupported"}
    assert kinds["nyi-upcast-mxfp-3.6.0.txt"]["normalised"].endswith("[pass TritonAMDGPUAccelerateMatmul]")
    assert len({k["signature"] for k in kinds.values()} | {fn["signature"]}) == 4
    # a verifier's complaint about IR a pass built is the pass's bug, not a refusal
    verifier = _out("nyi-upcast-mxfp-3.6.0.txt").replace("'amdg.upcast_mxfp' op NYI: fpType must be E2M1, E4M3, or "
                                                         "E5M2", "mismatching kWidth between A and B operands")
    assert summarise(verifier, "exception")["verdict"] == "ice"


def test_records_of_the_new_verdict_carry_a_format_older_readers_refuse():
    run = Execution(spec_hash="s", target="gfx942", backend="compile", toolchain="triton-3.6.0",
                    verdict="unsupported")
    assert run.format == 2 and run.is_bug
    assert Execution(spec_hash="s", target="gfx942", backend="compile", toolchain="t", verdict="ice").format == 1
    with pytest.raises(ValueError, match="newer than this gfxhound"):
        Execution.from_json(dict(run.to_json(), format=EXECUTION_FORMAT + 1))
    hazard = Execution(spec_hash="s", target="gfx942", backend="emulate", toolchain="t", verdict="hazard")
    assert hazard.format == 3 and hazard.is_bug   # the verdict after `unsupported`: one format later
    assert Execution.from_json(run.to_json()).format == 2   # an older record reads as it was written
    finding = Finding(signature="a" * 16, verdict="unsupported", stage="llir", message="m", normalised="n",
                      first_seen="t", last_seen="t", count=1, targets=[], toolchains=[])
    assert finding.to_json()["format"] == 3
    assert Finding.from_json(dict(finding.to_json(), verdict="ice")).to_json()["format"] == 2
    assert Finding.from_json(dict(finding.to_json(), verdict="hazard")).to_json()["format"] == 4
    with pytest.raises(CorpusError, match="upgrade gfxhound"):
        Finding.from_json(dict(finding.to_json(), format=FINDING_FORMAT + 1))


def _example_inputs(sig):
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.spec import KernelSpec
    example = next((ROOT / "corpus" / sig / "examples").iterdir())
    run = json.loads((example / "run.json").read_text())
    return (KernelSpec.from_json(json.loads((example / "spec.json").read_text())),
            Capabilities.from_json(json.loads((example / "caps.json").read_text())), run)


def test_an_unreduced_wrong_result_is_keyed_by_the_op_behind_its_first_wrong_output():
    from gfxhound.oracle.judge import culprit
    from gfxhound.spec import KernelSpec
    scale_dropped = _example_inputs("18461bac51c2449a")
    mxfp4 = _example_inputs("0df076421fd38e34")
    assert culprit(*scale_dropped[:2], scale_dropped[2]["message"]) == "dot_scaled (scaled 16-bit operand)"
    assert culprit(*mxfp4[:2], mxfp4[2]["message"]) == "dot_scaled (16-element scale groups)"
    # the same bug through another kernel (its reduction: other ops, another output mode) gets the same key
    reduced = ROOT / "corpus" / "18461bac51c2449a" / "reduced" / "spec"
    record = json.loads((reduced / "reduce.json").read_text())
    spec = KernelSpec.from_json(json.loads((reduced / "spec.json").read_text()))
    assert culprit(spec, scale_dropped[1], record["message"]) == "dot_scaled (scaled 16-bit operand)"
    assert culprit(spec, scale_dropped[1], "no comparison line") == ""  # nothing to go on: the op list stands in
    a = wrong_result_signature("miscompile", "gfx942", "emulate", "dot_scaled (scaled 16-bit operand)")
    assert a[0] == "gfx942 emulate: wrong dot_scaled (scaled 16-bit operand)"
    assert a[1] != wrong_result_signature("miscompile", "gfx950", "emulate", "dot_scaled (scaled 16-bit operand)")[1]


def test_the_judge_keys_a_wrong_result_by_its_culprit_when_it_has_the_spec():
    from gfxhound.oracle.judge import judge_execute
    spec, caps, run = _example_inputs("18461bac51c2449a")
    outcome = {"status": "ok", "checks": {"mismatches": 7, "compared": 10}, "message": run["message"]}
    keyed = judge_execute(outcome, spec.spec_hash(), "gfx942", "triton-3.9.0", {}, "emulate", ["dot_scaled"],
                          spec=spec, caps=caps)
    assert keyed.normalised == "gfx942 emulate: wrong dot_scaled (scaled 16-bit operand)"
    plain = judge_execute(outcome, spec.spec_hash(), "gfx942", "triton-3.9.0", {}, "emulate", ["dot_scaled"])
    assert plain.normalised == "gfx942: dot_scaled"  # without the spec (a reduction's predicate): as before


def test_regroup_keeps_the_two_scaled_dot_bugs_of_the_checked_in_corpus_apart(tmp_path):
    from gfxhound.reduce.regroup import reduced_shape, regroup_all
    corpus = Corpus(tmp_path / "c")
    for sig in ("0df076421fd38e34", "18461bac51c2449a"):
        shutil.copytree(ROOT / "corpus" / sig, corpus.root / sig)
    shapes = {sig: reduced_shape(corpus, sig) for sig in ("0df076421fd38e34", "18461bac51c2449a")}
    assert shapes["18461bac51c2449a"].endswith("; scaled dot 16-bit+scale x fp8+scale, groups of 32")
    assert shapes["0df076421fd38e34"].endswith("; scaled dot fp4+scale x fp8+scale, groups of 16")
    assert regroup_all(corpus) == []
    assert {f.signature for f in corpus.findings()} == {"0df076421fd38e34", "18461bac51c2449a"}


def _v7(corpus, sig, run, files):
    """A finding as normaliser 7 recorded it, with the example's files."""
    run = dict(run, signature=sig, normaliser=7)
    corpus.record(run, {"run.json": json.dumps(run), **files})
    path = corpus.path(sig) / "finding.json"
    path.write_text(json.dumps(dict(json.loads(path.read_text()), normaliser=7)))


# what corpus/0b24f87e8b82386a and corpus/e5a7e63344a3ffae recorded under normaliser 7 (their run.json, abridged)
OLD_SMALLVECTOR = ("RuntimeError: PassManager::run failed | python: /root/.triton/llvm/llvm-8957e64a-almalinux-x64/"
                   "include/llvm/ADT/SmallVector.h:292: reference llvm::SmallVectorTemplateCommon<mlir::Value>::"
                   "operator[](size_type) [T = mlir::Value]: Assertion `idx < size()' failed.")
OLD_LDS = "RuntimeError: PassManager::run failed | LLVM ERROR: Unsupported architecture for direct to lds loads"


def _run(spec_hash, message, verdict="ice", stage="llir", target="gfx942"):
    return {"spec_hash": spec_hash, "target": target, "backend": "compile", "toolchain": "triton-3.4.0",
            "verdict": verdict, "stage": stage, "message": message, "normalised": normalise(message),
            "frames": ["compile", "make_llir"], "checks": {}}


def test_migration_names_the_pass_from_the_stored_output_and_keeps_the_old_id(tmp_path):
    corpus = Corpus(tmp_path / "c")
    output = _out("smallvector-3.4.0.txt")
    _v7(corpus, "0b24f87e8b82386a", _run("b657c01e953214b2", OLD_SMALLVECTOR), {"output.txt": output})
    _v7(corpus, "1111111111111111", _run("s2", OLD_SMALLVECTOR.replace("292", "293")), {})  # no output kept
    (corpus.root / "triage.json").write_text(json.dumps({"format": 2, "issues": [], "searched": [
        {"signature": "0b24f87e8b82386a", "checked": "2026-11-24", "queries": ["q"]}]}))
    corpus.write_reduced("0b24f87e8b82386a", "spec", {"reduce.json": "{}"})
    (corpus.draft_dir("0b24f87e8b82386a")).mkdir()
    (corpus.draft_dir("0b24f87e8b82386a") / "draft.md").write_text("# draft\n")
    report = migrate(corpus, TABLES.get, forced, corpus.root / "triage.json")
    new = summarise(output, "exception")["signature"]  # what a campaign meeting the bug now records
    assert report["moved"] == {"0b24f87e8b82386a": [new]} and report["normaliser"] == NORMALISER_VERSION == 8
    assert corpus.get("0b24f87e").signature == new and "0b24f87e8b82386a" in corpus.get(new).aliases
    assert corpus.get(new).normalised.endswith("[pass ConvertTritonAMDGPUToLLVM]")
    # re-keyed, the finding keeps its reduction and draft where every stage looks for them
    assert corpus.reduction(new, "spec").exists and (corpus.draft_dir(new) / "draft.md").exists()
    assert json.loads((corpus.root / "triage.json").read_text())["searched"][0]["signature"] == new
    assert corpus.get("1111111111111111").normaliser == 8  # without the output: stamped, its id kept
    assert migrate(corpus, TABLES.get, forced)["moved"] == {}


def test_migration_turns_a_recorded_refusal_into_unsupported(tmp_path):
    corpus = Corpus(tmp_path / "c")
    _v7(corpus, "e5a7e63344a3ffae", _run("f563ee735cc9cbfc", OLD_LDS, target="gfx1100"), {})
    report = migrate(corpus, TABLES.get, forced)
    (new,) = report["moved"]["e5a7e63344a3ffae"]
    finding = corpus.get("e5a7e633")
    assert finding.signature == new and finding.verdict == "unsupported"
    assert finding.normalised == "Unsupported architecture for direct to lds loads"
    assert json.loads((corpus.path(new) / "finding.json").read_text())["format"] == 3
    run = corpus.examples(new)[0].run
    assert run["verdict"] == "unsupported" and run["format"] == 2 and run["migrated_from"] == "e5a7e63344a3ffae"


def test_migration_rekeys_an_unreduced_wrong_result_by_its_culprit_and_leaves_a_reduced_one(tmp_path):
    from gfxhound.cli.corpus import _culprit_of
    corpus = Corpus(tmp_path / "c")
    example = next((ROOT / "corpus" / "18461bac51c2449a" / "examples").iterdir())
    run = json.loads((example / "run.json").read_text())
    files = {name: (example / name).read_text() for name in ("spec.json", "caps.json")}
    _v7(corpus, "aaaaaaaaaaaaaaaa", run, files)
    _v7(corpus, "bbbbbbbbbbbbbbbb", dict(run, spec_hash="other"), files)
    corpus.write_reduced("bbbbbbbbbbbbbbbb", "spec", {"reduce.json": "{}", "spec.json": files["spec.json"]})
    report = migrate(corpus, TABLES.get, forced, culprit_of=_culprit_of)
    expected = wrong_result_signature("miscompile", run["target"], run["backend"],
                                      "dot_scaled (scaled 16-bit operand)")[1]
    assert report["moved"] == {"aaaaaaaaaaaaaaaa": [expected]}  # the reduced one: its shape is its identity
