"""8-bit floats and block-scaled products end to end: every tl.dot_scaled format and every fp8 flavour compiles
for gfx942, gfx950 and gfx1250 (real compiles), and the fp8 conversion Triton 3.9 cannot lower is the compiler
failure it is (a real finding, kept as a fact). The interpreter's agreement with the oracle on block-scaled K-loops
is tests/oracle/test_execution.py's (the `mx` planted family with and without its plants)."""
from gfxhound.campaign import Campaign, CampaignConfig
from gfxhound.corpus_store import Corpus
from gfxhound.fuzz.capabilities import MX_PROBE_FORMATS, _dot_probe, _dot_scaled_probe, _fp8_cast_probe
from gfxhound.fuzz.dtypes import FP8

TARGETS = ["gfx942", "gfx950", "gfx1250"]


def _compile(tmp_path, worker_env, specs, targets):
    config = CampaignConfig(targets=targets, corpus=str(tmp_path / "corpus"), kernels=len(specs) * len(targets),
                            workers=2, seed=1, worker_env=worker_env, caps_cache="")
    return Campaign(config, specs=specs).run(), config


def test_every_block_scaled_format_and_fp8_flavour_compiles_for_each_target(tmp_path, worker_env):
    specs = [_dot_scaled_probe(d) for d in MX_PROBE_FORMATS] + [_dot_scaled_probe("e2m1x2", 16)]
    specs += [_fp8_cast_probe(d) for d in FP8] + [_dot_probe(d) for d in ("fp8e4nv", "fp8e5", "fp8e4b8")]
    stats, _ = _compile(tmp_path, worker_env, specs, TARGETS)
    assert stats.verdicts == {"pass": len(specs) * len(TARGETS)}, dict(stats.verdicts)
    for fmt in ("e2m1", "e4m3", "e5m2", "bf16", "fp16"):
        assert stats.coverage[f"detail:dot_scaled:{fmt}"] == 3 * (2 if fmt == "e2m1" else 1)


def test_rounding_towards_zero_into_e4m3_is_a_compiler_failure_not_a_diagnostic(tmp_path, worker_env):
    """Triton 3.9 accepts fp_downcast_rounding="rtz" into an e4m3 flavour and then trips an assertion in the AMD
    lowering (ConvertFpCastOpToLLVM: `maybeOutVals.has_value()`; into the fnuz flavours another assertion,
    "number of elements must be greater than zero"); into e5m2 it compiles."""
    stats, config = _compile(tmp_path, worker_env, [_fp8_cast_probe("fp8e4nv", "rtz"), _fp8_cast_probe("fp8e5", "rtz")],
                             ["gfx942"])
    assert stats.verdicts == {"ice": 1, "pass": 1}, dict(stats.verdicts)
    finding = Corpus(config.corpus).findings()[0]
    assert "ConvertFpCastOpToLLVM" in finding.message and "maybeOutVals.has_value()" in finding.message
    assert finding.stage == "llir"
