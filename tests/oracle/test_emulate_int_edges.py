"""Integer edge cases of the IR executor's arithmetic (executors/llvm_ir/ops.py), expected values by hand from
LangRef: "sdiv ... rounded towards zero", "srem ... the result has the sign of the dividend"."""
from __future__ import annotations

import numpy as np

from gfxhound.executors.llvm_ir.ops import _tdiv

INT64_MIN = -2 ** 63


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_sdiv_rounds_toward_zero_at_int64_min():
    """np.abs(INT64_MIN) wraps to INT64_MIN; the quotient must not depend on it (it did: sdiv i64 INT64_MIN,
    4294967295 gave 2147483649 instead of -2147483648, found by the generated-kernel campaign)."""
    pairs = [(INT64_MIN, 4294967295), (INT64_MIN, -7), (INT64_MIN, 7), (INT64_MIN, 2), (INT64_MIN + 1, -1),
             (-7, 2), (7, -2), (-7, -2), (7, 2), (0, -5), (2 ** 63 - 1, -3), (-1, 2 ** 63 - 1)]
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    got = _tdiv(a, b)
    assert [int(x) for x in got] == [_trunc_div(x, y) for x, y in pairs]
    rem = a - got * b
    assert [int(x) for x in rem] == [x - _trunc_div(x, y) * y for x, y in pairs]


def test_sdiv_srem_int64_min_by_int64_min_plus_1_in_a_kernel():
    """Campaign kernel 7000122 (input seed 122) reduced: sdiv/srem i64 INT64_MIN, INT64_MIN + 1 is 1 rem -1 by
    hand (|a| // |b| = 1, same signs; -2**63 - (-(2**63 - 1)) = -1); np.abs(INT64_MIN) made it -2 rem
    -9223372036854775806, outvoted by llc -O0 and -O2. Also INT64_MIN as the divisor (5 / INT64_MIN = 0 rem 5)."""
    from gfxhound.oracle.crosscheck import ir_params, make_launch, run_ir
    text = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @r122(ptr addrspace(1) %out0, ptr addrspace(1) %out1, i64 %a, i64 %b) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gidx = zext i32 %tid to i64
  %q = sdiv i64 %a, %b
  %r = srem i64 %a, %b
  %p0 = getelementptr i64, ptr addrspace(1) %out0, i64 %gidx
  store i64 %q, ptr addrspace(1) %p0
  %p1 = getelementptr i64, ptr addrspace(1) %out1, i64 %gidx
  store i64 %r, ptr addrspace(1) %p1
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
"""
    for a, b, q, r in [(INT64_MIN, INT64_MIN + 1, 1, -1), (5, INT64_MIN, 0, 5), (-5, INT64_MIN, 0, -5),
                       (INT64_MIN, INT64_MIN, 1, 0), (INT64_MIN + 1, INT64_MIN, 0, INT64_MIN + 1)]:
        spec = f"out0: i64[N] out; out1: i64[N] out; a: {a}; b: {b}; N: 64; grid: 1; block: 64"
        run = run_ir(text, "r122", "gfx942", make_launch(spec, ir_params(text, "r122"), seed=122))
        assert not run.unresolved and not run.fault, (a, b, run.unresolved, run.fault)
        assert (run.outputs["out0"] == q).all() and (run.outputs["out1"] == r).all(), (a, b)


def test_bswap():
    """llvm.bswap reverses the bytes (LangRef); campaign kernel 7000597 was unresolved on llvm.bswap.i32.
    a = 0x0102030405060708: i64 0x0807060504030201, i32 (of 0x05060708) 0x08070605, i16 (of 0x0708) 0x0807."""
    from gfxhound.oracle.crosscheck import ir_params, make_launch, run_ir
    text = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @bs(ptr addrspace(1) %out0, i64 %a) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gidx = zext i32 %tid to i64
  %a32 = trunc i64 %a to i32
  %a16 = trunc i64 %a to i16
  %b64 = call i64 @llvm.bswap.i64(i64 %a)
  %b32 = call i32 @llvm.bswap.i32(i32 %a32)
  %b16 = call i16 @llvm.bswap.i16(i16 %a16)
  %z32 = zext i32 %b32 to i64
  %z16 = zext i16 %b16 to i64
  %i = mul i64 %gidx, 3
  %p0 = getelementptr i64, ptr addrspace(1) %out0, i64 %i
  store i64 %b64, ptr addrspace(1) %p0
  %p1 = getelementptr i64, ptr addrspace(1) %p0, i64 1
  store i64 %z32, ptr addrspace(1) %p1
  %p2 = getelementptr i64, ptr addrspace(1) %p0, i64 2
  store i64 %z16, ptr addrspace(1) %p2
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i64 @llvm.bswap.i64(i64)
declare i32 @llvm.bswap.i32(i32)
declare i16 @llvm.bswap.i16(i16)
"""
    spec = "out0: u64[3 * N] out; a: 72623859790382856; N: 64; grid: 1; block: 64"
    run = run_ir(text, "bs", "gfx942", make_launch(spec, ir_params(text, "bs"), seed=597))
    assert not run.unresolved and not run.fault, (run.unresolved, run.fault)
    assert (run.outputs["out0"].reshape(64, 3) == [0x0807060504030201, 0x08070605, 0x0807]).all()
