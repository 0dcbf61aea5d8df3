"""The emulated kernel's memories: global memory (the launch's buffers, guards included) and each workgroup's LDS.

Why a region table and not one big array at address 0: a pointer the lowering got wrong must fault, not read a
neighbour. Buffers sit at addresses above 4 GiB (so a pointer truncated to 32 bits faults too), a page of unmapped
addresses apart; an access outside every buffer is an `EmulatedFault`, which the judge reports like a GPU's memory
fault. LDS starts filled with 0xFF bytes (NaN for every float type, -1 for integers), so a read of LDS no wave wrote
shows in the outputs.
"""
from __future__ import annotations

import numpy as np

from .errors import NotModelled

GLOBAL_BASE = 1 << 32
GAP = 4096
LDS_FILL = 0xFF


class EmulatedFault(Exception):
    """A memory access the hardware would fault on (or an LDS access past the kernel's allocation)."""


class EmulatedRace(Exception):
    """Two waves of a workgroup touch the same LDS bytes between the same two barriers, one of them writing: the
    result depends on the waves' timing (a missing or misplaced barrier)."""


class GlobalMemory:
    def __init__(self):
        self.starts, self.ends, self.chunks = [], [], []
        self.top = GLOBAL_BASE
        self.heap = None

    def map(self, data: np.ndarray) -> int:
        """Place a byte array; returns its address. Call `seal` after the last one."""
        address = self.top
        self.starts.append(address)
        self.ends.append(address + data.size)
        self.chunks.append(data)
        self.top = -(-(address + data.size + GAP) // 256) * 256
        return address

    def seal(self):
        self.heap = np.full(self.top - GLOBAL_BASE, 0, np.uint8)
        for start, chunk in zip(self.starts, self.chunks):
            self.heap[start - GLOBAL_BASE:start - GLOBAL_BASE + chunk.size] = chunk
        self._starts = np.array(self.starts, np.uint64)
        self._ends = np.array(self.ends, np.uint64)

    def read_back(self, address, size) -> np.ndarray:
        return self.heap[address - GLOBAL_BASE:address - GLOBAL_BASE + size]

    def index(self, addr, nbytes, what="access"):
        """Heap offsets of active lanes' accesses of `nbytes` at `addr` (uint64); faults outside every buffer."""
        addr = addr.astype(np.uint64, copy=False)
        slot = np.searchsorted(self._starts, addr, side="right").astype(np.int64) - 1
        ok = (slot >= 0) & (addr + np.uint64(nbytes) <= self._ends[np.maximum(slot, 0)])
        if not ok.all():
            bad = int(addr[~ok][0])
            raise EmulatedFault(f"global {what} of {nbytes} bytes at 0x{bad:x}, outside every buffer of the launch")
        return (addr - np.uint64(GLOBAL_BASE)).astype(np.int64)


class LocalMemory:
    """The LDS of every workgroup an executor covers: [workgroups, size] bytes, with, per byte, which wave slots
    wrote it and read it in which barrier interval (the race check)."""

    def __init__(self, workgroups, size):
        self.size = max(int(size), 4)
        self.data = np.full(workgroups * self.size, LDS_FILL, np.uint8)
        self.writers = np.zeros(self.data.size, np.int32)  # bit k: wave slot k wrote the byte in interval `written`
        self.written = np.full(self.data.size, -1, np.int32)
        self.readers = np.zeros(self.data.size, np.int32)
        self.read = np.full(self.data.size, -1, np.int32)
        self.last_line = np.zeros(self.data.size, np.int32)  # the IR line of the byte's last access (the message)

    def index(self, wg, addr, nbytes, what="access"):
        addr = addr.astype(np.int64)
        if (addr < 0).any() or (addr + nbytes > self.size).any():
            bad = int(addr[(addr < 0) | (addr + nbytes > self.size)][0])
            raise EmulatedFault(f"LDS {what} of {nbytes} bytes at offset {bad}, outside the kernel's {self.size} "
                                "bytes of shared memory")
        return wg * self.size + addr

    def check(self, cells, slot, interval, data=None, line=0):
        """Record an access of `cells` (byte positions) by wave `slot` in its barrier interval `interval` (a write
        when `data` is given); raise EmulatedRace on a read of bytes another wave wrote in this interval (and this
        one did not), or on a write that changes bytes another wave read in this interval. Writes of equal values
        by several waves (replicated layouts do that) are no race."""
        cells = cells.reshape(-1)
        me = np.int32(1 << slot)
        if data is None:
            now = self.written[cells] == interval
            other = now & ((self.writers[cells] & ~me) != 0) & ((self.writers[cells] & me) == 0)
            self._raise(other, cells, slot, "reads", "wrote", line)
            fresh = self.read[cells] != interval
            self.readers[cells] = np.where(fresh, 0, self.readers[cells]) | me
            self.read[cells] = interval
            self.last_line[cells] = line
        else:
            changed = self.data[cells] != data.reshape(-1)
            other = (self.read[cells] == interval) & ((self.readers[cells] & ~me) != 0) & changed
            self._raise(other, cells, slot, "changes", "read", line)
            fresh = self.written[cells] != interval
            self.writers[cells] = np.where(fresh, 0, self.writers[cells]) | me
            self.written[cells] = interval
            self.last_line[cells] = line

    def _raise(self, other, cells, slot, verb, peer_verb, line):
        if other.any():
            cell = int(cells[np.flatnonzero(other)[0]])
            raise EmulatedRace(f"wave {slot} {verb} LDS byte {cell % self.size} that another wave {peer_verb} since "
                               f"the last barrier (IR lines {int(self.last_line[cell])} and {line}): a missing or "
                               "misplaced barrier")


class Memories:
    """What an executor's memory instructions address: the global heap and its workgroups' LDS."""

    def __init__(self, heap: GlobalMemory, lds: LocalMemory, wg_of_lane):
        self.heap, self.lds, self.wg_of_lane = heap, lds, wg_of_lane
        self.wave = (0, 0)  # the running wave slot and its barrier interval: the scheduler sets it (core.py)
        self.line = 0  # the IR line of the access being made (access.py sets it): race messages name both

    def _positions(self, space, addr, nbytes, lanes, what):
        if space in (0, 1, 4):
            return self.heap.heap, self.heap.index(addr, nbytes, what)
        if space == 3:
            return self.lds.data, self.lds.index(self.wg_of_lane[lanes], addr, nbytes, what)
        raise NotModelled(f"memory access in address space {space}")

    def load(self, space, addr, nbytes, lanes):
        """Bytes [len(lanes), nbytes] read by the lanes `lanes` (indices) at their addresses `addr`."""
        memory, base = self._positions(space, addr, nbytes, lanes, "load")
        cells = base[:, None] + np.arange(nbytes)
        if space == 3:
            self.lds.check(cells, *self.wave, line=self.line)
        return memory[cells]

    def store(self, space, addr, data, lanes):
        """`data`: uint8 [len(lanes), nbytes]; lanes store in lane order (the last lane wins a conflict). An LDS
        store past the kernel's allocation is dropped, as the hardware drops it: Triton's AMD backend masks LDS
        writes that way, with the address 0x7fffffff (triton-lang/triton#9679, #10588: "set the LDS address ... to
        be OOB to drop the writes to shared memory")."""
        nbytes = data.shape[1]
        if space == 3:
            wide = np.asarray(addr).astype(np.int64)
            keep = (wide >= 0) & (wide + nbytes <= self.lds.size)
            if not keep.all():
                addr, data, lanes = np.asarray(addr)[keep], data[keep], np.asarray(lanes)[keep]
                if not len(lanes):
                    return
        memory, base = self._positions(space, addr, nbytes, lanes, "store")
        cells = base[:, None] + np.arange(nbytes)
        if space == 3:
            self.lds.check(cells, *self.wave, data=data, line=self.line)
        memory[cells] = data

    def cells(self, space, addr, nbytes, lanes, what="atomic"):
        return self._positions(space, addr, nbytes, lanes, what)


class Rsrc:
    """A buffer resource (`llvm.amdgcn.make.buffer.rsrc`): base address, stride, num_records, flags, per lane."""

    __slots__ = ("base", "stride", "records", "flags")

    def __init__(self, base, stride, records, flags):
        self.base, self.stride, self.records, self.flags = base, stride, records, flags

    def select(self, lanes):
        pick = (lambda a: a[lanes] if np.ndim(a) else a)
        return Rsrc(pick(self.base), pick(self.stride), pick(self.records), pick(self.flags))

    def merge(self, mask, other):
        if other is None:
            return self
        pick = (lambda a, b: np.where(mask, a, b))
        return Rsrc(pick(self.base, other.base), pick(self.stride, other.stride),
                    pick(self.records, other.records), pick(self.flags, other.flags))


def buffer_in_range(rsrc: Rsrc, offset, nbytes):
    """Raw buffer range checking (stride 0): an access is out of range when its byte offset plus its size passes
    num_records; the hardware then returns 0 for a load and drops a store (CDNA3 ISA, "Range Checking")."""
    if np.any(np.asarray(rsrc.stride) != 0):
        raise NotModelled("structured buffer access (stride != 0)")
    return offset.astype(np.uint64) + np.uint64(nbytes) <= np.asarray(rsrc.records).astype(np.uint64)
