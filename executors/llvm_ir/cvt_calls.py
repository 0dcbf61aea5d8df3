"""The conversion intrinsics as the executor calls them: `fn(ex, arch, *operands)`, the MODE register's FP16_OVFL
bit (set by `llvm.amdgcn.s.setreg(1473, ...)`, which Triton writes before fp8 conversions) read from the executor.

The semantics are convert.py's; this only adapts the calling convention (constant selectors arrive as ints).
"""
from __future__ import annotations

import numpy as np

from . import convert
from .errors import NotModelled


def _clamp(ex):
    return bool(ex.env.get("__mode_fp16_ovfl", False))


def _constant(selector, what):
    if isinstance(selector, np.ndarray):
        if selector.ndim and not (selector == selector.flat[0]).all():
            raise NotModelled(f"{what} with a lane-varying selector")
        return int(selector.flat[0])
    return int(selector)


def emu_cvt_pk_fp8_f32(ex, arch, a, b, old, sel):
    return convert.cvt_pk_fp8_f32(a, b, old, _constant(sel, "cvt.pk.fp8"), arch, clamp=_clamp(ex))


def emu_cvt_pk_bf8_f32(ex, arch, a, b, old, sel):
    return convert.cvt_pk_bf8_f32(a, b, old, _constant(sel, "cvt.pk.bf8"), arch, clamp=_clamp(ex))


def emu_cvt_pk_f32_fp8(ex, arch, src, sel):
    return convert.cvt_pk_f32_fp8(src, _constant(sel, "cvt.pk.f32.fp8"), arch).astype(np.float32)


def emu_cvt_pk_f32_bf8(ex, arch, src, sel):
    return convert.cvt_pk_f32_bf8(src, _constant(sel, "cvt.pk.f32.bf8"), arch).astype(np.float32)


def emu_cvt_f32_fp8(ex, arch, src, sel):
    return convert.cvt_f32_fp8(src, _constant(sel, "cvt.f32.fp8"), arch).astype(np.float32)


def emu_cvt_f32_bf8(ex, arch, src, sel):
    return convert.cvt_f32_bf8(src, _constant(sel, "cvt.f32.bf8"), arch).astype(np.float32)


def emu_cvt_pkrtz(ex, arch, a, b):
    """<2 x half> as the executor keeps it: [lanes, 2] float16, element 0 from `a` (the low half)."""
    packed = np.ascontiguousarray(convert.cvt_pkrtz(a, b), dtype=np.uint32)
    return packed.view(np.uint16).reshape(packed.shape + (2,)).view(np.float16)
