"""Per-backend error tables: how far a correct compilation of each math function or operator may be from the
correctly rounded result. docs/tolerance.md explains each number and where it comes from.

Units: `ulps` are units of the unit roundoff of the precision the function is computed in (fp32 for fp32, fp16
and bf16 inputs, which Triton upcasts; fp64 for fp64), `abs` an absolute error, `arg` extra ulps per unit of |x|
(exp computed as exp2(x * log2 e) loses |x| ulps to the rounding of the product). Every bound is tested to reject
a perturbed result (tests/oracle/test_tolerance.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FnError:
    ulps: float = 4.0
    abs: float = 0.0
    arg: float = 0.0


@dataclass(frozen=True)
class Table:
    name: str
    functions: dict = field(default_factory=dict)
    div_ulps: float = 0.0  # 0: fp32 division rounds correctly
    fma_fused: bool = True  # tl.fma rounds once
    fp64_ulps: float = 2.0  # fp64 math functions (libdevice / ocml / numpy double)
    # tl.cumprod on int8/int16 multiplies in the input's width when compiled (its combine is `a * b`, no
    # promotion); the interpreter's scan does not wrap there (oracle/limitations.py)
    narrow_cumprod_wraps: bool = True
    # significand bits an 8-bit-float tl.dot keeps while it accumulates (None: the output dtype's, fp32's 24):
    # Hopper's fp8 MMA adds its products in a narrower accumulator and truncates (about 14 bits)
    fp8_dot_accumulator_bits: int | None = None

    def fn(self, name) -> FnError:
        return self.functions.get(name, FnError(8.0, 2.0 ** -20, 2.0))


_EXACT_SQRT = FnError(0.0)

# numpy float32 ufuncs (SIMD implementations: within 4 ulp), interpreted tl.sigmoid = 1 / (1 + exp(-x))
INTERPRET = Table("interpret", {
    "exp": FnError(4), "exp2": FnError(4), "log": FnError(4), "log2": FnError(4), "sqrt": _EXACT_SQRT,
    "rsqrt": FnError(3), "sin": FnError(4), "cos": FnError(4), "erf": FnError(4), "sigmoid": FnError(8, 0, 1),
}, div_ulps=0.0, fma_fused=False, narrow_cumprod_wraps=False)

# NVIDIA (Triton 3.4-3.9, read from the PTX): tl.exp is ex2.approx(x * log2 e), documented for __expf as
# 2 + 1.17|x| ulp; exp2, sqrt and rsqrt are approx instructions (2 ulp); log, log2, sin, cos and erf come from
# libdevice (1-2 ulp, plus an absolute term near log's zero); fp32 division is div.full.f32 (2 ulp).
# fp8 tl.dot: Hopper's FP8 tensor-core MMA keeps about 14 significand bits while accumulating (DeepSeek-V3 technical
# report, section 3.3.2; Triton's `max_num_imprecise_acc` exists because of it); an H100 campaign showed results off
# by up to 2^-13 of the sum of magnitudes where fp32 accumulation would be exact. Modelled as a 13-bit truncating
# accumulator (one bit of margin).
CUDA = Table("cuda", {
    "exp": FnError(4, 0.0, 2.0), "exp2": FnError(4), "log": FnError(4, 2.0 ** -22), "log2": FnError(4, 2.0 ** -22),
    "sqrt": FnError(4), "rsqrt": FnError(4), "sin": FnError(4, 2.0 ** -24), "cos": FnError(4, 2.0 ** -24),
    "erf": FnError(4), "sigmoid": FnError(12, 2.0 ** -126, 2.0),
}, div_ulps=4.0, fp8_dot_accumulator_bits=13)

# AMD gfx942 (read from the AMDGCN): exp through v_exp_f32 after the same x * log2 e product, log/log2 through
# v_log_f32, sqrt/rsqrt 1-2 ulp, sin/cos/erf from OCML, fp32 division correctly rounded (IEEE expansion).
# Not yet checked against AMD hardware: the margins are NVIDIA's.
HIP = Table("hip", dict(CUDA.functions), div_ulps=0.0)  # MFMA fp8 accumulates in fp32

TABLES = {"interpret": INTERPRET, "cuda": CUDA, "hip": HIP}


def table_for(backend: str, device_kind: str = "") -> Table:
    """`interpret`, or `device` with the GPU's kind ("cuda" or "hip"); compile-only runs never compare values."""
    if backend == "interpret":
        return INTERPRET
    return TABLES.get(device_kind, HIP)
