"""Known limitations of the execution backends, in one place: what they are, where they are documented, how a
campaign steers around them, and how a run that meets one anyway is recognised. A run that meets one is
`unresolved` with the limitation's key as its reason: never reported as a compiler bug, always counted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Limitation:
    key: str
    backend: str  # "interpret" | "device"
    what: str
    reference: str
    excludes: tuple = ()  # capability features the campaign removes (generation steers around them)
    pattern: str = ""  # a run's error text that shows the limitation was met anyway


LIMITATIONS = (
    Limitation(
        "interpret-bf16-bits", "interpret",
        "bf16 tensors are raw 16-bit integers in the interpreter: arithmetic, reductions, scans, tl.dot and "
        "atomics on them compute on the bit patterns (numpy has no bfloat16)",
        "https://github.com/triton-lang/triton/issues/11584 (bf16 tl.dot), PR #10945",
        excludes=("exclude:dtype:bf16",)),
    Limitation(
        "interpret-unsupported-dtype", "interpret",
        "the interpreter rejects some dtype/op pairs outright (e.g. bf16 atomics)",
        "python/triton/runtime/interpreter.py (_get_np_dtype)",
        pattern=r"Unsupported data type"),
    Limitation(
        "interpret-loop-index-int", "interpret",
        "a range/tl.range loop index is a Python int in the interpreter, not an i32 scalar: `k.to(...)` fails; "
        "campaigns render the index as `k + tl.full([], 0, tl.int32)` (same value, same type when compiled)",
        "python/triton/runtime/interpreter.py (loops run as Python loops)",
        excludes=("exclude:raw-loop-index",)),
    Limitation(
        "interpret-scalar-args", "interpret",
        "scalar kernel arguments are Python numbers in the interpreter (`sa.to(...)` fails, `sa / 0.0` raises "
        "ZeroDivisionError); campaigns render them as `sa + tl.full([], 0, dtype)` first",
        "python/triton/runtime/interpreter.py (arguments are passed through)",
        excludes=("exclude:raw-scalar-args",)),
    Limitation(
        "interpret-all-nan-reduction", "interpret",
        "tl.max/tl.min over a slice that is all NaN raises numpy's 'All-NaN slice encountered' in the interpreter",
        "python/triton/runtime/interpreter.py (reductions through numpy nan-aware functions)",
        pattern=r"All-NaN slice encountered"),
    Limitation(
        "interpret-precisions", "interpret",
        "the interpreter accepts only input_precision ieee, tf32 and tf32x3 (AMD's bf16x3/bf16x6 are rejected)",
        "python/triton/runtime/interpreter.py (interpreter options)"),
    Limitation(
        "interpret-input-precision", "interpret",
        "the interpreter ignores tl.dot's input_precision (computes fp32 where a GPU may use tf32): results are "
        "more precise than the oracle's bound requires, so this only weakens the check for reduced precisions",
        "python/triton/runtime/interpreter.py (create_dot)"),
    Limitation(
        "interpret-narrow-int-cumprod", "interpret",
        "tl.cumprod on int8/int16 does not wrap at the input's width in the interpreter (compiled, its combine "
        "`a * b` does: an H100 run showed 167 become -89); the oracle's interpreter table models that",
        "python/triton/language/standard.py (cumprod has no dtype promotion), runtime/interpreter.py"),
    Limitation(
        "interpret-fp8-conversion", "interpret",
        "8-bit float conversions in the interpreter are bit manipulations that do not follow the formats: a "
        "downcast rounds half up on one cut-off bit (no ties-to-even, no sticky bits) and a carry out of the "
        "mantissa is ORed into the exponent, not added; decoding maps E4M3FN's NaN (0x7F) to 480, E5M2's "
        "infinities and NaNs to finite values and fnuz's NaN (0x80) to -0 (tl.dot_scaled's operands are decoded "
        "correctly). Campaigns cast nothing to fp8 and give fp8 inputs no special values under the interpreter",
        "python/triton/runtime/interpreter.py (_convert_float)",
        excludes=("exclude:cast:to-fp8", "exclude:fp8:specials")),
    Limitation(
        "interpret-no-pairs", "interpret",
        "the interpreter ignores launch configurations and compiles nothing, so a metamorphic pair (another "
        "num_stages, num_warps, knob, target or layout: fuzz/pairs.py) would compare a run with itself: campaigns "
        "generate none",
        "python/triton/runtime/interpreter.py (options are accepted and ignored)",
        excludes=tuple(f"exclude:pair:{k}" for k in ("stages", "warps", "knobs", "target", "layout"))),
    Limitation(
        "device-compile-only-pairs", "device",
        "a GPU runs kernels for its own target only: target and layout pairs are compile checks (the compile "
        "backend makes them); device campaigns run launch pairs (num_stages, num_warps, knobs)",
        "fuzz/pairs.py",
        excludes=("exclude:pair:target", "exclude:pair:layout")),
    Limitation(
        "interpret-sequential-programs", "interpret",
        "the interpreter runs programs one after another (program_id(0) outer, program_id(1) inner), so a "
        "spin-wait on a later program never ends: collective campaigns draw only patterns whose waits and remote "
        "reads depend on host data or earlier programs (decided from the pattern: fuzz/collective/spec.py)",
        "python/triton/runtime/interpreter.py (GridExecutor: nested loops over the grid)",
        excludes=("exclude:collective:later-waits",),
        pattern=r"collective waits on a later program"),
    Limitation(
        "interpret-fma-rounding", "interpret",
        "tl.fma is a multiply and an add (two roundings) in the interpreter; the oracle's interpreter table "
        "models that",
        "python/triton/runtime/interpreter.py"),
)


INTERPRETER_PRECISIONS = ("ieee", "tf32", "tf32x3")


def for_backend(backend: str):
    return [lim for lim in LIMITATIONS if lim.backend == backend]


def excluded_features(backend: str) -> list:
    return [feature for lim in for_backend(backend) for feature in lim.excludes]


def match(backend: str, text: str):
    """The limitation an error text shows, or None."""
    for lim in for_backend(backend):
        if lim.pattern and re.search(lim.pattern, text or ""):
            return lim
    return None
