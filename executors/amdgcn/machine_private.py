"""Scratch (the private segment) on the machine: `scratch_*` instructions of gfx940+ (architected flat scratch),
each lane with memory of its own, `private_segment_fixed_size` bytes, starting as the canary pattern.

Why a module of its own: llc puts allocas and, at -O0, every value live across a block boundary there, so most
-O0 code with control flow needs it; and a use past the descriptor's allocation is a bug of the code generator's
(a frame larger than it declared) that the machine must flag, not absorb. The guide's `CalcScratchAddr(ADDR,
SADDR, OFFSET)` is the per-lane offset ADDR (a VGPR, or 0 for `off`) + SADDR (an SGPR, or 0) + the signed
instruction offset; the hardware's swizzling of lanes into one buffer is not visible to a program and not modelled.
Flat instructions that reach the private aperture are ``NotModelled`` (global/flat addresses here are buffers).
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Reg, Special
from gfxhound.executors.amdgcn.machine import CACHE_MODS, M32, MachineFault, NotModelled, _check_modifiers, _hazard, _record
from gfxhound.executors.amdgcn.machine import reader, writer

__all__ = ["PrivateMemory", "scratch_step"]


class PrivateMemory:
    """One wave's private segments: `size` bytes per lane."""

    def __init__(self, size: int, fill: bytes):
        pattern = np.frombuffer((fill * (size // len(fill) + 1))[:size], np.uint8)
        self.size, self.data = size, np.tile(pattern, (64, 1))


class ScratchPort:
    def __init__(self, wave, instruction):
        self.wave, self.instruction = wave, instruction

    def address(self, helper, addr, saddr, offset):
        if helper != "CalcScratchAddr":
            raise NotModelled(self.instruction.mnemonic, f"address helper {helper}")
        off = int(offset) & 0x1FFF
        off = off - 0x2000 if off & 0x1000 else off          # a 13-bit signed offset
        a = np.broadcast_to(np.asarray(addr, np.uint64), (64,)).astype(np.int64) & M32
        return a + (int(saddr) & M32) + off

    def _where(self, addr, nbytes, lanes):
        mem = self.wave.private
        if mem is None:
            raise MachineFault("a scratch access in a kernel whose descriptor has no private segment",
                               self.instruction)
        a = np.broadcast_to(np.asarray(addr, np.int64), (64,))
        on = np.broadcast_to(np.asarray(lanes, bool), (64,))
        bad = np.flatnonzero(on & ((a < 0) | (a + nbytes > mem.size)))
        if bad.size:
            lane = int(bad[0])
            raise MachineFault(f"scratch access of {nbytes} bytes at offset {int(a[lane])} (lane {lane}) beyond the "
                               f"private segment of {mem.size} bytes", self.instruction, int(a[lane]), lane)
        return mem, a, np.flatnonzero(on)

    def load(self, addr, nbytes, lanes):
        mem, a, idx = self._where(addr, nbytes, lanes)
        out = np.zeros(64, np.uint64)
        shifts = np.arange(nbytes, dtype=np.uint64) * np.uint64(8)
        for lane in idx:
            raw = mem.data[lane, a[lane]:a[lane] + nbytes].astype(np.uint64)
            out[lane] = np.bitwise_or.reduce(raw << shifts)
        return out

    def store(self, addr, nbytes, bits, lanes):
        mem, a, idx = self._where(addr, nbytes, lanes)
        b = np.broadcast_to(np.asarray(bits), (64,))
        for lane in idx:
            mem.data[lane, a[lane]:a[lane] + nbytes] = np.frombuffer(int(b[lane]).to_bytes(nbytes, "little"),
                                                                     np.uint8)


def scratch_step(ins, op):
    """`scratch_load_* vdst, vaddr|off, saddr|off [offset:N]`, `scratch_store_* vaddr|off, vdata, saddr|off`."""
    mn, ops = ins.mnemonic, list(ins.operands)
    _check_modifiers(ins, CACHE_MODS | {"offset"})
    out_name = "VDATA" if "VDATA" in op.outputs else None
    dst = ops.pop(0) if out_name else None
    if len(ops) != (2 if out_name else 3):
        raise NotModelled(mn, f"operands {ins.operands}")
    vaddr, saddr = ops[0], ops[-1]
    data = ops[1] if not out_name else None
    is_off = lambda o: isinstance(o, Special) and o.name == "off"
    reads = [("ADDR", (lambda w: 0) if is_off(vaddr) else reader(vaddr, 32, mn, _hazard(ins.index))),
             ("SADDR", (lambda w: 0) if is_off(saddr) else reader(saddr, 32, mn, _hazard(ins.index)))]
    if data is not None:
        reads.append(("VDATA", reader(data, op.widths["VDATA"], mn, _hazard(ins.index))))
    put = writer(dst, op.widths[out_name], mn) if dst is not None else None
    if put is not None and out_name in op.inputs:   # d16 loads keep the other half
        reads.append((out_name, reader(dst, op.widths[out_name], mn)))
    dest = {(dst.file, dst.index + k) for k in range(dst.count)} if isinstance(dst, Reg) else set()
    offset = int(ins.mod("offset", 0))

    def step(w):
        lanes = w.lanes()
        out = op.run({"OFFSET": offset, **{name: get(w) for name, get in reads}}, exec_mask=w.exec,
                     memory=ScratchPort(w, ins))
        if put is not None and out_name in out:
            put(w, out[out_name], lanes)
        _record(w, "vm", ins.index, dest)
        w.pc += 1
    return step
