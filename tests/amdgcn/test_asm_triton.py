"""Real Triton kernels (a reduction with an atomic and a scan, a tl.dot matmul) compiled by the installed Triton
for gfx942 and gfx950: their assembly decodes, round-trips through llvm-mc, and their start state (Triton
preloads kernargs) is consistent with the compatibility prologue Triton's code generator wrote."""
import sys
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.abi import kernel_abi
from gfxhound.executors.amdgcn.asm import parse_program
from gfxhound.executors.amdgcn.asm_operands import Imm, Reg

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
pytest.importorskip("triton.backends.amd.compiler")
LLD = "/usr/lib/llvm-22/bin/ld.lld"
LLVM_MC = Path(codegen.DEFAULT_LLC).with_name("llvm-mc")
sys.path.insert(0, str(Path(__file__).parent))  # test_asm_roundtrip's llvm-mc comparison, as tests/oracle does


@triton.jit
def reduce_scan(x, out, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    v = tl.load(x + offs, mask=offs < n, other=float("-inf"))
    m = tl.max(v, 0)
    s = tl.sum(tl.exp(v - m), 0)
    tl.atomic_add(out, s)
    tl.store(out + 1 + offs, tl.cumsum(v.to(tl.int32), 0), mask=offs < n)


@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn, rk = tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)


KERNELS = {
    "reduce_scan": (reduce_scan, {"x": "*fp32", "out": "*fp32", "n": "i32", "B": "constexpr"}, {"B": 256}),
    "matmul": (matmul, {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                        "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}, {"BM": 64, "BN": 64, "BK": 32}),
}


@pytest.fixture(scope="module")
def compiled():
    """{(kernel, mcpu): (assembly, Triton's metadata)}, compiled once."""
    if not Path(LLD).exists():
        pytest.skip("no ld.lld of LLVM 22 for Triton's AMD linking step")
    from triton.backends.compiler import GPUTarget
    mp = pytest.MonkeyPatch()
    mp.setenv("TRITON_HIP_LLD_PATH", LLD)
    mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    out = {}
    try:
        for name, (fn, signature, constexprs) in KERNELS.items():
            for mcpu in ("gfx942", "gfx950"):
                source = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
                kernel = triton.compile(source, target=GPUTarget("hip", mcpu, 64))
                out[name, mcpu] = (kernel.asm["amdgcn"], kernel.metadata)
    finally:
        mp.undo()
    return out


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_triton_kernels_decode_and_round_trip(compiled, name, mcpu):
    text, _ = compiled[name, mcpu]
    fn = parse_program(text).function(name)
    assert len(fn.instructions) > 100 and fn.instructions[-1].mnemonic == "s_endpgm"
    if LLVM_MC.exists():
        from test_asm_roundtrip import check_round_trip
        assert check_round_trip(text, mcpu) == len(fn.instructions)
    if name == "matmul":
        assert any(i.mnemonic.startswith("v_mfma") for i in fn.instructions)


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_triton_preloads_its_arguments_and_the_prologue_agrees(compiled, name, mcpu):
    text, meta = compiled[name, mcpu]
    abi = kernel_abi(text, name)
    fn = parse_program(text).function(name)
    slot = abi.preload
    assert abi.sgpr("kernarg_segment_ptr").first == 0 and slot.first == 2 and slot.kernarg_offset == 0
    assert abi.user_sgpr_count == slot.first + slot.count <= 16
    loaded = {}
    for ins in fn.instructions[:abi.preload_entry]:
        if ins.mnemonic.startswith("s_load_") and ins.operands[1] == Reg("s", 0, 2):
            dest, offset = ins.operands[0], ins.operands[2]
            assert isinstance(offset, Imm)
            loaded.update({dest.index + k: offset.value + 4 * k for k in range(dest.count)})
    assert loaded == {slot.first + k: 4 * k for k in range(slot.count)}
    # Triton sizes LDS at launch (metadata.shared), not in the descriptor: the executor must take Triton's number
    assert abi.group_segment_size == 0 < meta.shared
    assert any(i.mnemonic.startswith("ds_") for i in fn.instructions)
