"""Bug identity (issue: one bug, one finding): each rule of the signature on recorded compiler output, and the
corpus migration that re-keys findings recorded under the previous normaliser without losing any history."""
import json

from gfxhound.corpus_store.migrate import migrate
from gfxhound.corpus_store import Corpus
from gfxhound.families import groups, headline
from gfxhound.fuzz.forced import forced
from gfxhound.oracle.judge import defects, judge_compile
from gfxhound.oracle.memory_model_tables import TABLES
from gfxhound.signature import (family_key, memory_model_key, miscompile_signature, signature_hash, summarise)

# Triton 3.9's output when a pass fails without a diagnostic of its own (MLIR's crash-reproducer path)
GENERIC = """##gfxhound-stage ttir
##gfxhound-stage ttgir
/tmp/gfxhound-pool-x/tasks/t3/kernel.py:9:0: error: Failures have been detected while processing an MLIR pass pipeline
/tmp/gfxhound-pool-x/tasks/t3/kernel.py:9:0: note: Pipeline failed while executing [`{pass_}` on 'builtin.module' operation]: reproducer generated at `std::errs, please share the reproducer above with Triton project.`
Traceback (most recent call last):
  File "/x/site-packages/triton/backends/amd/compiler.py", line 300, in make_ttgir
    pm.run(mod, 'make_ttgir')
RuntimeError: PassManager::run failed
"""

STACK_DUMP = """##gfxhound-stage amdgcn
Stack dump:
0.\tProgram arguments: python3 kernel.py
1.\tRunning pass 'CallGraph Pass Manager' on module 'LLVMDialectModule'.
2.\tRunning pass '{pass_}' on function '@kernel'
"""


def test_a_generic_pipeline_failure_is_named_by_its_pass():
    a = summarise(GENERIC.format(pass_="TritonAMDGPUAccelerateMatmul"), "exception")
    b = summarise(GENERIC.format(pass_="TritonAMDGPUStreamPipeline"), "exception")
    assert a["verdict"] == b["verdict"] == "ice"
    assert "pass TritonAMDGPUAccelerateMatmul" in a["normalised"]
    assert a["signature"] != b["signature"]  # two passes, two bugs
    again = GENERIC.format(pass_="TritonAMDGPUAccelerateMatmul").replace("t3/kernel.py:9:0", "t8/kernel.py:41:0")
    assert summarise(again, "exception")["signature"] == a["signature"]


def test_the_op_of_an_error_line_joins_the_pass_when_the_error_is_generic():
    text = GENERIC.format(pass_="ConvertTritonAMDGPUToLLVM").replace(
        "RuntimeError: PassManager::run failed", "RuntimeError: PassManager::run failed\n"
        "note: see current operation: error: 'ttg.convert_layout' op has no lowering")
    got = summarise(text, "exception")
    assert "pass ConvertTritonAMDGPUToLLVM, op ttg.convert_layout" in got["message"]


def test_a_new_pass_manager_stack_dump_is_named_by_its_pass_and_the_raw_line_stays_searchable():
    from gfxhound.signature import key_line
    text = 'Stack dump:\n0.\tProgram arguments: llc\n1.\tRunning pass "instcombine<max-iterations=1>" on function "k"\n'
    assert summarise(text, "signal:11")["message"] == "Stack dump: [pass instcombine<max-iterations=N>] [signal:11]"
    assert key_line(text, complete=False) == "Stack dump:"  # what reduce/llvm_ir.py greps llc's output for


def test_a_stack_dump_or_bare_signal_is_named_by_the_innermost_llvm_pass():
    isel = summarise(STACK_DUMP.format(pass_="AMDGPU DAG->DAG Pattern Instruction Selection"), "signal:11")
    ra = summarise(STACK_DUMP.format(pass_="Greedy Register Allocator"), "signal:11")
    assert "pass AMDGPU DAG->DAG Pattern Instruction Selection" in isel["message"]
    assert isel["signature"] != ra["signature"]
    bare = summarise(STACK_DUMP.format(pass_="Greedy Register Allocator").replace("Stack dump:\n", ""), "signal:11")
    assert bare["message"] == "signal:11 [pass Greedy Register Allocator]"


# what oracle/memory_model.py reported for kernels of a Triton 3.9 gfx942 campaign (messages as recorded)
INV = ["acquire-agent:wait-before-inv: global_atomic_add_f32 sc1: missing s_waitcnt vmcnt(0) before buffer_inv sc1",
       "acquire-system:wait-before-inv: global_atomic_smax sc0 sc1: missing s_waitcnt vmcnt(0) before buffer_inv "
       "sc0 sc1",
       "fence-acquire-agent:wait-before-inv: buffer_inv sc1: missing s_waitcnt vmcnt(0) before buffer_inv sc1"]
WBL2 = ["release-agent:wait-after-wbl2: global_atomic_add sc1: missing s_waitcnt vmcnt(0) after buffer_wbl2 sc1",
        "release-agent:wait-after-wbl2: global_atomic_add sc1: missing s_waitcnt lgkmcnt(0) after buffer_wbl2 sc1"]


def test_memory_model_keys_ignore_scope_opcode_bits_and_form_but_keep_defect_and_counter():
    assert {memory_model_key(m, "gfx942") for m in INV} == {"gfx942: wait-before-inv vmcnt"}
    assert [memory_model_key(m, "gfx942") for m in WBL2] == ["gfx942: wait-after-wbl2 vmcnt",
                                                              "gfx942: wait-after-wbl2 lgkmcnt"]
    from gfxhound.oracle.judge import defects as split
    assert split(_judged(INV[:1], "gfx950"))[0].signature == split(_judged(INV[:1], "gfx942"))[0].signature


def _judged(messages, target="gfx942"):
    return judge_compile({"status": "memory_model", "messages": messages, "checks": {"memory_model": "violated"}},
                         "s1", target, "triton-3.9.0", {})


def test_a_kernel_with_two_defects_is_two_findings_and_one_defect_one_finding():
    one = _judged(INV[:1])
    other = _judged(INV[1:], "gfx950")
    assert defects(one)[0].signature == defects(other)[0].signature  # other scope, opcode, arch: the same bug
    both = defects(_judged(INV + WBL2))
    assert sorted(e.normalised for e in both) == ["gfx942: wait-after-wbl2 lgkmcnt", "gfx942: wait-after-wbl2 vmcnt",
                                                  "gfx942: wait-before-inv vmcnt"]
    assert len({e.message.splitlines()[0] for e in both}) == 3  # no two print the same first line
    assert all(len(e.message.splitlines()) == 1 + len(INV + WBL2) for e in both)  # every message stays on record
    assert all(set(e.signatures) == {x.signature for x in both} for e in both)  # what the kernel shows


def test_a_miscompile_signature_is_never_a_catch_all():
    a = miscompile_signature("miscompile", "cuda:90", [], "kernels aaaa")
    b = miscompile_signature("miscompile", "cuda:90", [], "kernels bbbb")
    assert a[0] != "cuda:90: " and a[1] != b[1]
    assert miscompile_signature("miscompile", "cuda:90", ["dot", "abs"], "x")[0] == "cuda:90: abs dot"


def test_signatures_that_differ_only_in_a_format_are_one_family():
    a = "LLVM ERROR: unsupported conversion f32 to f8E4M3FN with rounding mode rtz"
    b = a.replace("f8E4M3FN", "f8E5M2FNUZ")
    assert signature_hash("ice", "llir", a, []) != signature_hash("ice", "llir", b, [])
    assert family_key("ice", "llir", a) == family_key("ice", "llir", b)
    assert family_key("ice", "llir", a) != family_key("ice", "llir", "LLVM ERROR: Cannot select: f32 fmax")
    rows = [{"verdict": "ice", "stage": "llir", "normalised": n, "configuration": c} for n, c in
            ((a, "default"), ("x", "forced: K=1 on gfx1100 (f)"), (b, "default"))]
    assert [len(g["members"]) for g in groups(rows)] == [2, 1] and groups(rows)[1]["forced"]
    assert headline(rows) == "3 signatures in 2 families; 1 only in forced configurations (listed last)"


def test_forcing_a_feature_onto_a_target_without_it_is_labelled():
    assert forced({"TRITON_HIP_USE_ASYNC_COPY": "1"}, "gfx1100").startswith("forced: TRITON_HIP_USE_ASYNC_COPY=1")
    assert forced({"TRITON_HIP_USE_ASYNC_COPY": "1"}, "gfx950") == ""  # it has direct-to-LDS loads
    assert forced({"TRITON_HIP_USE_ASYNC_COPY": "0"}, "gfx1100") == ""
    assert "block ping-pong" in forced({"TRITON_HIP_USE_BLOCK_PINGPONG": "1"}, "gfx1201")


def _v5(corpus, sig, normalised, message, spec_hash, target="gfx942", stage="memory-model", verdict="miscompile",
        env=None):
    """A finding as normaliser 5 recorded it (format-1 finding.json, run.json without defects)."""
    run = {"spec_hash": spec_hash, "target": target, "backend": "compile", "toolchain": "triton-3.9.0",
           "verdict": verdict, "stage": stage, "message": message, "normalised": normalised, "signature": sig,
           "normaliser": 5, "frames": [], "checks": {}}
    spec = {"format": 2, "launch": {"env": env or {}}}
    corpus.record(run, {"run.json": json.dumps(run), "spec.json": json.dumps(spec), "repro.py": "print(1)\n"})
    path = corpus.path(sig) / "finding.json"
    data = json.loads(path.read_text())
    for key in ("aliases", "configuration", "normaliser"):
        data.pop(key)
    path.write_text(json.dumps(dict(data, format=1)))


def test_migration_rekeys_merges_keeps_history_and_triage(tmp_path):
    old = Corpus(tmp_path / "old")
    _v5(old, "aaaaaaaaaaaaaaaa", "; ".join(INV[:1]), "\n".join(INV[:1]), "s1")
    _v5(old, "bbbbbbbbbbbbbbbb", "; ".join(INV[1:]), "\n".join(INV[1:]), "s2", target="gfx950")
    _v5(old, "cccccccccccccccc", "cuda:90: ", "out_0: 1 of 4 elements wrong", "s3", target="cuda:90", stage="run")
    _v5(old, "dddddddddddddddd", "LLVM ERROR: x", "LLVM ERROR: x", "s4", verdict="ice", stage="llir",
        env={"TRITON_HIP_USE_ASYNC_COPY": "1"}, target="gfx1100")
    (old.path("aaaaaaaaaaaaaaaa") / "bisect.json").write_text("{}")
    (tmp_path / "old" / "triage.json").write_text(json.dumps({"format": 2, "issues": [
        {"repo": "llvm/llvm-project", "number": 1, "title": "t", "state": "reported", "signature": "bbbbbbbb"}],
        "searched": [{"signature": "aaaaaaaaaaaaaaaa", "checked": "2026-11-24", "queries": ["q"]}]}))
    report = migrate(old, TABLES.get, forced, tmp_path / "old" / "triage.json")
    inv = _judged(INV[:1]).signature
    assert report["moved"]["aaaaaaaaaaaaaaaa"] == [inv] and report["moved"]["bbbbbbbbbbbbbbbb"] == [inv]
    found = {f.signature: f for f in old.findings()}
    assert set(found[inv].aliases) == {"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"} and found[inv].count == 2
    assert len(old.example_dirs(inv)) == 2 and found[inv].normaliser >= 6
    assert (old.path(inv) / "bisect.json").exists()  # nothing stored is lost (a re-keying keeps it its own)
    assert old.get("aaaaaaaa").signature == inv  # an old id still finds its bug
    triage = json.loads((tmp_path / "old" / "triage.json").read_text())
    assert triage["issues"][0]["signature"] == inv and triage["searched"][0]["signature"] == inv
    (miscompile,) = [f for f in found.values() if f.stage == "run"]
    assert miscompile.normalised == "cuda:90: kernel kernels s3"
    assert found["dddddddddddddddd"].configuration.startswith("forced: TRITON_HIP_USE_ASYNC_COPY=1 on gfx1100")
    assert migrate(old, TABLES.get, forced)["moved"] == {}  # idempotent


def test_merging_an_old_corpus_into_a_new_one_joins_the_bug_it_is(tmp_path):
    new, old = Corpus(tmp_path / "new"), Corpus(tmp_path / "old")
    _v5(new, "aaaaaaaaaaaaaaaa", "; ".join(INV[:1]), "\n".join(INV[:1]), "s1")
    migrate(new, TABLES.get, forced)
    _v5(old, "bbbbbbbbbbbbbbbb", "; ".join(INV[1:]), "\n".join(INV[1:]), "s2")
    new.merge_from(old)
    migrate(new, TABLES.get, forced)
    (only,) = new.findings()
    assert only.count == 2 and set(only.aliases) == {"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"}


PTXAS = """Traceback (most recent call last):
  File "/x/site-packages/triton/backends/nvidia/compiler.py", line 480, in make_cubin
triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error
`ptxas` stderr:
ptxas /tmp/tmpo9hszy08.ptx, line 58; error   : Modifier '.volatile' cannot be combined with modifier '.cg'
ptxas fatal   : Ptx assembly aborted due to errors
"""


def test_a_ptxas_codegen_error_is_named_by_what_ptxas_rejected():
    cg = summarise(PTXAS, "exception")
    assert cg["message"].endswith("[ptxas: Modifier '.volatile' cannot be combined with modifier '.cg']")
    other = summarise(PTXAS.replace("Modifier '.volatile' cannot be combined with modifier '.cg'",
                                    "Arguments mismatch for instruction 'mma'"), "exception")
    ca = summarise(PTXAS.replace("'.cg'", "'.ca'").replace("line 58", "line 12"), "exception")
    assert len({cg["signature"], other["signature"], ca["signature"]}) == 3
    assert family_key("ice", "", cg["normalised"]) == family_key("ice", "", ca["normalised"])  # a cache modifier


def test_a_draft_names_its_family_and_a_forced_configuration(tmp_path):
    from gfxhound.report.draft_parts import related
    corpus = Corpus(tmp_path / "c")
    for sig, message, env in (("aaaaaaaaaaaaaaaa", "LLVM ERROR: f32 to f8E4M3FN with rounding mode rtz", {}),
                              ("bbbbbbbbbbbbbbbb", "LLVM ERROR: f32 to f8E5M2FNUZ with rounding mode rtz",
                               {"TRITON_HIP_USE_ASYNC_COPY": "1"})):
        _v5(corpus, sig, message, message, sig[:4], verdict="ice", stage="llir", env=env, target="gfx1100")
    migrate(corpus, TABLES.get, forced)
    a, b = corpus.get("aaaa"), corpus.get("bbbb")
    assert any(line.startswith("Same failure with another type or format") and "f8E5M2FNUZ" in line
               for line in related(corpus, a))
    assert related(corpus, b)[0].startswith("Configuration: only seen with an environment knob")
