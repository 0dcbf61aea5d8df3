"""Planted lowering bugs (executors/llvm_ir/mutations.py) in real compiles must make the executor's outputs wrong:
the executor is only worth running if a wrong lowering shows. Each mutation on a kernel where it applies."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gfxhound.executors.llvm_ir.memory import EmulatedFault, EmulatedRace  # noqa: E402
from gfxhound.executors.llvm_ir.mutations import MUTATIONS  # noqa: E402

from emulate_kernels import _dot, _masked_add, _row_sum, _to_fp8, _transpose, emulate  # noqa: E402


def _edit(name):
    mutation = MUTATIONS[name]

    def edit(text):
        assert mutation.applies(text), f"{name} does not apply to this kernel"
        edited = mutation.edit(text)
        assert edited != text
        return edited
    return edit


def test_swapped_mfma_operands_show():
    a, b = torch.randint(-8, 8, (32, 32)).half(), torch.randint(-8, 8, (32, 32)).half()
    c = torch.zeros(32, 32)
    emulate(_dot, (1,), [a, b, c], {"M": 32, "N": 32, "K": 32}, edit=_edit("mfma-swap"), num_warps=1)
    assert not torch.equal(c.double(), a.double() @ b.double())


def test_a_wrong_bpermute_lane_shows():
    x = torch.randint(-1000, 1000, (64, 128), dtype=torch.int32)
    out = torch.zeros(64 + 128, dtype=torch.int32)
    emulate(_row_sum, (1,), [x, out], {"N": 128, "M": 64}, edit=_edit("bpermute-lane"), num_warps=4)
    assert not (torch.equal(out[:64], x.sum(1, dtype=torch.int32)) and torch.equal(out[64:], x.max(0).values))


def test_an_off_by_one_buffer_offset_shows():
    """The last lane reads one element past the buffer: outside every buffer of the launch, a fault (the hardware
    range check uses Triton's num_records of 2 GiB, so it would read a neighbour); the others read wrong values."""
    x, y = torch.randn(1000), torch.randn(1000)
    out = torch.full((1024,), float("nan"))
    with pytest.raises(EmulatedFault, match="outside every buffer"):
        emulate(_masked_add, (4,), [x, y, out, 1000], {"BLOCK": 256}, edit=_edit("buffer-offset"), num_warps=4)
    out = torch.full((1024,), float("nan"))
    x2, y2 = torch.randn(1100), torch.randn(1100)  # with room after the data, a wrong value, not a fault
    emulate(_masked_add, (4,), [x2, y2, out, 1000], {"BLOCK": 256}, edit=_edit("buffer-offset"), num_warps=4)
    shifted = x2[1:1001] * y2[1:1001] + x2[1:1001]  # every lane read its neighbour (fma or not: within 1e-5)
    assert torch.allclose(out[:1000], shifted, rtol=0, atol=1e-5)


def test_truncating_fp8_conversion_shows():
    x = torch.randn(512) * 30
    out = torch.zeros(512)
    emulate(_to_fp8, (1,), [x, out], {"N": 512}, edit=_edit("fp8-rounding"), num_warps=4)
    wrong = (out != x.to(torch.float8_e4m3fnuz).float()).sum()
    assert wrong > 100  # about half the values round up to nearest


def test_a_missing_barrier_is_a_race_between_waves():
    """Without barriers, one wave overwrites LDS bytes another wave read in the same barrier interval: the executor's
    race check (memory.LocalMemory.check) names it, whatever order the waves ran in."""
    x = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64)
    out = torch.zeros(64, 64)
    with pytest.raises(EmulatedRace, match="missing or misplaced barrier"):
        emulate(_transpose, (1,), [x, out], {"N": 64}, edit=_edit("drop-barrier"), num_warps=4)
