"""The step of a VALU instruction (VOP1, VOP2, VOPC, VOP3, VOP3SD, VOP3P) for machine_decode.py: operands mapped to
the pseudocode's names, each source read through its encoding's modifiers (machine_modifiers.py: DPP, SDWA,
op_sel, packed halves, neg/abs), the pseudocode run on the active lanes, and the result written back through
OMOD, clamp, the SDWA destination select and the lanes a DPP row/bank mask leaves.

Why a module of its own: this is where the encodings meet the pseudocode, and it is the one step with policies of
its own (docs/amdgcn-pcode.md, decisions 14 and 26-31); the decoder of the other families stays small.

16-bit results (decision 29): the pseudocode writes `D0.u16`/`D0.f16` and says nothing of bits 31:16. The machine
zeroes them, except for the instructions whose VOP3 description writes a destination half chosen by op_sel
(`PRESERVE_HIGH`: the other half is kept). A finding on a kernel that ran a 16-bit result rests on this decision:
``Kernel.decisions`` lists it.
"""
from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm
from gfxhound.executors.amdgcn.machine import _FLOAT, SIGN_BIT_OPS, _check_modifiers, _const, _hazard, reader, writer
from gfxhound.executors.amdgcn.machine_modifiers import (dpp_source, dpp_write_lanes, omod, op_sel_source, packed_source,
                                               sdwa_destination, sdwa_source)
from gfxhound.executors.amdgcn.asm_modifiers import DPP, SDWA
from gfxhound.executors.amdgcn.machine_state import _state_inputs, _state_writers
from gfxhound.executors.amdgcn.pcode import NotModelled, compile_op, compile_variant

__all__ = ["valu", "PRESERVE_HIGH", "FMA_MIX", "fma_mix"]

PRESERVE_HIGH = frozenset({"v_mad_f16", "v_mad_u16", "v_mad_i16", "v_fma_f16", "v_div_fixup_f16", "v_mac_f16",
                           "v_mad_mixlo_f16", "v_pk_fmac_f16"})
_HALF_RESULT = re.compile(r"\bD0?(?:\[15 : 0\])?\.[uifb]16\s*=")   # D.b16 is D0 (decision 25)
_HIGH_RESULT = re.compile(r"\bD0\[31 : 16\]\.[uifb]16\s*=")       # V_MAD_MIXHI_F16: the low half is kept
_HALF_OPERAND = re.compile(r"_[uifb]16(?:_|$)")
PACKED_OPSEL = frozenset({"op_sel", "op_sel_hi", "neg_lo", "neg_hi"})


def _valu_names(ins, op):
    mn, n = ins.mnemonic, len(ins.operands)
    srcs = [s for s in ("S0", "S1", "S2") if s in op.widths]
    if "VOPC" in op.families and "D0" in op.lane_masks:
        return ["D0"] + srcs
    dst = ["D0"] if "D0" in op.outputs else []
    if "D1" in op.outputs:
        return dst + ["D1"] + srcs
    if "VCC" in op.outputs:       # carry-out: VCC (e32) or sdst (e64), carry-in last
        return dst + ["VCC"] + srcs + (["VCC_IN"] if "VCC" in op.inputs else [])
    if "SIMM32" in op.widths:
        return dst + (["S0", "SIMM32", "S1"] if mn.endswith("mk_f32") or "mk_" in mn else ["S0", "S1", "SIMM32"])
    if "VCC" in op.inputs and n == len(dst) + len(srcs) + 1:
        return dst + srcs + ["VCC"]
    return dst + srcs


def _allowed(ins, op) -> set:
    allowed = {"clamp", "bitop3", "mul", "div"}
    if ins.encoding == "dpp":
        allowed |= DPP
    elif ins.encoding == "sdwa":
        allowed |= SDWA
    else:
        allowed |= PACKED_OPSEL
    return allowed


def typed_width(op, name: str) -> int:
    """The bits of the type the pseudocode reads source `name` as, where it reads it as one 16-bit type only
    (`S0.f16`, `S1.b16`): neg/abs then act on bit 15 (the ISA's input modifiers negate and take the absolute value
    of the operand as the instruction's type; op.widths holds the 32-bit register read). 0: the register width."""
    override = getattr(op, "typed_sources", None)   # fma_mix: which sources op_sel_hi makes f16 (decision 43)
    if override is not None and name in override:
        return override[name]
    return _typed_width(op.text, name)


@lru_cache(maxsize=None)
def _typed_width(text: str, name: str) -> int:
    bits = {int(b) for b in re.findall(rf"\b{name}\.[a-z]+(\d+)\b", text)}
    return 16 if bits == {16} else 0


def _source(ins, op, name, o, width, mn, is_float, packed):
    hazard = _hazard(ins.index)
    typed = typed_width(op, name) if is_float else 0
    if ins.encoding == "dpp" and name == "S0":
        return dpp_source(ins, o, width, mn, is_float, hazard, typed)
    if ins.encoding == "sdwa" and name in ("S0", "S1"):
        return sdwa_source(ins, "src0_sel" if name == "S0" else "src1_sel", o, width, mn, is_float, hazard, typed)
    k = ("S0", "S1", "S2").index(name) if name in ("S0", "S1", "S2") else None
    if packed and k is not None:
        return packed_source(ins, o, k, width // 2, mn, is_float, hazard)
    if k is not None and ins.mod("op_sel") is not None and "OPSEL" not in op.inputs:
        half = 16 if _HALF_OPERAND.search(mn) else width
        return op_sel_source(o, k, ins.mod("op_sel"), half, mn, is_float, hazard)
    return reader(o, width, mn, hazard, typed)


def _high_half_policy(ins, op, mn):
    """(old-D0 reader or None, where the 16-bit result goes): decision 29."""
    sel = ins.mod("op_sel") or ()
    dst_high = len(sel) > 3 and bool(sel[3]) and "OPSEL" not in op.inputs
    if not _HALF_RESULT.search(op.text) or "D0" in op.inputs:
        if dst_high:
            raise NotModelled(mn, "op_sel on the destination of an op without a 16-bit result")
        return None, False
    if mn in PRESERVE_HIGH:
        return reader(ins.operands[0], 32, mn), dst_high
    if dst_high:
        raise NotModelled(mn, "op_sel[3] on an op whose description does not write a chosen half")
    return (lambda w: 0), False


def valu(ins, op):
    """The step of one VALU instruction; raises NotModelled naming what the machine does not run."""
    mn = ins.mnemonic
    _check_modifiers(ins, _allowed(ins, op))
    if not op.outputs:
        raise NotModelled(mn, "its pseudocode writes no register the machine knows")
    is_float = bool(_FLOAT.search(mn))
    packed = "VOP3P" in op.families and not ({"OPSEL", "OPSEL_HI"} & op.inputs) and mn.startswith("v_pk_")
    clamp = bool(ins.mod("clamp"))
    saturate = INT_CLAMP.get(mn) if clamp and not is_float else None
    if clamp and saturate is None and (not is_float or op.widths.get("D0") not in (32, 64) or packed):
        raise NotModelled(mn, "clamp on a result that is not f32/f64 or an integer add/sub")
    names = _valu_names(ins, op)
    if len(names) != len(ins.operands):
        raise NotModelled(ins.name, f"{len(ins.operands)} operands for {names}")
    if ins.encoding == "dpp" and "VOPC" in op.families:
        raise NotModelled(ins.name, "a DPP compare (which mask bits a disabled lane leaves)")
    reads, writes = [], {}
    for name, o in zip(names, ins.operands):
        key = "VCC" if name == "VCC_IN" else name
        width = op.widths[key]
        if name == "VCC_IN" or (name in op.inputs and name != "VCC") or (name == "VCC" and "VCC" not in op.outputs):
            reads.append((key, _source(ins, op, key, o, width, mn, is_float or mn in SIGN_BIT_OPS, packed)
                          if key.startswith("S")
                          else reader(o, width, mn, _hazard(ins.index))))
        if name in op.outputs:
            writes[name] = writer(o, width, mn)
    for name in sorted(op.lane_masks - op.inputs - {"EXEC"}):   # inactive lanes' bits: 0 (written below)
        reads.append((name, lambda w: 0))
    if ins.mod("bitop3") is not None:   # the truth table sits in the OMOD, ABS and NEG fields: TTBL = {OMOD, ABS, NEG}
        table = int(ins.mod("bitop3")) & 0xFF
        reads += [("INST.OMOD", lambda w: table >> 6), ("INST.ABS", lambda w: table >> 3 & 7),
                  ("INST.NEG", lambda w: table & 7)]
    elif {"INST.OMOD", "INST.ABS", "INST.NEG"} & op.inputs:
        reads += [(n, lambda w: 0) for n in ("INST.OMOD", "INST.ABS", "INST.NEG") if n in op.inputs]
    if {"OPSEL", "OPSEL_HI"} & op.inputs:
        bits = lambda v: sum(int(b) << i for i, b in enumerate(v or ()))
        sel, sel_hi = bits(ins.mod("op_sel")), bits(ins.mod("op_sel_hi"))
        reads += [(n, (lambda v: lambda w: v)(sel if n == "OPSEL" else sel_hi))
                  for n in ("OPSEL", "OPSEL_HI") if n in op.inputs]
    reads += _state_inputs(op, [n.replace("VCC_IN", "VCC") for n in names] + [n for n, _ in reads])
    state_out = _state_writers(op, names)
    masks = set(op.lane_masks) - {"EXEC"}
    d0_bits = op.widths.get("D0", 32)
    half = bool(_HALF_RESULT.search(op.text)) and "D0" not in op.inputs
    old_d0, to_high = _high_half_policy(ins, op, mn) if "D0" in writes else (None, False)
    if old_d0 is None and "D0" in writes and _HIGH_RESULT.search(op.text) and "D0" not in op.inputs:
        old_d0 = reader(ins.operands[0], 32, mn)
    if old_d0 is not None:
        reads.append(("D0", (lambda w: 0) if to_high else old_d0))
    high_old = reader(ins.operands[0], 32, mn) if to_high else None
    scale = omod(ins, d0_bits, mn) if is_float else None
    if scale is None and (ins.mod("mul") is not None or ins.mod("div") is not None):
        raise NotModelled(mn, "omod on an integer result")
    place = sdwa_destination(ins, 16 if half else d0_bits, mn) if ins.encoding == "sdwa" and "D0" in writes \
        and "VOPC" not in op.families else None
    sdwa_old = reader(ins.operands[0], 32, mn) if place is not None else None
    write_lanes = dpp_write_lanes(ins)[0] if ins.encoding == "dpp" else (lambda w: w.lanes())

    def step(w):
        lanes = write_lanes(w)
        inputs = {name: get(w) for name, get in reads}
        if place is not None:
            inputs["D0"] = 0
        out = op.run(inputs, exec_mask=w.exec)
        for name, value in out.items():
            if name in masks:
                value = int(value) & w.exec
            elif name == "D0":
                if scale is not None:
                    value = scale(value)
                if saturate is not None:
                    value = _saturate(saturate, inputs["S0"], inputs["S1"])
                elif clamp:
                    value = _clamp(value, d0_bits, mn, lanes)
                if to_high:
                    old = np.asarray(high_old(w), np.uint64)
                    value = ((np.asarray(value, np.uint64) & np.uint64(0xFFFF)) << np.uint64(16)) | \
                        (old & np.uint64(0xFFFF))
                if place is not None:
                    value = place(value, sdwa_old(w))
            if name in writes:
                writes[name](w, value, lanes if isinstance(value, np.ndarray) else None)
            else:
                state_out[name](w, value)
        w.pc += 1
    step.decisions = (29,) if half else ()
    step.outputs = sum(1 for name in names if name in op.outputs or name in op.lane_masks - op.inputs)
    return step


# The opcodes llvm-mc encodes `v_fma_mix_f32`, `v_fma_mixlo_f16`, `v_fma_mixhi_f16` as on gfx940-gfx950 (VOP3P 32-34)
# are the CDNA guide's V_MAD_MIX_F32, V_MAD_MIXLO_F16, V_MAD_MIXHI_F16, whose text rounds the product
# (`in[0] * in[1] + in[2]`), where RDNA3's V_FMA_MIX_* texts fuse it (`fma(in[0], in[1], in[2])`). Decision 43: where
# both multiplicands are f16 (op_sel_hi[0] and [1] set) their product is exact in f32 (11 + 11 significand bits,
# exponents within f32's normal range), so the two texts agree bit for bit and the CDNA text runs alone; with an f32
# multiplicand both texts run and a lane where they differ is NotModelled.
FMA_MIX = {"v_fma_mix_f32": "v_mad_mix_f32", "v_fma_mixlo_f16": "v_mad_mixlo_f16", "v_fma_mixhi_f16": "v_mad_mixhi_f16"}


def fma_mix(ins):
    mn = ins.mnemonic
    hi = tuple(int(b) for b in (ins.mod("op_sel_hi") or ()))
    if any(int(b) for name in ("neg_lo", "neg_hi") for b in (ins.mod(name) or ())):
        raise NotModelled(mn, "neg_lo/neg_hi on a mixed-precision op")
    sel = tuple(int(b) for b in (ins.mod("op_sel") or ()))
    operands = list(ins.operands)
    for k, o in enumerate(operands[1:4]):
        # a float inline constant where the text reads the source as f16 is that f16 value in the low half (as
        # decision 38 for v_pk_*_f16): llc writes `v_fma_mix_f32 v4, v3, 1.0, 0 op_sel_hi:[1,1,0]` for x * 1.0
        if isinstance(o, Imm) and o.kind == "float" and len(hi) > k and hi[k]:
            if not o.inline or (len(sel) > k and sel[k]):
                raise NotModelled(mn, f"constant {o.text} read as f16 {'with op_sel' if o.inline else '(a literal)'}")
            operands[1 + k] = Imm(_const(o, 16, mn, False), f"{o.text} (f16)", "int")
    alias = replace(ins, mnemonic=FMA_MIX[mn], operands=tuple(operands))
    op = compile_op(alias.mnemonic)
    if len(hi) < 2 or not (hi[0] and hi[1]):
        op = _BothTexts(op, compile_variant(alias.mnemonic, op.text.replace("in[0] * in[1] + in[2]",
                                                                              "fma(in[0], in[1], in[2])")), mn)
    # neg/abs negate the source as the type the text converts it from: an f16 source (op_sel_hi set) in the low
    # half has its sign at bit 15, not 31 (the text reads the 32-bit register and converts S[15:0]; negating bit 31
    # left `-v1` unnegated: found by the three-way campaign, llc's f16 division writes `v_fma_mix_f32 v3, -v1, ...`)
    op = _MixSources(op, {name: 16 if len(hi) > k and hi[k] and not (len(sel) > k and sel[k]) else 0
                          for k, name in enumerate(("S0", "S1", "S2"))})
    step = valu(alias, op)
    step.decisions = tuple(sorted(set(step.decisions) | {43}))
    return step


class _MixSources:
    """An Op whose sources `typed_sources` names are read as the given float width by valu's neg/abs."""

    def __init__(self, op, typed_sources):
        self._op, self.typed_sources = op, typed_sources

    def __getattr__(self, name):
        return getattr(self._op, name)


class _BothTexts:
    """The CDNA text's Op (`rounded`) with RDNA3's fused text run beside it: the result where both give the same D0,
    NotModelled on an active lane where they differ (decision 43)."""

    def __init__(self, rounded, fused, mnemonic):
        self._rounded, self._fused, self._mnemonic = rounded, fused, mnemonic

    def __getattr__(self, name):
        return getattr(self._rounded, name)

    def run(self, inputs, exec_mask=None, memory=None):
        out = self._rounded.run(inputs, exec_mask=exec_mask)
        other = self._fused.run(inputs, exec_mask=exec_mask)
        lanes = ((np.uint64(int(exec_mask)) >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(bool)
        if (lanes & (np.asarray(out["D0"]) != np.asarray(other["D0"]))).any():
            raise NotModelled(self._mnemonic, "an f32 multiplicand where the CDNA guide's rounded product and RDNA3's "
                                              "fused one give different results")
        return out


# CLAMP on an integer add or subtract saturates to the result type's range instead of wrapping (decision 32):
# mnemonic -> (operation, signed, bits)
INT_CLAMP = {f"v_{op}_{t}{w}": (op, t == "i", w) for op in ("add", "sub", "subrev") for t in ("u", "i")
             for w in (16, 32)}


def _saturate(how, s0, s1):
    op, signed, bits = how
    def value(x):
        x = np.asarray(x, np.uint64).astype(object) & ((1 << bits) - 1)
        return np.where(x >= (1 << (bits - 1)), x - (1 << bits), x) if signed else x
    a, b = value(s0), value(s1)
    exact = a + b if op == "add" else (a - b if op == "sub" else b - a)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    clipped = np.minimum(np.maximum(exact, lo), hi)
    return np.array([int(x) & ((1 << bits) - 1) for x in np.broadcast_to(clipped, (64,))], np.uint64)


def _clamp(bits, width, mn, lanes):
    ft, ut = (np.float32, np.uint32) if width == 32 else (np.float64, np.uint64)
    x = np.asarray(bits, np.uint64).astype(ut).view(ft)
    if np.isnan(x[lanes]).any():
        raise NotModelled(mn, "clamp of a NaN (DX10_CLAMP)")
    return np.clip(x, ft(0), ft(1)).view(ut).astype(np.uint64)
