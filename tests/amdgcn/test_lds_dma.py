"""Loads straight into LDS on the machine (decision 49, machine_lds_dma.py): llc's global_load_lds_dword and
buffer_load_dword{,x4} ... lds against the IR executor and against the input itself; and the VM_CNT wait that
makes the bytes land: with llc's `s_waitcnt vmcnt(0)` removed, the ds_read that follows reads the old LDS bytes,
so the machine disagrees (as the hardware would), where writing at issue would have hidden a lost wait."""
from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.oracle import crosscheck as C

pytestmark = pytest.mark.skipif(shutil.which("llc-22") is None and not Path(codegen.DEFAULT_LLC).exists(),
                                reason="needs Debian's llc-22")
DATA = Path(__file__).parent / "data"
SPEC = "in: i32[1024]; out: i32[64] out; grid: 1; block: 64"


def _runs(ll, kernel, mcpu, edit=None):
    text = ll.read_text()
    launch = C.make_launch(SPEC, C.ir_params(text, kernel), seed=3)
    code = codegen.from_ll(ll, mcpu, 2)
    if edit is not None:
        code = dataclasses.replace(code, text=edit(code.text))
    return launch, C.run_ir(text, kernel, mcpu, launch), C.run_machine("O2", code, kernel, launch)


@pytest.mark.parametrize("ll, kernel, mcpu, shift", [(DATA / "load_lds.ll", "load_lds", "gfx942", 0),
                                                     (DATA / "load_lds.ll", "load_lds", "gfx950", 0),
                                                     (DATA / "gfx950" / "buffer_lds.ll", "k4", "gfx950", 4),
                                                     (DATA / "gfx950" / "buffer_lds.ll", "k16", "gfx950", 4)])
def test_lds_direct_loads_land_where_both_executors_put_them(ll, kernel, mcpu, shift):
    launch, ir, machine = _runs(ll, kernel, mcpu)
    assert "lds" in codegen.from_ll(ll, mcpu, 2).text
    for run in (ir, machine):
        assert not run.unresolved and not run.fault, (run.label, run.unresolved, run.fault)
    want = launch.args[0][shift:shift + 64]            # the offset 16 moves the global and the LDS side alike
    assert (ir.outputs["out"] == want).all() and (machine.outputs["out"] == want).all()


def test_without_its_wait_the_ds_read_sees_the_old_bytes():
    def drop_wait(text):
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if "global_load_lds_dword" in line)
        wait = next(i for i in range(at, len(lines)) if re.match(r"\s*s_waitcnt\b.*vmcnt", lines[i]))
        return "\n".join(lines[:wait] + lines[wait + 1:]) + "\n"
    launch, ir, machine = _runs(DATA / "load_lds.ll", "load_lds", "gfx942", edit=drop_wait)
    assert not machine.unresolved and not machine.fault, machine.unresolved
    assert (ir.outputs["out"] == launch.args[0][:64]).all()
    assert not np.array_equal(machine.outputs["out"], ir.outputs["out"])


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
def test_an_lds_store_past_the_allocation_is_dropped_by_both_executors(mcpu):
    """Triton masks LDS writes with the address 0x7fffffff (triton-lang/triton#9679, #10588) and the hardware drops
    them; both executors faulted there (e682f4ee, a gfx950 device-campaign kernel)."""
    ll = DATA / "lds_oob_store.ll"
    text = ll.read_text()
    launch = C.make_launch("out: i32[64] out; grid: 1; block: 64", C.ir_params(text, "lds_oob_store"))
    want = np.where(np.arange(64) % 2 == 0, 2, 1)
    machine = C.run_machine("O2", codegen.from_ll(ll, mcpu, 2), "lds_oob_store", launch)
    for run in (C.run_ir(text, "lds_oob_store", mcpu, launch), machine):
        assert not run.unresolved and not run.fault, (run.label, run.unresolved, run.fault)
        assert (run.outputs["out"] == want).all(), (run.label, run.outputs["out"][:8])
