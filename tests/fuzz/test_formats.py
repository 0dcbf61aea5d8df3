"""Every code of every narrow format decodes as the OCP MX spec v1.0 (and the fnuz convention) say, and as torch's
dtypes decode it, code by code (oracle/formats.py)."""
import math

import pytest
import torch

from gfxhound.oracle.formats import (E2M1, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, FP8, decode_e8m0, pack_e2m1,
                                     unpack_e2m1)

TORCH = {"e4m3fn": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "e4m3fnuz": torch.float8_e4m3fnuz,
         "e5m2fnuz": torch.float8_e5m2fnuz}


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("name", sorted(FP8))
def test_every_fp8_code_decodes_as_torch_does(name):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    expected = codes.view(TORCH[name]).to(torch.float64).tolist()
    got = FP8[name].table()
    wrong = [(c, got[c], expected[c]) for c in range(256) if not _same(got[c], expected[c])]
    assert wrong == []


def test_the_spec_values_that_distinguish_the_flavours():
    # OCP E4M3FN: no infinities, one NaN pattern per sign, max 448, min subnormal 2**-9
    assert E4M3FN.max_finite == 448 and E4M3FN.decode(0x01) == 2 ** -9 and math.isnan(E4M3FN.decode(0x7F))
    assert E4M3FN.decode(0x7E) == 448 and sum(math.isnan(v) for v in E4M3FN.table()) == 2
    # OCP E5M2: IEEE-like, +-inf, max 57344
    assert E5M2.decode(0x7C) == math.inf and E5M2.decode(0xFC) == -math.inf and E5M2.max_finite == 57344
    assert sum(math.isnan(v) for v in E5M2.table()) == 6
    # fnuz: 0x80 (what would be -0) is the only NaN, no infinities, no -0; bias one higher
    for fmt, top in ((E4M3FNUZ, 240), (E5M2FNUZ, 57344)):
        table = fmt.table()
        assert [c for c, v in enumerate(table) if math.isnan(v)] == [0x80]
        assert fmt.max_finite == top and not any(math.isinf(v) for v in table)
        assert not any(v == 0 and math.copysign(1, v) < 0 for v in table)
    assert E4M3FNUZ.decode(0x08) == 2 ** -7 and E4M3FN.decode(0x08) == 2 ** -6  # the bias differs by one


def test_every_e8m0_code():
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    expected = codes.view(torch.float8_e8m0fnu).to(torch.float64).tolist()
    for code in range(256):
        assert _same(decode_e8m0(code), expected[code]), code
    assert decode_e8m0(0) == 2 ** -127 and decode_e8m0(127) == 1.0 and math.isnan(decode_e8m0(255))


def test_every_fp4_code_and_the_nibble_order():
    magnitudes = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]  # OCP MX spec, table of E2M1 values
    assert E2M1.table() == magnitudes + [-m for m in magnitudes]
    assert math.copysign(1, E2M1.decode(0x8)) < 0  # E2M1 has a negative zero, and no NaN or infinity
    for first in range(16):
        for second in range(16):
            assert unpack_e2m1(pack_e2m1(first, second)) == (E2M1.decode(first), E2M1.decode(second))
    assert unpack_e2m1(0x21) == (0.5, 1.0)  # low nibble first


def test_fp4_bytes_unpack_as_tritons_interpreter_does():
    np = pytest.importorskip("numpy")
    interpreter = pytest.importorskip("triton.runtime.interpreter")
    if not hasattr(interpreter, "_e2m1_to_f32"):
        pytest.skip("this Triton's interpreter has no e2m1 unpacking")
    data = np.arange(256, dtype=np.uint8).reshape(256, 1)
    theirs = interpreter._e2m1_to_f32(data).astype(np.float64).tolist()
    assert [list(unpack_e2m1(b)) for b in range(256)] == theirs


@pytest.mark.parametrize("name", sorted(FP8))
def test_rounding_to_nearest_matches_torchs_conversion(name):
    """Every float32 on a dense grid over the finite range (ties included: the midpoints between codes) rounds
    to the code torch's fp32 -> fp8 conversion gives (round to nearest, ties to even)."""
    from gfxhound.oracle.formats import round_to_format
    fmt = FP8[name]
    grid = torch.tensor(sorted({v for v in fmt.table() if math.isfinite(v)}), dtype=torch.float64)
    mids = (grid[1:] + grid[:-1]) / 2
    x = torch.cat([grid, mids, mids * (1 + 2 ** -20), mids * (1 - 2 ** -20),
                   torch.linspace(-fmt.max_finite, fmt.max_finite, 20001, dtype=torch.float64)])
    x = x.to(torch.float32).to(torch.float64)  # values torch can convert from exactly
    expected = x.to(torch.float32).to(TORCH[name]).to(torch.float64)
    got = round_to_format(fmt, x)
    assert torch.equal(got, expected), (x[got != expected][:5], got[got != expected][:5])


@pytest.mark.parametrize("name", sorted(FP8))
def test_rounding_towards_zero_picks_the_largest_value_not_above(name):
    from gfxhound.oracle.formats import round_to_format
    fmt = FP8[name]
    x = torch.linspace(-fmt.max_finite, fmt.max_finite, 4001, dtype=torch.float64)
    got = round_to_format(fmt, x, "rtz")
    finite = sorted({abs(v) for v in fmt.table() if math.isfinite(v)})
    for value, result in zip(x.tolist(), got.tolist()):
        below = max(v for v in finite if v <= abs(value))
        assert abs(result) == below and (result == 0 or math.copysign(1, result) == math.copysign(1, value))


def test_decoding_code_tensors_as_the_oracle_does():
    from gfxhound.oracle.formats import decode_codes
    codes = torch.arange(256)
    assert decode_codes("e8m0", codes)[127] == 1.0 and torch.isnan(decode_codes("e8m0", codes)[255])
    assert decode_codes("e2m1", torch.arange(16)).tolist() == E2M1.table()
    for name, dtype in (("fp8e4nv", "e4m3fn"), ("fp8e5", "e5m2"), ("fp8e4b8", "e4m3fnuz"), ("fp8e5b16", "e5m2fnuz")):
        got = decode_codes(name, codes)
        want = codes.to(torch.uint8).view(TORCH[dtype]).to(torch.float64)
        assert torch.equal(torch.isnan(got), torch.isnan(want)) and torch.equal(got.nan_to_num(7.0), want.nan_to_num(7.0))


def test_the_generators_fp8_clamp_is_each_formats_largest_finite_value():
    """The emission clamps to FP8_MAX before a downcast (fuzz/ops_cast.py); the reference clamps to the same numbers."""
    from gfxhound.fuzz.ops_cast import FP8_MAX
    from gfxhound.oracle.formats import BY_DTYPE
    assert FP8_MAX == {name: fmt.max_finite for name, fmt in BY_DTYPE.items()}
