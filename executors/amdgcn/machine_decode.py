"""Decode of a Function into steps for machine.py's interpreter: one closure per instruction, built once.

A step is ``step(wave) -> None``; it advances ``wave.pc`` (an instruction index) or sets ``wave.done``. The operand
to pseudocode-name mapping and the policies are machine.py's module docstring.
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm, Label, Reg, Special, Waitcnt
from gfxhound.executors.amdgcn.machine import (CACHE_MODS, M32, M64, NOOPS, _FLOAT, _check_modifiers, _hazard, _record, reader,
                                                retire, writer)
from gfxhound.executors.amdgcn.machine_buffer import buffer_step
from gfxhound.executors.amdgcn.machine_div import DIV_STEPS
from gfxhound.executors.amdgcn.machine_fp8 import FP8_STEPS
from gfxhound.executors.amdgcn.machine_hwreg import HWREG_STEPS, guard_narrow_float
from gfxhound.executors.amdgcn.machine_lds_dma import is_lds_dma, lds_dma_step
from gfxhound.executors.amdgcn.machine_lanes import SPECIAL
from gfxhound.executors.amdgcn.machine_mfma import mfma_step
from gfxhound.executors.amdgcn.machine_mfma_f8f6f4 import F8F6F4, f8f6f4_step
from gfxhound.executors.amdgcn.machine_private import scratch_step
from gfxhound.executors.amdgcn.machine_state import _state_inputs, _state_writers
from gfxhound.executors.amdgcn.machine_transpose import TRANSPOSING_READS, transposing_read_step
from gfxhound.executors.amdgcn.machine_valu import FMA_MIX, fma_mix, valu
from gfxhound.executors.amdgcn.pcode import NotModelled, compile_op

SIGN32 = 1 << 31
VALU_FAMILIES = {"VOP1", "VOP2", "VOP3", "VOPC", "VOP3SD", "VOP3P"}
LANE_MASK_OUTS = {"VCC", "D1"}


def _sext32(x):
    return ((np.asarray(x, np.uint64) & np.uint64(M32)).astype(np.int64) ^ SIGN32) - SIGN32


class Port:
    """The pseudocode's memory for one instruction: the Calc*Addr hooks (ISA semantics) and the wave's memory."""

    def __init__(self, mem, instruction, wrap32: bool = False):
        self.mem, self.instruction, self.wrap = mem, instruction, np.uint64(M32 if wrap32 else M64)

    def address(self, helper, *args):
        a = [np.asarray(x).astype(np.uint64) if isinstance(x, np.ndarray) else np.uint64(int(x) & M64) for x in args]
        with np.errstate(over="ignore"):
            if helper == "CalcGlobalAddr":   # ADDR (64-bit pair, or 32-bit offset with SADDR) + SADDR + offset
                return a[0] + a[1] + _sext32(a[2]).astype(np.uint64)
            if helper == "CalcFlatAddr":
                return a[0] + _sext32(a[1]).astype(np.uint64)
            if helper == "CalcDsAddr":   # ADDR (32 bits) + {OFFSET1, OFFSET0}: the 16-bit offset of a one-address op
                return (a[0] & np.uint64(M32)) + ((a[2] & np.uint64(0xFF)) << np.uint64(8) | a[1] & np.uint64(0xFF))
            if helper == "CalcScalarGlobalAddr":  # SBASE + SOFFSET + OFFSET (signed)
                addr = a[0] + a[1] + _sext32(a[2]).astype(np.uint64)
                if int(addr) & 3:
                    raise NotModelled(self.instruction.mnemonic, "a scalar load from an address not 4-aligned")
                return addr
        raise NotModelled(self.instruction.mnemonic, f"address helper {helper}")

    # LDS addresses are 32 bits: CalcDsAddr's result plus the instruction offset wraps there (llc folds
    # `0 - 4*t` + offset:1020 into one ds_read and relies on it); the pseudocode's sum is typed 64-bit.
    def load(self, addr, nbytes, lanes):
        return self.mem.load(np.asarray(addr, np.uint64) & self.wrap, nbytes, lanes, self.instruction)

    def store(self, addr, nbytes, bits, lanes):
        addr = np.asarray(addr, np.uint64) & self.wrap
        if self.wrap == np.uint64(M32) and self.mem.regions:   # LDS: a store past the allocation is dropped (as
            size = len(self.mem.regions[0].data)               # the hardware does; Triton masks LDS writes so)
            lanes = np.asarray(lanes, bool) & (np.broadcast_to(addr, np.shape(lanes)) + np.uint64(nbytes)
                                               <= np.uint64(size))
        return self.mem.store(addr, nbytes, bits, lanes, self.instruction)



def _next(w):
    w.pc += 1


def _endpgm(w):
    """The wave ends; its loads still return (an LDS-direct load's bytes land)."""
    for entries in w.outstanding.values():
        retire(w, entries)
        entries.clear()
    w.done = True


def _barrier(w):
    """Stop this wave until every wave of its workgroup that has not ended reaches a barrier (run.py resumes)."""
    w.pc += 1
    w.at_barrier = True


def decode(ins, processor: str = ""):
    """The step of one Instruction; raises NotModelled (naming it) for what the machine does not run. A step
    with a 16-bit float result refuses to run while MODE bit 23 is set (machine_hwreg.py). `processor` (gfx942)
    chooses what fp8 and bf8 mean (machine_fp8.py); without it their steps refuse."""
    return guard_narrow_float(ins, _decode(ins, processor))


def _decode(ins, processor):
    mn = ins.mnemonic
    if ins.encoding == "e64_dpp":
        raise NotModelled(ins.name, "VOP3 DPP (a gfx11+ encoding)")
    if mn == "s_endpgm":
        return _endpgm
    if is_lds_dma(ins):
        return lds_dma_step(ins)
    if mn in NOOPS:
        return _next
    if mn == "s_waitcnt":
        return _waitcnt(ins)
    if mn == "s_barrier":
        return _barrier
    if mn in F8F6F4:
        return f8f6f4_step(ins, processor)
    if mn.startswith("v_mfma_"):
        return mfma_step(ins, processor)
    if mn in FP8_STEPS:
        return FP8_STEPS[mn](ins, processor)
    if mn in FMA_MIX:
        return fma_mix(ins)
    if mn in TRANSPOSING_READS:
        return transposing_read_step(ins, processor)
    if mn in DIV_STEPS:
        return DIV_STEPS[mn](ins)
    if mn in HWREG_STEPS:
        return HWREG_STEPS[mn](ins)
    special = SPECIAL.get(mn)
    if special:
        step = special(ins)
        if mn.startswith("v_"):   # a VALU op: its first operand is what it writes (machine_hazards.py)
            step.outputs = 1
        return step
    op = compile_op(mn)
    fams = set(op.families)
    if op.memory:
        if "SMEM" in fams:
            return _smem(ins, op)
        if "DS" in fams:
            return _ds(ins, op)
        if "SCRATCH" in fams and mn.startswith("scratch_"):
            return scratch_step(ins, op)
        if "MUBUF" in fams and mn.startswith("buffer_"):
            return buffer_step(ins, op)
        if fams & {"GLOBAL", "FLAT"}:
            return _vmem(ins, op, "GLOBAL" in fams and mn.startswith("global_"))
        raise NotModelled(mn, f"memory family {'/'.join(op.families)}")
    if "PC" in op.outputs:
        return _branch(ins, op)
    if fams & VALU_FAMILIES and op.lanes:
        return valu(ins, op)
    if fams & {"SOP1", "SOP2", "SOPC", "SOPK"}:
        return _salu(ins, op, "SOPK" in fams)
    raise NotModelled(mn, f"family {'/'.join(op.families)}")


def _salu(ins, op, sopk: bool):
    mn, ops = ins.mnemonic, ins.operands
    _check_modifiers(ins, ())
    if sopk:
        names = ["D0", "S0"] if "D0" in op.widths else ["S0", "S1"]
    else:
        names = (["D0"] if "D0" in op.outputs else []) + [s for s in ("S0", "S1") if s in op.widths]
    if len(names) != len(ops):
        raise NotModelled(mn, f"{len(ops)} operands for {names}")
    reads, writes = [], {}
    for name, o in zip(names, ops):
        width = op.widths[name]
        if sopk and name == names[-1]:
            if not isinstance(o, Imm):
                raise NotModelled(mn, f"SOPK immediate {o}")
            value = int(o.value) & 0xFFFF
            reads.append((name, lambda w, value=value: value))
            continue
        if name in op.inputs:
            reads.append((name, reader(o, width, mn, _hazard(ins.index))))
        elif name == "D0":   # the old value, for bits the text does not write (not a read of the program's)
            try:
                reads.append((name, reader(o, width, mn)))
            except NotModelled:
                pass
        if name in op.outputs:
            writes[name] = writer(o, width, mn)
    reads += _state_inputs(op, names)
    state_out = _state_writers(op, names)

    def step(w):
        out = op.run({name: get(w) for name, get in reads})
        for name, value in out.items():
            (writes[name](w, value) if name in writes else state_out[name](w, value))
        w.pc += 1
    return step


def _branch(ins, op):
    if ins.target is None or not (ins.operands and isinstance(ins.operands[0], Label)):
        raise NotModelled(ins.mnemonic, "a branch without a local label")
    reads = _state_inputs(op, ["PC", "SIMM16"])
    target = ins.target

    def step(w):
        out = op.run({"PC": 0, "SIMM16": 1, **{name: get(w) for name, get in reads}})
        w.pc = target if out["PC"] != 4 else w.pc + 1
    return step



def _smem(ins, op):
    mn, ops = ins.mnemonic, ins.operands
    if not mn.startswith("s_load_"):
        raise NotModelled(mn, "scalar memory other than s_load")
    _check_modifiers(ins, CACHE_MODS | {"offset"})
    if len(ops) != 3:
        raise NotModelled(mn, f"{len(ops)} operands")
    sdata, sbase, off = ops
    put = writer(sdata, op.widths["SDATA"], mn)
    base = reader(sbase, 64, mn, _hazard(ins.index))
    extra = int(ins.mod("offset", 0))
    if isinstance(off, Imm):
        soff, offset = (lambda w: 0), (int(off.value) + extra) & M32
    else:
        soff, offset = reader(off, 32, mn, _hazard(ins.index)), extra & M32
    # a load into VCC, EXEC or M0 (`s_load_dwordx2 vcc, ...`) is not tracked for wait hazards: reads of those
    # registers take no hazard check (machine.reader)
    dest = {("s", sdata.index + k) for k in range(sdata.count)} if isinstance(sdata, Reg) else set()

    def step(w):
        out = op.run({"SBASE": base(w), "SOFFSET": soff(w), "OFFSET": offset}, memory=Port(w.mem, ins))
        put(w, out["SDATA"])
        _record(w, "lgkm", ins.index, dest, ordered=False)
        w.pc += 1
    return step


def _vmem(ins, op, is_global: bool):
    mn, ops = ins.mnemonic, list(ins.operands)
    _check_modifiers(ins, CACHE_MODS | {"offset"})
    offset = int(ins.mod("offset", 0)) & M32
    out_name = next((n for n in ("VDATA", "RETURN_DATA") if n in op.outputs), None)
    data_name = next((n for n in ("VDATA", "DATA") if n in op.inputs), None)
    dst = ops.pop(0) if out_name and (out_name == "VDATA" or len(ops) == (4 if is_global else 3)) else None
    saddr = ops.pop() if is_global else None
    if not ops:
        raise NotModelled(mn, "no address operand")
    vaddr = ops.pop(0)
    data = ops.pop(0) if data_name else None
    if ops:
        raise NotModelled(mn, f"operands {ops} left over")
    reads = []
    if isinstance(saddr, Special) and saddr.name == "off" or saddr is None:
        reads.append(("ADDR", reader(vaddr, 64, mn, _hazard(ins.index))))
        if is_global:
            reads.append(("SADDR", lambda w: 0))
    else:
        reads += [("ADDR", reader(vaddr, 32, mn, _hazard(ins.index))), ("SADDR", reader(saddr, 64, mn, _hazard(ins.index)))]
    if data is not None:
        reads.append((data_name, reader(data, op.widths[data_name], mn, _hazard(ins.index))))
    put = writer(dst, op.widths[out_name], mn) if dst is not None else None
    if put is not None and out_name in op.outputs:   # d16 loads keep the other half: pass the old value
        reads.append((out_name, reader(dst, op.widths[out_name], mn)))
    dest = {(dst.file, dst.index + k) for k in range(dst.count)} if isinstance(dst, Reg) else set()
    counters = ("vm",) if is_global else ("vm", "lgkm")
    # decision 37: the tabled text of the float atomics (atomic_add_f32/f64, atomic_pk_add_f16/bf16) writes
    # MEM[ADDR] with no CalcGlobalAddr/CalcFlatAddr; the encoding's address is the one the helper would build
    direct = "OFFSET" not in op.inputs and "SADDR" not in op.inputs

    def inputs(w):
        values = {name: get(w) for name, get in reads}
        if direct:
            with np.errstate(over="ignore"):
                values["ADDR"] = (np.asarray(values["ADDR"], np.uint64) + np.asarray(values.pop("SADDR", 0), np.uint64)
                                  + _sext32(offset).astype(np.uint64))
        return values

    def step(w):
        lanes = w.lanes()
        out = op.run({"OFFSET": offset, **inputs(w)}, exec_mask=w.exec, memory=Port(w.mem, ins))
        if put is not None and out_name in out:
            put(w, out[out_name], lanes)
        for c in counters:
            _record(w, c, ins.index, dest)
        w.pc += 1
    return step


def _ds(ins, op):
    mn, ops = ins.mnemonic, list(ins.operands)
    _check_modifiers(ins, {"offset", "offset0", "offset1"})
    two = "OFFSET0" in op.inputs and ins.mod("offset") is None and (ins.mod("offset0") is not None or "2" in mn)
    fixed = {}
    if "OFFSET" in op.inputs:
        fixed["OFFSET"] = int(ins.mod("offset", 0)) & 0xFFFF
    if "OFFSET0" in op.inputs:
        if two:
            fixed.update(OFFSET0=int(ins.mod("offset0", 0)) & 0xFF, OFFSET1=int(ins.mod("offset1", 0)) & 0xFF)
        else:
            off = int(ins.mod("offset", 0)) & 0xFFFF
            fixed.update(OFFSET0=off & 0xFF, OFFSET1=off >> 8)
    datas = [n for n in ("DATA", "DATA2") if n in op.inputs]
    has_dst = "RETURN_DATA" in op.outputs and len(ops) == 2 + len(datas)
    dst = ops.pop(0) if has_dst else None
    if len(ops) != 1 + len(datas):
        raise NotModelled(mn, f"operands {ins.operands}")
    get_addr = reader(ops[0], 32, mn, _hazard(ins.index))
    if not ({"OFFSET", "OFFSET0", "OFFSET1"} & op.inputs):
        # decision 35: the tabled text of 21 DS ops (ds_read_u8/u16/i8/i16, ds_write_b8/b16, their d16 forms, some
        # atomics) writes MEM[ADDR] with no offset; the DS encoding's address is ADDR + the instruction offset
        if ins.mod("offset0") is not None or ins.mod("offset1") is not None:
            raise NotModelled(mn, "offset0/offset1 on a one-address DS op")
        off = int(ins.mod("offset", 0)) & 0xFFFF
        if off:
            base_addr = get_addr
            get_addr = lambda w: (np.asarray(base_addr(w), np.uint64) + np.uint64(off)) & np.uint64(M32)
    reads = [("ADDR", get_addr)]
    reads += [(n, reader(o, op.widths[n], mn, _hazard(ins.index))) for n, o in zip(datas, ops[1:])]
    put = writer(dst, op.widths["RETURN_DATA"], mn) if dst is not None else None
    if put is not None:
        reads.append(("RETURN_DATA", reader(dst, op.widths["RETURN_DATA"], mn)))
    dest = {(dst.file, dst.index + k) for k in range(dst.count)} if isinstance(dst, Reg) else set()

    def step(w):
        if w.lds is None:
            raise NotModelled(mn, "an LDS access in a kernel without a group segment")
        lanes = w.lanes()
        out = op.run({**fixed, **{name: get(w) for name, get in reads}}, exec_mask=w.exec,
                     memory=Port(w.lds, ins, wrap32=True))
        if put is not None and "RETURN_DATA" in out:
            put(w, out["RETURN_DATA"], lanes)
        _record(w, "lgkm", ins.index, dest)
        w.pc += 1
    return step


def _waitcnt(ins):
    wc = ins.operands[0] if ins.operands else Waitcnt()
    if not isinstance(wc, Waitcnt):
        if isinstance(wc, Imm) and wc.value == 0:
            wc = Waitcnt(0, 0, 0)
        else:
            raise NotModelled(ins.mnemonic, f"operand {wc}")
    limits = (("vm", wc.vmcnt), ("lgkm", wc.lgkmcnt))

    def step(w):
        for counter, n in limits:
            entries = w.outstanding[counter]
            if n is None or len(entries) <= n:
                continue
            done = len(entries) - n
            if n == 0 or not w.unordered:
                retire(w, entries[:done])
                del entries[:done]
                continue
            # k entries returned, SMEM among them in any order: only the oldest in-order entries are sure to be
            # back (as many as returned beyond the SMEM count); an SMEM entry is sure only at a count of 0
            unordered = [e for e in entries if e[0] in w.unordered]
            sure = max(0, done - len(unordered))
            ordered = [e for e in entries if e[0] not in w.unordered]
            retired = {id(e) for e in ordered[:sure]}
            retire(w, ordered[:sure])
            entries[:] = [e for e in entries if id(e) not in retired]
        w.pc += 1
    return step
