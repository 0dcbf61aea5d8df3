"""S_SETREG_B32, S_SETREG_IMM32_B32 and S_GETREG_B32 on the machine, for the MODE hardware register.

The guide's pseudocode (pcode_data.py; CDNA4 guide, SOPK) reads

    hwRegId = SIMM16.u16[5 : 0]; offset = SIMM16.u16[10 : 6]; size = SIMM16.u16[15 : 11].u32 + 1U;
    mask = ((1 << size) - 1) << offset; mask = (mask & HwRegWriteMask(hwRegId, WAVE_STATUS.PRIV));
    value = ((S0.u32 << offset.u32) & mask.u32) | (HW_REGISTERS[hwRegId] & ~mask); HW_REGISTERS[hwRegId] = value
    // Side-effects may trigger here if certain bits are modified

`HwRegWriteMask`, `WAVE_STATUS.PRIV` and `HW_REGISTERS` are not defined by the pseudocode (so the text does not
compile: "unknown name WAVE_STATUS.PRIV"); the machine runs it here (decision 41, docs/amdgcn-pcode.md):

- only hwRegId 1, MODE ("HW_REG_MODE: shader writeable mode bits", LLVM's hwreg syntax; the id is llvm-mc's
  encoding of `hwreg(HW_REG_MODE, ...)`), is modelled; any other register is `NotModelled` at decode. A kernel runs
  unprivileged (WAVE_STATUS.PRIV = 0) and the guide says the program sets MODE itself ("The MODE register is set
  using the S_SETREG instruction", section 6.4), so every MODE bit a write selects is taken as writable.
- bits 7:0 are FP_ROUND (3:0) and FP_DENORM (7:4) (guide, Table 26 "Round and Denormal Modes"). The machine models
  round-to-nearest-even with denormals only (decision 9; run.py refuses a descriptor with other modes), i.e.
  MODE[7:0] = 0xf0: a write leaving them so runs, one that changes them is `NotModelled` where it runs.
- bit 23, which Triton sets for its f32 -> fp8 conversions (`hwreg(HW_REG_MODE, 23, 1), 1`) and which third-party
  code calls FP16_OVFL (saturate an f16 overflow; no AMD text for it was found in this session): the write is
  recorded (``Wave.mode_bits``), and while it is 1 any instruction with a 16-bit-or-narrower float result is
  `NotModelled` where it runs (``guard_narrow_float``). Whatever the bit means, the machine then refuses rather
  than computes differently.
- any other MODE bit (IEEE, DX10_CLAMP, exception enables, ...): `NotModelled` at decode (positions not taken
  from an AMD text here).
- S_GETREG_B32 of MODE reads bits 7:0 (0xf0) and bit 23 (0 until written); other bits are `NotModelled`.

The wait state the guide requires between two S_SETREGs of one register is not checked (machine_hazards.py).
"""
from __future__ import annotations

import re
from functools import wraps

from gfxhound.executors.amdgcn.asm_operands import Func, Imm
from gfxhound.executors.amdgcn.machine import M32, NotModelled, _check_modifiers, _hazard, reader, writer

__all__ = ["HWREG_STEPS", "guard_narrow_float", "hwreg_field"]

MODE_ID = 1
ROUND_DENORM = 0xFF            # FP_ROUND 3:0, FP_DENORM 7:4 (Table 26)
MODELLED_ROUND_DENORM = 0xF0   # round to nearest even (0), denormals allowed in and out (3) for both widths
OVFL = 1 << 23
KNOWN = ROUND_DENORM | OVFL
_IDS = {"HW_REG_MODE": MODE_ID}
_NARROW = re.compile(r"^v_(?!cmp)[a-z0-9_]*?_(f16|bf16|fp8|bf8|f32|f64|[iub]\d+)(?:_|$)")


def hwreg_field(op, mn: str):
    """(hwRegId, offset, size) of the SIMM16 operand: `hwreg(NAME|id, offset, size)` or the raw 16-bit value."""
    if isinstance(op, Func) and op.name.lower() == "hwreg" and op.args:
        reg, rest = op.args[0], op.args[1:]
        reg = _IDS.get(str(reg).upper(), reg) if not isinstance(reg, int) else reg
        if not isinstance(reg, int):
            raise NotModelled(mn, f"hardware register {op.args[0]}")
        offset, size = (rest + (0, 32))[:2] if len(rest) < 2 else rest
        return reg, int(offset), int(size)
    if isinstance(op, Imm) and op.kind == "int":
        v = int(op.value) & 0xFFFF
        return v & 0x3F, (v >> 6) & 0x1F, ((v >> 11) & 0x1F) + 1
    raise NotModelled(mn, f"hwreg operand {op}")


def _mode_mask(ins, field_op):
    mn = ins.mnemonic
    reg, offset, size = hwreg_field(field_op, mn)
    if reg != MODE_ID:
        raise NotModelled(mn, f"hardware register {reg} (only MODE, id 1, is modelled)")
    mask = (((1 << size) - 1) << offset) & M32
    if mask & ~KNOWN:
        raise NotModelled(mn, f"MODE bits {mask & ~KNOWN:#x} (only FP_ROUND/FP_DENORM 7:0 and bit 23 are modelled)")
    return offset, mask


def _mode(w) -> int:
    return MODELLED_ROUND_DENORM | getattr(w, "mode_bits", 0)


def _setreg(ins):
    mn = ins.mnemonic
    _check_modifiers(ins, ())
    if len(ins.operands) != 2:
        raise NotModelled(mn, f"operands {ins.operands}")
    field_op, src = ins.operands
    offset, mask = _mode_mask(ins, field_op)
    if mn == "s_setreg_imm32_b32":
        if not isinstance(src, Imm) or src.kind != "int":
            raise NotModelled(mn, f"value {src}")
        value = int(src.value) & M32
        get = lambda w: value
    else:
        get = reader(src, 32, mn, _hazard(ins.index))

    def step(w):
        new = ((int(get(w)) << offset) & mask) | (_mode(w) & ~mask)
        if new & ROUND_DENORM != MODELLED_ROUND_DENORM:
            raise NotModelled(mn, f"MODE FP_ROUND/FP_DENORM = {new & ROUND_DENORM:#04x} (only round-to-nearest-even "
                                  f"with denormals, 0xf0, is modelled: decision 9)")
        w.mode_bits = new & OVFL
        w.pc += 1
    return step


def _getreg(ins):
    mn = ins.mnemonic
    _check_modifiers(ins, ())
    if len(ins.operands) != 2:
        raise NotModelled(mn, f"operands {ins.operands}")
    dst, field_op = ins.operands
    offset, mask = _mode_mask(ins, field_op)
    put = writer(dst, 32, mn)

    def step(w):   # "D0.u32 = 32'U(32'I(value >> offset.u32) & ((1 << size) - 1))"
        put(w, (_mode(w) & mask) >> offset)
        w.pc += 1
    return step


HWREG_STEPS = {"s_setreg_b32": _setreg, "s_setreg_imm32_b32": _setreg, "s_getreg_b32": _getreg}


def guard_narrow_float(ins, step):
    """`step`, refusing to run while MODE bit 23 is set if the instruction's result is a 16-bit-or-narrower float
    (the first type in the mnemonic: v_cvt_f16_f32, v_pk_fma_f16, v_mad_mixlo_f16, v_cvt_pk_fp8_f32)."""
    found = _NARROW.match(ins.mnemonic)
    if getattr(step, "overflow_refused", False):   # refuses every lane the bit could change (machine_fp8.py)
        return step
    if not found or found.group(1) not in ("f16", "bf16", "fp8", "bf8"):
        return step
    mn = ins.mnemonic

    @wraps(step)
    def guarded(w):
        if getattr(w, "mode_bits", 0) & OVFL:
            raise NotModelled(mn, "a 16-bit float result while MODE bit 23 (FP16_OVFL) is set")
        step(w)
    return guarded
