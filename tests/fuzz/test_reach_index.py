"""tl.histogram and tl.gather (fuzz/ops_index.py) in the generator (issue #38): a seeded default stream draws each,
on a plain value and on a dot result (or its slice); each kernel compiles for gfx942 with the installed
Triton (3.9.0, real cross-compiles) and reaches the TTGIR cell it exists for (fuzz/reach_cells.py); the same kernels
run on Triton's CPU interpreter match the oracle's reference, so the ops' folding into range and their references
agree with Triton's semantics; and the gather cells the matrix calls never-produced are what the compiler does."""
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
from gfxhound.fuzz.reach_cells import cells
from gfxhound.fuzz.render import render
from gfxhound.oracle.ttgir_features import features as ttgir_features

SEED, SEARCH, PER_KEY = 7, 300, 3  # the stream kernels are taken from, how far it is searched, kernels per key
# what the kernel has -> TTGIR features (oracle/ttgir_features.py) it must reach on gfx942
WANTED = {
    "op:histogram": ["tt.histogram@blocked", "gfx942:tt.histogram@blocked"],
    "detail:dot_slice:histogram": ["tt.reduce@mfma", "tt.histogram@slice(mfma)"],
    "op:gather": ["tt.gather@blocked", "gfx942:tt.gather@blocked"],
    # Triton 3.9.0 gives a gather a blocked layout of its own: a dot result is converted to it first
    "detail:dot_result:gather": ["ttg.convert_layout:mfma->blocked", "tt.gather@blocked"],
}


def _keys(spec, caps):
    """What a kernel has, counting only histograms and gathers whose result is added into an output (generator's
    `keep`): a result nothing reads is deleted before TTGIR."""
    r = render(spec, caps)
    keys = {f"detail:{d}" for d in r.features.details}
    for m in re.finditer(r"(\w+) = tl\.(histogram|gather)\(", r.source):
        name, op = m.groups()
        if not re.search(rf"tl\.atomic_add\([^\n]*, {name}\b", r.source):
            keys -= {f"detail:dot_result:{op}", f"detail:dot_slice:{op}"}
            continue
        keys.add(f"op:{op}")
    if spec.meta.get("mx") or not spec.inputs or spec.inputs[0]["dtype"] in ("fp64", "fp32"):  # MFMA dots only
        keys = {k for k in keys if ":dot_" not in k}
    return keys


@pytest.fixture(scope="module")
def seeded():
    """key -> the first kernels of the seeded default stream that have it (a few: which layout the compiler picks
    for a value is not the generator's to know, so a key's cells must be reached by one of its kernels)."""
    caps = assume_all("gfx942")
    found = {}
    for spec in itertools.islice(spec_stream(caps, SEED), SEARCH):
        for key in _keys(spec, caps) & set(WANTED):
            if len(found.setdefault(key, [])) < PER_KEY:
                found[key].append(spec)
        if len(found) == len(WANTED) and all(len(v) == PER_KEY for v in found.values()):
            break
    return found


def _campaign(specs, tmp_path, worker_env, backend):
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / backend), kernels=len(specs), workers=2,
                            seed=1, worker_env=worker_env, caps_cache="", backend=backend)
    return Campaign(config, specs=specs).run()


def test_a_default_stream_draws_both_ops_where_they_reach_new_cells(seeded):
    assert set(seeded) == set(WANTED), sorted(set(WANTED) - set(seeded))
    caps = assume_all("gfx942")
    for key, spec in ((k, s) for k, specs in seeded.items() for s in specs):
        source = render(spec, caps).source
        assert ("tl.histogram(" if "histogram" in key else "tl.gather(") in source, key
        for call in re.findall(r"tl\.(?:histogram|gather)\(.*", source):  # folded into range by construction
            assert re.search(r"\.to\(tl\.int32\) & \(.+ - 1\)", call), call


def test_each_kernel_compiles_for_gfx942_and_reaches_its_cell(seeded, tmp_path, worker_env):
    specs = list({id(s): s for specs in seeded.values() for s in specs}.values())
    stats = _campaign(specs, tmp_path, worker_env, "compile")
    assert stats.verdicts.get("pass", 0) + stats.verdicts.get("miscompile", 0) == len(specs), \
        (dict(stats.verdicts), list(stats.findings.values()))
    assert not stats.verdicts.get("user_error"), dict(stats.verdicts)
    missing = [(key, want) for key in seeded for want in WANTED[key]
               if stats.coverage.get(f"detail:ttgir:{want}", 0) < 1]
    assert not missing, missing
    lowered = {(op, layout) for op, layout, status, _ in cells("gfx942") if status == "lowered"}
    assert {("histogram", "blocked"), ("histogram", "slice(blocked)"), ("histogram", "slice(mfma)"),
            ("gather", "blocked")} <= lowered


def test_the_reference_matches_tritons_interpreter(seeded, tmp_path, worker_env):
    """Each kernel run on the CPU interpreter, judged against the torch reference (ops_index.py's refs)."""
    specs = list({id(s[0]): s[0] for s in seeded.values()}.values())
    stats = _campaign(specs, tmp_path, worker_env, "interpret")
    assert stats.verdicts.get("pass", 0) == len(specs), (dict(stats.verdicts), dict(stats.unresolved),
                                                         list(stats.findings.values()))


@triton.jit
def _gather_into_dot(a, b, i, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    y = tl.load(b + rk[:, None] * N + rn[None, :])
    d = tl.dot(x, y)
    g = tl.gather(d, tl.load(i + rm[:, None] * N + rn[None, :]) & (N - 1), 1)
    tl.store(out + rm[:, None] * N + rn[None, :], tl.dot(x, y, g))


def test_a_gather_never_carries_the_mfma_layout(tmp_path, monkeypatch):
    """The matrix's never-produced gather cells: a dot result gathered and fed back as a dot's accumulator (both
    neighbours MFMA) is still gathered on a blocked layout, with conversions on either side."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    signature = {"a": "*fp16", "b": "*fp16", "i": "*i32", "out": "*fp32", "M": "constexpr", "N": "constexpr",
                 "K": "constexpr"}
    compiled = triton.compile(ASTSource(_gather_into_dot, signature, constexprs={"M": 32, "N": 32, "K": 32}),
                              target=GPUTarget("hip", "gfx942", 64), options={"num_warps": 4})
    got = ttgir_features(compiled.asm["ttgir"])
    assert "tt.gather@blocked" in got and "tt.gather@mfma" not in got and "tt.gather@linear" not in got, sorted(got)
    assert {"ttg.convert_layout:mfma->blocked", "ttg.convert_layout:blocked->mfma"} <= got, sorted(got)
    statuses = {(op, layout): status for op, layout, status, _ in cells("gfx942")}
    assert statuses["gather", "mfma"] == statuses["gather", "linear"] == "never"
