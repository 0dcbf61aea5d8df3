"""DS_SWIZZLE_B32 on the machine, as AMD's CDNA4 ISA guide describes it (section 12.12 "LDS Instructions",
DS_SWIZZLE_B32, opcode 61). The pseudocode table (pcode_data.py) carries only the FFT example table of that
section, which is prose, not pseudocode; the instruction reads other lanes' VGPRs, so it is the machine's to run.

The guide's text, in short (its pseudocode, for 64 threads):

    offset = offset1:offset0;
    if (offset >= 0xe000) {            // FFT decomposition
        mask = offset[4:0];
        j = reverse_bits(i & 0x1f); j = (j >> count_ones(mask)); j |= (i & mask); j |= i & 0x20;
    } elsif (offset >= 0xc000) {       // rotate
        rotate = offset[9:5]; mask = offset[4:0]; if (offset[10]) rotate = -rotate;
        j = (i & mask) | ((i + rotate) & ~mask); j |= i & 0x20;
    } elsif (offset[15]) {             // full data sharing within 4 consecutive threads
        thread_out[i+k] = thread_valid[i+offset[2k+1:2k]] ? thread_in[i+offset[2k+1:2k]] : 0   (i = 0, 4, ..., 60)
    } else {                           // limited data sharing within 32 consecutive threads
        xor_mask = offset[14:10]; or_mask = offset[9:5]; and_mask = offset[4:0];
        j = (((i & 0x1f) & and_mask) | or_mask) ^ xor_mask; j |= (i & 0x20);
    }
    thread_out[i] = thread_valid[j] ? thread_in[j] : 0;

with "Note that reading from an invalid thread results in 0x0."

Decisions (docs/amdgcn-pcode.md, decision 40): thread_valid[j] is EXEC bit j; a lane whose EXEC bit is 0 is not
written (as the DS_PERMUTE/BPERMUTE texts of the same section write only `if EXEC[i]`); `reverse_bits` reverses
the 5 bits of `i & 0x1f` and `~mask` in the rotate mode is the 5-bit complement: both are what the guide's own
example tables (FFT offsets 0x00/0x10/0x1f, rotate by 1 left/right with mask 0/1) require, and the tests check
every entry of those tables.

The assembler writes the offset either as a number or as LLVM's `swizzle(...)` macro; the macro is turned back
into the 16-bit offset by the encoding llvm-mc gives (tests/amdgcn/test_machine_swizzle.py checks each form
against llvm-mc): QUAD_PERM a,b,c,d = 0x8000 | a | b<<2 | c<<4 | d<<6; BITMASK_PERM "c4c3c2c1c0" (0: clear,
1: set, p: keep, i: invert; the first character is bit 4); BROADCAST size,lane = and 0x20-size, or lane;
SWAP n = xor n, and 0x1f; REVERSE n = xor n-1, and 0x1f; FFT n = 0xe000 | n; ROTATE dir,n = 0xc000 | dir<<10 | n<<5.
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Func, Reg
from gfxhound.executors.amdgcn.machine import NotModelled, _check_modifiers, _hazard, _record, reader, writer

__all__ = ["swizzle_offset", "swizzle_sources", "swizzle_step"]

_LANE = np.arange(64, dtype=np.int64)


def _bitmask(and_mask: int, or_mask: int, xor_mask: int) -> int:
    return (xor_mask & 0x1F) << 10 | (or_mask & 0x1F) << 5 | (and_mask & 0x1F)


def swizzle_offset(value, mn: str = "ds_swizzle_b32") -> int:
    """The 16-bit offset of `offset:N` or `offset:swizzle(...)` (LLVM's assembler macro, as llvm-mc encodes it)."""
    if not isinstance(value, Func):
        return int(value) & 0xFFFF
    if value.name.lower() != "swizzle" or not value.args:
        raise NotModelled(mn, f"offset {value}")
    mode, args = str(value.args[0]).upper(), value.args[1:]
    ints = all(isinstance(a, int) for a in args)
    if mode == "QUAD_PERM" and ints and len(args) == 4 and all(0 <= a < 4 for a in args):
        return 0x8000 | args[0] | args[1] << 2 | args[2] << 4 | args[3] << 6
    if mode == "BITMASK_PERM" and len(args) == 1 and isinstance(args[0], str):
        text = args[0].strip().strip('"').lower()
        if len(text) == 5 and set(text) <= set("01pi"):
            and_mask = or_mask = xor_mask = 0
            for k, c in enumerate(text):
                bit = 1 << (4 - k)
                and_mask |= bit if c in "pi" else 0
                or_mask |= bit if c == "1" else 0
                xor_mask |= bit if c == "i" else 0
            return _bitmask(and_mask, or_mask, xor_mask)
    if mode == "BROADCAST" and ints and len(args) == 2 and args[0] in (2, 4, 8, 16, 32) and 0 <= args[1] < args[0]:
        return _bitmask(0x20 - args[0], args[1], 0)
    if mode == "SWAP" and ints and len(args) == 1 and args[0] in (1, 2, 4, 8, 16):
        return _bitmask(0x1F, 0, args[0])
    if mode == "REVERSE" and ints and len(args) == 1 and args[0] in (2, 4, 8, 16, 32):
        return _bitmask(0x1F, 0, args[0] - 1)
    if mode == "FFT" and ints and len(args) == 1 and 0 <= args[0] < 32:
        return 0xE000 | args[0]
    if mode == "ROTATE" and ints and len(args) == 2 and args[0] in (0, 1) and 0 <= args[1] < 32:
        return 0xC000 | args[0] << 10 | args[1] << 5
    raise NotModelled(mn, f"offset {value}")


def _reverse5(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for b in range(5):
        out |= ((x >> b) & 1) << (4 - b)
    return out


def swizzle_sources(offset: int) -> np.ndarray:
    """int64[64]: the thread j each thread i reads, per the guide's pseudocode for this 16-bit offset."""
    i = _LANE
    if offset >= 0xE000:
        mask = offset & 0x1F
        j = _reverse5(i & 0x1F) >> bin(mask).count("1")
        return j | (i & mask) | (i & 0x20)
    if offset >= 0xC000:
        rotate, mask = (offset >> 5) & 0x1F, offset & 0x1F
        if offset >> 10 & 1:
            rotate = -rotate
        return (i & mask) | ((i + rotate) & (~mask & 0x1F)) | (i & 0x20)
    if offset >> 15:
        sel = np.array([(offset >> (2 * k)) & 3 for k in range(4)], np.int64)
        return (i & ~3) + sel[i & 3]
    and_mask, or_mask, xor_mask = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
    return ((((i & 0x1F) & and_mask) | or_mask) ^ xor_mask) | (i & 0x20)


def swizzle_step(ins):
    mn = ins.mnemonic
    _check_modifiers(ins, {"offset"})
    if len(ins.operands) != 2:
        raise NotModelled(mn, f"operands {ins.operands}")
    dst, data = ins.operands
    source = swizzle_sources(swizzle_offset(ins.mod("offset", 0), mn))
    put, get = writer(dst, 32, mn), reader(data, 32, mn, _hazard(ins.index))
    dest = {(dst.file, dst.index)} if isinstance(dst, Reg) else set()

    def step(w):
        lanes = w.lanes()
        value = np.broadcast_to(np.asarray(get(w), np.uint64), (64,))
        put(w, np.where(lanes[source], value[source], np.uint64(0)), lanes)
        _record(w, "lgkm", ins.index, dest)
        w.pc += 1
    return step
