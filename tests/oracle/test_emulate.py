"""The CPU executor for AMD LLVM IR (executors/llvm_ir/): real Triton compiles for gfx942, run on CPU tensors and
compared with torch, exactly where the hardware is exact. Hand-written IR covers what a compile does not pin down:
divergence and reconvergence, faults, what is not modelled."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
from gfxhound.executors.llvm_ir import core, ir  # noqa: E402
from gfxhound.executors.llvm_ir.errors import NotModelled  # noqa: E402
from gfxhound.executors.llvm_ir.memory import EmulatedFault, GlobalMemory  # noqa: E402
from gfxhound.executors.llvm_ir.intrinsics import DeviceAssertion  # noqa: E402

from emulate_kernels import (_contended_atomics, _dot, _masked_add, _row_sum, _scan_and_early_exit,  # noqa: E402
                             _to_fp16_rtz, _to_fp8, _transpose, emulate)


def test_masked_elementwise_is_exact_and_leaves_the_tail_alone():
    n = 1000
    x, y = torch.randn(n), torch.randn(n)
    out = torch.full((1024,), float("nan"))
    emulate(_masked_add, (4,), [x, y, out, n], {"BLOCK": 256}, num_warps=4)
    assert torch.equal(out[:n], x * y + x) or torch.allclose(out[:n], torch.addcmul(x, x, y), rtol=0, atol=1e-6)
    assert torch.isnan(out[n:]).all()  # masked-off lanes of the last program stored nothing


@pytest.mark.parametrize("warps", [1, 4])
def test_reductions_across_lanes_and_waves(warps):
    x = torch.randint(-1000, 1000, (64, 128), dtype=torch.int32)
    out = torch.zeros(64 + 128, dtype=torch.int32)
    compiled = emulate(_row_sum, (1,), [x, out], {"N": 128, "M": 64}, num_warps=warps)
    assert torch.equal(out[:64], x.sum(1, dtype=torch.int32))
    assert torch.equal(out[64:], x.max(0).values)
    text = compiled.asm["llir"]
    assert "ds.bpermute" in text or "update.dpp" in text or "readlane" in text  # cross-lane moves were exercised


@pytest.mark.parametrize("dtype,nonkdim,warps", [(torch.float16, 32, 4), (torch.float16, 16, 2),
                                                 (torch.bfloat16, 32, 1), (torch.bfloat16, 16, 4),
                                                 (torch.int8, 16, 4)])
def test_mfma_dots_are_exact_on_small_integers(dtype, nonkdim, warps):
    """Small integers make every product and sum exact: any lane-layout slip shows as a wrong element."""
    a = torch.randint(-8, 8, (64, 64)).to(dtype)
    b = torch.randint(-8, 8, (64, 32)).to(dtype)
    c = torch.zeros(64, 32, dtype=torch.int32 if dtype == torch.int8 else torch.float32)
    compiled = emulate(_dot, (1,), [a, b, c], {"M": 64, "N": 32, "K": 64}, num_warps=warps,
                       matrix_instr_nonkdim=nonkdim)
    assert "llvm.amdgcn.mfma" in compiled.asm["llir"]
    assert torch.equal(c.double(), a.double() @ b.double())


def test_layout_conversion_through_lds_between_waves():
    x = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64)
    out = torch.zeros(64, 64)
    compiled = emulate(_transpose, (1,), [x, out], {"N": 64}, num_warps=4)
    assert "addrspace(3)" in compiled.asm["llir"] and "s.barrier" in compiled.asm["llir"]
    assert torch.equal(out, x.T + 1)


def test_atomics_from_many_programs_on_few_addresses():
    n = 3000
    x = torch.randint(-50, 50, (n,), dtype=torch.int32)
    out = torch.zeros(10, dtype=torch.int32)
    out[7:] = -1000
    emulate(_contended_atomics, (12,), [x, out, n], {"BLOCK": 256}, num_warps=2)
    idx = torch.arange(n)
    assert torch.equal(out[:7], torch.stack([x[idx % 7 == k].sum() for k in range(7)]).int())
    assert torch.equal(out[7:], torch.stack([x[idx % 3 == k].max() for k in range(3)]).int())


def test_scan_and_programs_that_return_early():
    x = torch.randint(-5, 5, (6, 256), dtype=torch.int32)
    out = torch.full((6, 256), 7, dtype=torch.int32)
    emulate(_scan_and_early_exit, (6,), [x, out, 4], {"N": 256}, num_warps=4)
    assert torch.equal(out[:4], torch.cumsum(x[:4], 1, dtype=torch.int32))
    assert (out[4:] == 7).all()


def test_fp8_fnuz_round_trip_on_gfx942():
    x = torch.randn(512) * 30
    out = torch.zeros(512)
    compiled = emulate(_to_fp8, (1,), [x, out], {"N": 512}, num_warps=4)
    assert "cvt.pk.fp8.f32" in compiled.asm["llir"]  # the hardware conversion, not a software sequence
    assert torch.equal(out, x.to(torch.float8_e4m3fnuz).float())


def test_fp16_round_toward_zero_on_gfx942():
    """x.to(fp16, rtz) lowers to v_cvt_pkrtz_f16_f32 on gfx942: every result is the fp16 value next to x toward
    zero (65504 past the range), exactly."""
    x = torch.cat([torch.randn(500) * 1000, torch.tensor([65519.0, 70000.0, -70000.0, 1 + 2.0**-12, -(1 + 2.0**-12),
                                                          3e-8, 0.0, -0.0, float("inf"), 1 / 3, -1 / 3, 2.0**-24])])
    out = torch.zeros(512, dtype=torch.float16)
    compiled = emulate(_to_fp16_rtz, (1,), [x, out], {"N": 512}, num_warps=4)
    assert "cvt.pkrtz" in compiled.asm["llir"]
    x64, got = x.double(), out.double()
    finite = torch.isfinite(x64)
    assert (got[finite].abs() <= x64[finite].abs()).all()  # never away from zero
    nearest = x.to(torch.float16).double()
    step_down = torch.from_numpy(np.nextafter(nearest.to(torch.float16).numpy(), np.float16(0))).double()
    expected = torch.where(nearest.abs() > x64.abs(), step_down, nearest)
    assert torch.equal(got[finite], expected[finite])
    assert got[500:503].tolist() == [65504.0, 65504.0, -65504.0] and got[-4].item() == float("inf")  # inf is exact


# --- hand-written IR: what a compile does not pin down -------------------------------------------------------------
DIVERGENT = """
define amdgpu_kernel void @k(ptr addrspace(1) %0) {
  %2 = call i32 @llvm.amdgcn.workitem.id.x()
  %3 = and i32 %2, 3
  br label %4

4:
  %5 = phi i32 [ 0, %1 ], [ %8, %7 ]
  %6 = icmp ult i32 %5, %3
  br i1 %6, label %7, label %9

7:
  %8 = add i32 %5, 1
  br label %4

9:
  %10 = icmp eq i32 %3, 2
  br i1 %10, label %11, label %12

11:
  ret void

12:
  %13 = mul i32 %5, 10
  %14 = zext i32 %2 to i64
  %15 = getelementptr i32, ptr addrspace(1) %0, i64 %14
  store i32 %13, ptr addrspace(1) %15, align 4
  ret void
}
"""


def _run_ir(text, data: np.ndarray, warps=1, grid=(1, 1, 1)):
    module = ir.parse(text)
    kernel = core.Kernel(module, "k", "gfx942", 64)
    heap = GlobalMemory()
    address = heap.map(data.view(np.uint8).copy())
    heap.seal()
    core.run_grid(kernel, {kernel.params[0][1]: np.array(address, np.uint64)}, grid, warps, 0, heap)
    return heap.read_back(address, data.nbytes).view(data.dtype)


def test_divergent_loop_and_early_return_reconverge():
    """Lanes loop tid % 4 times (a divergent loop); lanes with tid % 4 == 2 return; the rest store 10 x trips."""
    got = _run_ir(DIVERGENT, np.full(64, -1, np.int32))
    tid = np.arange(64)
    expected = np.where(tid % 4 == 2, -1, (tid % 4) * 10)
    assert (got == expected).all()


def test_a_load_outside_every_buffer_faults():
    text = DIVERGENT.replace("%14 = zext i32 %2 to i64", "%14 = add i64 0, 4096")
    with pytest.raises(EmulatedFault, match="outside every buffer"):
        _run_ir(text, np.zeros(64, np.int32))


def test_what_is_not_modelled_is_named():
    text = DIVERGENT.replace("%13 = mul i32 %5, 10", "%13 = call i32 @llvm.amdgcn.mystery(i32 %5)")
    with pytest.raises(NotModelled, match="llvm.amdgcn.mystery"):
        _run_ir(text, np.zeros(64, np.int32))


# Triton 3.5-3.7's device assertion: the message goes through printf's hostcall (__ockl_* calls, defined in the
# module with a spin-wait on the host), then llvm.trap. Lanes whose value is over the limit assert.
PRINTF_ASSERT = """
define amdgpu_kernel void @k(ptr addrspace(1) %0, i32 %limit) {
  %2 = call i32 @llvm.amdgcn.workitem.id.x()
  %3 = zext i32 %2 to i64
  %4 = getelementptr i32, ptr addrspace(1) %0, i64 %3
  %5 = load i32, ptr addrspace(1) %4, align 4
  %6 = icmp sgt i32 %5, %limit
  br i1 %6, label %7, label %9

7:
  %8 = call fastcc i64 @__ockl_fprintf_stderr_begin()
  call fastcc void @__ockl_printf_append_string_n(i64 %8)
  call void @llvm.trap()
  unreachable

9:
  %10 = add i32 %5, 1
  store i32 %10, ptr addrspace(1) %4, align 4
  ret void
}

define internal fastcc i64 @__ockl_fprintf_stderr_begin() {
  br label %1

1:
  br label %1
}
"""


@pytest.mark.parametrize("limit", [100, 40])
def test_a_printf_assertion_runs_when_it_holds_and_asserts_when_it_fails(limit):
    """printf's hostcall is output to the host (a no-op here, never its spin-wait); llvm.trap is the assertion."""
    module = ir.parse(PRINTF_ASSERT)
    kernel = core.Kernel(module, "k", "gfx942", 64)
    heap = GlobalMemory()
    address = heap.map(np.arange(64, dtype=np.int32).view(np.uint8).copy())
    heap.seal()
    env = {kernel.params[0][1]: np.array(address, np.uint64), kernel.params[1][1]: np.array(limit, np.int32)}
    if limit < 64:
        with pytest.raises(DeviceAssertion, match="llvm.trap"):
            core.run_grid(kernel, env, (1, 1, 1), 1, 0, heap)
        return
    core.run_grid(kernel, env, (1, 1, 1), 1, 0, heap)
    assert (heap.read_back(address, 256).view(np.int32) == np.arange(1, 65)).all()


def test_a_trap_path_is_no_exit_so_the_other_lanes_reconverge_after_it():
    """A branch around a failed assertion (printf, llvm.trap, unreachable) reconverges where the non-trapping side
    goes: with the join at the function's end, a scan's cross-lane step after the overflow check ran without the
    lanes still inside it (a false wrong result on Triton 3.6 debug=True kernels)."""
    kernel = core.Kernel(ir.parse(PRINTF_ASSERT), "k", "gfx942", 64)
    branch = next(n for n, b in kernel.fn.blocks.items() if b.body[-1].op == "br" and len(b.body[-1].ops) == 1)
    returns = next(n for n, b in kernel.fn.blocks.items() if b.body[-1].op == "ret")
    assert kernel.ipdom[branch] == returns


VECTOR_REDUCE = """
define amdgpu_kernel void @k(ptr addrspace(1) %0) {
  %2 = call i32 @llvm.amdgcn.workitem.id.x()
  %3 = zext i32 %2 to i64
  %4 = getelementptr <2 x i32>, ptr addrspace(1) %0, i64 %3
  %5 = load <2 x i32>, ptr addrspace(1) %4, align 8
  %6 = call i32 @llvm.vector.reduce.OP.v2i32(<2 x i32> %5)
  %7 = getelementptr i32, ptr addrspace(1) %0, i64 %3
  call void @llvm.amdgcn.s.barrier()
  store i32 %6, ptr addrspace(1) %7, align 4
  ret void
}
"""


@pytest.mark.parametrize("op,fn", [("add", lambda a, b: a + b), ("mul", lambda a, b: a * b),
                                   ("xor", lambda a, b: a ^ b), ("or", lambda a, b: a | b),
                                   ("smax", np.maximum), ("smin", np.minimum),
                                   ("umax", lambda a, b: np.maximum(a.view(np.uint32), b.view(np.uint32)).view(
                                       np.int32))])
def test_vector_reduce_of_integers_wraps_in_its_width(op, fn):
    rng = np.random.default_rng(3)
    pairs = rng.integers(-2**31, 2**31, size=(64, 2), dtype=np.int64).astype(np.int32)
    got = _run_ir(VECTOR_REDUCE.replace("OP", op), pairs.reshape(-1).copy())[:64]
    with np.errstate(over="ignore"):
        assert (got == fn(pairs[:, 0], pairs[:, 1]).astype(np.int32)).all()
