"""Loads straight into LDS for machine_decode.py: ``buffer_load_dword{,x3,x4} vaddr, s[n:n+3], soffset ... lds``
and ``global_load_lds_dword{,x3,x4} vaddr, saddr|off``, which Triton's async copies and direct-to-LDS loads use.

Why hand-written: the guide's pseudocode table has no text for the LDS forms (``global_load_lds_*`` has no entry;
the MUBUF texts write VDATA). Decision 49 (docs/amdgcn-pcode.md): the memory side is the load's own (the MUBUF
address and range check of machine_buffer.py, out-of-range lanes read zero; the global form's SADDR + VADDR +
offset), and each active lane's bytes are written to LDS at M0 + the instruction offset + lane * size: the guide's
"LDS_ADDR = LDSbase + LDS_offset + inst_offset + TID * 4" for the dword form, with LDS_offset from M0, and the same
per-lane stride for the x3/x4 forms; LLVM sets M0 to the LDS pointer of `llvm.amdgcn.*.load.lds` and passes the
intrinsic's offset in the instruction. The data lands when the load has returned: the write waits in the wave's
VM_CNT queue and is made when an s_waitcnt retires the entry (or the counter overflows it out, or the wave ends),
so a ds_read that comes before the wait reads the old bytes, as the hardware's would. A lane whose LDS destination is
past the allocation neither fetches nor writes in the buffer form (Triton masks async copies that way: its PR 9679,
"set the shared address to be out of range which tells the HW to drop the load"); the global form then is
NotModelled (its PR 10588: "the OOB trick does not work for gfx9's global_load_lds"). The byte and short forms are
NotModelled (what they write to LDS, a byte or an extended dword, is not in our sources).
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm, Reg, Special
from gfxhound.executors.amdgcn.machine import CACHE_MODS, M32, NotModelled, _check_modifiers, _hazard, _record, reader

SIZES = {"dword": 4, "dwordx3": 12, "dwordx4": 16}


def is_lds_dma(ins) -> bool:
    mn = ins.mnemonic
    return mn.startswith("global_load_lds_") or (mn.startswith("buffer_load_") and ins.mod("lds") is not None)


class PendingLdsWrite:
    """Bytes bound for LDS, made when the load's VM_CNT entry retires (machine.retire)."""

    def __init__(self, addresses, data, nbytes, lanes, instruction):
        self.addresses, self.data, self.nbytes, self.lanes, self.instruction = addresses, data, nbytes, lanes, \
            instruction

    def land(self, w):
        for start in range(0, self.nbytes, 8):
            size = min(8, self.nbytes - start)
            part = np.array([(int(v) >> (8 * start)) & ((1 << (8 * size)) - 1) for v in self.data], np.uint64)
            w.lds.store(self.addresses + np.uint64(start), size, part, self.lanes, self.instruction)


def lds_dma_step(ins):
    mn = ins.mnemonic
    kind = mn.split("_")[-1]
    if kind not in SIZES:
        raise NotModelled(mn, "an LDS-direct load of a byte or a short (what it writes to LDS is not in our sources)")
    size = SIZES[kind]
    offset = int(ins.mod("offset", 0) or 0)
    hazard = _hazard(ins.index)
    buffer_form = mn.startswith("buffer_")
    if buffer_form:
        fetch = _buffer_fetch(ins, size, offset, hazard)
    else:
        fetch = _global_fetch(ins, size, offset, hazard)

    def step(w):
        if w.lds is None:
            raise NotModelled(mn, "an LDS-direct load in a kernel without a group segment")
        lanes = w.lanes()
        base = (int(w.m0) + offset) & M32
        addresses = (np.uint64(base) + np.arange(64, dtype=np.uint64) * np.uint64(size)) & np.uint64(M32)
        inside = addresses + np.uint64(size) <= np.uint64(len(w.lds.regions[0].data) if w.lds.regions else 0)
        if (lanes & ~inside).any():
            if not buffer_form:   # triton#10588: "the OOB trick does not work for gfx9's global_load_lds"
                raise NotModelled(mn, "an LDS destination past the allocation (what global_load_lds does then is "
                                      "not in our sources)")
            lanes = lanes & inside   # dropped, the global side not fetched (triton#9679: "tells the HW to drop
        data = fetch(w, lanes)       # the load, it will not fetch the global address"); object [64]
        _record(w, "vm", ins.index, {PendingLdsWrite(addresses, data, size, lanes, ins)})
        w.pc += 1
    step.decisions = (49,)
    return step


def _read(port_load, address, size, lanes):
    """Each lane's `size` bytes as one integer (object [64]), in 8-byte loads."""
    out = np.zeros(64, dtype=object)
    for start in range(0, size, 8):
        part = port_load(address + np.uint64(start), min(8, size - start), lanes)
        out = out + (np.broadcast_to(np.asarray(part, np.uint64), (64,)).astype(object) << (8 * start))
    return out


def _buffer_fetch(ins, size, offset, hazard):
    from gfxhound.executors.amdgcn.machine_buffer import BufferPort
    mn, ops = ins.mnemonic, list(ins.operands)
    _check_modifiers(ins, CACHE_MODS | {"offset", "offen", "idxen", "lds"})
    if len(ops) != 3:
        raise NotModelled(mn, f"{len(ops)} operands for an LDS-direct load")
    vaddr, srsrc, soffset = ops
    offen, idxen = bool(ins.mod("offen")), bool(ins.mod("idxen"))
    if isinstance(vaddr, Special) and vaddr.name == "off":
        if offen or idxen:
            raise NotModelled(mn, "offen/idxen without a VADDR")
        get_vaddr = lambda w: 0
    else:
        if not isinstance(vaddr, Reg) or vaddr.count * 32 != (64 if offen and idxen else 32):
            raise NotModelled(mn, f"VADDR {vaddr} for offen={offen} idxen={idxen}")
        get_vaddr = reader(vaddr, vaddr.count * 32, mn, hazard)
    if not isinstance(srsrc, Reg) or srsrc.file != "s" or srsrc.count != 4:
        raise NotModelled(mn, f"SRSRC {srsrc}")
    get_rsrc = reader(srsrc, 128, mn, hazard)
    get_soffset = (lambda w, v=int(soffset.value) & M32: v) if isinstance(soffset, Imm) else \
        reader(soffset, 32, mn, hazard)

    def fetch(w, lanes):
        port = BufferPort(w.mem, ins, offen, idxen)
        address = port.address("CalcBufferAddr", get_vaddr(w), get_rsrc(w), get_soffset(w), offset & 0xFFF)
        return _read(port.load, np.broadcast_to(address, (64,)).astype(np.uint64), size, lanes)
    return fetch


def _global_fetch(ins, size, offset, hazard):
    mn, ops = ins.mnemonic, list(ins.operands)
    _check_modifiers(ins, CACHE_MODS | {"offset"})
    if len(ops) != 2:
        raise NotModelled(mn, f"{len(ops)} operands for an LDS-direct load")
    vaddr, saddr = ops
    if isinstance(saddr, Special) and saddr.name == "off":
        if not isinstance(vaddr, Reg) or vaddr.count != 2:
            raise NotModelled(mn, f"VADDR {vaddr} without SADDR")
        get_v, get_s = reader(vaddr, 64, mn, hazard), (lambda w: 0)
    else:
        if not isinstance(vaddr, Reg) or vaddr.count != 1 or not isinstance(saddr, Reg) or saddr.count != 2:
            raise NotModelled(mn, f"VADDR {vaddr} with SADDR {saddr}")
        get_v, get_s = reader(vaddr, 32, mn, hazard), reader(saddr, 64, mn, hazard)
    def fetch(w, lanes):
        with np.errstate(over="ignore"):
            address = (np.broadcast_to(np.asarray(get_v(w), np.uint64), (64,)) + np.uint64(int(get_s(w)))
                       + np.uint64(offset & ((1 << 64) - 1)))
        return _read(lambda a, n, on: w.mem.load(a, n, on, ins), address, size, lanes)
    return fetch
