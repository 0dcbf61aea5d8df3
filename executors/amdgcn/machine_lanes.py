"""Cross-lane and AGPR moves for machine_decode.py: instructions whose pseudocode reads or writes other lanes'
VGPRs (``v_readlane/writelane/readfirstlane_b32``, ``ds_permute/bpermute_b32``; ``ds_swizzle_b32`` from
machine_swizzle.py), which pcode.py leaves to the machine, done here as the guide's text and prose say; and the
AGPR moves ``v_accvgpr_read/write/mov_b32``."""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm, Reg
from gfxhound.executors.amdgcn.machine import M32, M64, NotModelled, reader, writer
from gfxhound.executors.amdgcn.machine import _check_modifiers, _hazard, _record
from gfxhound.executors.amdgcn.machine_swizzle import swizzle_step


def _lane_sel(o, mn):
    if isinstance(o, Imm):
        lane = int(o.value) & 63
        return lambda w: lane
    get = reader(o, 32, mn)
    return lambda w: int(get(w)) & 63


def _readlane(ins):
    dst, src, lane = ins.operands
    put, get, sel = writer(dst, 32, ins.mnemonic), reader(src, 32, ins.mnemonic), _lane_sel(lane, ins.mnemonic)

    def step(w):
        put(w, int(get(w)[sel(w)]))
        w.pc += 1
    return step


def _writelane(ins):
    dst, src, lane = ins.operands
    if not isinstance(dst, Reg) or dst.file != "v" or dst.count != 1:
        raise NotModelled(ins.mnemonic, f"destination {dst}")
    get, sel = reader(src, 32, ins.mnemonic), _lane_sel(lane, ins.mnemonic)

    def step(w):   # ignores EXEC (the guide: the lane is selected by the operand, not by EXEC)
        w.v[dst.index, sel(w)] = int(get(w)) & M32
        w.pc += 1
    return step


def _readfirstlane(ins):
    dst, src = ins.operands
    put, get = writer(dst, 32, ins.mnemonic), reader(src, 32, ins.mnemonic)

    def step(w):   # the lowest active lane; lane 0 when EXEC is 0
        lane = (w.exec & -w.exec).bit_length() - 1 if w.exec else 0
        put(w, int(get(w)[lane]))
        w.pc += 1
    return step


def _accmove(ins):
    _check_modifiers(ins, ())
    dst, src = ins.operands
    put, get = writer(dst, 32, ins.mnemonic), reader(src, 32, ins.mnemonic, _hazard(ins.index))

    def step(w):
        put(w, get(w), w.lanes())
        w.pc += 1
    return step


def _permute(ins):
    """DS_BPERMUTE_B32 / DS_PERMUTE_B32 as the guide's pseudocode writes them (it reads other lanes' VGPRs):
    lane = (ADDR + OFFSET) / 4 % 64; bpermute reads that lane's DATA0 if it is in EXEC (else 0); permute writes to
    it from each active lane in ascending order (the highest source lane wins); only active lanes are written."""
    mn = ins.mnemonic
    _check_modifiers(ins, {"offset"})
    dst, addr, data = ins.operands
    offset = int(ins.mod("offset", 0)) & 0xFFFF
    put = writer(dst, 32, mn)
    get_addr, get_data = reader(addr, 32, mn, _hazard(ins.index)), reader(data, 32, mn, _hazard(ins.index))
    backward = mn == "ds_bpermute_b32"
    dest = {(dst.file, dst.index)} if isinstance(dst, Reg) else set()

    def step(w):
        lanes = w.lanes()
        lane = ((np.asarray(get_addr(w), np.uint64) + np.uint64(offset)) // np.uint64(4)) % np.uint64(64)
        lane = np.broadcast_to(lane, (64,)).astype(np.int64)
        value = np.broadcast_to(np.asarray(get_data(w), np.uint64), (64,))
        if backward:
            tmp = np.where(lanes[lane], value[lane], np.uint64(0))
        else:
            tmp = np.zeros(64, np.uint64)
            for i in np.flatnonzero(lanes):
                tmp[lane[i]] = value[i]
        put(w, tmp, lanes)
        _record(w, "lgkm", ins.index, dest)
        w.pc += 1
    return step


def _permlane_swap(ins):
    """V_PERMLANE16_SWAP_B32 / V_PERMLANE32_SWAP_B32 (gfx950) as the guide's text writes them: for lane in 0..31,
    `tmp = VGPR[lane][SRC0]; VGPR[lane][SRC0] = VGPR[lane + 32][VDST]; VGPR[lane + 32][VDST] = tmp` (the 16 form:
    lanes 0..15 and 32..47 with the lane 16 above). The text reads no EXEC and says nothing of FI and BOUND_CTRL,
    so the machine runs it only with EXEC all ones, where neither can matter (decision 44)."""
    mn = ins.mnemonic
    _check_modifiers(ins, {"bound_ctrl", "fi"})
    dst, src = ins.operands
    for o in (dst, src):
        if not isinstance(o, Reg) or o.file != "v" or o.count != 1:
            raise NotModelled(mn, f"operand {o}")
    up = 32 if mn == "v_permlane32_swap_b32" else 16
    low = np.arange(32) if up == 32 else np.concatenate([np.arange(16), np.arange(32, 48)])
    hazard, regs = _hazard(ins.index), [("v", dst.index), ("v", src.index)]

    def step(w):
        if w.exec != M64:
            raise NotModelled(mn, "EXEC not all ones (the text swaps lanes whatever EXEC holds)")
        hazard(w, regs)
        d, s = w.v[dst.index].copy(), w.v[src.index].copy()
        w.v[src.index, low] = d[low + up]
        w.v[dst.index, low + up] = s[low]
        w.pc += 1
    step.decisions = (44,)
    return step


SPECIAL = {"v_permlane16_swap_b32": _permlane_swap, "v_permlane32_swap_b32": _permlane_swap, "ds_bpermute_b32": _permute, "ds_permute_b32": _permute, "ds_swizzle_b32": swizzle_step,
           "v_readlane_b32": _readlane, "v_writelane_b32": _writelane, "v_readfirstlane_b32": _readfirstlane,
           "v_accvgpr_read_b32": _accmove, "v_accvgpr_write_b32": _accmove, "v_accvgpr_mov_b32": _accmove}
