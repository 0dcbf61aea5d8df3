"""The reach matrix (fuzz/reach_cells.py, fuzz/reach.py) and the generator features that fill its holes (issue #38):
each feature is drawn by a seeded default stream, compiles for gfx942 (Triton 3.9.0, real cross-compiles) and
reaches the TTGIR it exists for; the one cell the matrix calls refused (a scan on an MFMA layout) is refused by the
compiler, so the matrix says what the backend does, not what we hoped."""
import itertools
import re

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import triton.language as tl

from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.reach import report, text
from gfxhound.fuzz.reach_cells import CELLS, OPS, cells
from gfxhound.fuzz.render import render
from gfxhound.oracle.ttgir_features import _LOC, features as ttgir_features

SEED, SEARCH = 7, 1200  # the stream a feature's kernel is taken from, and how far it is searched
# generator feature -> TTGIR features (oracle/ttgir_features.py) its kernel must reach on gfx942
FEATURES = {
    "detail:dot_result:sum": ["tt.reduce@mfma", "gfx942:tt.reduce@mfma", "tt.reduce@slice(mfma)"],
    # Triton 3.9.0 lowers scans on blocked layouts only: a dot result's scan is converted first
    "detail:dot_result:scan": ["ttg.convert_layout:mfma->blocked", "tt.scan@blocked"],
    "detail:dot_slice:scan": ["tt.reduce@mfma", "tt.scan@blocked"],
    "control:cond_reused_across_loop": ["scf.if", "scf.for"],
    "control:cond_retested_nested": ["scf.if"],
    "detail:size1:tile": [],
    "detail:size1:reduce": ["tt.reduce"],
}


def _feature_keys(spec, caps):
    f = render(spec, caps).features
    return {f"detail:{d}" for d in f.details} | {f"control:{c}" for c in f.control}


@pytest.fixture(scope="module")
def seeded():
    """feature -> the first kernel of the seeded default stream that has it."""
    caps = assume_all("gfx942")
    found = {}
    for spec in itertools.islice(spec_stream(caps, SEED), SEARCH):
        keys = _feature_keys(spec, caps)
        if spec.meta.get("mx") or not spec.inputs or spec.inputs[0]["dtype"] not in ("fp16", "bf16", "i8"):
            # MFMA dots only (fp32/fp64 dots, and OCP fp8 ones on gfx942, are lowered on a blocked layout)
            keys = {k for k in keys if ":dot_" not in k}
        for key in keys & (set(FEATURES) - set(found)):
            found[key] = spec
        if len(found) == len(FEATURES):
            break
    return found


def test_a_default_stream_draws_every_feature(seeded):
    assert set(seeded) == set(FEATURES), sorted(set(FEATURES) - set(seeded))


def test_each_feature_compiles_for_gfx942_and_reaches_its_ttgir(seeded, tmp_path, worker_env):
    wanted = [k for k in FEATURES if k in seeded]
    specs = list({id(seeded[k]): seeded[k] for k in wanted}.values())
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), kernels=len(specs), workers=2,
                            seed=1, worker_env=worker_env, caps_cache="")
    stats = Campaign(config, specs=specs).run()
    assert stats.verdicts.get("pass", 0) + stats.verdicts.get("miscompile", 0) == len(specs), \
        (dict(stats.verdicts), list(stats.findings.values()))
    missing = [(key, want) for key in wanted for want in FEATURES[key]
               if stats.coverage.get(f"detail:ttgir:{want}", 0) < 1]
    assert all(stats.coverage[key] >= 1 for key in wanted) and not missing, missing


def test_an_if_yielding_a_dot_results_slice_reaches_scf_if_on_the_mfma_slice(tmp_path, monkeypatch):
    """detail:dot_slice:if_yield (fuzz/reach_statements.py, if_yielding): of the default stream's first kernels with
    it, compiled for gfx942 until one shows it, one keeps an scf.if whose result is a slice of the MFMA layout (a
    kernel whose dot the compiler lowers on a blocked layout, or whose users convert the if's result first, does
    not: hence a few tries)."""
    from gfxhound import compat
    from gfxhound.oracle.compile_task import load_kernel
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    caps, tried = assume_all("gfx942"), []
    for spec in itertools.islice(spec_stream(caps, SEED), SEARCH):
        rendered = render(spec, caps)
        if "dot_slice:if_yield" not in rendered.features.details or spec.meta.get("mx"):
            continue
        kernel = load_kernel(rendered.source, tmp_path / f"k{len(tried)}.py", rendered.kernel_name)
        try:
            got = ttgir_features(compat.compile_for_amd(kernel, rendered.args, "gfx942", rendered.options,
                                                        rendered.env).asm["ttgir"])
        except Exception as exc:  # noqa: BLE001 - assume_all's caps are not the probed ones: counted, not judged
            tried.append(f"not compiled: {str(exc).splitlines()[-1][:80]}")
            continue
        tried.append(sorted(f for f in got if f.startswith("scf.if")))
        if "scf.if@slice(mfma)" in got:
            break
        assert len(tried) < 6, tried
    assert tried and "scf.if@slice(mfma)" in tried[-1], tried


@triton.jit
def _dot_then_scan(a, b, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    y = tl.load(b + rk[:, None] * N + rn[None, :])
    tl.store(out + rm[:, None] * N + rn[None, :], tl.cumsum(tl.dot(x, y), axis=1))


def test_a_scan_on_an_mfma_layout_is_refused_by_the_lowering(tmp_path, monkeypatch, capfd):
    """The matrix's `unsupported` cells for tt.scan: Triton 3.9.0 moves a dot result to a blocked layout before
    scanning it, and a TTGIR that scans the MFMA layout itself fails in ConvertTritonAMDGPUToLLVM."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    target = GPUTarget("hip", "gfx942", 64)
    signature = {"a": "*fp16", "b": "*fp16", "out": "*fp32", "M": "constexpr", "N": "constexpr", "K": "constexpr"}
    compiled = triton.compile(ASTSource(_dot_then_scan, signature, constexprs={"M": 32, "N": 32, "K": 32}),
                              target=target, options={"num_warps": 4})
    ttgir = compiled.asm["ttgir"]
    got = ttgir_features(ttgir)
    assert "tt.scan@blocked" in got and "tt.scan@mfma" not in got and "ttg.convert_layout:mfma->blocked" in got
    # scan the dot's result directly, and convert the scan's result for its users as the compiler would
    plain = "\n".join(line for line in _LOC.sub("", ttgir).splitlines() if not line.startswith("#loc"))
    conv = re.search(r"\n\s*(%\S+) = ttg.convert_layout (%\S+) : (tensor<[^>]+#mma>) -> (tensor<[^>]+#blocked\d*>)",
                     plain)
    assert conv, plain
    moved, dot, mma_ty, blocked_ty = conv.groups()
    scan = re.search(rf'(%\S+) = "tt.scan"\({re.escape(moved)}\)', plain)
    assert scan, plain
    result = scan.group(1)
    forced = plain.replace(conv.group(0), "", 1).replace(scan.group(0), f'%scan_on_mma = "tt.scan"({dot})', 1)
    closing = f"}}) : ({blocked_ty}) -> {blocked_ty}"
    assert closing in forced, forced
    forced = forced.replace(closing, f"}}) : ({mma_ty}) -> {mma_ty}\n    {result} = ttg.convert_layout %scan_on_mma : "
                                     f"{mma_ty} -> {blocked_ty}", 1)
    path = tmp_path / "forced.ttgir"
    path.write_text(forced)
    assert "tt.scan@mfma" in ttgir_features(forced)
    capfd.readouterr()
    with pytest.raises(Exception):
        triton.compile(str(path), target=target)
    err = capfd.readouterr().err
    assert "TODO: unsupported scan layout" in err and "failed to legalize operation 'tt.scan'" in err, err[-2000:]


@triton.jit
def _dot_into_memory(a, b, o, o2, o3, o4, n, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    acc = tl.dot(x, tl.load(b + rk[:, None] * N + rn[None, :]))
    tl.atomic_add(o + rm[:, None] * N + rn[None, :], acc)          # an atomic of the dot result
    tl.atomic_max(o2 + rm, tl.sum(acc, axis=1))                    # ... of its slice
    tl.store(o3 + rm, tl.max(acc, axis=1), mask=rm < n)            # a store of its slice
    tl.store(o4 + rm, tl.sum(x, axis=1))                           # a store of a blocked value's slice


@pytest.mark.parametrize("target", ["gfx942", "gfx950"])
@pytest.mark.parametrize("warps", [1, 4])
def test_atomics_and_stores_of_slices_are_moved_to_blocked_layouts(target, warps, tmp_path, monkeypatch):
    """The matrix's never-produced atomic and store cells: the coalescing pass gives every atomic and store a
    blocked layout; only a store of an MMA value is moved back onto it (the AMD epilogue pass). So an atomic of a
    dot result or of its slice, and a store of a reduction's slice, meet a conversion to blocked first."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    signature = {"a": "*fp16", "b": "*fp16", "o": "*fp32", "o2": "*fp32", "o3": "*fp32", "o4": "*fp16", "n": "i32",
                 "M": "constexpr", "N": "constexpr", "K": "constexpr"}
    compiled = triton.compile(ASTSource(_dot_into_memory, signature, constexprs={"M": 32, "N": 32, "K": 32}),
                              target=GPUTarget("hip", target, 64), options={"num_warps": warps})
    got = ttgir_features(compiled.asm["ttgir"])
    memory = {f for f in got if re.match(r"(tt\.atomic_rmw|amdg\.buffer_atomic_rmw|tt\.store|amdg\.buffer_store)@", f)}
    assert memory and all(f.endswith("@blocked") for f in memory), sorted(memory)
    assert {"ttg.convert_layout:mfma->blocked", "tt.reduce@mfma"} <= got, sorted(got)
    statuses = {(op, layout): status for op, layout, status, _ in cells(target)}
    assert all(statuses["atomic", la] == "never" for la in ("slice(blocked)", "linear", "mfma", "slice(mfma)"))
    assert statuses["store", "slice(blocked)"] == statuses["store", "slice(mfma)"] == "never"
    assert statuses["store", "mfma"] == "lowered"   # the epilogue pass stores an MFMA value in place


def test_the_matrix_is_data_with_a_reason_for_every_refused_cell():
    assert set(CELLS) == set(OPS)
    for target in ("gfx942", "gfx950", "gfx1100"):
        for op, layout, status, why in cells(target):
            assert status in ("lowered", "unsupported", "never"), (op, layout)
            assert status == "lowered" or (why and ("cpp" in why or "rank" in why)), (op, layout)
    assert ("scan", "mfma", "unsupported") in {(o, la, s) for o, la, s, _ in cells("gfx942")}
    assert all("mfma" not in la for _o, la, _s, _w in cells("gfx1100"))


def test_the_report_counts_per_target_cells_and_names_what_guards_the_unreached():
    cov = {"target:gfx942": {"kernels": 3}, "target:gfx950": {"kernels": 2},
           "detail:ttgir:gfx942:tt.reduce@mfma": {"kernels": 2}, "detail:ttgir:gfx950:amdg.buffer_load@blocked": 1}
    rep = report(cov)
    assert rep["per_target"] and rep["targets"] == ["gfx942", "gfx950"]
    assert rep["reached"] == 2 and rep["supported"] == 2 * sum(1 for c in cells("gfx942") if c[2] == "lowered")
    unreached = {(c["target"], c["op"], c["layout"]): c for c in rep["unreached"]}
    assert ("gfx942", "reduce", "mfma") not in unreached and ("gfx950", "load", "blocked") not in unreached
    assert unreached["gfx950", "reduce", "mfma"]["floor"] == "reduction of a dot result (TTGIR)"
    assert unreached["gfx942", "load", "blocked"]["why"].startswith("reached on gfx950 in this campaign")
    assert unreached["gfx942", "load", "linear"]["why"] == "no floor guards it"
    # a summary from before the per-target keys: any target's kernels count for every target
    old = report({"target:gfx942": 1, "detail:ttgir:tt.reduce@mfma": 1})
    assert not old["per_target"] and old["reached"] == 1
    assert "1 of" in text(old) and "not lowered scan" in text(old)
