"""One wave64 of gfx942/gfx950 run on the CPU: its register state and an interpreter over a Function's instructions,
every instruction's meaning being AMD's pseudocode (pcode.py) and nothing of LLVM's.

Why decode once: ``Kernel(function)`` (machine_kernel.py) turns each instruction into a step (operand readers and
writers bound to the pseudocode's register names, the ``Op`` compiled once) before anything runs, and a wave's
loop only calls steps. An instruction the machine does not model becomes a step that raises ``NotModelled`` naming
it when a wave runs it: a kernel is unresolved by what its executed path meets (Triton's failed-assertion path
ends in an ``s_trap`` a passing kernel never runs), never a finding.

What the machine adds around the pseudocode (docs/amdgcn-pcode.md: "the machine maps encoding fields"):

- operands -> names: SOP1/SOP2 ``D0, S0, S1``; SOPC ``S0, S1``; SOPK ``D0, SIMM16`` (as ``S0``) or ``S0, SIMM16``
  (as ``S1``); VOP1/VOP2/VOP3 ``D0, S0, S1, S2``; VOP2/VOP3SD carries ``D0, VCC|sdst, S0, S1[, VCC|ssrc2]``;
  ``v_mad_u64_u32`` ``D0, D1, S0..S2``; VOPC ``D0`` (vcc in e32, an SGPR pair in e64), ``S0, S1``;
  ``v_cndmask_b32`` ``D0, S0, S1, VCC``; ``v_fmamk`` ``D0, S0, SIMM32, S1``, ``v_fmaak`` ``D0, S0, S1, SIMM32``.
- constants: integer inline constants -16..64 sign-extended to the operand's width; float inline constants as
  their IEEE bits at the operand's width (16, 32, 64); 32-bit literals as written, on a 64-bit operand only where
  zero- and sign-extension agree (0..0x7fffffff) and the operand is not f64 (else ``NotModelled``).
- input modifiers neg/abs (float ops only: sign bit flipped/cleared at the operand's width) and ``clamp`` on an
  f32/f64 result (to [0, 1]; a NaN result is ``NotModelled``: DX10_CLAMP). DPP, SDWA, op_sel/op_sel_hi/neg_lo/
  neg_hi and OMOD: machine_modifiers.py, applied by machine_valu.py.
- policies the pseudocode leaves open: a lane mask a VALU op writes (a compare's D0, a carry-out) has 0 for
  inactive lanes; a VALU result reaches active lanes only; a 16-bit result's high half (decision 29, machine_valu.py).
- cross-lane moves (machine_lanes.py; their pseudocode reads other lanes): ``v_readlane_b32``,
  ``v_writelane_b32``, ``v_readfirstlane_b32``, ``ds_permute/bpermute_b32``; AGPR moves
  ``v_accvgpr_read/write/mov_b32`` (an AGPR file of its own).
- memory: global/flat/SMEM/DS addresses through the pseudocode's Calc*Addr hooks (LDS addresses wrap at 32 bits;
  MUBUF through machine_buffer.py with the guide's range checks; MTBUF is ``NotModelled``); ``s_barrier`` stops the wave for run.py; ``s_waitcnt``
  is accepted and what is outstanding is recorded (``Wave.outstanding``; a read of a register a load has not been
  waited for is appended to ``Wave.hazards``): loads complete at issue for now.
- branches: the SOPP pseudocode decides taken / not taken (run with PC 0, SIMM16 1); the target is asm.py's.

Registers start as canaries (``CANARY``), so a read of something never written shows up as 0xDEADBEEF.
"""
from __future__ import annotations

import re
import struct

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import INV2PI_BITS, Imm, Reg, Special, Src
from gfxhound.executors.amdgcn.machine_hazards import WaitStates
from gfxhound.executors.amdgcn.pcode import NotModelled

__all__ = ["CANARY", "MachineFault", "NotModelled", "StepLimit", "Wave"]

CANARY = 0xDEADBEEF
M32, M64 = (1 << 32) - 1, (1 << 64) - 1
LANE = np.arange(64, dtype=np.uint64)
N_SGPR, N_VGPR, N_AGPR = 104, 512, 256
NOOPS = frozenset({"s_nop", "s_setprio", "s_sleep", "buffer_wbl2", "buffer_inv", "s_dcache_wb", "s_dcache_inv",
                   "buffer_wbinvl1", "buffer_wbinvl1_vol", "s_icache_inv", "v_nop"})
CACHE_MODS = frozenset({"sc0", "sc1", "nt", "glc", "slc", "dlc"})
_FLOAT = re.compile(r"_(f16|f32|f64|bf16)")
# decision 39: untyped selects whose VOP3 form takes the neg/abs input modifiers (llc selects fneg/fabs of a chosen
# float into them: `v_cndmask_b32_e64 v1, |v2|, -v1, vcc`); they act on the 32-bit value's sign bit
SIGN_BIT_OPS = frozenset({"v_cndmask_b32"})


class MachineFault(Exception):
    """The program did what the hardware would trap or corrupt on: an access outside every mapped buffer (the
    guard regions), a store to the kernarg segment, running past the end of the code."""

    def __init__(self, message: str, instruction=None, address: int | None = None, lane: int | None = None):
        where = f" at line {instruction.line} ({instruction.render()})" if instruction is not None else ""
        super().__init__(message + where)
        self.instruction, self.address, self.lane = instruction, address, lane


class StepLimit(MachineFault):
    """A wave ran more instructions than allowed (a hang, or a limit set too low)."""


class Wave:
    """One wave's state: SGPRs (ints), VGPRs/AGPRs ([n][64] uint32), SCC, VCC, EXEC, M0, the instruction index."""

    def __init__(self, ieee: int = 1):
        self.s = [CANARY] * N_SGPR
        self.v = np.full((N_VGPR, 64), CANARY, np.uint32)
        self.a = np.full((N_AGPR, 64), CANARY, np.uint32)
        self.scc, self.vcc, self.exec, self.m0 = 0, CANARY | CANARY << 32, M64, CANARY
        self.pc, self.done, self.steps, self.ieee, self.at_barrier = 0, False, 0, ieee, False
        self.mem = self.lds = None   # global memory and this workgroup's LDS (run.py's GlobalMemory)
        self.private = None          # this wave's scratch (machine_private.PrivateMemory), when the kernel has one
        self.outstanding = {"vm": [], "lgkm": []}  # (instruction index, registers it writes), oldest first
        self.hazards = []                           # (instruction index, register) read before its load was waited
        self.unordered = set()                      # instruction indices whose entries return out of order (SMEM)
        self.waits = WaitStates()                   # recent producers of wait-state hazards (machine_hazards.py)
        self.wait_hazards = []                      # (rule number, producer index, consumer index)

    def lanes(self) -> np.ndarray:
        return ((np.uint64(self.exec) >> LANE) & np.uint64(1)).astype(bool)


# ---- operand readers and writers ----------------------------------------------------------------------------
def _f_bits(x: float, width: int) -> int:
    fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
    return int.from_bytes(struct.pack(fmt, x), "little")


def _const(op, width: int, mn: str, is_f64: bool) -> int:
    if op.kind == "float":
        if width not in (16, 32, 64):
            raise NotModelled(mn, f"float inline constant {op.text} on a {width}-bit operand")
        return INV2PI_BITS[width] if op.is_inv2pi else _f_bits(op.value, width)
    value = int(op.value)
    if op.inline:
        return value & ((1 << width) - 1)
    if width <= 32:
        return value & ((1 << width) - 1)
    # decision 36: a 32-bit literal on a 64-bit operand is expanded as the guide's literal-constant rule says:
    # a float's literal gives the high 32 bits (low bits zero), an unsigned/untyped integer is zero-extended, a
    # signed integer sign-extended
    value &= M32
    if is_f64:
        return value << 32
    if re.search(r"_i64\b|_i64_", mn + "_"):
        return value | (M64 ^ M32) if value & 0x80000000 else value
    return value


def _regs_needed(width: int) -> int:
    return max(1, (width + 31) // 32)


def reader(op, width: int, mn: str, hazard=None, typed: int = 0):
    """A function wave -> raw bits of `op` at `width`: an int (uniform) or a uint64/object array of 64 lanes; neg/abs
    act on the sign bit of the operand's type (`typed` bits: 16 for a 16-bit float read from a 32-bit register)."""
    neg = ab = False
    if isinstance(op, Src):
        if op.sext:
            raise NotModelled(mn, "SDWA sext")
        if not (_FLOAT.search(mn) or mn in SIGN_BIT_OPS):
            raise NotModelled(mn, "neg/abs on an operand of an integer instruction")
        neg, ab, op = op.neg, op.abs, op.base
    if isinstance(op, Imm):
        # decision 45: a float inline constant is the value in the operand's type; on a 16-bit float read of a
        # 32-bit field (`typed` 16) it is the f16 value, not the low half of the f32 one (which is 0 for 1.0)
        value = _const(op, 16 if typed == 16 and op.kind == "float" and op.inline else width, mn, "f64" in mn)
        base = lambda w: value
    elif isinstance(op, Reg):
        if op.count != _regs_needed(width):
            raise NotModelled(mn, f"operand {op} for a {width}-bit field")
        i, n = op.index, op.count
        if op.file == "s":
            if op.last >= N_SGPR:
                raise NotModelled(mn, f"SGPR {op} past s{N_SGPR - 1}")
            base = lambda w: sum(w.s[i + k] << (32 * k) for k in range(n)) & ((1 << width) - 1)
        elif op.file in ("v", "a"):
            f = op.file
            if n == 1:
                base = lambda w: getattr(w, f)[i].astype(np.uint64) & np.uint64((1 << width) - 1)
            elif n == 2:
                base = lambda w: getattr(w, f)[i].astype(np.uint64) | getattr(w, f)[i + 1].astype(np.uint64) << 32
            else:
                base = lambda w: sum(getattr(w, f)[i + k].astype(object) << (32 * k) for k in range(n))
        else:
            raise NotModelled(mn, f"register file {op.file} ({op})")
        if hazard is not None:
            inner, regs = base, [(op.file, i + k) for k in range(n)]
            base = lambda w: (hazard(w, regs), inner(w))[1]
    elif isinstance(op, Special):
        base = _special_reader(op.name, width, mn)
    else:
        raise NotModelled(mn, f"operand {op}")
    if not (neg or ab):
        return base
    return lambda w: negabs(base(w), typed or width, neg, ab)


def negabs(value, width: int, neg: bool, ab: bool):
    """The float source modifiers on raw bits of `width`: abs clears the sign bit, neg flips it (after abs)."""
    if not (neg or ab):
        return value
    sign = 1 << (width - 1)
    if isinstance(value, np.ndarray):
        value = value.astype(np.uint64)
        if ab:
            value = value & np.uint64(~sign & M64)
        return value ^ np.uint64(sign) if neg else value
    value = value & ~sign if ab else value
    return value ^ sign if neg else value


def _special_reader(name: str, width: int, mn: str):
    get = {"vcc": lambda w: w.vcc, "vcc_lo": lambda w: w.vcc & M32, "vcc_hi": lambda w: w.vcc >> 32,
           "exec": lambda w: w.exec, "exec_lo": lambda w: w.exec & M32, "exec_hi": lambda w: w.exec >> 32,
           "m0": lambda w: w.m0, "scc": lambda w: w.scc, "src_scc": lambda w: w.scc,
           "vccz": lambda w: int(w.vcc == 0), "src_vccz": lambda w: int(w.vcc == 0),
           "execz": lambda w: int(w.exec == 0), "src_execz": lambda w: int(w.exec == 0)}.get(name)
    if get is None:
        raise NotModelled(mn, f"special register {name}")
    have = {"vcc": 64, "exec": 64}.get(name, 32 if name in ("vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0") else 1)
    if have != width and not (have == 1 and width <= 32):
        raise NotModelled(mn, f"{name} ({have} bits) for a {width}-bit field")
    return get


def writer(op, width: int, mn: str):
    """A function (wave, bits, lanes or None) storing `bits`; per-lane values reach only `lanes` (bool[64])."""
    if isinstance(op, Reg):
        if op.count != _regs_needed(width):
            raise NotModelled(mn, f"destination {op} for a {width}-bit field")
        i, n, f = op.index, op.count, op.file
        if f == "s":
            if op.last >= N_SGPR:
                raise NotModelled(mn, f"SGPR {op} past s{N_SGPR - 1}")

            def put(w, bits, lanes=None):
                if isinstance(bits, np.ndarray):
                    raise NotModelled(mn, "a per-lane result for an SGPR")
                for k in range(n):
                    w.s[i + k] = (int(bits) >> (32 * k)) & M32
            return put
        if f in ("v", "a"):
            def put(w, bits, lanes=None):
                regs = getattr(w, f)
                if not isinstance(bits, np.ndarray):
                    bits = np.full(64, int(bits), object if width > 64 else np.uint64)
                for k in range(n):
                    part = ((bits >> (32 * k)) & M32) if bits.dtype == object else (bits >> np.uint64(32 * k))
                    part = part.astype(np.uint64).astype(np.uint32)
                    regs[i + k] = part if lanes is None else np.where(lanes, part, regs[i + k])
            return put
        raise NotModelled(mn, f"register file {f} ({op})")
    if isinstance(op, Special):
        name = op.name
        fields = {"vcc": ("vcc", 0, 64), "vcc_lo": ("vcc", 0, 32), "vcc_hi": ("vcc", 32, 32),
                  "exec": ("exec", 0, 64), "exec_lo": ("exec", 0, 32), "exec_hi": ("exec", 32, 32),
                  "m0": ("m0", 0, 32)}
        if name not in fields or fields[name][2] != width:
            raise NotModelled(mn, f"destination {name} for a {width}-bit field")
        attr, lo, bits_n = fields[name]
        keep = M64 & ~(((1 << bits_n) - 1) << lo)

        def put(w, bits, lanes=None):
            if isinstance(bits, np.ndarray):
                raise NotModelled(mn, f"a per-lane result for {name}")
            setattr(w, attr, (getattr(w, attr) & keep) | ((int(bits) & ((1 << bits_n) - 1)) << lo))
        return put
    raise NotModelled(mn, f"destination {op}")


# ---- shared by the decoder and the cross-lane moves ----
def _check_modifiers(ins, allowed):
    for m in ins.modifiers:
        if m.name not in allowed:
            raise NotModelled(ins.mnemonic, f"modifier {m}")


def _hazard(index):
    def check(w, regs):
        if not (w.outstanding["vm"] or w.outstanding["lgkm"]):
            return
        for entries in w.outstanding.values():
            for _, written in entries:
                for r in regs:
                    if r in written and (index, r) not in w.hazards:
                        w.hazards.append((index, r))
    return check


COUNTER_MAX = {"vm": 63, "lgkm": 15}


def _record(w, counter, index, dest, ordered: bool = True):
    """An issued load or store, outstanding under `counter` until an s_waitcnt retires it. Scalar memory returns
    out of order (the guide: SMEM "can return out of order", so only lgkmcnt(0) waits for a given one):
    `ordered=False` marks such an entry for _waitcnt."""
    entries = w.outstanding[counter]
    entries.append((index, dest))
    if not ordered:
        w.unordered.add(index)
    # a counter holds at most its field's maximum (gfx9: VM_CNT 6 bits, 63; LGKM_CNT 4 bits, 15): a wave cannot
    # have more outstanding, so with one more issued the oldest has returned. Keeping 64 of each made a load that
    # 63 later VMEM ops had retired (llc's `s_waitcnt vmcnt(62)` relies on it) read as pending.
    if len(entries) > COUNTER_MAX[counter]:
        retire(w, entries[:1])
        del entries[0]


def retire(w, removed) -> None:
    """Entries leaving a counter's queue: their load has returned, so what it writes outside the registers (an
    LDS-direct load's bytes, machine_lds_dma.py) lands now."""
    for _, dest in removed:
        for item in dest:
            if hasattr(item, "land"):
                item.land(w)
