"""The cross-lane and conversion intrinsics of the CPU executor agree with the ISA documents (executors/llvm_ir/lanes.py,
convert.py): DPP controls against the per-lane formulas of the CDNA ISA's DPP_CTRL table, the permutes against the
ISA's own worked examples, the fp8 codecs exhaustively, and every undocumented case raises NotModelled."""
import numpy as np
import pytest

from gfxhound.executors.llvm_ir import convert as C
from gfxhound.executors.llvm_ir import lanes as L
from gfxhound.executors.llvm_ir.errors import NotModelled

RNG = np.random.default_rng(7)


def wave(w=2, s=64):
    return RNG.integers(0, 2**32, size=(w, s), dtype=np.uint64).astype(np.uint32)


def on(w=2, s=64):
    return np.ones((w, s), bool)


def table94_source(ctrl, n):
    """CDNA ISA Table 94, per lane, as printed: the source lane of lane n, or None ("use bound_cntl")."""
    c = ctrl & 0xF
    if ctrl <= 0xFF:
        return (n & 0x3C) + ((ctrl >> (n % 4 * 2)) & 3)
    if 0x101 <= ctrl <= 0x10F:
        return n + c if (n & 0xF) < 16 - c else None
    if 0x111 <= ctrl <= 0x11F:
        return n - c if (n & 0xF) >= c else None
    if 0x121 <= ctrl <= 0x12F:
        return n - c if (n & 0xF) >= c else n + 16 - c
    return {0x130: n + 1 if n < 63 else None, 0x134: n + 1 if n < 63 else 0, 0x138: n - 1 if n > 0 else None,
            0x13C: n - 1 if n > 0 else 63, 0x140: (n & 0x30) + 15 - (n & 0xF),
            0x141: (n & 0x38) + 7 - (n & 7)}[ctrl]


GFX9_CONTROLS = [0x00, 0xE4, 0x1B, 0xAA, 0x39] + list(range(0x101, 0x110)) + list(range(0x111, 0x120)) + \
    list(range(0x121, 0x130)) + [0x130, 0x134, 0x138, 0x13C, 0x140, 0x141]


@pytest.mark.parametrize("ctrl", GFX9_CONTROLS)
@pytest.mark.parametrize("bound_ctrl", [False, True])
def test_dpp_matches_table94(ctrl, bound_ctrl):
    old, src = wave(), wave()
    out = L.update_dpp(old, src, ctrl, 0xF, 0xF, bound_ctrl, on(), "gfx942")
    for n in range(64):
        lane = table94_source(ctrl, n)
        want = src[:, lane] if lane is not None else (np.zeros(2, np.uint32) if bound_ctrl else old[:, n])
        assert np.array_equal(out[:, n], want), (hex(ctrl), n)


def test_quad_perm_identity_and_broadcast():
    src = wave()
    assert np.array_equal(L.update_dpp(wave(), src, 0xE4, 0xF, 0xF, False, on(), "gfx942"), src)
    bcast = L.update_dpp(wave(), src, 0xAA, 0xF, 0xF, False, on(), "gfx1100")   # quad_perm:[2,2,2,2]
    assert np.array_equal(bcast, np.repeat(src[:, 2::4], 4, axis=1))


def test_row_shr1_bound_ctrl():
    old, src = np.full((1, 64), 9, np.uint32), np.arange(64, dtype=np.uint32)[None] + 100
    with_bc = L.update_dpp(old, src, 0x111, 0xF, 0xF, True, on(1), "gfx942")[0]
    without = L.update_dpp(old, src, 0x111, 0xF, 0xF, False, on(1), "gfx942")[0]
    for n in range(64):
        assert with_bc[n] == (0 if n % 16 == 0 else 100 + n - 1)
        assert without[n] == (9 if n % 16 == 0 else 100 + n - 1)


def test_inactive_source_is_invalid_and_inactive_destination_unwritten():
    old, src = np.full((1, 64), 9, np.uint32), np.arange(64, dtype=np.uint32)[None] + 100
    active = on(1)
    active[0, 4] = False
    bc = L.update_dpp(old, src, 0x111, 0xF, 0xF, True, active, "gfx942")[0]
    nobc = L.update_dpp(old, src, 0x111, 0xF, 0xF, False, active, "gfx942")[0]
    assert bc[5] == 0 and nobc[5] == 9        # reads disabled lane 4
    assert bc[4] == 9 and nobc[4] == 9        # lane 4 itself is not written
    assert bc[6] == 105


def test_row_and_bank_masks_keep_old():
    old, src = wave(), wave()
    out = L.update_dpp(old, src, 0xE4, 0x5, 0x2, True, on(), "gfx942")   # rows 0, 2; bank 1 (lanes 4-7)
    n = np.arange(64)
    written = ((n // 16) % 2 == 0) & ((n % 16) // 4 == 1)
    assert np.array_equal(out[:, written], src[:, written])
    assert np.array_equal(out[:, ~written], old[:, ~written])


def test_row_bcast15_and_31():
    old, src = wave(1), wave(1)
    b15 = L.update_dpp(old, src, 0x142, 0xA, 0xF, True, on(1), "gfx942")[0]
    assert np.all(b15[16:32] == src[0, 15]) and np.all(b15[48:64] == src[0, 47])
    assert np.array_equal(b15[:16], old[0, :16]) and np.array_equal(b15[32:48], old[0, 32:48])
    b31 = L.update_dpp(old, src, 0x143, 0xC, 0xF, False, on(1), "gfx942")[0]
    assert np.all(b31[32:] == src[0, 31]) and np.array_equal(b31[:32], old[0, :32])
    assert not L.dpp_unspecified_lanes(0x142, 0xA, 0xF, on(1), "gfx942").any()
    undefined = L.dpp_unspecified_lanes(0x143, 0xF, 0xF, on(1), "gfx942")[0]   # Triton's row_mask for bcast31
    assert undefined[:32].all() and not undefined[32:].any()


def test_triton_dpp_reduction_leaves_the_sum_in_lane_63():
    """TargetInfo::emitDppWarpReduce: row_shr 8,4,2,1, row_bcast:15 (row_mask 0xa), row_bcast:31, readlane 63."""
    vals = RNG.integers(0, 1000, size=(3, 64)).astype(np.uint32)
    for order in ([8, 4, 2, 1], [1, 2, 4, 8]):
        buf = vals.copy()
        for ctrl, row_mask in [(0x110 + k, 0xF) for k in order] + [(0x142, 0xA), (0x143, 0xF)]:
            buf = buf + L.update_dpp(buf, buf, ctrl, row_mask, 0xF, True, on(3), "gfx942")
        assert np.array_equal(L.readlane(buf, 63, on(3))[:, 0], vals.sum(axis=1, dtype=np.uint32))


def test_gfx10_row_share_and_xmask():
    src = wave(2, 32)
    share = L.update_dpp(wave(2, 32), src, 0x153, 0xF, 0xF, False, on(2, 32), "gfx1100")
    assert np.all(share[:, :16] == src[:, 3:4]) and np.all(share[:, 16:] == src[:, 19:20])
    xmask = L.update_dpp(wave(2, 32), src, 0x161, 0xF, 0xF, False, on(2, 32), "gfx1201")
    assert np.array_equal(xmask, src[:, np.arange(32) ^ 1])
    newbcast = L.update_dpp(wave(), wave(), 0x150, 0xF, 0xF, False, on(), "gfx942")   # row_newbcast:0
    assert np.all(newbcast[:, 16:32] == newbcast[:, 16:17])


@pytest.mark.parametrize("ctrl, arch, s", [
    (0x130, "gfx1100", 32), (0x142, "gfx1201", 32), (0x143, "gfx1100", 64),   # wave_*/row_bcast gone in GFX10+
    (0x160, "gfx942", 64), (0x150, "gfx908", 64),                             # row_xmask GFX10+; newbcast GFX90A
    (0x100, "gfx942", 64), (0x110, "gfx942", 64), (0x131, "gfx942", 64), (0x144, "gfx942", 64),  # reserved
    (0xE4, "gfx942", 32), (0xE4, "gfx803", 64), (0xE4, "sm_90", 64)])
def test_dpp_not_modelled(ctrl, arch, s):
    with pytest.raises(NotModelled):
        L.update_dpp(wave(1, s), wave(1, s), ctrl, 0xF, 0xF, False, on(1, s), arch)


def test_bpermute_isa_examples_and_wrap():
    data = np.arange(64, dtype=np.uint32)[None] + 1000
    addr = np.zeros((1, 64), np.uint32)
    addr[0, :4] = [0, 0, 12, 4]           # CDNA ISA example: VDST = {A, A, D, B}
    assert list(L.ds_bpermute(addr, data, on(1))[0, :4]) == [1000, 1000, 1003, 1001]
    active = np.zeros((1, 64), bool)
    active[0, [1, 3]] = True              # EXEC = 0xA: lane 1 reads disabled lane 0 -> 0, lane 3 reads B
    got = L.ds_bpermute(addr, data, active)[0]
    assert got[1] == 0 and got[3] == 1001
    far = np.array([[4 * 69, -4 & 0xFFFFFFFF, 0xFFFFFFFC, 4 * 64 + 3] + [0] * 60], np.uint64).astype(np.uint32)
    assert list(L.ds_bpermute(far, data, on(1))[0, :4]) == [1005, 1063, 1063, 1000]
    signed = np.array([[-4] + [0] * 63], np.int32)
    assert L.ds_bpermute(signed, data, on(1))[0, 0] == 1063
    d32 = data[:, :32]
    assert L.ds_bpermute(np.full((1, 32), 4 * 33, np.uint32), d32, on(1, 32), arch="gfx1100")[0, 0] == 1001
    with pytest.raises(NotModelled):
        L.ds_bpermute(addr, data, on(1), arch="gfx1100")


def test_bpermute_is_a_gather():
    data, lanes = wave(), RNG.integers(0, 64, size=(2, 64))
    assert np.array_equal(L.ds_bpermute((lanes * 4).astype(np.uint32), data, on()),
                          np.take_along_axis(data, lanes, axis=1))


def test_permute_isa_examples():
    data = np.arange(64, dtype=np.uint32)[None] + 1000
    addr = np.zeros((1, 64), np.uint32)
    addr[0, :4] = [0, 0, 12, 4]           # VDST = {B, D, 0, C}: lanes 0 and 1 both send to 0, highest (B) wins
    active = np.zeros((1, 64), bool)
    active[0, :4] = True
    assert list(L.ds_permute(addr, data, active)[0, :4]) == [1001, 1003, 0, 1002]
    active[0, :4] = [False, True, False, True]   # EXEC = 0xA: {-, D, -, 0}
    got = L.ds_permute(addr, data, active)[0]
    assert got[1] == 1003 and got[3] == 0


def test_readlane_readfirstlane_ballot():
    src = np.arange(128, dtype=np.uint64).reshape(2, 64) << np.uint64(33)   # i64 values
    active = on()
    active[0, :5] = False
    active[1, :] = False
    first = L.readfirstlane(src, active)
    assert np.all(first[0] == src[0, 5]) and np.all(first[1] == src[1, 0])   # no active lane: lane 0
    assert np.all(L.readlane(src, 64 + 7)[0] == src[0, 7])                   # lane number mod 64
    cond = np.zeros((2, 64), bool)
    cond[0, [5, 6, 63]] = True
    cond[1, 0] = True
    assert list(L.ballot(cond, active)) == [(1 << 5) | (1 << 6) | (1 << 63), 0]
    with pytest.raises(NotModelled):
        L.readlane(src[:1], 2, active[:1])                                   # lane 2 is disabled
    lanes = np.zeros((1, 64), int)
    lanes[0, 9] = 1
    with pytest.raises(NotModelled):
        L.readlane(src[:1], lanes, on(1))                                   # not uniform


def test_mbcnt_gives_lane_ids_and_prefix_counts():
    lane = np.broadcast_to(np.arange(64), (2, 64))
    ones = np.uint32(0xFFFFFFFF)
    assert np.array_equal(L.mbcnt_hi(ones, L.mbcnt_lo(ones, 0, lane), lane), lane)   # the ISA's lane-id idiom
    vcc = np.array([0x5, 0x1], np.uint64) | (np.array([1, 3], np.uint64) << np.uint64(32))
    pos = L.mbcnt_hi((vcc >> np.uint64(32)).astype(np.uint32), L.mbcnt_lo(vcc.astype(np.uint32), 0, lane), lane)
    assert list(pos[0, [0, 1, 2, 3, 32, 33, 63]]) == [0, 1, 1, 2, 2, 3, 3]
    assert list(pos[1, [0, 1, 33, 34]]) == [0, 1, 2, 3]


def test_permlane16_and_x16():
    src = np.arange(64, dtype=np.uint32)[None] + 500
    rot = L.permlane16(src * 0, src, 0x87654321, 0x0FEDCBA9, False, False, on(1))[0]   # the ISA's rotation
    assert np.array_equal(rot, 500 + (np.arange(64) & ~15) + ((np.arange(64) + 1) & 15))
    x = L.permlanex16(src * 0, src, -1, -1, True, False, on(1))[0]     # Triton's GFX10+ cross-row step
    assert np.all(x[:16] == 531) and np.all(x[16:32] == 515) and np.all(x[32:48] == 563)
    active = on(1)
    active[0, 31] = False
    with pytest.raises(NotModelled):
        L.permlanex16(src * 0, src, -1, -1, True, False, active)
    old = np.full((1, 64), 7, np.uint32)
    assert L.permlanex16(old, src, -1, -1, False, True, active)[0, 0] == 0
    assert L.permlanex16(old, src, -1, -1, False, False, active)[0, 0] == 7


def test_permlane_swaps():
    a = np.arange(64, dtype=np.uint32)[None]
    b = a + 100
    new_a, new_b = L.permlane32_swap(a, b, False, False, on(1))
    assert np.array_equal(new_a[0], np.r_[a[0, :32], b[0, :32]])
    assert np.array_equal(new_b[0], np.r_[a[0, 32:], b[0, 32:]])
    new_a, new_b = L.permlane16_swap(a, b, False, False, on(1))
    n = np.arange(64)
    odd = (n // 16) % 2 == 1
    assert np.array_equal(new_a[0], np.where(odd, b[0, n - 16 * odd], a[0]))
    assert np.array_equal(new_b[0], np.where(~odd, a[0, (n + 16) % 64], b[0]))
    v0, v1 = L.permlane32_swap(a, a, False, False, on(1))           # Triton's permuteAndReduce(val, val)
    assert np.array_equal(np.sort(np.stack([v0, v1]), axis=0)[:, 0], np.stack([n % 32, n % 32 + 32]))
    active = on(1)
    active[0, 40] = False
    with pytest.raises(NotModelled):
        L.permlane32_swap(a, b, False, False, active)


# --- conversions (convert.py) ---

def f32(*values):
    return np.array(values, np.float32)


def test_perm_b32_selectors():
    a, b = np.uint32(0x11223344), np.uint32(0x55668788)      # bytes 0-3 come from b (src1), 4-7 from a (src0)
    assert C.perm_b32(a, b, 0x07060504) == 0x11223344
    assert C.perm_b32(a, b, 0x03020100) == 0x55668788
    assert C.perm_b32(a, b, 0x05040100) == 0x33448788          # LLVM's pack of the two low halves
    assert C.perm_b32(a, b, 0x0C0C0C0C) == 0
    assert C.perm_b32(a, b, 0x0D0E10FF) == 0xFFFFFFFF          # 13 and above, the whole byte: 0xff
    assert C.perm_b32(a, b, 0x0B0A0908) == 0x000000FF          # signs of bytes 7, 5, 3, 1 (only 0x87 negative)
    assert C.perm_b32(0x80000000, 0, 0x0B0B0B0B) == 0xFFFFFFFF
    sel = np.array([0x00010203, 0x0C0C0100], np.uint32)
    assert list(C.perm_b32(np.array([1, 2], np.uint32), np.array([0x0A0B0C0D, 0xFFFF], np.uint32), sel)) \
        == [0x0D0C0B0A, 0xFFFF]


@pytest.mark.parametrize("fmt, code, value", [
    ("e4m3fnuz", 0x40, 1.0), ("e4m3fnuz", 0x7F, 240.0), ("e4m3fnuz", 0xFF, -240.0), ("e4m3fnuz", 0x01, 2.0**-10),
    ("e4m3fnuz", 0x08, 2.0**-7), ("e5m2fnuz", 0x40, 1.0), ("e5m2fnuz", 0x7F, 57344.0), ("e5m2fnuz", 0x01, 2.0**-17),
    ("e4m3fn", 0x38, 1.0), ("e4m3fn", 0x7E, 448.0), ("e4m3fn", 0x01, 2.0**-9), ("e4m3fn", 0xC4, -3.0),
    ("e5m2", 0x3C, 1.0), ("e5m2", 0x7B, 57344.0), ("e5m2", 0x01, 2.0**-16), ("e5m2", 0x7C, np.inf),
    ("e5m2", 0xFC, -np.inf)])
def test_fp8_decode_values(fmt, code, value):
    assert C.fp8_decode(np.uint8(code), fmt) == np.float32(value)


def test_fp8_decode_specials():
    for fmt, nans in [("e4m3fnuz", [0x80]), ("e5m2fnuz", [0x80]), ("e4m3fn", [0x7F, 0xFF]),
                      ("e5m2", [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF])]:
        values = C.fp8_decode(np.arange(256), fmt)
        assert sorted(np.nonzero(np.isnan(values))[0]) == nans
    assert np.signbit(C.fp8_decode(0x80, "e4m3fn")) and C.fp8_decode(0x80, "e4m3fn") == 0


@pytest.mark.parametrize("fmt", sorted(C.FORMATS))
@pytest.mark.parametrize("saturate", [False, True])
def test_fp8_round_trip_all_codes(fmt, saturate):
    codes = np.arange(256)
    values = C.fp8_decode(codes, fmt)
    keep = ~np.isnan(values) & ~(saturate & np.isinf(values))
    assert np.array_equal(C.fp8_encode(values[keep], fmt, saturate=saturate), codes[keep].astype(np.uint8))


def test_fp8_encode_rne_ties():
    assert list(C.fp8_encode(f32(1.0625, 1.1875, 1.0625001, -1.1875), "e4m3fn")) == [0x38, 0x3A, 0x39, 0xBA]
    tiny = 2.0**-10                                   # the smallest e4m3fnuz subnormal
    assert list(C.fp8_encode(f32(tiny / 2, 3 * tiny / 2, 5 * tiny / 2, tiny / 2 * 1.001), "e4m3fnuz")) \
        == [0x00, 0x02, 0x02, 0x01]
    assert list(C.fp8_encode(f32(1.125, 1.375), "e5m2")) == [0x3C, 0x3E]   # ties between 1, 1.25 and 1.25, 1.5


def test_fp8_overflow_saturation_vs_nan():
    below, tie = f32(247.99998), f32(248.0)          # e4m3fnuz: 240 (0x7F, odd) and the step past it
    assert C.fp8_encode(below, "e4m3fnuz")[0] == 0x7F and C.fp8_encode(tie, "e4m3fnuz")[0] == 0x80
    assert C.fp8_encode(tie, "e4m3fnuz", saturate=True)[0] == 0x7F
    assert C.fp8_encode(f32(-300), "e4m3fnuz", saturate=True)[0] == 0xFF
    assert C.fp8_encode(f32(464), "e4m3fn")[0] == 0x7E           # tie to 448 (0x7E, even): no overflow
    assert C.fp8_encode(np.nextafter(f32(464), f32(1000)), "e4m3fn")[0] == 0x7F
    assert C.fp8_encode(np.nextafter(f32(464), f32(1000)), "e4m3fn", saturate=True)[0] == 0x7E
    assert list(C.fp8_encode(f32(61440, -1e9), "e5m2")) == [0x7C, 0xFC]
    assert list(C.fp8_encode(f32(61440, -1e9), "e5m2", saturate=True)) == [0x7B, 0xFB]
    specials = f32(np.inf, -np.inf, np.nan)
    assert list(C.fp8_encode(specials, "e4m3fnuz", saturate=True)) == [0x80, 0x80, 0x80]
    assert list(C.fp8_encode(specials, "e4m3fn", saturate=True)) == [0x7E, 0xFE, 0x7F]
    assert list(C.fp8_encode(specials, "e4m3fn")) == [0x7F, 0xFF, 0x7F]
    assert list(C.fp8_encode(specials, "e5m2")) == [0x7C, 0xFC, 0x7E]


def test_fp8_signed_zero():
    assert list(C.fp8_encode(f32(-0.0, -1e-30), "e4m3fnuz")) == [0x00, 0x00]
    assert list(C.fp8_encode(f32(-0.0, -1e-30), "e4m3fn")) == [0x80, 0x80]
    with pytest.raises(TypeError):
        C.fp8_encode(np.array([0.1]), "e4m3fn")           # a float64 that is not a float32: double rounding


def test_cvt_pk_fp8_word_placement_and_formats():
    assert C.cvt_pk_fp8_f32(f32(1.0), f32(-2.0), 0xDEADBEEF, False, "gfx942") == 0xDEADC840
    assert C.cvt_pk_fp8_f32(f32(1.0), f32(-2.0), 0xDEADBEEF, True, "gfx942") == 0xC840BEEF
    assert C.cvt_pk_fp8_f32(f32(1.0), f32(448.0), 0, False, "gfx950") == 0x7E38
    assert C.cvt_pk_bf8_f32(f32(1.0), f32(1.0), 0, False, "gfx942") == 0x4040
    assert C.cvt_pk_bf8_f32(f32(1.0), f32(1.0), 0, False, "gfx1201") == 0x3C3C
    bits = f32(1.0).view(np.uint32)                        # bit patterns are accepted too
    assert C.cvt_pk_fp8_f32(bits, bits, 0, False, "gfx942") == 0x4040
    with pytest.raises(NotModelled):
        C.cvt_pk_fp8_f32(f32(1.0), f32(1.0), 0, False, "gfx1100")


def test_cvt_pk_fp8_mode_fp16_ovfl():
    assert C.cvt_pk_fp8_f32(f32(300), f32(-np.inf), 0, False, "gfx942", clamp=True) == 0x807F
    assert C.cvt_pk_fp8_f32(f32(300), f32(-np.inf), 0, False, "gfx942", clamp=False) == 0x8080
    assert C.cvt_pk_fp8_f32(f32(500), f32(np.inf), 0, False, "gfx950", clamp=False) == 0x7F7F
    assert C.cvt_pk_fp8_f32(f32(500), f32(1), 0, False, "gfx950", clamp=True) == 0x387E
    with pytest.raises(NotModelled):
        C.cvt_pk_fp8_f32(f32(1), f32(np.inf), 0, False, "gfx950", clamp=True)


def test_cvt_f32_fp8_selects():
    src = np.uint32(0x7F40C800)                            # bytes 0x00, 0xC8, 0x40, 0x7F
    assert [float(C.cvt_f32_fp8(src, k, "gfx942")) for k in range(4)] == [0.0, -2.0, 1.0, 240.0]
    assert C.cvt_pk_f32_fp8(np.array([src, src]), True, "gfx942").tolist() == [[1.0, 240.0]] * 2
    assert C.cvt_pk_f32_bf8(np.uint32(0x3C00), False, "gfx950").tolist() == [0.0, 1.0]
    assert C.cvt_f32_bf8(np.uint32(0x7C), 0, "gfx950") == np.inf
    assert np.isnan(C.cvt_f32_fp8(np.uint32(0x80), 0, "gfx942"))


def test_cvt_pkrtz():
    out = C.cvt_pkrtz(f32(1.0, 65520.0, 1 + 3 * 2.0**-11, np.inf, -1 / 3),
                      f32(-65520.0, np.nan, 2.0**-30, -0.0, 1e-5))
    lo, hi = out & 0xFFFF, out >> 16
    assert list(lo) == [0x3C00, 0x7BFF, 0x3C01, 0x7C00, 0xB555]          # RNE would give inf and 0x3C02
    assert list(hi[[0, 2, 3, 4]]) == [0xFBFF, 0x0000, 0x8000, 0x00A7]
    assert hi[1] & 0x7E00 == 0x7E00


def test_stochastic_and_norm_conversions_not_modelled():
    for call in (lambda: C.cvt_sr_fp8_f32(f32(1), 0, 0, 0, "gfx942"),
                 lambda: C.cvt_sr_bf8_f32(f32(1), 0, 0, 0, "gfx942"),
                 lambda: C.cvt_pknorm_i16(f32(1), f32(1)), lambda: C.cvt_pknorm_u16(f32(1), f32(1))):
        with pytest.raises(NotModelled):
            call()


def test_scalef32_with_unit_scale():
    one = f32(1.0)
    assert C.cvt_scalef32_pk_fp8_f32(0, f32(1.0), f32(-2.0), one, False, "gfx950") == 0xC038
    assert C.cvt_scalef32_pk_fp8_f32(0, f32(np.inf), f32(1e9), one, True, "gfx950", clamp=True) == 0x7E7E0000
    assert C.cvt_scalef32_pk_bf8_f32(0, f32(-np.inf), f32(1), f32(1.5), False, "gfx950", clamp=True) == 0x3CFB
    halves = np.array([1.0, 448.0], np.float16).view(np.uint16).astype(np.uint32)
    assert C.cvt_scalef32_pk_fp8_f16(0xAAAA0000, halves[0] | (halves[1] << 16), one, False, "gfx950") == 0xAAAA7E38
    assert C.cvt_scalef32_pk_f32_fp8(np.uint32(0x38C0 << 16), one, True, "gfx950").tolist() == [-2.0, 1.0]
    assert C.cvt_scalef32_pk_f16_fp8(np.uint32(0x38), one, False, "gfx950") == 0x3C00
    assert C.cvt_scalef32_pk_bf16_bf8(np.uint32(0xBC), one, False, "gfx950") == 0xBF80
    for call in (lambda: C.cvt_scalef32_pk_fp8_f32(0, one, one, f32(2.0), False, "gfx950"),
                 lambda: C.cvt_scalef32_pk_fp8_f32(0, one, one, one, False, "gfx942"),
                 lambda: C.cvt_scalef32_pk_fp8_f32(0, f32(1e6), one, one, False, "gfx950", clamp=False)):
        with pytest.raises(NotModelled):
            call()


def test_ds_swizzle_modes():
    """Bit-mask mode swaps lanes 16 apart within each 32-lane half for 0x401F (Triton 3.4's reductions use it);
    quad-permute mode reverses each quad for selectors 3, 2, 1, 0; a disabled source reads 0."""
    from gfxhound.executors.llvm_ir.lanes import ds_swizzle
    src = np.arange(64, dtype=np.uint32)[None, :] + 100
    active = np.ones((1, 64), bool)
    swapped = ds_swizzle(src, 0x401F, active)[0]
    assert (swapped == (np.arange(64) ^ 16) + 100).all()
    reversed_quads = ds_swizzle(src, 0x8000 | 0b00011011, active)[0]
    assert (reversed_quads[:8] == np.array([3, 2, 1, 0, 7, 6, 5, 4]) + 100).all()
    active[0, 16] = False
    assert ds_swizzle(src, 0x401F, active)[0, 0] == 0
