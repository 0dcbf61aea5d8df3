"""The conversion intrinsics as the executor calls them: `fn(ex, arch, *operands)`, the MODE register's FP16_OVFL
bit (set by `llvm.amdgcn.s.setreg(1473, ...)`, which Triton writes before fp8 conversions) read from the executor.

The semantics are convert.py's; this only adapts the calling convention (constant selectors arrive as ints).
"""
from __future__ import annotations

import numpy as np

from . import convert
from .errors import NotModelled
from .values import lanes_of


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


def _words(pairs) -> np.ndarray:
    """[lanes, 2] 16-bit elements (a <2 x i16>, <2 x half> or <2 x bfloat> value) as one uint32 a lane, element 0
    in bits [15:0]."""
    bits = np.asarray(pairs)
    bits = bits.view(np.uint16) if bits.dtype == np.float16 else bits.astype(np.uint16)
    bits = np.broadcast_to(bits, bits.shape if bits.ndim > 1 else (1, 2)).astype(np.uint32)
    return bits[..., 0] | (bits[..., 1] << np.uint32(16))


def _pairs(words, dtype) -> np.ndarray:
    """uint32 a lane back to [lanes, 2] elements of `dtype` (uint16 for i16 and bfloat, float16 for half)."""
    words = np.asarray(words).astype(np.uint32)
    out = np.stack([words & np.uint32(0xFFFF), words >> np.uint32(16)], axis=-1).astype(np.uint16)
    return out.view(np.float16) if dtype == np.float16 else out


def _scaled_down_f32(kind):
    """llvm.amdgcn.cvt.scalef32.pk.{fp8,bf8}.f32(<2 x i16> old, float a, float b, float scale, i1 word_sel)."""
    convert_fn = getattr(convert, f"cvt_scalef32_pk_{kind}_f32")

    def emu(ex, arch, old, a, b, scale, sel):
        word_sel = _constant(sel, f"cvt.scalef32.pk.{kind}.f32")
        return _pairs(convert_fn(_words(old), a, b, scale, word_sel, arch, clamp=_clamp(ex)), np.uint16)
    return emu


def _scaled_down_16(kind, src_kind):
    """llvm.amdgcn.cvt.scalef32.pk.{fp8,bf8}.{f16,bf16}(<2 x i16> old, <2 x half|bfloat> src, float scale,
    i1 word_sel)."""
    convert_fn = getattr(convert, f"cvt_scalef32_pk_{kind}_{src_kind}")

    def emu(ex, arch, old, src, scale, sel):
        word_sel = _constant(sel, f"cvt.scalef32.pk.{kind}.{src_kind}")
        return _pairs(convert_fn(_words(old), _words(src), scale, word_sel, arch, clamp=_clamp(ex)), np.uint16)
    return emu


def _scaled_up(dst_kind, kind):
    """llvm.amdgcn.cvt.scalef32.pk.{f32,f16,bf16}.{fp8,bf8}(i32 src, float scale, i1 word_sel) -> <2 x ...>."""
    convert_fn = getattr(convert, f"cvt_scalef32_pk_{dst_kind}_{kind}")

    def emu(ex, arch, src, scale, sel):
        out = convert_fn(src, scale, _constant(sel, f"cvt.scalef32.pk.{dst_kind}.{kind}"), arch)
        if dst_kind == "f32":
            return np.asarray(out, np.float32)
        return _pairs(out, np.float16 if dst_kind == "f16" else np.uint16)
    return emu


SCALEF32 = {}   # intrinsic name -> fn(ex, arch, *operands), as the emu_* above
for _kind in ("fp8", "bf8"):
    SCALEF32[f"llvm.amdgcn.cvt.scalef32.pk.{_kind}.f32"] = _scaled_down_f32(_kind)
    for _wide in ("f16", "bf16"):
        SCALEF32[f"llvm.amdgcn.cvt.scalef32.pk.{_kind}.{_wide}"] = _scaled_down_16(_kind, _wide)
    for _wide in ("f32", "f16", "bf16"):
        SCALEF32[f"llvm.amdgcn.cvt.scalef32.pk.{_wide}.{_kind}"] = _scaled_up(_wide, _kind)


def _scalef32_call(fn):
    """intrinsics.py's compiler shape for a SCALEF32 function: operands as typed lane values."""
    def compile_(ins, args, kernel):
        return lambda ex: fn(ex, kernel.arch, *[lanes_of(g(ex), ex.n) for g in args])
    return compile_


SCALEF32_CALLS = {name: _scalef32_call(fn) for name, fn in SCALEF32.items()}
