"""MUBUF buffer instructions on the machine: the buffer resource (V#) in four SGPRs, the address the guide's
"Buffer addressing" builds, and its range checking: an access out of range loads zero and writes nothing. Triton's
AMD backend relies on that for masked loads and stores (`buffer_load_dword ... offen`), so a wrong bound in the
compiled code is a wrong result here, never a fault.

Why a module of its own: the pseudocode's `CalcBufferAddr(VADDR, SRSRC, SOFFSET, OFFSET)` is a helper the text
names but does not define; the guide defines it in prose (CDNA3/CDNA4 ISA, "Buffer Instructions": the V# fields,
"address = base + sgpr_offset + buffer_offset", buffer_offset = inst_offset + vgpr_offset (OFFEN) and
stride * index (IDXEN), "range checking"). Where the prose leaves a choice, decision 30 (docs/amdgcn-pcode.md):

- a raw buffer (stride 0) is checked on inst_offset + vgpr_offset against NUM_RECORDS in bytes; an access that
  starts in range and ends past it is ``NotModelled`` (whether the in-range bytes load is not said), and so is a
  lane whose verdict would change if SOFFSET were part of the check (the text does not say it is);
- a structured buffer (stride > 0, IDXEN) is out of range when index >= NUM_RECORDS; an offset reaching past the
  stride is ``NotModelled``;
- swizzled buffers (SWIZZLE_ENABLE), ADD_TID_ENABLE and the typed MTBUF forms are ``NotModelled`` (LDS-direct
  loads, `lds`, are machine_lds_dma.py's); the NUM_FORMAT/DATA_FORMAT fields do not affect untyped loads and stores.
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm, Reg, Special
from gfxhound.executors.amdgcn.machine import CACHE_MODS, M32, NotModelled, _check_modifiers, _hazard, _record, reader, writer

__all__ = ["buffer_step"]


class BufferPort:
    """The pseudocode's memory for one MUBUF instruction: CalcBufferAddr per the guide, range checks, the wave's
    global memory for what is in range."""

    def __init__(self, mem, instruction, offen: bool, idxen: bool):
        self.mem, self.instruction, self.offen, self.idxen = mem, instruction, offen, idxen
        self.check = None

    def address(self, helper, vaddr, srsrc, soffset, offset):
        mn = self.instruction.mnemonic
        if helper != "CalcBufferAddr":
            raise NotModelled(mn, f"address helper {helper}")
        if isinstance(srsrc, np.ndarray):   # the pseudocode broadcasts the SGPR quad to every lane
            values = set(np.asarray(srsrc).ravel().tolist())
            if len(values) != 1:
                raise NotModelled(mn, "a buffer resource that differs across lanes")
            srsrc = values.pop()
        v = int(srsrc)
        base, stride = v & ((1 << 48) - 1), (v >> 48) & 0x3FFF
        swizzle, records, word3 = (v >> 63) & 1, (v >> 64) & M32, (v >> 96) & M32
        if swizzle:
            raise NotModelled(mn, "a swizzled buffer (SWIZZLE_ENABLE)")
        if (word3 >> 23) & 1:
            raise NotModelled(mn, "ADD_TID_ENABLE in the buffer resource")
        lanes64 = np.broadcast_to(np.asarray(vaddr, np.uint64), (64,)).astype(np.uint64)
        low, high = lanes64 & np.uint64(M32), lanes64 >> np.uint64(32)
        index = low if self.idxen else np.zeros(64, np.uint64)
        voffset = (high if self.idxen else low) if self.offen else np.zeros(64, np.uint64)
        inst = np.uint64(int(offset) & M32)
        sgpr = np.uint64(int(soffset) & M32)
        within = voffset + inst   # buffer_offset without the index term
        self.check = (stride, records, index, within, sgpr)
        with np.errstate(over="ignore"):
            return np.uint64(base) + sgpr + within + index * np.uint64(stride)

    def _in_range(self, nbytes, lanes):
        stride, records, index, within, sgpr = self.check
        mn, on = self.instruction.mnemonic, np.broadcast_to(np.asarray(lanes, bool), (64,))
        n, rec = np.uint64(nbytes), np.uint64(records)
        if stride == 0:
            inside, starts = within + n <= rec, within < rec
            with_sgpr = within + sgpr + n <= rec
            if (on & starts & ~inside).any():
                raise NotModelled(mn, "a raw buffer access that starts in range and ends past NUM_RECORDS")
            if sgpr and (on & (inside != with_sgpr)).any():
                raise NotModelled(mn, "a range check that depends on whether SOFFSET counts (the guide is silent)")
            return on & inside
        if (on & (within + n > np.uint64(stride))).any():
            raise NotModelled(mn, "a structured buffer access reaching past its stride")
        return on & (index < rec)

    def load(self, addr, nbytes, lanes):
        ok = self._in_range(nbytes, lanes)
        out = self.mem.load(np.asarray(addr, np.uint64), nbytes, ok, self.instruction)
        return np.where(ok, out, np.uint64(0))

    def store(self, addr, nbytes, bits, lanes):
        return self.mem.store(np.asarray(addr, np.uint64), nbytes, bits, self._in_range(nbytes, lanes),
                              self.instruction)


def buffer_step(ins, op):
    """The step of a MUBUF instruction: `buffer_* vdata, vaddr|off, s[n:n+3], soffset [offen] [idxen]
    [offset:N]`; an atomic returns the old value when sc0 (gfx940+: "return pre-op value") is written."""
    mn, ops = ins.mnemonic, list(ins.operands)
    _check_modifiers(ins, CACHE_MODS | {"offset", "offen", "idxen"})
    if len(ops) != 4:
        raise NotModelled(mn, f"{len(ops)} operands")
    vdata, vaddr, srsrc, soffset = ops
    offen, idxen = bool(ins.mod("offen")), bool(ins.mod("idxen"))
    offset = int(ins.mod("offset", 0)) & 0xFFF
    if isinstance(vaddr, Special) and vaddr.name == "off":
        if offen or idxen:
            raise NotModelled(mn, "offen/idxen without a VADDR")
        get_vaddr = lambda w: 0
    else:
        need = 64 if offen and idxen else 32
        if not isinstance(vaddr, Reg) or vaddr.count * 32 != need:
            raise NotModelled(mn, f"VADDR {vaddr} for offen={offen} idxen={idxen}")
        get_vaddr = reader(vaddr, need, mn, _hazard(ins.index))
    if not isinstance(srsrc, Reg) or srsrc.file != "s" or srsrc.count != 4:
        raise NotModelled(mn, f"SRSRC {srsrc}")
    reads = [("VADDR", get_vaddr), ("SRSRC", reader(srsrc, 128, mn, _hazard(ins.index))),
             ("SOFFSET", (lambda w, v=int(soffset.value) & M32: v) if isinstance(soffset, Imm)
              else reader(soffset, 32, mn, _hazard(ins.index)))]
    atomic = "RETURN_DATA" in op.outputs
    out_name = "RETURN_DATA" if atomic else ("VDATA" if "VDATA" in op.outputs else None)
    data_name = "DATA" if "DATA" in op.inputs else ("VDATA" if "VDATA" in op.inputs and not out_name else None)
    if data_name:
        reads.append((data_name, reader(vdata, op.widths[data_name], mn, _hazard(ins.index))))
    returns = out_name == "VDATA" or (atomic and bool(ins.mod("sc0")))
    put = writer(vdata, op.widths[out_name], mn) if returns else None
    if put is not None and out_name in op.inputs:   # d16 loads keep the other half: pass the old value
        reads.append((out_name, reader(vdata, op.widths[out_name], mn)))
    dest = ({(vdata.file, vdata.index + k) for k in range(vdata.count)}
            if put is not None and isinstance(vdata, Reg) else set())

    # decision 37: the float atomics' tabled text (buffer_atomic_add_f32/f64, pk_add_f16/bf16) writes MEM[ADDR]
    # with no CalcBufferAddr; the address (and its range check) is the one the helper builds
    direct = "ADDR" in op.inputs

    def step(w):
        lanes = w.lanes()
        port = BufferPort(w.mem, ins, offen, idxen)
        values = {name: get(w) for name, get in reads}
        if direct:
            values["ADDR"] = port.address("CalcBufferAddr", values["VADDR"], values["SRSRC"], values["SOFFSET"],
                                          offset)
        out = op.run({"OFFSET": offset, **values}, exec_mask=w.exec, memory=port)
        if put is not None and out_name in out:
            put(w, out[out_name], lanes)
        _record(w, "vm", ins.index, dest)
        w.pc += 1
    return step

