"""The AMDGPU matrix intrinsics (`llvm.amdgcn.mfma.*`, `mfma.scale.*`, `wmma.*`), lane by lane.

Why: a wave's matrix instruction is the one place where the hardware, not the program, decides which lane and
which vector element hold which entry of A, B, C and D. A Triton lowering bug that puts an operand in the wrong
lane (a wrong kWidth, a transposed tile, a missed broadcast) is invisible to any per-lane check and shows only in
D. So this module rebuilds the logical matrices from the lanes with the documented register layouts, multiplies
them, and writes D back the same way.

Numerics: every product is exact in float64 (f32*f32, fp8*fp8, bf16*bf16 all fit), the sum is taken in float64
and rounded once to the accumulator type. The hardware's own summation order and its internal precision are
not exact; the oracle's tolerance model covers that, so this is the "ideal" instruction. Integers wrap like
int32 (or saturate with WMMA's clamp).

Policy as data: `INSTRUCTIONS` maps each modelled intrinsic name to its shape, operand kinds and layout
functions, so adding an instruction is one table row. Anything not in it (or a modifier whose meaning is not
documented) raises `NotModelled`, so the kernel is `unresolved` rather than judged on a guess.

Sources (cited at each layout):
 [CALC] ROCm/amd_matrix_instruction_calculator, matrix_calculator.py v1.3.2: InstCalcGfx9.__get_input_reg_lanes /
        __get_output_reg_lanes (CDNA1-3), _get_cbsz_abid_transformed_block, _get_blgp_transformed_lane,
        InstCalcGfx11 / InstCalcGfx12 (RDNA3 / RDNA4 WMMA); README "BLGP" and "FP64 ... CDNA 3" sections.
 [BLOG] ROCm/rocm-blogs, "Matrix Core Programming on AMD CDNA3 and CDNA4 architecture" (2025): fp8 formats
        (FNUZ on CDNA3, OCP on CDNA4), mfma.scale 32x32x64 operand layouts for fp8 (two 16-element chunks)
        and fp4 (32 consecutive), E8M0 scales 2^(s-127).
 [TRITON] triton-lang/triton LinearLayoutConversions.cpp chooseScaledMfmaScaleLayout: the scale of row i and
        K-block kb is held by lane kb*M + i; fp6/fp8 use two 16-element chunks, fp4 32 consecutive elements.
        DotOpToLLVM/MFMA.cpp: scales packed four to a VGPR, op_sel picks the byte; constant-0 scales mean
        "unscaled" (LLVM then selects V_MFMA_F32_*_F8F6F4; also iree-org/iree#20616).
 [LLVM] the intrinsic names and argument orders as built into Triton 3.9's libtriton.so / IntrinsicsAMDGPU.td.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import numpy as np

from .convert import fp8_decode  # one decoder of fp8 codes for the package (matrix.fp8_decode is it)
from .errors import NotModelled

# ---------------------------------------------------------------------------------------------------------------
# Small-float decoding (table-driven: 2**bits codes, exact in float32)


def _minifloat_table(ebits: int, mbits: int, bias: int, special: str) -> np.ndarray:
    """All codes of a sign/exponent/mantissa format, IEEE-style subnormals. `special` names the NaN/inf rule:
    'fnuz' (only 1000...0 is NaN, no -0, no inf), 'fn' (S.1..1.1..1 is NaN, no inf), 'ieee' (max exponent is
    inf/NaN), 'none' (every code finite: the MX fp6/fp4 formats)."""
    n = 1 + ebits + mbits
    table = np.empty(1 << n, np.float64)
    for code in range(1 << n):
        s, e, m = code >> (n - 1), (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
        mag = (m / (1 << mbits)) * 2.0 ** (1 - bias) if e == 0 else (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        table[code] = -mag if s else mag
        emax, mmax = (1 << ebits) - 1, (1 << mbits) - 1
        if special == "fnuz" and code == 1 << (n - 1):
            table[code] = np.nan
        elif special == "fn" and e == emax and m == mmax:
            table[code] = np.nan
        elif special == "ieee" and e == emax:
            table[code] = np.nan if m else (-np.inf if s else np.inf)
    return table.astype(np.float32)


# bias: OCP MX spec for E2M3/E3M2/E2M1.
_MINIFLOATS = {  # the MX formats of the scaled instructions; fp8 decodes through convert.py's tables
    "e2m3": _minifloat_table(2, 3, 1, "none"), "e3m2": _minifloat_table(3, 2, 3, "none"),
    "e2m1": _minifloat_table(2, 1, 1, "none"),
}


def _e8m0(codes: np.ndarray) -> np.ndarray:
    """E8M0 scale: 2**(s-127), 0xFF is NaN [BLOG]. Exact in float64 (2**-127 .. 2**127)."""
    s = np.asarray(codes).astype(np.int64)
    return np.where(s == 255, np.nan, np.ldexp(1.0, s - 127))


# ---------------------------------------------------------------------------------------------------------------
# Layouts. An input layout returns (lane, elem) index arrays of shape [blocks, rows, K]: logical entry
# (block b, row-or-column r, k) lives in element `elem` of lane `lane`. An output layout returns the same for
# [blocks, M, N]. Index arrays are cached; they are the whole of what a table row says about registers.


@lru_cache(maxsize=None)
def gfx9_input(rows: int, k: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """CDNA1-4 A/B: [CALC] InstCalcGfx9.__get_input_reg_lanes, with ka = K*rows*blocks/64 elements a lane:
    lane = b*rows + (k // ka)*rows*blocks + r, element k % ka."""
    ka = k * rows * blocks // 64
    b, r, kk = np.meshgrid(np.arange(blocks), np.arange(rows), np.arange(k), indexing="ij")
    return b * rows + (kk // ka) * rows * blocks + r, kk % ka


@lru_cache(maxsize=None)
def gfx9_output(m: int, n: int, blocks: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """CDNA1-4 C/D: [CALC] InstCalcGfx9.__get_output_reg_lanes. 32-bit results go in 4-row groups (1 row for
    f64) N lanes wide; register = b*(M*N/64) + (i // (h*64/N))*h + i % h,
    lane = (b % bpr)*N + ((i // h) % (64/N))*bpr*N + j, bpr = ceil(64 / (M*N/h)) blocks per register."""
    h = 1 if bits == 64 else 4
    per_reg = 64 // n
    bpr = -(-64 // (m * n // h))
    b, i, j = np.meshgrid(np.arange(blocks), np.arange(m), np.arange(n), indexing="ij")
    reg = b * (m * n // 64) + (i // (h * per_reg)) * h + i % h
    lane = (b % bpr) * n + ((i // h) % per_reg) * bpr * n + j
    return lane, reg


@lru_cache(maxsize=None)
def f8f6f4_input(rows: int, k: int, chunked: bool) -> tuple[np.ndarray, np.ndarray]:
    """gfx950 mfma.scale A/B, 32 elements a lane, G = 64/rows lane groups. fp8/fp6 ([BLOG] figure 9 and its
    code, [TRITON] comment): two 16-element chunks, k = c*16*G + g*16 + e%16 with c = e // 16. fp4 ([BLOG]
    figure 10, [TRITON]): 32 consecutive, k = g*32 + e. lane = g*rows + r."""
    groups = 64 // rows
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    if chunked:
        g, e = (kk % (16 * groups)) // 16, (kk // (16 * groups)) * 16 + kk % 16
    else:
        g, e = kk // 32, kk % 32
    return (g * rows + r)[None], e[None]


@lru_cache(maxsize=None)
def gfx11_input(rows: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """RDNA3 wave32 A/B: [CALC] InstCalcGfx11.__get_input_reg_lanes: entry (r, k) is element k of lane r, and
    lanes 16-31 must hold a copy of lanes 0-15 (checked by `wmma`). Primary copy returned."""
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    return r[None], kk[None]


@lru_cache(maxsize=None)
def gfx11_output(m: int, n: int, bits: int, opsel: int) -> tuple[np.ndarray, np.ndarray]:
    """RDNA3 wave32 C/D: [CALC] InstCalcGfx11.__get_output_reg_lanes: row i in register slot i//2, lane
    16*(i%2) + j; 16-bit results use only the low (opsel=0) or high (opsel=1) half of each VGPR, so their
    element in the <16 x half> vector is 2*(i//2) + opsel."""
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    elem = 2 * (i // 2) + opsel if bits == 16 else i // 2
    return (16 * (i % 2) + j)[None], elem[None]


@lru_cache(maxsize=None)
def gfx12_input(rows: int, k: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """RDNA4 wave32 dense A/B: [CALC] InstCalcGfx12.__get_input_lane / __get_input_reg. 16-bit: lane
    16*((k//4)%2) + r, VGPR 2*(k//8) + (k//2)%2, half k%2 (element 4*(k//8) + k%4). 8-bit: lane 16*(k//8) + r,
    element k%8. 4-bit: K=16 as 8-bit; K=32 lane 16*(k//16) + r, element k%16."""
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    if bits == 16:
        lane, e = 16 * ((kk // 4) % 2) + r, 4 * (kk // 8) + kk % 4
    elif bits == 8 or k == 16:
        lane, e = 16 * (kk // 8) + r, kk % 8
    else:
        lane, e = 16 * (kk // 16) + r, kk % 16
    return lane[None], e[None]


@lru_cache(maxsize=None)
def gfx12_output(m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """RDNA4 wave32 C/D: [CALC] InstCalcGfx12.__get_output_reg_lanes: row i in element i%8 (VGPR i%8 for
    32-bit, half i%2 of VGPR (i//2)%4 for 16-bit, the same vector index), lane 16*(i//8) + j."""
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return (16 * (i // 8) + j)[None], (i % 8)[None]


# [CALC] _get_blgp_transformed_lane and README "BLGP": the B value a lane feeds to the matrix core is taken from
# lane BLGP_SOURCE[blgp][lane]. 1: lanes 0-31 to all; 2: lanes 32-63 to all; 3: rotate down by 16;
# 4-7: lanes 16*(blgp-4) .. +15 to all.
_L = np.arange(64)
BLGP_SOURCE = (_L, _L % 32, 32 + _L % 32, (_L + 16) % 64, _L % 16, 16 + _L % 16, 32 + _L % 16, 48 + _L % 16)


def cbsz_source_block(block: np.ndarray, cbsz: int, abid: int) -> np.ndarray:
    """[CALC] _get_cbsz_abid_transformed_block: block `abid` of each group of 2**cbsz blocks is broadcast to the
    whole group: A block used by block b is (b // 2**cbsz) * 2**cbsz + abid."""
    return (block >> cbsz << cbsz) + abid


# ---------------------------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Instr:
    """One matrix intrinsic. a/b: operand kind; acc: accumulator kind; layout: which layout functions place
    its operands: 'gfx9' (gfx9_input, gfx9_output), 'f8f6f4' (f8f6f4_input, gfx9_output) or 'wmma'
    (gfx11_input/gfx11_output on RDNA3, gfx12_input/gfx12_output on RDNA4); blgp: 'lanes' (the [CALC] lane
    patterns), 'neg' (CDNA3 FP64: bits negate A, B, C) or '' (must be 0); cbsz: CBSZ/ABID broadcast supported;
    archs: the ISA families that have it."""
    m: int
    n: int
    k: int
    blocks: int
    a: str
    b: str
    acc: str
    layout: str
    blgp: str = ""
    cbsz: bool = False
    archs: frozenset = frozenset({"cdna3", "cdna4"})

    @property
    def shape(self):
        return self.m, self.n, self.k, self.blocks


_C3, _C4 = frozenset({"cdna3"}), frozenset({"cdna4"})
_R3, _R4, _R34 = frozenset({"rdna3"}), frozenset({"rdna4"}), frozenset({"rdna3", "rdna4"})


def _mb(m, k, blocks, kind, acc="f32"):  # a multi-block CDNA instruction: BLGP lane patterns and CBSZ/ABID
    return Instr(m, m, k, blocks, kind, kind, acc, "gfx9", "lanes", True)


# Shapes, kinds and modifier support per [CALC] dict_insts['cdna3'] (blgp / cbsz_abid flags); gfx950 additions
# per [BLOG] and the intrinsics LLVM defines for gfx950 [LLVM]. xf32 was dropped in gfx950 (LLVM MC tests).
INSTRUCTIONS: dict[str, Instr] = {
    "mfma.f32.32x32x1f32": _mb(32, 1, 2, "f32"), "mfma.f32.16x16x1f32": _mb(16, 1, 4, "f32"),
    "mfma.f32.4x4x1f32": _mb(4, 1, 16, "f32"),
    "mfma.f32.32x32x2f32": Instr(32, 32, 2, 1, "f32", "f32", "f32", "gfx9", "lanes"),
    "mfma.f32.16x16x4f32": Instr(16, 16, 4, 1, "f32", "f32", "f32", "gfx9", "lanes"),
    "mfma.f32.32x32x4f16": _mb(32, 4, 2, "f16"), "mfma.f32.16x16x4f16": _mb(16, 4, 4, "f16"),
    "mfma.f32.4x4x4f16": _mb(4, 4, 16, "f16"),
    "mfma.f32.32x32x8f16": Instr(32, 32, 8, 1, "f16", "f16", "f32", "gfx9"),
    "mfma.f32.16x16x16f16": Instr(16, 16, 16, 1, "f16", "f16", "f32", "gfx9"),
    "mfma.i32.32x32x4i8": _mb(32, 4, 2, "i8", "i32"), "mfma.i32.16x16x4i8": _mb(16, 4, 4, "i8", "i32"),
    "mfma.i32.4x4x4i8": _mb(4, 4, 16, "i8", "i32"),
    "mfma.i32.32x32x16.i8": Instr(32, 32, 16, 1, "i8", "i8", "i32", "gfx9"),
    "mfma.i32.16x16x32.i8": Instr(16, 16, 32, 1, "i8", "i8", "i32", "gfx9"),
    "mfma.f32.32x32x4bf16.1k": _mb(32, 4, 2, "bf16"), "mfma.f32.16x16x4bf16.1k": _mb(16, 4, 4, "bf16"),
    "mfma.f32.4x4x4bf16.1k": _mb(4, 4, 16, "bf16"),
    "mfma.f32.32x32x8bf16.1k": Instr(32, 32, 8, 1, "bf16", "bf16", "f32", "gfx9"),
    "mfma.f32.16x16x16bf16.1k": Instr(16, 16, 16, 1, "bf16", "bf16", "f32", "gfx9"),
    "mfma.f64.16x16x4f64": Instr(16, 16, 4, 1, "f64", "f64", "f64", "gfx9", "neg"),
    "mfma.f64.4x4x4f64": Instr(4, 4, 4, 4, "f64", "f64", "f64", "gfx9", "neg"),
    "mfma.f32.16x16x8.xf32": Instr(16, 16, 8, 1, "xf32", "xf32", "f32", "gfx9", archs=_C3),
    "mfma.f32.32x32x4.xf32": Instr(32, 32, 4, 1, "xf32", "xf32", "f32", "gfx9", archs=_C3),
    # gfx950 (CDNA4) additions: same gfx9 lane structure, twice the elements a lane
    "mfma.f32.16x16x32.f16": Instr(16, 16, 32, 1, "f16", "f16", "f32", "gfx9", archs=_C4),
    "mfma.f32.32x32x16.f16": Instr(32, 32, 16, 1, "f16", "f16", "f32", "gfx9", archs=_C4),
    "mfma.f32.16x16x32.bf16": Instr(16, 16, 32, 1, "bf16", "bf16", "f32", "gfx9", archs=_C4),
    "mfma.f32.32x32x16.bf16": Instr(32, 32, 16, 1, "bf16", "bf16", "f32", "gfx9", archs=_C4),
    "mfma.i32.16x16x64.i8": Instr(16, 16, 64, 1, "i8", "i8", "i32", "gfx9", archs=_C4),
    "mfma.i32.32x32x32.i8": Instr(32, 32, 32, 1, "i8", "i8", "i32", "gfx9", archs=_C4),
    "mfma.scale.f32.16x16x128.f8f6f4": Instr(16, 16, 128, 1, "f8f6f4", "f8f6f4", "f32", "f8f6f4", archs=_C4),
    "mfma.scale.f32.32x32x64.f8f6f4": Instr(32, 32, 64, 1, "f8f6f4", "f8f6f4", "f32", "f8f6f4", archs=_C4),
    # WMMA, wave32 only. [CALC] dict_insts['rdna3'], ['rdna4']
    "wmma.f32.16x16x16.f16": Instr(16, 16, 16, 1, "f16", "f16", "f32", "wmma", archs=_R34),
    "wmma.f32.16x16x16.bf16": Instr(16, 16, 16, 1, "bf16", "bf16", "f32", "wmma", archs=_R34),
    "wmma.f16.16x16x16.f16": Instr(16, 16, 16, 1, "f16", "f16", "f16", "wmma", archs=_R34),
    "wmma.bf16.16x16x16.bf16": Instr(16, 16, 16, 1, "bf16", "bf16", "bf16", "wmma", archs=_R34),
    "wmma.i32.16x16x16.iu8": Instr(16, 16, 16, 1, "iu8", "iu8", "i32", "wmma", archs=_R34),
    "wmma.i32.16x16x16.iu4": Instr(16, 16, 16, 1, "iu4", "iu4", "i32", "wmma", archs=_R34),
    "wmma.i32.16x16x32.iu4": Instr(16, 16, 32, 1, "iu4", "iu4", "i32", "wmma", archs=_R4),
}
for _a in ("fp8", "bf8"):
    for _b in ("fp8", "bf8"):
        INSTRUCTIONS[f"mfma.f32.16x16x32.{_a}.{_b}"] = Instr(16, 16, 32, 1, _a, _b, "f32", "gfx9")
        INSTRUCTIONS[f"mfma.f32.32x32x16.{_a}.{_b}"] = Instr(32, 32, 16, 1, _a, _b, "f32", "gfx9")
        INSTRUCTIONS[f"wmma.f32.16x16x16.{_a}.{_b}"] = Instr(16, 16, 16, 1, _a, _b, "f32", "wmma", archs=_R4)

_FLOAT = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "xf32": 32, "f64": 64, "i8": 8, "iu8": 8, "iu4": 4, "fp8": 8,
         "bf8": 8, "i32": 32}
# fp8/bf8 per ISA family: [BLOG] "CDNA3 uses FNUZ variants ... CDNA4 uses E4M3FN and E5M2 (OCP)"; RDNA4 OCP [CALC].
_FP8 = {"cdna3": {"fp8": "e4m3fnuz", "bf8": "e5m2fnuz"}, "cdna4": {"fp8": "e4m3fn", "bf8": "e5m2"},
        "rdna4": {"fp8": "e4m3fn", "bf8": "e5m2"}}
# mfma.scale format codes in CBSZ (A) and BLGP (B): [BLOG] "0 = E4M3, 1 = E5M2, 2 = E2M3, 3 = E3M2, 4 = E2M1";
# (format, bits, chunked layout)
F8F6F4_FORMATS = {0: ("e4m3fn", 8, True), 1: ("e5m2", 8, True), 2: ("e2m3", 6, True), 3: ("e3m2", 6, True),
                  4: ("e2m1", 4, False)}


def isa_family(arch: str) -> str:
    """gfx940/941/942 -> cdna3, gfx950 -> cdna4, gfx11xx -> rdna3, gfx12xx -> rdna4."""
    a = arch.lower().split(":")[0]
    if a.startswith("gfx94"):
        return "cdna3"
    if a.startswith("gfx95"):
        return "cdna4"
    if a.startswith("gfx11"):
        return "rdna3"
    if a.startswith("gfx12"):
        return "rdna4"
    raise NotModelled(f"matrix intrinsics on {arch}")


def lookup(name: str, arch: str | None = None) -> Instr:
    """The table row of an intrinsic (name without 'llvm.amdgcn.' and type suffixes; '.tied' ignored)."""
    ins = INSTRUCTIONS.get(name.removesuffix(".tied"))
    if ins is None:
        raise NotModelled(f"matrix intrinsic {name}")
    if arch is not None and isa_family(arch) not in ins.archs:
        raise NotModelled(f"matrix intrinsic {name} on {arch}")
    return ins


def mfma_shape(name: str) -> tuple[int, int, int, int]:
    """(M, N, K, blocks) of a modelled matrix intrinsic."""
    return lookup(name).shape


# ---------------------------------------------------------------------------------------------------------------
# Evaluation


def _per_lane(x, lanes: int) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 3 or x.shape[1] != lanes:
        raise ValueError(f"matrix operand of shape {x.shape}; expected [waves, {lanes}, elements]")
    return x


def _raw_bytes(x) -> np.ndarray:
    """A lane's operand as little-endian bytes (an i32/i64 vector is the same bits as its bytes)."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8).reshape(x.shape[:2] + (-1,))


def _unpack_bits(raw: np.ndarray, bits: int, count: int) -> np.ndarray:
    """Codes of `bits` bits packed LSB-first into a lane's bytes (fp4 two to a byte, fp6 across dwords)."""
    if bits == 8:
        return raw[..., :count]
    stream = np.unpackbits(raw, axis=-1, bitorder="little")[..., : bits * count]
    weights = (1 << np.arange(bits)).astype(np.uint8)
    return (stream.reshape(raw.shape[:2] + (count, bits)) * weights).sum(-1).astype(np.uint8)


def _decode(x: np.ndarray, kind: str, fam: str, count: int, signed: bool = True) -> np.ndarray:
    """Operand elements as float64 (or int64 for integer kinds)."""
    if kind in ("f16", "bf16", "f32", "xf32", "f64"):
        # xf32: the hardware reads the f32 inputs at reduced (XF32) precision; not modelled beyond the
        # tolerance model: the products here are those of the f32 values.
        return x.astype(np.float64)
    if kind in ("fp8", "bf8"):
        return fp8_decode(_raw_bytes(x), _FP8[fam][kind]).astype(np.float64)
    if kind in ("i8", "iu8"):
        raw = _raw_bytes(x)
        return (raw.view(np.int8) if signed else raw).astype(np.int64)
    codes = _unpack_bits(_raw_bytes(x), 4, count).astype(np.int64)  # iu4
    return np.where(codes >= 8, codes - 16, codes) if signed else codes


def _round_bf16(x: np.ndarray) -> np.ndarray:
    """float64 to the nearest bfloat16 (ties to even), held in float32; overflow to inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        _, e = np.frexp(x)
        step = np.ldexp(1.0, np.maximum(e - 8, -133))
        r = np.round(x / step) * step
        r = np.where(np.abs(r) >= 2.0 ** 128, np.copysign(np.inf, x), r)
    return np.where(np.isfinite(x), r, x).astype(np.float32)


def _accumulate(ins: Instr, amat: np.ndarray, bmat: np.ndarray, c: np.ndarray, out, clamp: bool = False):
    """D = A @ B + C per wave and block, exact products, one rounding; scattered back with `out` indices.
    amat: [W, blocks, M, K]; bmat: [W, blocks, N, K]. Positions `out` does not name keep C's value."""
    lane, elem = out
    cmat = c[:, lane, elem]
    if ins.acc == "i32":
        total = np.matmul(amat, bmat.swapaxes(-1, -2)) + cmat.astype(np.int64)
        # two's-complement wrap-around as the hardware's adder, or saturation with WMMA's clamp
        dmat = np.clip(total, -2 ** 31, 2 ** 31 - 1) if clamp else total
        dmat = dmat.astype(np.int32)
    else:
        with np.errstate(all="ignore"):
            total = np.matmul(amat, bmat.swapaxes(-1, -2)) + cmat.astype(np.float64)
        dmat = _round_bf16(total) if ins.acc == "bf16" else total.astype(_FLOAT[ins.acc])
    d = c.copy()
    d[:, lane, elem] = dmat
    return d


def mfma(name: str, a, b, c, cbsz: int, abid: int, blgp: int, arch: str, *, scale_a=None, scale_b=None,
         opsel_a: int = 0, opsel_b: int = 0):
    """D of `llvm.amdgcn.<name>` for W independent waves. a, b: [W, 64, ka] per-lane operand elements (f16,
    f32, f64 arrays; bf16 as float32; i8 as int8, or the raw bytes; fp8/bf8 as raw uint8 codes, or the raw
    i64/i32 words). c: [W, 64, kc]. Returns D with c's shape and dtype.

    For `mfma.scale.*.f8f6f4`: `cbsz` is the A format and `blgp` the B format (intrinsic arguments 3 and 4),
    abid must be 0; a, b are the operand's raw words or bytes (fp8 32 bytes, fp6 24, fp4 16; extra bytes are
    ignored); scale_a, scale_b: [W, 64] i32 scale operands, op_sel picks the E8M0 byte. Pass both as None when
    both scale operands are the constant 0: LLVM then selects the unscaled instruction [TRITON]."""
    ins, fam = lookup(name, arch), isa_family(arch)
    if not name.startswith("mfma.") or fam not in ("cdna3", "cdna4"):
        raise NotModelled(f"matrix intrinsic {name} on {arch}")
    c = _per_lane(c, 64)
    if ins.layout == "f8f6f4":
        return _mfma_scaled(ins, a, b, c, cbsz, abid, blgp, scale_a, scale_b, opsel_a, opsel_b)
    ka = ins.k * ins.m * ins.blocks // 64
    a, b = _per_lane(a, 64), _per_lane(b, 64)
    if cbsz or abid:  # CDNA4 keeps these multi-block instructions; CBSZ/ABID assumed to mean what [CALC] says
        if not ins.cbsz or not (0 <= cbsz <= ins.blocks.bit_length() - 1 and 0 <= abid < 1 << cbsz):
            raise NotModelled(f"{name} with cbsz={cbsz} abid={abid}")
    av, bv = _decode(a, ins.a, fam, ka), _decode(b, ins.b, fam, ka)
    if av.shape[-1] != ka or bv.shape[-1] != ka:
        raise ValueError(f"{name}: a lane holds {ka} elements, got {av.shape[-1]} and {bv.shape[-1]}")
    if blgp:  # documented for CDNA3 only [CALC]; the CDNA4 meaning is not in our sources: NotModelled there
        if ins.blgp == "lanes" and fam == "cdna3" and 0 <= blgp < 8:
            bv = bv[:, BLGP_SOURCE[blgp]]
        elif ins.blgp == "neg" and fam == "cdna3" and 0 <= blgp < 8:
            # [CALC] README: on CDNA3 FP64 the BLGP bits negate A (bit 0), B (bit 1) and C (bit 2)
            av, bv = (-av if blgp & 1 else av), (-bv if blgp & 2 else bv)
            c = -c if blgp & 4 else c
        else:
            raise NotModelled(f"{name} with blgp={blgp} on {arch}")
    lane, elem = gfx9_input(ins.m, ins.k, ins.blocks)
    amat = av[:, lane, elem]
    if cbsz:
        amat = amat[:, cbsz_source_block(np.arange(ins.blocks), cbsz, abid)]
    lane, elem = gfx9_input(ins.n, ins.k, ins.blocks)
    return _accumulate(ins, amat, bv[:, lane, elem], c, gfx9_output(ins.m, ins.n, ins.blocks, _BITS[ins.acc]))


def _mfma_scaled(ins, a, b, c, fmt_a, abid, fmt_b, scale_a, scale_b, opsel_a, opsel_b):
    """gfx950 block-scaled MFMA: D = C + sum over 32-wide K blocks kb of sA[i,kb]*sB[kb,j]*sum A*B, where the
    scale of (row i, kb) is byte op_sel of lane kb*M + i ([TRITON] chooseScaledMfmaScaleLayout, [BLOG] "Ax
    32x2, one entry a thread")."""
    if fmt_a not in F8F6F4_FORMATS or fmt_b not in F8F6F4_FORMATS or abid:
        raise NotModelled(f"mfma.scale with formats cbsz={fmt_a} blgp={fmt_b} abid={abid}")
    if (scale_a is None) != (scale_b is None):
        raise ValueError("mfma.scale: give both scale operands, or neither (both constant 0)")
    mats = []
    for x, fmt, rows, scale, opsel in ((a, fmt_a, ins.m, scale_a, opsel_a), (b, fmt_b, ins.n, scale_b, opsel_b)):
        name, bits, chunked = F8F6F4_FORMATS[fmt]
        raw = _raw_bytes(_per_lane(x, 64))
        if raw.shape[-1] < 4 * bits:
            raise ValueError(f"mfma.scale operand of {raw.shape[-1]} bytes for a {bits}-bit format")
        codes = _unpack_bits(raw, bits, 32)
        vals = (_MINIFLOATS[name][codes] if name in _MINIFLOATS else fp8_decode(codes, name)).astype(np.float64)
        lane, elem = f8f6f4_input(rows, ins.k, chunked)
        mat = vals[:, lane, elem]  # [W, 1, rows, K]
        if scale is not None:
            s = (np.asarray(scale).astype(np.int64).reshape(-1, 64) >> 8 * (opsel & 3)) & 0xFF  # [W, 64]
            kb = np.arange(ins.k) // 32
            mat = mat * _e8m0(s[:, kb[None, :] * rows + np.arange(rows)[:, None]])[:, None]
        mats.append(mat)
    return _accumulate(ins, mats[0], mats[1], c, gfx9_output(ins.m, ins.n, 1, 32))


def wmma(name: str, a, b, c, arch: str, *, opsel: int = 0, a_signed: bool = True, b_signed: bool = True,
         clamp: bool = False):
    """D of `llvm.amdgcn.<name>` (RDNA3 gfx11 / RDNA4 gfx12, wave32) for W waves. a, b: [W, 32, ka] (f16;
    bf16 as float32; iu8 as raw bytes/int8; iu4 as the raw packed words; fp8/bf8 raw codes); c: [W, 32, kc].
    opsel: gfx11 16-bit results in the low (0) or high (1) halves; a_signed/b_signed/clamp: the iu8/iu4
    intrinsic's flags (clamp saturates instead of wrapping)."""
    ins, fam = lookup(name, arch), isa_family(arch)
    if ins.layout != "wmma":
        raise NotModelled(f"matrix intrinsic {name} on {arch}")
    if np.asarray(a).ndim == 3 and np.asarray(a).shape[1] == 64:
        raise NotModelled(f"{name} in wave64")
    a, b, c = _per_lane(a, 32), _per_lane(b, 32), _per_lane(c, 32)
    if fam == "rdna3":
        for x in (a, b):  # [CALC]: lanes 16-31 repeat lanes 0-15; which copy the hardware reads is undocumented
            if not np.array_equal(x[:, :16], x[:, 16:], equal_nan=x.dtype.kind == "f"):
                raise NotModelled(f"{name} with lanes 16-31 differing from lanes 0-15")
        la, ea = gfx11_input(16, ins.k)
        out = gfx11_output(ins.m, ins.n, _BITS[ins.acc], opsel & 1)
    else:
        la, ea = gfx12_input(16, ins.k, _BITS[ins.a])
        out = gfx12_output(ins.m, ins.n)
    ka = int(ea.max()) + 1
    av, bv = _decode(a, ins.a, fam, ka, a_signed), _decode(b, ins.b, fam, ka, b_signed)
    return _accumulate(ins, av[:, la, ea], bv[:, la, ea], c, out, clamp)


