"""The matrix intrinsics of the CPU executor compute A@B+C with the documented lane layouts.

Each test builds logical A (MxK), B (KxN), C matrices, places them into lanes with its own straightforward
register -> element formulas (the "Register to matrix element mapping" that ROCm/amd_matrix_instruction_calculator
prints, the rocm-blogs CDNA3/CDNA4 Matrix Core examples), runs the emulated intrinsic, reads D back with the
same formulas and compares with A@B+C in float64. The placement code here is written in the opposite direction
from the module's (lane -> matrix entry instead of matrix entry -> lane), so a shared mistake would have to be
made twice.
"""
import math

import numpy as np
import pytest

from gfxhound.executors.llvm_ir.errors import NotModelled
from gfxhound.executors.llvm_ir.matrix import INSTRUCTIONS, fp8_decode, mfma, mfma_shape, wmma

RNG = np.random.default_rng(1234)
W = 2  # waves at once


def ref_minifloat(code, ebits, mbits, bias):
    """The value of a sign/exponent/mantissa code, by the textbook formula (no NaN/inf handling)."""
    sign = -1.0 if code >> (ebits + mbits) else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mbits)
    return sign * (1 + m / 2 ** mbits) * 2.0 ** (e - bias)


# ---- fp8 decoding: hand-checked codes from the format definitions (bias, NaN and inf rules)

@pytest.mark.parametrize("fmt,code,value", [
    ("e4m3fnuz", 0x40, 1.0), ("e4m3fnuz", 0x7F, 240.0), ("e4m3fnuz", 0x01, 2.0 ** -10), ("e4m3fnuz", 0xC0, -1.0),
    ("e4m3fnuz", 0x08, 2.0 ** -7), ("e4m3fnuz", 0x00, 0.0),
    ("e5m2fnuz", 0x40, 1.0), ("e5m2fnuz", 0x7F, 57344.0), ("e5m2fnuz", 0x01, 2.0 ** -17), ("e5m2fnuz", 0xFF, -57344.0),
    ("e4m3fn", 0x38, 1.0), ("e4m3fn", 0x40, 2.0), ("e4m3fn", 0x7E, 448.0), ("e4m3fn", 0x01, 2.0 ** -9),
    ("e4m3fn", 0xFE, -448.0), ("e5m2", 0x3C, 1.0), ("e5m2", 0x7B, 57344.0), ("e5m2", 0x01, 2.0 ** -16),
    ("e5m2", 0x7C, math.inf), ("e5m2", 0xFC, -math.inf),
])
def test_fp8_known_codes(fmt, code, value):
    got = fp8_decode(np.array([code], np.uint8), fmt)
    assert got.dtype == np.float32 and got[0] == value


def test_fp8_nan_codes_and_negative_zero():
    nans = {fmt: set(np.flatnonzero(np.isnan(fp8_decode(np.arange(256), fmt))))
            for fmt in ("e4m3fnuz", "e5m2fnuz", "e4m3fn", "e5m2")}
    assert nans == {"e4m3fnuz": {0x80}, "e5m2fnuz": {0x80}, "e4m3fn": {0x7F, 0xFF},
                    "e5m2": {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}}
    assert np.signbit(fp8_decode(np.array([0x80]), "e4m3fn"))[0]  # OCP formats have -0


@pytest.mark.parametrize("fmt,ebits,mbits,bias", [("e4m3fnuz", 4, 3, 8), ("e5m2fnuz", 5, 2, 16),
                                                  ("e4m3fn", 4, 3, 7), ("e5m2", 5, 2, 15)])
def test_fp8_all_finite_codes_follow_the_formula(fmt, ebits, mbits, bias):
    got = fp8_decode(np.arange(256), fmt)
    for code in range(256):
        if np.isfinite(got[code]):
            assert got[code] == ref_minifloat(code, ebits, mbits, bias), hex(code)


# ---- CDNA (gfx9 family) placement, register -> element

def cdna_input_entry(rows, k, blocks, lane, e):
    """[calculator] A i: lane % M; A block: (lane // M) % B; A k: ka * (lane // (M*B)) + item."""
    ka = k * rows * blocks // 64
    return (lane // rows) % blocks, lane % rows, ka * (lane // (rows * blocks)) + e


def cdna_output_entry(m, n, blocks, bits, reg, lane):
    """[calculator] C/D: rows in groups of 4 registers (1 register pair for f64), each register holding 64/N
    such row groups side by side in lanes; 4x4 blocks instead sit side by side in the lanes."""
    h = 1 if bits == 64 else 4
    if m * n // h >= 64:
        per_block = m * n // 64
        b, rr = divmod(reg, per_block)
        i = (rr // h) * (h * 64 // n) + ((lane // n) % (64 // n)) * h + rr % h
    else:
        side_by_side = 64 // (m * n // h)
        b = (lane // n) % side_by_side
        i = (lane // (n * side_by_side)) * h + reg % h
    return b, i, lane % n


def cdna_lanes(mat, blocks, k):
    """mat: [W, blocks, rows, K] -> per-lane [W, 64, ka]."""
    rows = mat.shape[2]
    ka = k * rows * blocks // 64
    out = np.zeros((W, 64, ka), mat.dtype)
    for lane in range(64):
        for e in range(ka):
            b, r, kk = cdna_input_entry(rows, k, blocks, lane, e)
            out[:, lane, e] = mat[:, b, r, kk]
    return out


def cdna_acc_lanes(mat, bits):
    m, n, blocks = mat.shape[2], mat.shape[3], mat.shape[1]
    kc = m * n * blocks // 64
    lanes = np.zeros((W, 64, kc), mat.dtype)
    for reg in range(kc):
        for lane in range(64):
            b, i, j = cdna_output_entry(m, n, blocks, bits, reg, lane)
            lanes[:, lane, reg] = mat[:, b, i, j]
    return lanes


def cdna_gather_d(d, m, n, blocks, bits):
    mat = np.zeros((W, blocks, m, n), d.dtype)
    for reg in range(d.shape[2]):
        for lane in range(64):
            b, i, j = cdna_output_entry(m, n, blocks, bits, reg, lane)
            mat[:, b, i, j] = d[:, lane, reg]
    return mat


FP8 = {"cdna3": {"fp8": "e4m3fnuz", "bf8": "e5m2fnuz"}, "cdna4": {"fp8": "e4m3fn", "bf8": "e5m2"},
       "rdna4": {"fp8": "e4m3fn", "bf8": "e5m2"}}


def random_operand(kind, shape, fam):
    """(what the lanes hold, its exact float64/int64 value)."""
    if kind in ("f32", "xf32"):
        x = RNG.standard_normal(shape).astype(np.float32)
    elif kind == "f16":
        x = RNG.standard_normal(shape).astype(np.float16)
    elif kind == "bf16":
        x = (RNG.standard_normal(shape).astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
    elif kind == "f64":
        x = RNG.standard_normal(shape)
    elif kind in ("i8", "iu8"):
        x = RNG.integers(-128, 128, shape).astype(np.int8)
    else:  # fp8 / bf8 raw codes, NaN codes avoided
        x = RNG.integers(0, 256, shape).astype(np.uint8)
        x[np.isnan(fp8_decode(x, FP8[fam][kind]))] = 0x11
        return x, fp8_decode(x, FP8[fam][kind]).astype(np.float64)
    return x, x.astype(np.int64 if x.dtype.kind == "i" else np.float64)


ACC = {"f32": np.float32, "i32": np.int32, "f64": np.float64}


def check_cdna(name, arch, cbsz=0, abid=0, blgp=0, b_lane_source=None, negate=(1, 1, 1)):
    ins = INSTRUCTIONS[name]
    m, n, k, blocks = mfma_shape(name)
    fam = "cdna3" if arch == "gfx942" else "cdna4"
    amat, aval = random_operand(ins.a, (W, blocks, m, k), fam)
    bmat_t, bval_t = random_operand(ins.b, (W, blocks, n, k), fam)  # B stored transposed: [.., N, K]
    bits = 64 if ins.acc == "f64" else 32
    cmat = (RNG.integers(-1000, 1000, (W, blocks, m, n)) if ins.acc == "i32"
            else RNG.standard_normal((W, blocks, m, n))).astype(ACC[ins.acc])
    a = cdna_lanes(amat, blocks, k)
    b = cdna_lanes(bmat_t, blocks, k)
    c = cdna_acc_lanes(cmat, bits)
    d = mfma(name, a, b, c, cbsz, abid, blgp, arch)
    assert d.shape == c.shape and d.dtype == c.dtype
    got = cdna_gather_d(d, m, n, blocks, bits)
    src = [(blk // 2 ** cbsz) * 2 ** cbsz + abid for blk in range(blocks)]  # CBSZ/ABID broadcast of A
    if b_lane_source is not None:  # BLGP: B as the matrix core sees it, from the permuted lanes
        seen = b[:, b_lane_source]
        bval_t = np.zeros_like(bval_t)
        for lane in range(64):
            for e in range(b.shape[2]):
                blk, r, kk = cdna_input_entry(n, k, blocks, lane, e)
                bval_t[:, blk, r, kk] = seen[:, lane, e]
    want = (negate[0] * negate[1] * np.einsum("wbik,wbjk->wbij", aval[:, src], bval_t)
            + negate[2] * cmat.astype(np.float64 if ins.acc != "i32" else np.int64))
    if ins.acc == "i32":
        assert np.array_equal(got, want.astype(np.int32))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


CDNA3 = [n for n, i in INSTRUCTIONS.items() if "cdna3" in i.archs]
CDNA4 = [n for n, i in INSTRUCTIONS.items() if "cdna4" in i.archs and i.layout == "gfx9"]


@pytest.mark.parametrize("name", CDNA3)
def test_gfx942_instruction(name):
    check_cdna(name, "gfx942")


@pytest.mark.parametrize("name", CDNA4)
def test_gfx950_instruction(name):
    check_cdna(name, "gfx950")


def test_calculator_spot_checks():
    """Locations printed by the calculator for V_MFMA_F32_32X32X8_F16 (cdna3): A[1][4] in v0.[15:0] lane 33;
    D[6][2] in v2 lane 34, D[9][2] in v5 lane 2; the blog's 32x32x2f32 store loop."""
    assert cdna_input_entry(32, 8, 1, 33, 0) == (0, 1, 4)
    assert cdna_output_entry(32, 32, 1, 32, 2, 34) == (0, 6, 2)
    assert cdna_output_entry(32, 32, 1, 32, 5, 2) == (0, 9, 2)
    for lane in (0, 33, 63):
        for i in range(4):
            for r in range(4):  # C[lane%32 + (lane//32)*4*32 + 32*r + i*32*8] = c_reg[i*4 + r]
                flat = lane % 32 + (lane // 32) * 128 + 32 * r + i * 256
                assert cdna_output_entry(32, 32, 1, 32, i * 4 + r, lane) == (0, flat // 32, flat % 32)


@pytest.mark.parametrize("name,cbsz,abid", [("mfma.f32.4x4x4f16", 2, 1), ("mfma.f32.4x4x4f16", 4, 13),
                                            ("mfma.f32.32x32x1f32", 1, 1), ("mfma.i32.16x16x4i8", 1, 0)])
def test_cbsz_abid_broadcast(name, cbsz, abid):
    check_cdna(name, "gfx942", cbsz=cbsz, abid=abid)


def blgp_rule(blgp):
    """The calculator README's BLGP list: which lane each lane's B value comes from."""
    lanes = np.arange(64)
    return {0: lanes, 1: lanes % 32, 2: np.where(lanes < 32, lanes + 32, lanes),
            3: (lanes + 16) % 64}.get(blgp, (blgp - 4) * 16 + lanes % 16)


@pytest.mark.parametrize("blgp", range(1, 8))
def test_blgp_lane_groups(blgp):
    check_cdna("mfma.f32.16x16x1f32", "gfx942", blgp=blgp, b_lane_source=blgp_rule(blgp))
    check_cdna("mfma.f32.32x32x2f32", "gfx942", blgp=blgp, b_lane_source=blgp_rule(blgp))


@pytest.mark.parametrize("blgp", [1, 2, 4, 7])
def test_f64_blgp_negates_on_cdna3(blgp):
    check_cdna("mfma.f64.16x16x4f64", "gfx942", blgp=blgp,
               negate=tuple(-1 if blgp >> bit & 1 else 1 for bit in range(3)))


def test_not_modelled():
    a = np.zeros((1, 64, 4), np.float16)
    c = np.zeros((1, 64, 16), np.float32)
    with pytest.raises(NotModelled, match="matrix intrinsic mfma.f32.32x32x99f16"):
        mfma("mfma.f32.32x32x99f16", a, a, c, 0, 0, 0, "gfx942")
    with pytest.raises(NotModelled):  # BLGP has no documented meaning on this instruction
        mfma("mfma.f32.32x32x8f16", a, a, c, 0, 0, 1, "gfx942")
    with pytest.raises(NotModelled):  # no broadcast on a single-block instruction
        mfma("mfma.f32.32x32x8f16", a, a, c, 1, 0, 0, "gfx942")
    with pytest.raises(NotModelled):  # xf32 is gone on gfx950
        mfma("mfma.f32.32x32x4.xf32", np.zeros((1, 64, 2), np.float32), np.zeros((1, 64, 2), np.float32),
             c, 0, 0, 0, "gfx950")


# ---- gfx950 block-scaled MFMA: the rocm-blogs CDNA4 examples' placement

SCALED_FORMATS = {0: (4, 3, 7, 8), 1: (5, 2, 15, 8), 2: (2, 3, 1, 6), 3: (3, 2, 3, 6), 4: (2, 1, 1, 4)}


def scaled_lanes(codes, bits):
    """codes: [W, rows, K] -> raw bytes [W, 64, 32]. fp8/fp6: lane L element i*16+j holds
    A[L % M][(L // M)*16 + i*(K/2) + j] (blog's 32x32x64 kernel, K/2 = 16 * lane groups); fp4: 32 consecutive,
    A[L % M][(L // M)*32 + e]. Elements are packed LSB first, `bits` bits each."""
    rows, k = codes.shape[1], codes.shape[2]
    out = np.zeros((W, 64, 32), np.uint8)
    for w in range(W):
        for lane in range(64):
            word = 0
            for e in range(32):
                kk = ((lane // rows) * 16 + (e // 16) * (k // 2) + e % 16) if bits != 4 else (lane // rows) * 32 + e
                word |= int(codes[w, lane % rows, kk]) << (bits * e)
            out[w, lane] = np.frombuffer(word.to_bytes(32, "little"), np.uint8)
    return out


@pytest.mark.parametrize("name", ["mfma.scale.f32.16x16x128.f8f6f4", "mfma.scale.f32.32x32x64.f8f6f4"])
@pytest.mark.parametrize("fa,fb,scaled", [(0, 0, True), (1, 4, True), (4, 2, True), (3, 0, False), (2, 4, True)])
def test_gfx950_scaled_mfma(name, fa, fb, scaled):
    m, n, k, _ = mfma_shape(name)
    mats, lanes, scales = [], [], []
    for fmt, rows in ((fa, m), (fb, n)):
        ebits, mbits, bias, bits = SCALED_FORMATS[fmt]
        codes = RNG.integers(0, 1 << bits, (W, rows, k))
        if bits == 8:  # avoid the OCP NaN/inf codes
            codes[(codes & 0x7F) >= (0x7C if fmt == 1 else 0x7F)] = 0x22
        value = np.vectorize(lambda code: ref_minifloat(int(code), ebits, mbits, bias))(codes)
        s = RNG.integers(120, 135, (W, rows, k // 32))  # E8M0 exponents; lane kb*rows + r holds (r, kb)
        s_lanes = np.zeros((W, 64), np.int64)
        for lane in range(64):
            s_lanes[:, lane] = s[:, lane % rows, lane // rows] << 8  # in byte 1: op_sel = 1
        if scaled:
            value = value * np.repeat(2.0 ** (s - 127), 32, axis=2)
        mats.append(value)
        lanes.append(scaled_lanes(codes, bits))
        scales.append(s_lanes)
    cmat = RNG.standard_normal((W, 1, m, n)).astype(np.float32)
    c = cdna_acc_lanes(cmat, 32)
    kw = dict(scale_a=scales[0], scale_b=scales[1], opsel_a=1, opsel_b=1) if scaled else {}
    d = mfma(name, lanes[0].view(np.int32), lanes[1], c, fa, 0, fb, "gfx950", **kw)
    got = cdna_gather_d(d, m, n, 1, 32)[:, 0]
    want = np.einsum("wik,wjk->wij", mats[0], mats[1]) + cmat[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


# ---- WMMA, wave32: RDNA3 (gfx11) and RDNA4 (gfx12)

def wmma_input_entry(arch, bits, k, lane, e):
    """[calculator] gfx11: lane r (and its copy r+16) element k. gfx12 16-bit: lane 16*((k//4)%2) + r,
    element 4*(k//8) + k%4; 8-bit and 4-bit K=16: lane 16*(k//8) + r, element k%8; 4-bit K=32: 16*(k//16)+r."""
    if arch == "gfx1100":
        return lane % 16, e
    if bits == 16:
        return lane % 16, 8 * (e // 4) + 4 * (lane // 16) + e % 4
    return lane % 16, (16 if bits == 4 and k == 32 else 8) * (lane // 16) + e


def wmma_output_entry(arch, bits, opsel, lane, e):
    """(i, j) of D's element e in `lane`, or None for an unused 16-bit half."""
    if arch == "gfx1100":
        if bits == 16:
            return (2 * (e // 2) + lane // 16, lane % 16) if e % 2 == opsel else None
        return 2 * e + lane // 16, lane % 16
    return 8 * (lane // 16) + e, lane % 16


def pack_nibbles(codes):
    """[W, 32, n] 4-bit codes -> raw bytes, element 0 in the low nibble."""
    return (codes[..., 0::2] & 0xF | (codes[..., 1::2] & 0xF) << 4).astype(np.uint8)


@pytest.mark.parametrize("arch,name,opsel", [
    ("gfx1100", "wmma.f32.16x16x16.f16", 0), ("gfx1100", "wmma.f32.16x16x16.bf16", 0),
    ("gfx1100", "wmma.f16.16x16x16.f16", 0), ("gfx1100", "wmma.f16.16x16x16.f16", 1),
    ("gfx1100", "wmma.bf16.16x16x16.bf16", 1), ("gfx1100", "wmma.i32.16x16x16.iu8", 0),
    ("gfx1100", "wmma.i32.16x16x16.iu4", 0),
    ("gfx1201", "wmma.f32.16x16x16.f16", 0), ("gfx1201", "wmma.f16.16x16x16.f16", 0),
    ("gfx1201", "wmma.f32.16x16x16.fp8.bf8", 0), ("gfx1201", "wmma.i32.16x16x16.iu8", 0),
    ("gfx1201", "wmma.i32.16x16x32.iu4", 0), ("gfx1201", "wmma.i32.16x16x16.iu4", 0),
])
def test_wmma(arch, name, opsel):
    ins = INSTRUCTIONS[name]
    m, n, k, _ = mfma_shape(name)
    bits = {"f16": 16, "bf16": 16, "iu8": 8, "iu4": 4, "fp8": 8, "bf8": 8}[ins.a]
    ka = 16 if arch == "gfx1100" else 256 // 32 * (2 if bits == 4 and k == 32 else 1)
    ops = []
    for kind, signed in ((ins.a, True), (ins.b, False)):
        if kind == "iu4":
            codes = RNG.integers(0, 16, (W, 16, k))
            ops.append((codes, np.where(codes >= 8, codes - 16, codes) if signed else codes))
        elif kind == "iu8":
            x = RNG.integers(0, 256, (W, 16, k)).astype(np.uint8)
            ops.append((x, x.view(np.int8).astype(np.int64) if signed else x.astype(np.int64)))
        else:
            ops.append(random_operand(kind, (W, 16, k), "rdna4"))
    lanes = []
    for (raw, _), kind in zip(ops, (ins.a, ins.b)):
        per = np.zeros((W, 32, ka), raw.dtype)
        for lane in range(32):
            for e in range(ka):
                r, kk = wmma_input_entry(arch, bits, k, lane, e)
                per[:, lane, e] = raw[:, r, kk]
        lanes.append(pack_nibbles(per) if kind == "iu4" else per)
    acc = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "i32": np.int32}[ins.acc]
    kc = 16 if arch == "gfx1100" and ins.acc in ("f16", "bf16") else 8
    c = (RNG.integers(-99, 99, (W, 32, kc)) if acc is np.int32 else RNG.standard_normal((W, 32, kc))).astype(acc)
    if ins.acc == "bf16":
        c = (c.view(np.uint32) & 0xFFFF0000).view(np.float32)
    d = wmma(name, lanes[0], lanes[1], c, arch, opsel=opsel, a_signed=True, b_signed=False)
    prod = np.einsum("wik,wjk->wij", ops[0][1], ops[1][1])
    for lane in range(32):
        for e in range(kc):
            where = wmma_output_entry(arch, 16 if ins.acc in ("f16", "bf16") else 32, opsel, lane, e)
            if where is None:
                assert np.array_equal(d[:, lane, e], c[:, lane, e])
                continue
            want = prod[:, where[0], where[1]] + c[:, lane, e].astype(prod.dtype)
            if acc is np.int32:
                assert np.array_equal(d[:, lane, e], want.astype(np.int32))
            else:
                rtol = {"f16": 1e-3, "bf16": 8e-3}.get(ins.acc, 1e-6)
                np.testing.assert_allclose(d[:, lane, e], want, rtol=rtol, atol=rtol)


def test_wmma_gfx11_unreplicated_operand_is_not_modelled():
    a = RNG.standard_normal((1, 32, 16)).astype(np.float16)
    with pytest.raises(NotModelled):
        wmma("wmma.f32.16x16x16.f16", a, a, np.zeros((1, 32, 8), np.float32), "gfx1100")


def test_wmma_iu8_clamp_saturates():
    a = np.full((1, 32, 16), 127, np.int8)
    c = np.full((1, 32, 8), 2 ** 31 - 10, np.int32)
    d = wmma("wmma.i32.16x16x16.iu8", a, a, c, "gfx1100", clamp=True)
    assert (d == 2 ** 31 - 1).all()
    wrapped = wmma("wmma.i32.16x16x16.iu8", a, a, c, "gfx1100")
    assert (wrapped == np.int32(2 ** 31 - 10 + 16 * 127 * 127 - 2 ** 32)).all()


def test_operands_as_raw_words_and_blgp_on_gfx950():
    """The executor may hand over an fp8 operand as its i64 word and an i8 operand as unsigned bytes."""
    codes = RNG.integers(0, 0x70, (1, 64, 8)).astype(np.uint8)
    c = RNG.standard_normal((1, 64, 4)).astype(np.float32)
    d = mfma("mfma.f32.16x16x32.fp8.fp8", codes, codes, c, 0, 0, 0, "gfx942")
    assert np.array_equal(d, mfma("mfma.f32.16x16x32.fp8.fp8", codes.view(np.int64), codes, c, 0, 0, 0, "gfx942"))
    ints = RNG.integers(-128, 128, (1, 64, 4)).astype(np.int8)
    ci = np.zeros((1, 64, 4), np.int32)
    assert np.array_equal(mfma("mfma.i32.4x4x4i8", ints, ints, ci, 0, 0, 0, "gfx942"),
                          mfma("mfma.i32.4x4x4i8", ints.view(np.uint8), ints.view(np.int32), ci, 0, 0, 0, "gfx942"))
    with pytest.raises(NotModelled):  # the BLGP lane patterns are documented for CDNA3 only
        mfma("mfma.f32.16x16x1f32", c[..., :1], c[..., :1], np.zeros((1, 64, 16), np.float32), 0, 0, 3, "gfx950")
