"""The conversion table: Triton's float constants and float conversions, judged code by code without a GPU.

Why a table and not more random kernels: conversions are where AMD's lowering has the most hand-written code
(software paths per target, fp8 in OCP and fnuz flavours, two rounding modes), and a wrong code is silent. A
probe kernel stores one constant, or one conversion of one constant; the compiled LLVM IR then holds the stored code
(oracle/cast_fold.py), and the exact format tables (oracle/formats.py) hold the right one. A probe whose conversion
is a hardware instruction does not fold: it is counted as "cannot test", never judged.

Probe values are chosen so that the expected code never depends on how the reference rounds: constants are
exactly representable in their type, a conversion's source is built from its bit pattern (a Python float literal
would itself be rounded by the front end), and the values are the destination's codes, the midpoints between
neighbours (ties) and the quarter points between them, in range (overflow is implementation-defined).
"""
from __future__ import annotations

import hashlib
import json
import math
import struct
from dataclasses import asdict, dataclass

import torch

from gfxhound.signature import CAST_TABLE_STAGE

from .formats import BY_DTYPE, round_to_format

STAGE = CAST_TABLE_STAGE
FP8 = ("fp8e5", "fp8e4nv", "fp8e5b16", "fp8e4b8")
SOURCES = ("fp32", "fp16", "bf16")
ROUNDINGS = ("rtne", "rtz")
TL = {"fp32": "tl.float32", "fp16": "tl.float16", "bf16": "tl.bfloat16", "fp8e5": "tl.float8e5",
      "fp8e4nv": "tl.float8e4nv", "fp8e5b16": "tl.float8e5b16", "fp8e4b8": "tl.float8e4b8"}
WIDTH = {"fp32": 32, "fp16": 16, "bf16": 16, **{f: 8 for f in FP8}}
TORCH = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
INT_OF = {32: (torch.int32, "tl.int32"), 16: (torch.int16, "tl.int16")}


@dataclass(frozen=True)
class Probe:
    """One stored code to check. kind "constant": `tl.full([64], value, dst)`; kind "cast": the `src` value with
    bit pattern `bits` converted to `dst` with `rounding`."""
    kind: str
    dst: str
    value: float
    src: str = ""
    rounding: str = ""
    bits: int = 0

    def key(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]

    def what(self) -> str:
        """'fp16 -> fp8e5b16 (rtz)' or 'bf16 constant': the conversion, without the value."""
        return f"{self.src} -> {self.dst} ({self.rounding})" if self.kind == "cast" else f"{self.dst} constant"


NAN_BITS = {"fp32": 0x7FC00000, "fp16": 0x7E00, "bf16": 0x7FC0}  # the quiet NaN each source type's tools write


def bits_of(dtype: str, value: float) -> int:
    """The bit pattern of `value` in a 16- or 32-bit float type (it must be exact there; NaN: the quiet one)."""
    if math.isnan(value):
        return NAN_BITS[dtype] | ((1 << (WIDTH[dtype] - 1)) if math.copysign(1.0, value) < 0 else 0)
    t = torch.tensor([value], dtype=torch.float64).to(TORCH[dtype])
    return int(t.view(INT_OF[WIDTH[dtype]][0]).item()) & ((1 << WIDTH[dtype]) - 1)


def exact_in(dtype: str, value: float) -> bool:
    if dtype in BY_DTYPE:
        return value in BY_DTYPE[dtype].table()
    return float(torch.tensor([value], dtype=torch.float64).to(TORCH[dtype]).double().item()) == value


def acceptable_codes(probe: Probe) -> set:
    """Every code a correct compiler may store: the expected one, or for a NaN any NaN code of the format."""
    if math.isnan(probe.value) and probe.dst in BY_DTYPE:
        fmt = BY_DTYPE[probe.dst]
        return {c for c in range(256) if math.isnan(fmt.decode(c))}
    return {expected_code(probe)}


def expected_code(probe: Probe) -> int:
    """The code a correct compiler stores: the value rounded once, as `rounding` says, to `dst`. Zero keeps its
    sign in the OCP formats; the fnuz formats have one zero (0x80 is their NaN)."""
    fmt_name = probe.dst
    if fmt_name not in BY_DTYPE:
        return bits_of(fmt_name, probe.value)
    fmt = BY_DTYPE[fmt_name]
    if math.isnan(probe.value):  # any NaN code is right (acceptable_codes); this is the one shown
        return min(c for c in range(256) if math.isnan(fmt.decode(c)) and (c >> 7) == (math.copysign(1, probe.value) < 0)
                   ) if fmt.nan_codes != "negative-zero" else 0x80
    mode = probe.rounding or "rtne"
    r = float(round_to_format(fmt, torch.tensor([probe.value], dtype=torch.float64), mode)[0])
    positive = fmt.table()[:128].index(abs(r))
    negative = math.copysign(1.0, r) < 0 and not (r == 0 and fmt.nan_codes == "negative-zero")
    return positive | (0x80 if negative else 0)


def _grid_values(fmt_name: str) -> list:
    """A format's positive finite codes, the midpoints between neighbours and the quarter points."""
    table = BY_DTYPE[fmt_name].table()[:128]
    grid = sorted({v for v in table if math.isfinite(v)})
    mids = [(a + b) / 2 for a, b in zip(grid, grid[1:])]
    quarters = [(3 * a + b) / 4 for a, b in zip(grid, grid[1:])]
    return sorted(set(grid) | set(mids) | set(quarters))


EVERYDAY_LITERALS = (0.1, 0.3, 1e-3, 1.234e-5, 3e-7, 5.1e-7, 1e-20, 12345.678)  # what kernels write: eps, scales


def _everyday() -> set:
    return {float(torch.tensor([v], dtype=torch.float64).to(TORCH[t]).double().item())
            for v in EVERYDAY_LITERALS for t in TORCH}


def _constant_values(dtype: str) -> list:
    """Exactly representable values across the type's range: powers of two (subnormals included) and their
    neighbours 1.5x and 1.75x, plus a few everyday ones."""
    if dtype in BY_DTYPE:
        return [v for v in BY_DTYPE[dtype].table()[:128] if math.isfinite(v) and v != 0]
    low = {"fp32": -149, "fp16": -24, "bf16": -133}[dtype]
    high = {"fp32": 127, "fp16": 15, "bf16": 127}[dtype]
    values = {m * 2.0 ** e for e in range(low, high + 1) for m in (1.0, 1.5, 1.75)}
    values |= {float(torch.tensor([v], dtype=torch.float64).to(TORCH[dtype]).double().item()) for v in EVERYDAY_LITERALS}
    return sorted(v for v in values if v != 0 and math.isfinite(v) and exact_in(dtype, v))


def probes(sources=SOURCES, fp8=FP8, roundings=ROUNDINGS, constants=True, limit: "int | None" = None) -> list:
    """Every probe of the table, both signs. `limit`: at most that many values per conversion (spread over the
    range, smallest and largest kept), for a quick table."""
    out = []
    EVERYDAY = _everyday()  # noqa: N806  (kept whatever the limit: the values a person recognises)

    def spread(values):
        """`limit` values over the range, smallest and largest kept, and 1.0 whenever the type holds it: the
        value a person checks first."""
        if limit is None or len(values) <= limit:
            return values
        step = (len(values) - 1) / (limit - 1)
        return sorted({values[round(i * step)] for i in range(limit)} | ((EVERYDAY | {1.0}) & set(values)))

    if constants:
        for dtype in list(sources) + list(fp8):
            for v in spread(_constant_values(dtype)):
                out += [Probe("constant", dtype, v), Probe("constant", dtype, -v)]
    for dst in fp8:
        values = _grid_values(dst)
        for src in sources:
            exact = [v for v in values if exact_in(src, v)]
            for rounding in roundings:
                # NaN must stay NaN; infinity and values past the range are not probed: saturating them is a choice
                # (Triton's software E5M2 paths saturate infinity to 57344, as NVIDIA's satfinite conversions do)
                for v in spread(exact) + [math.nan]:
                    for s in (v, -v):
                        out.append(Probe("cast", dst, s, src, rounding, bits_of(src, s)))
    return out


def literal(dtype: str, value: float) -> str:
    """The shortest decimal that rounds (to nearest) to `value` in a 16- or 32-bit `dtype`: what a person would
    type. An 8-bit float keeps its exact value: Triton builds those through an fp32 constant and a truncation."""
    if value == 0 or not math.isfinite(value) or dtype in BY_DTYPE:
        return repr(value)
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        v = float(text)
        same = (float(round_to_format(BY_DTYPE[dtype], torch.tensor([v], dtype=torch.float64))[0]) == value
                if dtype in BY_DTYPE else
                float(torch.tensor([v], dtype=torch.float64).to(TORCH[dtype]).double().item()) == value)
        if same:
            return text if ("e" in text or "." in text) else text + ".0"
    return repr(value)


def kernel_source(probe: Probe, name: str = "probe") -> str:
    """The probe as a @triton.jit function, written as a person would write it. A conversion's source is built
    from its bits: Triton folds some conversions of a literal itself (`-0.0` to `+0.0`), and a bf16 literal is
    rounded on its way in (the bf16-constant finding), either of which would hide what the lowering does."""
    if probe.kind == "constant":
        body = f"    y = tl.full([64], {literal(probe.dst, probe.value)}, {TL[probe.dst]})\n"
    else:
        width = WIDTH[probe.src]
        signed = probe.bits - (1 << width) if probe.bits >> (width - 1) else probe.bits
        body = (f"    x = tl.full([64], {signed}, {INT_OF[width][1]}).to({TL[probe.src]}, bitcast=True)  # {probe.value!r}\n"
                f"    y = x.to({TL[probe.dst]}, fp_downcast_rounding=\"{probe.rounding}\")\n")
    return f"@triton.jit\ndef {name}(y_ptr):\n{body}    tl.store(y_ptr + tl.arange(0, 64), y)\n"


def pointer_type(probe: Probe) -> str:
    return "*" + probe.dst


def code_value(dtype: str, code: int) -> float:
    """The value a code stands for in `dtype`."""
    if dtype in BY_DTYPE:
        return BY_DTYPE[dtype].decode(code)
    raw = struct.pack("<I" if WIDTH[dtype] == 32 else "<H", code)
    if dtype == "fp32":
        return struct.unpack("<f", raw)[0]
    return float(torch.frombuffer(bytearray(raw), dtype=TORCH[dtype])[0].double())


def describe_code(dtype: str, code: int) -> str:
    """'0x3c (0.5)': a code and the value it stands for in `dtype`."""
    return f"0x{code:0{WIDTH[dtype] // 4}x} ({code_value(dtype, code)!r})"
