"""A scalar load into VCC or M0 (`s_load_dwordx2 vcc, s[0:1], 0x0`): its decode took the destination's register
count (``Special`` has none) and stopped with "AttributeError: 'Special' object has no attribute 'count'" (2
machine runs of the gfx950 Triton campaign). Now the load writes the named register; such a destination is not
tracked for wait hazards. Expected values by hand."""
import numpy as np

from gfxhound.executors.amdgcn.asm import Function, parse_statement
from gfxhound.executors.amdgcn.machine import Wave
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.run import GlobalMemory


def test_scalar_loads_into_vcc_and_m0():
    mem = GlobalMemory()
    base = mem.map("buf", np.array([0x0000_00F0, 0x8000_0001, 0x1234], np.uint32))
    lines = ("s_load_dwordx2 vcc, s[0:1], 0x0", "s_load_dword m0, s[0:1], 0x8", "s_waitcnt lgkmcnt(0)",
             "v_cndmask_b32_e64 v1, 0, 1, vcc", "s_endpgm")
    w = Wave()
    w.mem = mem
    w.s[0], w.s[1] = base & 0xFFFFFFFF, base >> 32
    Kernel(Function("t", tuple(parse_statement(t, i + 1, i) for i, t in enumerate(lines)))).run(w, 0)
    assert w.vcc == 0x8000_0001_0000_00F0 and w.m0 == 0x1234
    mask = 0x8000_0001_0000_00F0
    assert [int(x) for x in w.v[1]] == [(mask >> i) & 1 for i in range(64)]
    assert w.hazards == []
