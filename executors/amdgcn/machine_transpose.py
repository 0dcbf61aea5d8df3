"""gfx950's transposing LDS reads for machine_decode.py: ``ds_read_b64_tr_b16``, ``ds_read_b64_tr_b8``,
``ds_read_b64_tr_b4`` and ``ds_read_b96_tr_b6``.

Why hand-written: the CDNA4 guide's pseudocode table has no entry for them. Its section 11.4 ("MFMA Transpose Load
from LDS") says, for DS_READ_B64_TR_B16: "Read N bits of data per lane from data share. Interpret the data as a
matrix with 16 bit elements and transpose the matrix"; "Each lane (one VGPR) holds 4 consecutive M or N values";
"Prior to executing these instructions the EXEC mask must be set to all 1's".

Decision 47 (docs/amdgcn-pcode.md) reads that literally: each group of 16 lanes loads its bytes as a ds_read of the
same width would (address = ADDR + OFFSET, 32 bits); the group's elements, lane by lane and within a lane from bit
0, are an E x 16 matrix (E elements to a lane: 64 or 96 bits over the element width); lane i receives column i,
element e from row e. This module computes it on the lanes' integers; the IR executor's ds.read.tr
(executors/llvm_ir/gfx950.py) moves bits with numpy and shares no code with it. EXEC not all ones is refused.
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Reg
from gfxhound.executors.amdgcn.machine import M32, M64, NotModelled, _check_modifiers, _hazard, _record, reader, writer

# mnemonic -> (element bits, bytes a lane loads)
TRANSPOSING_READS = {"ds_read_b64_tr_b16": (16, 8), "ds_read_b64_tr_b8": (8, 8), "ds_read_b64_tr_b4": (4, 8),
                     "ds_read_b96_tr_b6": (6, 12)}


def transpose_lanes(words: list, element_bits: int, lane_bits: int) -> list:
    """64 lane integers of `lane_bits` bits each -> the 64 results: in each group of 16 lanes, lane i's element e
    is element e * 16 + i of the group's elements taken lane by lane (decision 47). Up to 64 bits a lane the lanes
    move together (uint64); the 96-bit form goes lane by lane on Python integers."""
    per_lane, mask = lane_bits // element_bits, (1 << element_bits) - 1
    lane = np.arange(64)
    group, i = lane - lane % 16, lane % 16
    if lane_bits <= 64:
        data, out = np.array(words, np.uint64), np.zeros(64, np.uint64)
        for e in range(per_lane):
            source, position = divmod(e * 16 + i, per_lane)
            element = (data[group + source] >> (position * element_bits).astype(np.uint64)) & np.uint64(mask)
            out |= element << np.uint64(e * element_bits)
        return [int(x) for x in out]
    out = []
    for k in range(64):
        value = 0
        for e in range(per_lane):
            source, position = divmod(e * 16 + int(i[k]), per_lane)
            value |= ((words[int(group[k]) + source] >> (position * element_bits)) & mask) << (e * element_bits)
        out.append(value)
    return out


def transposing_read_step(ins, processor: str = ""):
    mn = ins.mnemonic
    if processor and processor != "gfx950":
        raise NotModelled(mn, f"on {processor} (the CDNA4 guide's instruction, gfx950 only)")
    _check_modifiers(ins, {"offset"})
    element_bits, nbytes = TRANSPOSING_READS[mn]
    dst, addr = ins.operands
    if not isinstance(dst, Reg):
        raise NotModelled(mn, f"destination {dst}")
    offset = int(ins.mod("offset", 0)) & 0xFFFF
    get_addr = reader(addr, 32, mn, _hazard(ins.index))
    put = writer(dst, nbytes * 8, mn)
    dest = {(dst.file, dst.index + k) for k in range(dst.count)}
    chunks = [(start, min(8, nbytes - start)) for start in range(0, nbytes, 8)]

    def step(w):
        if w.lds is None:
            raise NotModelled(mn, "an LDS access in a kernel without a group segment")
        if w.exec != M64:
            raise NotModelled(mn, "EXEC not all ones (the CDNA4 guide requires all ones; decision 47)")
        lanes = w.lanes()
        address = (np.broadcast_to(np.asarray(get_addr(w), np.uint64), (64,)) + np.uint64(offset)) & np.uint64(M32)
        words = [0] * 64
        for start, size in chunks:
            part = w.lds.load(address + np.uint64(start), size, lanes, ins)
            for lane in range(64):
                words[lane] |= int(part[lane]) << (8 * start)
        result = np.array(transpose_lanes(words, element_bits, nbytes * 8), dtype=object)
        put(w, result if nbytes > 8 else result.astype(np.uint64), lanes)
        _record(w, "lgkm", ins.index, dest)
        w.pc += 1
    step.decisions = (47,)
    return step
