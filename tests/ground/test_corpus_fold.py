"""Folding findings (gfxhound/corpus_store/fold.py), re-keying a corpus (gfxhound/corpus_store/migrate.py) and regrouping
reduced wrong results (reduce/regroup.py): nothing counted twice, nothing lost, old ids resolve, a killed fold
completes."""
import json
import shutil

import pytest

from gfxhound.corpus_store.fold import absorb, finish_pending
from gfxhound.corpus_store.migrate import migrate
from gfxhound.corpus_store import Corpus, CorpusError
from gfxhound.fuzz.forced import forced
from gfxhound.oracle.memory_model_tables import TABLES
from test_identity import INV, WBL2, _judged, _v5


def _record(corpus, sig, spec_hash, verdict="miscompile", target="cuda:90"):
    run = {"spec_hash": spec_hash, "target": target, "backend": "device", "toolchain": "triton-3.6.0",
           "verdict": verdict, "stage": "run", "message": "m", "normalised": f"{target}: abs dot", "signature": sig,
           "normaliser": 6}
    corpus.record(run, {"run.json": json.dumps(run), "spec.json": "{}", "repro.py": "print(1)\n"})


def test_a_fold_moves_everything_and_a_folded_id_counts_where_it_went(tmp_path):
    corpus = Corpus(tmp_path / "c")
    _record(corpus, "aaaaaaaaaaaaaaaa", "s1")
    _record(corpus, "bbbbbbbbbbbbbbbb", "s2")
    (corpus.path("bbbbbbbbbbbbbbbb") / "bisect.json").write_text("{}")
    absorb(corpus, "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa")
    (only,) = corpus.findings()
    assert only.count == 2 and only.aliases == ["bbbbbbbbbbbbbbbb"] and sorted(only.examples) == ["s1", "s2"]
    assert (corpus.path("aaaaaaaaaaaaaaaa") / "aliases" / "bbbbbbbbbbbbbbbb" / "bisect.json").exists()
    assert corpus.get("bbbb").signature == "aaaaaaaaaaaaaaaa"
    _record(corpus, "bbbbbbbbbbbbbbbb", "s3")  # a campaign meets the provisional id again
    (only,) = corpus.findings()
    assert only.count == 3 and not corpus.path("bbbbbbbbbbbbbbbb").exists()
    with pytest.raises(CorpusError):
        absorb(corpus, "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaa")


def test_a_fold_killed_after_its_tombstone_is_finished_once(tmp_path):
    corpus = Corpus(tmp_path / "c")
    _record(corpus, "aaaaaaaaaaaaaaaa", "s1")
    _record(corpus, "bbbbbbbbbbbbbbbb", "s2")
    # the state a kill leaves after step 1 (tombstone) and the examples' move, before the target was saved
    path = corpus.path("bbbbbbbbbbbbbbbb") / "finding.json"
    path.write_text(json.dumps(dict(json.loads(path.read_text()), absorbed_into="aaaaaaaaaaaaaaaa")))
    (corpus.path("aaaaaaaaaaaaaaaa") / "examples").mkdir(exist_ok=True)
    shutil.move(corpus.path("bbbbbbbbbbbbbbbb") / "examples" / "s2", corpus.path("aaaaaaaaaaaaaaaa") / "examples")
    assert [f.signature for f in corpus.findings()] == ["aaaaaaaaaaaaaaaa"]  # no zombie listed meanwhile
    assert finish_pending(corpus) == ["bbbbbbbbbbbbbbbb"]
    (only,) = corpus.findings()
    assert only.count == 2 and sorted(only.examples) == ["s1", "s2"]
    assert finish_pending(corpus) == [] and corpus.findings()[0].count == 2


def test_migration_of_a_folded_finding_keeps_it_whole(tmp_path):
    """A finding that already absorbed another (its examples' run.json name two ids) re-keys as one."""
    corpus = Corpus(tmp_path / "c")
    _v5(corpus, "aaaaaaaaaaaaaaaa", "LLVM ERROR: x", "LLVM ERROR: x", "s1", verdict="ice", stage="llir")
    _v5(corpus, "bbbbbbbbbbbbbbbb", "LLVM ERROR: x", "LLVM ERROR: x", "s2", verdict="ice", stage="llir")
    absorb(corpus, "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa")
    assert migrate(corpus, TABLES.get, forced)["moved"] == {}
    (only,) = corpus.findings()
    assert only.count == 2 and sorted(only.examples) == ["s1", "s2"]


def test_a_kernel_with_two_defects_splits_and_the_old_id_names_one_heir(tmp_path):
    corpus = Corpus(tmp_path / "c")
    _v5(corpus, "aaaaaaaaaaaaaaaa", "x", "\n".join(INV[:1] + WBL2[:1]), "s1")
    (corpus.path("aaaaaaaaaaaaaaaa") / "bisect.json").write_text("{}")
    _v5(corpus, "aaaaaaaaaaaaaaaa", "x", "\n".join(INV[:1]), "s2")
    _v5(corpus, "cccccccccccccccc", "y", "\n".join(INV[1:2] + ["release-agent:wait-after-wbl2: global_atomic_a"]),
        "s3", env={"TRITON_HIP_USE_ASYNC_COPY": "1"}, target="gfx90a")  # the last message was cut at 2,000 chars
    migrate(corpus, TABLES.get, forced)
    inv, wbl2 = _judged(INV[:1]).signature, _judged(WBL2[:1]).signature
    found = {f.signature: f for f in corpus.findings()}
    assert set(found) == {inv, wbl2, _judged(INV[1:2], "gfx90a").signature}
    assert found[inv].aliases == ["aaaaaaaaaaaaaaaa"] and found[inv].count == 2  # the heir: most examples
    assert found[wbl2].split_from == ["aaaaaaaaaaaaaaaa"] and found[wbl2].examples == ["s1"]  # a copy
    assert (corpus.path(inv) / "bisect.json").exists()  # the heir is the old finding under its new id
    assert corpus.get("aaaaaaaa").signature == inv  # the old id resolves to one finding
    gfx90a = [f for f in found.values() if f.targets == ["gfx90a"]][0]
    assert gfx90a.normalised == "gfx90a: wait-before-inv vmcnt"  # the cut message did not make a junk key
    assert gfx90a.configuration.startswith("forced: TRITON_HIP_USE_ASYNC_COPY=1 on gfx90a")


def test_a_rekeyed_forced_finding_keeps_its_label(tmp_path):
    corpus = Corpus(tmp_path / "c")
    _v5(corpus, "aaaaaaaaaaaaaaaa", "x", "\n".join(INV[:1]), "s1", env={"TRITON_HIP_USE_ASYNC_COPY": "1"},
        target="gfx90a")
    migrate(corpus, TABLES.get, forced)
    (only,) = corpus.findings()
    assert only.configuration.startswith("forced:") and only.aliases == ["aaaaaaaaaaaaaaaa"]


def test_reduced_wrong_results_of_one_shape_fold_and_io_only_kernels_keep_their_ops(tmp_path):
    from gfxhound.fuzz.capabilities import introspect
    from gfxhound.reduce.regroup import shape_of
    from gfxhound.spec import KernelSpec
    from hypothesis import HealthCheck, given, settings
    from gfxhound.fuzz.strategies import kernel_specs
    caps = introspect("gfx942")
    seen = []

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(kernel_specs(caps, max_ops=6))
    def collect(spec):
        seen.append(spec)
    collect()
    for spec in seen:
        shape = shape_of(KernelSpec.loads(spec.dumps()), caps, "gfx942")
        assert shape.startswith("gfx942: ops ") and " ops ;" not in shape
        if "ops io " in shape:
            assert "types " in shape  # a load/store-only kernel: named by its ops and types, not lumped

    # two wrong results whose reductions left kernels of one shape: one finding, the later id an alias
    from gfxhound.reduce.regroup import regroup, regroup_all
    corpus = Corpus(tmp_path / "c")
    compute = next(s for s in seen if "ops io " not in shape_of(s, caps, "gfx942"))
    other = next(s for s in seen if shape_of(s, caps, "gfx942") != shape_of(compute, caps, "gfx942"))
    for sig, spec_hash, reduced in (("aaaaaaaaaaaaaaaa", "s1", compute), ("bbbbbbbbbbbbbbbb", "s2", compute),
                                    ("cccccccccccccccc", "s3", other)):
        _record(corpus, sig, spec_hash, target="gfx942")
        (corpus.path(sig) / "examples" / spec_hash / "caps.json").write_text(caps.dumps())
        corpus.write_reduced(sig, "spec", {"spec.json": reduced.dumps()})
    keep, folded = regroup(corpus, "bbbbbbbbbbbbbbbb", shape_of(compute, caps, "gfx942"))
    assert (keep, folded) == ("aaaaaaaaaaaaaaaa", ["bbbbbbbbbbbbbbbb"])
    assert sorted(f.signature for f in corpus.findings()) == ["aaaaaaaaaaaaaaaa", "cccccccccccccccc"]
    assert regroup_all(corpus) == []  # another shape stays its own finding


def test_a_launch_knob_the_reduction_kept_is_part_of_the_shape():
    """Two reduced dots of one shape, one needing kpack=2 and one needing a single warp, are two bugs (seen on
    Triton 3.6: a kWidth bug with kpack=2 and a one-warp fp8 dot bug, folded into one before the launch counted)."""
    from gfxhound.fuzz.capabilities import introspect
    from gfxhound.reduce.regroup import shape_of
    from gfxhound.spec import KernelSpec
    from gfxhound.fuzz.strategies import kernel_specs
    from hypothesis import HealthCheck, given, settings
    caps = introspect("gfx942")
    seen = []

    @settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(kernel_specs(caps, max_ops=4))
    def collect(spec):
        seen.append(spec)
    collect()
    spec = KernelSpec.loads(seen[0].dumps())
    plain = spec.replace(launch=type(spec.launch)(num_warps=4, num_stages=2, options={}, env={}))
    kpack = plain.replace(launch=type(spec.launch)(num_warps=4, num_stages=2, options={"kpack": 2}, env={}))
    one_warp = plain.replace(launch=type(spec.launch)(num_warps=1, num_stages=2, options={}, env={}))
    shapes = [shape_of(s, caps, "gfx942") for s in (plain, kpack, one_warp)]
    assert "launch" not in shapes[0]
    assert shapes[1].endswith("; launch kpack=2") and shapes[2].endswith("; launch num_warps=1")
    assert len(set(shapes)) == 3
