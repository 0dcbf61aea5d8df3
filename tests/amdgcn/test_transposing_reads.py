"""gfx950's transposing LDS reads (decision 47) on both executors: ds.read.tr{16,8,4}.b64 and tr6.b96 on the IR
executor (executors/llvm_ir/gfx950.py) and llc's ds_read_b64_tr_b16/b8/b4, ds_read_b96_tr_b6 on the machine
(executors/amdgcn/machine_transpose.py), each held to values computed here, element by element, from the CDNA4
guide's words ("interpret the data as a matrix ... and transpose the matrix"): in each group of 16 lanes the
elements, lane by lane and from bit 0 within a lane, are rows of 16; lane i receives column i."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.oracle import crosscheck as C

pytestmark = pytest.mark.skipif(shutil.which("llc-22") is None and not Path(codegen.DEFAULT_LLC).exists(),
                                reason="needs Debian's llc-22")
LL = Path(__file__).parent / "data" / "gfx950" / "ds_read_tr.ll"
FORMS = {"tr16": (16, 8), "tr8": (8, 8), "tr4": (4, 8), "tr6": (6, 12)}   # element bits, bytes a lane reads


def expected(lds: bytes, addr, element_bits: int, nbytes: int) -> np.ndarray:
    """out as uint8 [64, 16]: lane t's result in its first `nbytes` bytes, by the rule, bit by bit."""
    loaded = [int.from_bytes(lds[a:a + nbytes], "little") for a in addr]
    per_lane = nbytes * 8 // element_bits
    out = np.zeros((64, 16), np.uint8)
    for lane in range(64):
        group, i, value = lane // 16 * 16, lane % 16, 0
        for e in range(per_lane):
            flat = e * 16 + i                         # row e, column i of the group's matrix
            source, position = flat // per_lane, flat % per_lane
            element = (loaded[group + source] >> (position * element_bits)) & ((1 << element_bits) - 1)
            value |= element << (e * element_bits)
        out[lane, :nbytes] = np.frombuffer(value.to_bytes(nbytes, "little"), np.uint8)
    return out


def inputs(seed: int, nbytes: int):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 2 ** 32, 256, dtype=np.uint64).astype(np.uint32)
    stride = 16
    addr = (rng.permutation(64) * stride).astype(np.uint32)   # lanes read other lanes' slots, in a scrambled order
    return data, addr


@pytest.mark.parametrize("form", sorted(FORMS))
def test_both_executors_transpose_as_the_guide_says(form):
    element_bits, nbytes = FORMS[form]
    text = LL.read_text()
    assembly = codegen.from_ll(LL, "gfx950", 2)
    mnemonic = {"tr16": "ds_read_b64_tr_b16", "tr8": "ds_read_b64_tr_b8", "tr4": "ds_read_b64_tr_b4",
                "tr6": "ds_read_b96_tr_b6"}[form]
    assert mnemonic in assembly.text
    for seed in (1, 2):
        data, addr = inputs(seed, nbytes)
        want = expected(data.tobytes(), addr.tolist(), element_bits, nbytes)
        spec = "in: i32[256]; addr: i32[64]; out: i32[256] out; grid: 1; block: 64"
        launch = C.make_launch(spec, C.ir_params(text, form))
        launch.args[0][:], launch.args[1][:] = data, addr
        ir = C.run_ir(text, form, "gfx950", launch)
        machine = C.run_machine("O2", assembly, form, launch)
        for run in (ir, machine):
            assert not run.unresolved and not run.fault, (run.label, run.unresolved, run.fault)
            got = run.outputs["out"].view(np.uint8).reshape(64, 16)
            bad = np.flatnonzero((got[:, :nbytes] != want[:, :nbytes]).any(axis=1))
            assert bad.size == 0, (run.label, form, seed, bad[:4])


def test_the_literal_reading_is_not_the_only_permutation_the_test_could_accept():
    """The test separates readings: the lane-swapped one (lane = row + E * chunk) gives other bytes."""
    data, addr = inputs(1, 8)
    literal = expected(data.tobytes(), addr.tolist(), 16, 8)
    loaded = [int.from_bytes(data.tobytes()[a:a + 8], "little") for a in addr.tolist()]
    swapped = np.zeros_like(literal)
    for lane in range(64):
        group, i, value = lane // 16 * 16, lane % 16, 0
        for e in range(4):
            value |= ((loaded[group + e + 4 * (i // 4)] >> (16 * (i % 4))) & 0xFFFF) << (16 * e)
        swapped[lane, :8] = np.frombuffer(value.to_bytes(8, "little"), np.uint8)
    assert (swapped != literal).any()


def test_a_wave_with_lanes_off_is_refused_by_name():
    """The guide: EXEC must be all ones; a 48-lane workgroup leaves a wave partly off, and both say so."""
    text = LL.read_text()
    assembly = codegen.from_ll(LL, "gfx950", 2)
    launch = C.make_launch("in: i32[256]; addr: i32[64]; out: i32[256] out; grid: 1; block: 64",
                           C.ir_params(text, "tr16"))
    launch.block = (48, 1, 1)
    machine = C.run_machine("O2", assembly, "tr16", launch)
    assert "EXEC not all ones" in machine.unresolved, machine.unresolved
