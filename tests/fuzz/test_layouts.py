"""Layout mutation of dumped TTGIR (fuzz/layouts.py), on real compiles: four small kernels (2D elementwise, a
reduction, a pipelined tl.dot K-loop, a transpose) compiled for gfx942, gfx950 and gfx1250, their encodings
mutated and the mutated modules recompiled from the .ttgir file."""
import itertools
import math
import re
import traceback

import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from gfxhound import compat
from gfxhound.compat import compile_ttgir_for_amd as compile_ttgir
from gfxhound.fuzz.layouts import Mutation, is_rejection, mutate

TARGETS = ("gfx942", "gfx950", "gfx1250")
NUM_WARPS = 4


@triton.jit
def elementwise_2d(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    rn = tl.arange(0, BN)[None, :]
    mask = (rm < M) & (rn < N)
    tl.store(y + rm * N + rn, tl.load(x + rm * N + rn, mask=mask) * 2 + 1, mask=mask)


@triton.jit
def reduction(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    tl.store(y + rm, tl.sum(v, axis=1), mask=rm < M)
    tl.store(y + M + rn, tl.max(v, axis=0), mask=rn < N)


@triton.jit
def matmul(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=2):
        av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(av, tl.load(b + (k + rk)[:, None] * BN + rn[None, :]))
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def transpose(x, y, N, B: tl.constexpr):
    r = tl.arange(0, B)
    v = tl.load(x + r[:, None] * N + r[None, :])
    tl.store(y + r[:, None] * N + r[None, :], tl.trans(v) + v)


KERNELS = {
    "elementwise_2d": (elementwise_2d, {"x": "*fp32", "y": "*fp32", "M": "i32", "N": "i32"}, {"BM": 32, "BN": 64}),
    "reduction": (reduction, {"x": "*fp16", "y": "*fp32", "M": "i32", "N": "i32"}, {"BM": 16, "BN": 128}),
    "matmul": (matmul, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32"}, {"BM": 64, "BN": 64, "BK": 32}),
    "transpose": (transpose, {"x": "*fp32", "y": "*fp32", "N": "i32"}, {"B": 32}),
}
CASES = list(itertools.product(KERNELS, TARGETS))


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """(kernel, target) -> (ttgir, amdgcn) of a normal compile, in a Triton cache of this module's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("triton-cache")))
        out = {}
        for name, arch in CASES:
            fn, signature, constexprs = KERNELS[name]
            compiled = triton.compile(ASTSource(fn, signature, constexprs=constexprs),
                                      target=GPUTarget("hip", arch, compat.warp_size(arch)),
                                      options={"num_warps": NUM_WARPS})
            out[name, arch] = (compiled.asm["ttgir"], compiled.asm["amdgcn"])
        yield out


@pytest.mark.parametrize("name,arch", CASES)
def test_mutated_modules_recompile_to_different_code(originals, name, arch, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    ttgir, amdgcn = originals[name, arch]
    differs = []
    for seed in (0, 1):
        mutation = mutate(ttgir, seed, compat.warp_size(arch), NUM_WARPS)
        assert mutation.changes and mutation.text != ttgir and mutation.seed == seed
        compiled = compile_ttgir(mutation.text, tmp_path / f"seed{seed}.ttgir", arch, {})
        assert re.search(rf'\.amdgcn_target ".*-{arch}"', compiled.asm["amdgcn"])
        differs.append(compiled.asm["amdgcn"] != amdgcn)
    assert any(differs), "no mutation changed the machine code"


def test_mutation_is_deterministic_and_seeds_differ(originals):
    ttgir = originals["matmul", "gfx942"][0]
    assert mutate(ttgir, 7, 64, NUM_WARPS) == mutate(ttgir, 7, 64, NUM_WARPS)
    assert len({mutate(ttgir, seed, 64, NUM_WARPS).text for seed in range(10)}) > 5


@pytest.mark.parametrize("name,arch", CASES)
def test_every_mutated_encoding_keeps_the_verifier_products(originals, name, arch):
    ttgir = originals[name, arch][0]
    warp_size = compat.warp_size(arch)
    mutations = [mutate(ttgir, seed, warp_size, NUM_WARPS) for seed in range(40)]
    for mutation in mutations:
        for line in re.findall(r"^#\w+ = #ttg\.(?:blocked|amd_mfma|amd_wmma)<.*$", mutation.text, re.M):
            check_products(line, warp_size, NUM_WARPS)
    changes = [change for mutation in mutations for change in mutation.changes]
    assert {c.split()[1] for c in changes} >= {"sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"}
    if name == "matmul":
        mma = {c.split()[1] for c in changes if c.startswith("#mma:")}
        assert mma == ({"isTranspose", "warp"} if arch == "gfx1250" else {"isTransposed", "warpsPerCTA"})
    if name == "transpose":
        assert any(c.endswith("through tt.trans") for c in changes)


def check_products(line, warp_size, num_warps):
    def field(name):
        return [int(v) for v in re.findall(r"\d+", re.search(rf"\b{name} = (\[[\d, ]*\])", line).group(1))]
    if "#ttg.blocked" in line:
        assert math.prod(field("threadsPerWarp")) == warp_size, line
        assert math.prod(field("warpsPerCTA")) == num_warps, line
        assert math.prod(field("sizePerThread")) <= 16, line
        assert sorted(field("order")) == list(range(len(field("order")))), line
    elif "#ttg.amd_mfma" in line:
        assert math.prod(field("warpsPerCTA")) == num_warps, line
    else:  # wmma: one distinct power-of-two tile offset per warp bit
        bases = [tuple(int(v) for v in re.findall(r"\d+", b))
                 for b in re.findall(r"\[([\d, ]*)\]", re.search(r"warp = \[(.*?)\]\}", line).group(1))]
        assert len(bases) == num_warps.bit_length() - 1 and len(set(bases)) == len(bases), line
        assert all(sum(1 for v in b if v) == 1 and math.log2(sum(b)).is_integer() for b in bases), line


SNIPPET = """#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [8, 8, 1], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [4], order = [0]}>
#blocked3 = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [64], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k(%x: tensor<64x64xf32, #blocked>, %y: tensor<64xf32, #blocked2>) {
    %0 = tt.reshape %x : tensor<64x64xf32, #blocked> -> tensor<64x64x1xf32, #blocked1>
    %1 = arith.addf %y, %y : tensor<64xf32, #blocked2>
    %2 = amdg.buffer_atomic_rmw fadd, relaxed, gpu, %v, %p[%o] : !tt.ptr<bf16> -> tensor<128xbf16, #blocked3>
    tt.return
  }
}
"""


def test_encodings_tied_by_an_op_outside_the_known_set_are_left_alone():
    """tt.reshape infers its result encoding from its operand's: changing either alias alone is invalid; a
    16-bit buffer atomic's lowering needs the vector width its layout had."""
    changed = {change.split(":")[0] for seed in range(30) for change in mutate(SNIPPET, seed, 64, 4).changes}
    assert changed == {"#blocked2"}


def test_module_attributes_win_and_must_agree():
    with pytest.raises(ValueError, match="ttg.threads-per-warp"):
        mutate(SNIPPET, 0, 32, 4)


def test_a_module_without_mutable_encodings_gives_no_changes():
    tied_only = "\n".join(line for line in SNIPPET.splitlines() if "#blocked2" not in line)
    assert mutate(tied_only, 0, 64, 4) == Mutation(tied_only, (), 0)


def test_verifier_rejections_are_told_from_crashes(originals, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    ttgir = originals["elementwise_2d", "gfx942"][0]
    products = re.search(r"threadsPerWarp = \[(\d+), (\d+)\]", ttgir)
    invalid = ttgir.replace(products.group(0), f"threadsPerWarp = [{products.group(1)}, {int(products.group(2)) // 2}]")
    with pytest.raises(Exception) as failure:
        compile_ttgir(invalid, tmp_path / "invalid.ttgir", "gfx942", {})
    text = "".join(traceback.format_exception(failure.value)) + capfd.readouterr().err
    assert "threads per warp" in text and is_rejection(text)
    assert not is_rejection("LLVM ERROR: Cannot select: 0x55d0c8a0: v4f16 = AMDGPUISD::...")
    assert not is_rejection("Fatal Python error: Segmentation fault\n\nCurrent thread ...")
    assert not is_rejection("RuntimeError: PassManager::run failed")
    assert not is_rejection("python: Dialect.cpp:9: Assertion `rank > 0' failed.\nRuntimeError: Parse MLIR file failed.")


def test_a_one_warp_wmma_layout_without_warp_bases_is_mutated_without_error():
    """One warp on gfx1250: the WMMA encoding's `ctaLayout = {}` has no warp bases. A campaign met this (our
    mutator raised); now the other fields are mutated."""
    fn, signature, constexprs = KERNELS["matmul"]
    compiled = triton.compile(ASTSource(fn, signature, constexprs=constexprs),
                              target=GPUTarget("hip", "gfx1250", 32), options={"num_warps": 1})
    ttgir = compiled.asm["ttgir"]
    assert "ctaLayout = {}" in ttgir
    assert all(mutate(ttgir, seed, 32, 1).changes for seed in range(6))


def test_triton_cannot_read_back_its_own_one_warp_wmma_layout(tmp_path):
    """A real Triton 3.9 bug the layout pairs found: it prints a one-warp WMMA encoding as `ctaLayout = {}` and its
    parser then aborts the process on that text ("Expected basis of 'warp' not found"), mutated or not. Kept as a
    fact (in a child process: it aborts); four warps read back fine."""
    import subprocess
    import sys
    code = ("import sys, triton; from triton.backends.compiler import GPUTarget; from triton.compiler import ASTSource\n"
            "sys.path.insert(0, sys.argv[1]); from test_layouts import KERNELS; from gfxhound import compat\n"
            "fn, sig, ce = KERNELS['matmul']; warps = int(sys.argv[2])\n"
            "c = triton.compile(ASTSource(fn, sig, constexprs=ce), target=GPUTarget('hip', 'gfx1250', 32), "
            "options={'num_warps': warps})\n"
            "compat.compile_ttgir_for_amd(c.asm['ttgir'], sys.argv[3], 'gfx1250', {'num_warps': warps})\n"
            "print('read back')\n")
    from pathlib import Path
    for warps, ok in ((1, False), (4, True)):
        proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(warps),
                               str(tmp_path / f"w{warps}.ttgir")], capture_output=True, text=True, timeout=300)
        assert ("read back" in proc.stdout) == ok, proc.stderr[-2000:]
        if not ok:
            assert proc.returncode < 0 and "Expected basis of 'warp' not found" in proc.stderr
