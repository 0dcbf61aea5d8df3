"""TTGIR features (oracle/ttgir_features.py): what the compiler made of a kernel, counted as campaign coverage."""
import json
import os
import subprocess

from gfxhound.oracle.ttgir_features import encodings, features

# the shape of Triton 3.9's TTGIR for gfx942 (abridged from an attention kernel the generator drew)
TTGIR = """#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 4], warpsPerCTA = [1, 8], order = [0, 1]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [8, 1], instrShape = [16, 16, 16], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 4, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @kernel(%in_0: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc("in_0"(#loc)), %in_1: !tt.ptr<f16> {tt.divisibility = 16 : i32, tt.pointer_range = 32 : i32} loc("in_1"(#loc))) {
    %m1 = tt.expand_dims %mask {axis = 1 : i32} : tensor<64xi1, #ttg.slice<{dim = 1, parent = #mma}>> -> tensor<64x1xi1, #mma> loc(#loc3)
    %v_2 = arith.constant dense<-1.2676506E+30> : tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>> loc(#loc75)
    %v_1 = amdg.buffer_load %in_0[%o], %m : !tt.ptr<f16> -> tensor<64x16xf16, #blocked> loc(#loc84)
    %a = ttg.local_alloc %v_1 : (tensor<64x16xf16, #blocked>) -> !ttg.memdesc<64x16xf16, #shared, #smem> loc(#loc84)
    %b = ttg.local_load %a : !ttg.memdesc<64x16xf16, #shared, #smem> -> tensor<64x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> loc(#loc84)
    %p = scf.if %c -> (!tt.ptr<f16>) {
      scf.yield %in_0 : !tt.ptr<f16> loc(#loc1)
    } else {
      scf.yield %in_0 : !tt.ptr<f16> loc(#loc1)
    } loc(#loc2)
    %v_12 = "tt.reduce"(%v_11) <{axis = 1 : i32}> ({
    ^bb0(%x: f32 loc(unknown), %y: f32 loc(unknown)):
      %m = arith.maxnumf %x, %y : f32 loc(#loc1)
      tt.reduce.return %m : f32 loc(#loc122)
    }) : (tensor<64x32xf32, #mma>) -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>> loc(#loc122)
    %s = "tt.scan"(%v_12) <{axis = 0 : i32, reverse = false}> ({
    ^bb0(%a: f32 loc(unknown), %b: f32 loc(unknown)):
      %t = arith.addf %a, %b : f32 loc(#loc1)
      tt.scan.return %t : f32 loc(#loc1)
    }) : (tensor<64xf32, #ttg.slice<{dim = 0, parent = #ttg.slice<{dim = 1, parent = #mma}>}>>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #ttg.slice<{dim = 1, parent = #mma}>}>> loc(#loc1)
    %q:2 = scf.for %i = %c0 to %n step %c1 iter_args(%pp = %ptrs, %acc = %cst) -> (tensor<64x16x!tt.ptr<f16>, #blocked>, tensor<64x32xf32, #mma>)  : i32 {
      %c = ttg.convert_layout %acc : tensor<64x32xf32, #mma> -> tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>> loc(#loc1)
      scf.yield %pp, %acc : tensor<64x16x!tt.ptr<f16>, #blocked>, tensor<64x32xf32, #mma> loc(#loc1)
    } loc(#loc1)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
"""


def test_encodings_and_ops_with_their_kinds():
    assert encodings(TTGIR) == {"blocked": "blocked", "mma": "mfma", "shared": "shared"}
    got = features(TTGIR)
    for want in ("tt.reduce", "tt.reduce@mfma", "tt.reduce@slice(mfma)", "tt.reduce:float@mfma", "arith@slice(mfma)",
                 "amdg.buffer_load@blocked", "ttg.local_load@dot_op(mfma)", "ttg.local_load@shared",
                 "ttg.local_alloc@blocked", "ttg.local_alloc:blocked->shared", "scf.if:ptr", "scf.yield:ptr",
                 "tt.func:ptr_arg_range", "tt.scan:float@slice(slice(mfma))", "scf.for:tensor_of_ptr",
                 "scf.for:float@mfma", "ttg.convert_layout:mfma->dot_op(mfma)", "tt.expand_dims@slice(mfma)"):
        assert want in got, want
    assert not any(f.startswith("tt.reduce.return@") for f in got)
    assert "scf.if:tensor_of_ptr" not in got and "scf.for:ptr" not in got
    # index and mask arithmetic (i1, i32) is not a value of the kernel: no float feature for it
    assert "tt.expand_dims:float@slice(mfma)" not in got


def test_older_spellings_are_the_same_features():
    old = TTGIR.replace("#ttg.", "#triton_gpu.").replace("ttg.", "triton_gpu.").replace("amdg.", "amdgpu.")
    assert features(old) == features(TTGIR)


def test_a_compile_campaign_counts_what_the_compiler_made(gfxhound_bin, tmp_path):
    env = dict(os.environ, GFXHOUND_CACHE=str(tmp_path / "cache"), PYTHONWARNINGS="ignore")
    proc = subprocess.run([gfxhound_bin, "fuzz", "--target", "gfx942", "--shape", "attention", "--budget", "4",
                           "--workers", "2", "--corpus", str(tmp_path / "corpus"), "--json", "--quiet", "--seed", "3"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    coverage = json.loads(proc.stdout)["coverage"]
    # an attention kernel on CDNA3: MFMA dots whose results are reduced, broadcast back and fed to a second dot
    for want in ("tt.dot@mfma", "tt.reduce:float@mfma", "tt.expand_dims:float@slice(mfma)", "tt.dot@dot_op(mfma)"):
        assert coverage[f"detail:ttgir:{want}"]["kernels"] >= 3, want
