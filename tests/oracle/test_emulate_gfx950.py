"""gfx950 (CDNA4) intrinsics on the IR executor (executors/llvm_ir/gfx950.py): hand-written kernels run through
oracle/crosscheck.py's `run_ir`, each expected value computed by hand here from the CDNA4 guide's pseudocode,
quoted at each test, never by calling the function under test."""
import numpy as np
import pytest

from gfxhound.oracle import crosscheck as C

# %a = vdst_old = 1000 + lane id, %b = src0_old = 2000 + lane id; the swap's two results stored to out0 / out1
SWAP = """
define amdgpu_kernel void @k(ptr addrspace(1) %out0, ptr addrspace(1) %out1) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %a = add i32 %t, 1000
  %b = add i32 %t, 2000
  %r = call { i32, i32 } @llvm.amdgcn.NAME(i32 %a, i32 %b, i1 false, i1 false)
  %v = extractvalue { i32, i32 } %r, 0
  %s = extractvalue { i32, i32 } %r, 1
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %g, BLOCK
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %p0 = getelementptr i32, ptr addrspace(1) %out0, i64 %i64
  store i32 %v, ptr addrspace(1) %p0
  %p1 = getelementptr i32, ptr addrspace(1) %out1, i64 %i64
  store i32 %s, ptr addrspace(1) %p1
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare { i32, i32 } @llvm.amdgcn.NAME(i32, i32, i1 immarg, i1 immarg)
"""


def run_swap(name, block=64, grid=1, arch="gfx950"):
    text = SWAP.replace("NAME", name).replace("BLOCK", str(block))
    n = block * grid
    spec = f"out0: i32[{n}] out; out1: i32[{n}] out; grid: {grid}; block: {block}"
    return C.run_ir(text, "k", arch, C.make_launch(spec, C.ir_params(text, "k")))


def ran(result):
    assert not result.unresolved and not result.fault, (result.unresolved, result.fault)
    return result.outputs["out0"].astype(np.int64), result.outputs["out1"].astype(np.int64)


@pytest.mark.parametrize("block, grid", [(64, 1), (128, 2)])
def test_permlane32_swap_trades_the_upper_half_of_vdst_with_the_lower_half_of_src0(block, grid):
    """[CDNA4] V_PERMLANE32_SWAP_B32: "for lane in 0 : 31 do tmp = VGPR[lane][SRC0.u32]; VGPR[lane][SRC0.u32] =
    VGPR[lane + 32][VDST.u32]; VGPR[lane + 32][VDST.u32] = tmp". By hand, wave lane n (vdst_old = 1000 + t,
    src0_old = 2000 + t, t the workitem id, so t = 64w + n in wave w):
      n < 32:  vdst_new = 1000 + t (untouched),  src0_new = vdst_old of lane n+32 = 1000 + t + 32
      n >= 32: vdst_new = src0_old of lane n-32 = 2000 + t - 32,  src0_new = 2000 + t (untouched)"""
    vdst, src0 = ran(run_swap("permlane32.swap", block, grid))
    for i in range(block * grid):
        t = i % block
        n = t % 64
        if n < 32:
            assert (vdst[i], src0[i]) == (1000 + t, 1000 + t + 32), i
        else:
            assert (vdst[i], src0[i]) == (2000 + t - 32, 2000 + t), i


def test_permlane32_swap_spot_values():
    """Four lanes written out in full: lane 0 gets src0 = vdst_old[32] = 1032; lane 31 src0 = 1063; lane 32 gets
    vdst = src0_old[0] = 2000; lane 63 vdst = src0_old[31] = 2031."""
    vdst, src0 = ran(run_swap("permlane32.swap"))
    assert (vdst[0], src0[0]) == (1000, 1032)
    assert (vdst[31], src0[31]) == (1031, 1063)
    assert (vdst[32], src0[32]) == (2000, 2032)
    assert (vdst[63], src0[63]) == (2031, 2063)


@pytest.mark.parametrize("block, grid", [(64, 1), (128, 2)])
def test_permlane16_swap_trades_odd_rows_of_vdst_with_even_rows_of_src0(block, grid):
    """[CDNA4] V_PERMLANE16_SWAP_B32: "for pass in 0 : 1 do for lane in 0 : 15 do tmp = VGPR[pass * 32 +
    lane][SRC0.u32]; VGPR[pass * 32 + lane][SRC0.u32] = VGPR[pass * 32 + lane + 16][VDST.u32]; VGPR[pass * 32 +
    lane + 16][VDST.u32] = tmp". By hand, wave lane n in row n // 16:
      even rows (0-15, 32-47): vdst_new untouched (1000 + t), src0_new = vdst_old of lane n+16 = 1000 + t + 16
      odd rows (16-31, 48-63): vdst_new = src0_old of lane n-16 = 2000 + t - 16, src0_new untouched (2000 + t)"""
    vdst, src0 = ran(run_swap("permlane16.swap", block, grid))
    for i in range(block * grid):
        t = i % block
        if (t % 64) // 16 % 2 == 0:
            assert (vdst[i], src0[i]) == (1000 + t, 1000 + t + 16), i
        else:
            assert (vdst[i], src0[i]) == (2000 + t - 16, 2000 + t), i


def test_permlane16_swap_spot_values():
    """Lane 0: src0 = vdst_old[16] = 1016; lane 16: vdst = src0_old[0] = 2000; lane 47: src0 = vdst_old[63] =
    1063; lane 63: vdst = src0_old[47] = 2047."""
    vdst, src0 = ran(run_swap("permlane16.swap"))
    assert (vdst[0], src0[0]) == (1000, 1016)
    assert (vdst[16], src0[16]) == (2000, 2016)
    assert (vdst[47], src0[47]) == (1047, 1063)
    assert (vdst[63], src0[63]) == (2047, 2063)


# Triton's idiom (a reduction across the wave's halves): swap x with itself, then add the two results. With
# x = lane id, after permlane32.swap(x, x) lane n holds {vdst_new, src0_new} = n < 32: {n, n + 32}; n >= 32:
# {n - 32, n}; so the sum is 2n + 32 (n < 32) or 2n - 32 (n >= 32): each lane's value plus its partner's.
REDUCE = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %r = call { i32, i32 } @llvm.amdgcn.permlane32.swap(i32 %t, i32 %t, i1 false, i1 true)
  %v = extractvalue { i32, i32 } %r, 0
  %s = extractvalue { i32, i32 } %r, 1
  %x = add i32 %v, %s
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store i32 %x, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare { i32, i32 } @llvm.amdgcn.permlane32.swap(i32, i32, i1 immarg, i1 immarg)
"""


def test_permlane32_swap_of_a_value_with_itself_pairs_each_lane_with_its_partner():
    launch = C.make_launch("out: i32[64] out; grid: 1; block: 64", C.ir_params(REDUCE, "k"))
    run = C.run_ir(REDUCE, "k", "gfx950", launch)
    assert not run.unresolved and not run.fault, (run.unresolved, run.fault)
    got = run.outputs["out"].astype(np.int64)
    assert [int(x) for x in got] == [n + (n + 32 if n < 32 else n - 32) for n in range(64)]


# Only lanes 0-15 run the swap: their partners (lanes 32-47 for permlane32, 16-31 for permlane16) are disabled,
# so the value an active lane receives is a disabled lane's, which the IR does not define.
DIVERGENT = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  %c = icmp ult i32 %t, 16
  br i1 %c, label %then, label %done
then:
  %r = call { i32, i32 } @llvm.amdgcn.NAME(i32 %t, i32 %t, i1 false, i1 false)
  %s = extractvalue { i32, i32 } %r, 1
  store i32 %s, ptr addrspace(1) %p
  br label %done
done:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare { i32, i32 } @llvm.amdgcn.NAME(i32, i32, i1 immarg, i1 immarg)
"""


@pytest.mark.parametrize("name", ["permlane32.swap", "permlane16.swap"])
def test_a_swap_with_its_partner_lane_disabled_is_unresolved(name):
    text = DIVERGENT.replace("NAME", name)
    run = C.run_ir(text, "k", "gfx950", C.make_launch("out: i32[64] out; grid: 1; block: 64", C.ir_params(text, "k")))
    assert "permlane swap with one lane of a pair disabled" in run.unresolved, (run.unresolved, run.fault)


def test_swap_on_another_target_is_unresolved():
    """The semantics come from the CDNA4 guide; on gfx942 (which lacks the instruction) nothing is guessed."""
    run = run_swap("permlane32.swap", arch="gfx942")
    assert "permlane32.swap on gfx942" in run.unresolved, run.unresolved


def _swapped_reading(raw, element_bits):
    """The reading decision 47 rejects: the group's lanes taken chunk-major (lane = row + E * chunk)."""
    lanes, nbytes = raw.shape
    per_lane = nbytes * 8 // element_bits
    bits = np.unpackbits(raw, axis=1, bitorder="little").reshape(lanes // 16, 16, per_lane, element_bits)
    out = np.empty_like(bits)
    for i in range(16):
        for e in range(per_lane):
            out[:, i, e] = bits[:, (e + per_lane * (i // per_lane)) % 16, i % per_lane]
    return np.packbits(out.reshape(lanes, -1), axis=1, bitorder="little")


@pytest.mark.parametrize("dtype, size, read", [("float16", 32, "tr16"), ("bfloat16", 64, "tr16"),
                                              ("float8_e4m3fn", 32, "tr8")])
def test_a_triton_dot_on_gfx950_reads_its_b_operand_transposed_and_agrees_with_torch(dtype, size, read,
                                                                                      monkeypatch):
    """Decision 47 checked against Triton: a plain tl.dot of f16/bf16 (fp8) for gfx950 loads its row-major B
    through ds.read.tr16.b64 (tr8.b64; Triton's gfx950 lowering, run by AMD on MI355 hardware), and agrees with
    torch under the literal reading; under the lane-swapped reading the same kernel is wrong, so the check can
    fail. The fp8 dot multiplies with mfma.scale...f8f6f4 (both scales the constant 0: unscaled)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    import emulate_kernels
    from emulate_kernels import _dot, emulate
    monkeypatch.setitem(emulate_kernels.TYPES, torch.float8_e4m3fn, "*fp8e4nv")

    from gfxhound.executors.llvm_ir import gfx950
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    g = torch.Generator().manual_seed(1)
    a = torch.randn(size, size, generator=g).to(getattr(torch, dtype))
    b = torch.randn(size, size, generator=g).to(getattr(torch, dtype))
    want = a.float() @ b.float()
    c = torch.zeros(size, size)
    compiled = emulate(_dot, (1,), [a, b, c], {"M": size, "N": size, "K": size}, arch="gfx950")
    assert f"llvm.amdgcn.ds.read.{read}.b64" in compiled.asm["llir"]
    assert torch.allclose(c, want, atol=1e-3, rtol=1e-3), float((c - want).abs().max())
    monkeypatch.setattr(gfx950, "transpose_read", _swapped_reading)
    c.zero_()
    emulate(_dot, (1,), [a, b, c], {"M": size, "N": size, "K": size}, arch="gfx950")
    assert float((c - want).abs().max()) > 1.0


def test_a_transposing_read_on_another_target_is_unresolved():
    """The semantics come from the CDNA4 guide; on gfx942 (which lacks the instruction) nothing is guessed."""
    text = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
entry:
  %lds = inttoptr i32 0 to ptr addrspace(3)
  %r = call <4 x half> @llvm.amdgcn.ds.read.tr16.b64.v4f16(ptr addrspace(3) %lds)
  ret void
}
declare <4 x half> @llvm.amdgcn.ds.read.tr16.b64.v4f16(ptr addrspace(3))
"""
    run = C.run_ir(text, "k", "gfx942", C.make_launch("out: i32[64] out; grid: 1; block: 64", C.ir_params(text, "k")))
    assert "ds.read.tr16.b64 on gfx942" in run.unresolved, run.unresolved


def test_a_triton_reduction_on_gfx950_runs_its_permlane_swaps_and_agrees_with_torch():
    """End to end: Triton lowers tl.sum / tl.max for gfx950 with permlane32.swap and permlane16.swap (the .llir
    calls both); before gfx950.py the kernel was unresolved. The oracle is torch, not the executor."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    from emulate_kernels import _row_sum, emulate
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(3))
    out = torch.empty(16 + 64)
    compiled = emulate(_row_sum, (1,), [x, out], {"N": 64, "M": 16}, arch="gfx950")
    assert "llvm.amdgcn.permlane32.swap" in compiled.asm["llir"]
    assert "llvm.amdgcn.permlane16.swap" in compiled.asm["llir"]
    assert torch.allclose(out[:16], x.sum(1), atol=1e-4)
    assert torch.equal(out[16:], x.max(0).values)


@pytest.mark.parametrize("source, dest", [("float8_e4m3fn", "float32"), ("float8_e5m2", "float32"),
                                          ("float8_e4m3fn", "float16"), ("float8_e5m2", "bfloat16"),
                                          ("float32", "float8_e4m3fn"), ("float32", "float8_e5m2"),
                                          ("float16", "float8_e4m3fn"), ("bfloat16", "float8_e5m2")])
def test_triton_fp8_casts_on_gfx950_run_their_scaled_conversions_and_agree_with_torch(source, dest, monkeypatch):
    """Triton casts fp8 on gfx950 with llvm.amdgcn.cvt.scalef32.pk.* (scale 1.0): the IR executor runs them
    (convert.py, the scale 2^0 only) and every element equals torch's own cast. Before they were unresolved."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    import triton.language as tl

    import emulate_kernels
    from emulate_kernels import _cast, emulate
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    monkeypatch.setitem(emulate_kernels.TYPES, torch.float8_e4m3fn, "*fp8e4nv")
    monkeypatch.setitem(emulate_kernels.TYPES, torch.float8_e5m2, "*fp8e5")
    triton_types = {"float32": tl.float32, "float16": tl.float16, "bfloat16": tl.bfloat16,
                    "float8_e4m3fn": tl.float8e4nv, "float8_e5m2": tl.float8e5}
    x = (torch.randn(64, generator=torch.Generator().manual_seed(0)) * 10).to(getattr(torch, source))
    out = torch.zeros(64, dtype=getattr(torch, dest))
    compiled = emulate(_cast, (1,), [x, out], {"N": 64, "DST": triton_types[dest]}, arch="gfx950")
    assert "llvm.amdgcn.cvt.scalef32.pk." in compiled.asm["llir"]
    assert torch.equal(out.float(), x.to(getattr(torch, dest)).float())
