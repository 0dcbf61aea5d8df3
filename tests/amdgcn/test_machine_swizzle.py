"""DS_SWIZZLE_B32 on the machine (machine_swizzle.py), against AMD's CDNA4 ISA guide, section 12.12 "LDS
Instructions", DS_SWIZZLE_B32 (opcode 61). The expected values are the guide's own example tables (typed in
here from the guide, input {1, 2, ... 0x20} = lane + 1) and hand-worked cases of its pseudocode; the offset forms
of LLVM's `swizzle(...)` macro are checked against llvm-mc's encoding."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import Function, parse_statement
from gfxhound.executors.amdgcn.machine import Wave
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.machine_swizzle import swizzle_offset, swizzle_sources
from gfxhound.executors.amdgcn.asm_modifiers import parse_modifier
from gfxhound.executors.amdgcn.run import launch

ALL = (1 << 64) - 1
LLVM_MC = Path(codegen.DEFAULT_LLC).with_name("llvm-mc")


def hexes(text: str) -> list:
    return [int(x, 16) for x in text.strip("{} ").split(",")]


def run(line, data, exec_mask=ALL, old=0xAAAA5555):
    ins = tuple(parse_statement(t, i + 1, i) for i, t in enumerate((line, "s_endpgm")))
    w = Wave()
    w.exec = exec_mask
    w.v[0] = np.asarray(data, np.uint32)
    w.v[1] = old
    Kernel(Function("t", ins)).run(w, 0)
    return [int(x) for x in w.v[1]]


def lane_plus_one():
    return np.arange(64) + 1


# The guide: "The FFT mode (offset >= 0xe000) swizzles the input based on offset[4:0] ... Example swizzles using
# input {1, 2, ... 20} are:"
FFT = {0x00: "{1,11,9,19,5,15,d,1d,3,13,b,1b,7,17,f,1f,2,12,a,1a,6,16,e,1e,4,14,c,1c,8,18,10,20}",
       0x10: "{1,9,5,d,3,b,7,f,2,a,6,e,4,c,8,10,11,19,15,1d,13,1b,17,1f,12,1a,16,1e,14,1c,18,20}",
       0x1F: "{" + ",".join(f"{k:x}" for k in range(1, 33)) + "}"}   # "0x1f: No swizzle"
# The guide: "The rotate mode (offset >= 0xc000 and offset < 0xe000) rotates the input either left
# (offset[10] == 0) or right (offset[10] == 1) a number of threads equal to offset[9:5]" (offset[4:0] = mask)
ROTATE = {(0, 0): "{2,3,4,5,6,7,8,9,a,b,c,d,e,f,10,11,12,13,14,15,16,17,18,19,1a,1b,1c,1d,1e,1f,20,1}",
          (1, 0): "{20,1,2,3,4,5,6,7,8,9,a,b,c,d,e,f,10,11,12,13,14,15,16,17,18,19,1a,1b,1c,1d,1e,1f}",
          (0, 1): "{1,4,3,6,5,8,7,a,9,c,b,e,d,10,f,12,11,14,13,16,15,18,17,1a,19,1c,1b,1e,1d,20,1f,2}",
          (1, 1): "{1f,2,1,4,3,6,5,8,7,a,9,c,b,e,d,10,f,12,11,14,13,16,15,18,17,1a,19,1c,1b,1e,1d,20}"}


@pytest.mark.parametrize("mask", sorted(FFT))
def test_fft_mode_gives_the_guides_example_table(mask):
    want = hexes(FFT[mask])
    got = run(f"ds_swizzle_b32 v1, v0 offset:{0xE000 | mask:#x}", lane_plus_one())
    assert got[:32] == want
    assert got[32:] == [x + 32 for x in want]            # "j |= i & 0x20": the upper 32 threads alike


@pytest.mark.parametrize("right,mask", sorted(ROTATE))
def test_rotate_mode_gives_the_guides_example_table(right, mask):
    want = hexes(ROTATE[(right, mask)])
    got = run(f"ds_swizzle_b32 v1, v0 offset:{0xC000 | right << 10 | 1 << 5 | mask:#x}", lane_plus_one())
    assert got[:32] == want and got[32:] == [x + 32 for x in want]


def test_quad_permute_mode():
    """offset[15] == 1: "thread0 grabs thread1, thread4 grabs thread5, etc." for offset[1:0] == 1. Here the
    selects are [1:0]=1, [3:2]=0, [5:4]=3, [7:6]=2: each quad q reads {q+1, q+0, q+3, q+2}."""
    offset = 0x8000 | 1 | 0 << 2 | 3 << 4 | 2 << 6
    got = run(f"ds_swizzle_b32 v1, v0 offset:{offset:#x}", np.arange(64) * 10)
    assert got == [10 * (q + s) for q in range(0, 64, 4) for s in (1, 0, 3, 2)]


@pytest.mark.parametrize("name,and_mask,or_mask,xor_mask,source", [
    ("SWAPX16", 0x1F, 0, 0x10, lambda i: i ^ 16),
    ("SWAPX1", 0x1F, 0, 0x01, lambda i: i ^ 1),
    ("REVERSEX32", 0x1F, 0, 0x1F, lambda i: 31 - i),
    ("REVERSEX4", 0x1F, 0, 0x03, lambda i: (i & ~3) | (3 - (i & 3))),
    ("BCASTX32 thread 7", 0, 7, 0, lambda i: 7),
    ("BCASTX8 thread 5", 0x18, 5, 0, lambda i: (i & 0x18) | 5),
])
def test_bitmask_mode_examples_of_the_guide(name, and_mask, or_mask, xor_mask, source):
    """offset[15] == 0: j = (((i & 0x1f) & and_mask) | or_mask) ^ xor_mask within each group of 32 threads; the
    guide's named examples (SWAPX16: xor 0x10, and 0x1f; BCASTX8: or = thread, and 0x18; ...)."""
    offset = xor_mask << 10 | or_mask << 5 | and_mask
    got = run(f"ds_swizzle_b32 v1, v0 offset:{offset}", np.arange(64) + 100)
    assert got == [100 + source(i % 32) + (i & 32) for i in range(64)], name


def test_an_invalid_source_thread_reads_zero_and_an_inactive_lane_is_not_written():
    """"reading from an invalid thread results in 0x0": SWAPX1 with lanes 0..3 and 40 inactive; lanes 1, 3 read
    the inactive 0, 2 and get 0; lane 41 reads lane 40: 0; lanes 0, 2, 40 themselves keep their old value."""
    exec_mask = ALL & ~0xF & ~(1 << 40) | 0b1010
    got = run("ds_swizzle_b32 v1, v0 offset:swizzle(SWAP,1)", np.arange(64) + 1, exec_mask, old=0x12345678)
    assert got[0] == got[2] == got[40] == 0x12345678
    assert got[1] == got[3] == got[41] == 0
    assert got[4:8] == [6, 5, 8, 7] and got[42] == 44


MACROS = ['swizzle(QUAD_PERM,3,2,1,0)', 'swizzle(QUAD_PERM,0,1,2,3)', 'swizzle(BITMASK_PERM,"p0111")',
          'swizzle(BITMASK_PERM,"ppppp")', 'swizzle(BITMASK_PERM,"0000i")', 'swizzle(BITMASK_PERM,"10000")',
          'swizzle(BROADCAST,16,15)', 'swizzle(BROADCAST,4,3)', 'swizzle(BROADCAST,32,16)', 'swizzle(SWAP,16)',
          'swizzle(SWAP,1)', 'swizzle(REVERSE,8)', 'swizzle(REVERSE,32)', 'swizzle(FFT,0)', 'swizzle(FFT,16)',
          'swizzle(ROTATE,0,1)', 'swizzle(ROTATE,1,5)']


@pytest.mark.skipif(not LLVM_MC.exists(), reason="needs llvm-mc-22")
def test_the_macro_offsets_are_llvm_mcs_encoding():
    """The 16-bit offset is bytes 0-1 of the DS encoding llvm-mc prints for each macro form."""
    text = "".join(f"ds_swizzle_b32 v1, v0 offset:{m}\n" for m in MACROS)
    out = subprocess.run([str(LLVM_MC), "-arch=amdgcn", "-mcpu=gfx942", "-show-encoding"], input=text,
                         capture_output=True, text=True, check=True).stdout
    encoded = [int(b1, 16) << 8 | int(b0, 16) for b0, b1 in re.findall(r"encoding: \[(0x\w+),(0x\w+),", out)]
    assert len(encoded) == len(MACROS)
    mine = [swizzle_offset(parse_modifier(f"offset:{m}").value) for m in MACROS]
    assert mine == encoded


def test_every_offset_reads_within_its_group_of_32():
    """The guide's modes never cross the 32-thread halves ("j |= i & 0x20"), and quad mode stays in its quad."""
    for offset in range(0, 0x10000, 7):
        j = swizzle_sources(offset)
        assert ((j & 32) == (np.arange(64) & 32)).all() and (j >= 0).all() and (j < 64).all(), hex(offset)
        if 0x8000 <= offset < 0xC000:
            assert ((j >> 2) == (np.arange(64) >> 2)).all()


@pytest.mark.skipif(shutil.which("llc-22") is None and not Path(codegen.DEFAULT_LLC).exists(),
                    reason="needs Debian's llc-22")
@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
def test_llc_swizzles_in_a_kernel(mcpu, tmp_path):
    """llvm.amdgcn.ds.swizzle with SWAPX16 (0x401f), then a quad permute (0x801b: offset[15] set, selects
    3,2,1,0), as llc prints them (macros) and the machine runs them."""
    ll = tmp_path / "swz.ll"
    ll.write_text("""
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @swz(ptr addrspace(1) %a, ptr addrspace(1) %c) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %a, i32 %t
  %x = load i32, ptr addrspace(1) %p
  %s = call i32 @llvm.amdgcn.ds.swizzle(i32 %x, i32 16415)
  %q = call i32 @llvm.amdgcn.ds.swizzle(i32 %s, i32 32795)
  %r = add i32 %q, %x
  %o = getelementptr i32, ptr addrspace(1) %c, i32 %t
  store i32 %r, ptr addrspace(1) %o
  ret void
}
""")
    code = codegen.from_ll(ll, mcpu, 2)
    assert "swizzle(SWAP,16)" in code.text
    a = (np.arange(64) * 1000 + 7).astype(np.uint32)
    out = launch(code, None, {"a": a, "c": np.zeros(64, np.uint32)}).outputs["c"]
    # 32795 = 0x801b: QUAD_PERM 3,2,1,0 (reverse each quad) of the SWAPX16 result
    want = [int(a[((i & ~3) | (3 - (i & 3))) ^ 16]) + int(a[i]) for i in range(64)]
    assert out.tolist() == want
