"""The IR executor tracks poison and undef (executors/llvm_ir/poison*.py) to LLVM's LangRef: each source of poison met
at each kind of sink is `UndefinedBehaviour` (so `unresolved`, never a miscompile), `freeze` stops it, the arm a
`select` does not take passes none on, lanes outside the execution mask never count, and the ordinary fixtures
(tests/amdgcn/data/*.ll) still run with no UB called. Hand-written kernels run through oracle/crosscheck.py's
`run_ir`, the entry `gfxhound emulate` uses; each test quotes the LangRef words it checks."""
from pathlib import Path

import numpy as np
import pytest

from gfxhound.oracle import crosscheck as C
from gfxhound.executors.llvm_ir import core, ir
from gfxhound.executors.llvm_ir.errors import NotModelled, UndefinedBehaviour
from gfxhound.executors.llvm_ir.memory import GlobalMemory

DATA = Path(__file__).parents[1] / "amdgcn" / "data"

# %x: the value under test (i32, computed by SOURCE from %t = the lane's id and %v = 7); SINK uses it
KERNEL = """
define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %v) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
SOURCE
SINK
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""
SPEC = "out: i32[64] out; v: 7; grid: 1; block: 64"


def run(source, sink="  store i32 %x, ptr addrspace(1) %p", spec=SPEC):
    text = KERNEL.replace("SOURCE", source).replace("SINK", sink)
    launch = C.make_launch(spec, C.ir_params(text, "k"))
    return C.run_ir(text, "k", "gfx942", launch)


def is_ub(result, *words):
    assert result.unresolved.startswith("undefined behaviour"), (result.unresolved, result.fault, result.outputs)
    for w in words:
        assert w in result.unresolved, result.unresolved
    return True


def ran(result):
    assert not result.unresolved and not result.fault, (result.unresolved, result.fault)
    return result.outputs["out"]


# Sources: each makes %x poison on some lanes (lane 1 at least: lanes whose id is odd, or all)
SOURCES = {
    # LangRef "Poison Values": "The string 'poison' can be used anywhere a constant is expected"
    "poison": "  %x = add i32 %t, poison",
    # undef is taken as poison (conservatively: docs/emulate.md)
    "undef": "  %x = add i32 %t, undef",
    # add: "If the nuw and/or nsw keywords are present, the result value of the add is a poison value if unsigned
    # and/or signed overflow, respectively, occurs."
    "add nsw": "  %x = add nsw i32 %t, 2147483647",
    "add nuw": "  %x = add nuw i32 %t, -1",
    "sub nsw": "  %n = sub i32 0, %t\n  %x = sub nsw i32 -2147483647, %t",
    "sub nuw": "  %x = sub nuw i32 0, %t",
    "mul nsw": "  %x = mul nsw i32 %t, 1073741824",
    "mul nuw": "  %x = mul nuw i32 %t, -1",
    # shl: "If op2 is (statically or dynamically) equal to or larger than the number of bits in op1, this
    # instruction returns a poison value."
    "shl width": "  %s = add i32 %t, 31\n  %x = shl i32 1, %s",
    # shl: "If the nuw keyword is present, then the shift produces a poison value if it shifts out any non-zero
    # bits. If the nsw keyword is present, then the shift produces a poison value if it shifts out any bits that
    # disagree with the resultant sign bit."
    "shl nuw": "  %x = shl nuw i32 %t, 31",
    "shl nsw": "  %x = shl nsw i32 %t, 30",
    # lshr/ashr: "If the exact keyword is present, the result value of the lshr is a poison value if any of the
    # bits shifted out are non-zero."
    "lshr exact": "  %x = lshr exact i32 %t, 1",
    "ashr exact": "  %x = ashr exact i32 %t, 1",
    "lshr width": "  %x = lshr i32 %v, %t",
    # udiv: "If the exact keyword is present, the result value of the udiv is a poison value if %op1 is not a
    # multiple of %op2"; sdiv: "... if the result would be rounded."
    "udiv exact": "  %x = udiv exact i32 %t, 2",
    "sdiv exact": "  %x = sdiv exact i32 %t, 2",
    # llvm.ctlz: "If the first argument is zero and the second argument is true, the result is poison."
    "ctlz zero": "  %x = call i32 @llvm.ctlz.i32(i32 %t, i1 true)",
    "cttz zero": "  %x = call i32 @llvm.cttz.i32(i32 %t, i1 true)",
    # llvm.abs: "If the first argument is INT_MIN, then the result is also INT_MIN if is_int_min_poison == 0 and
    # poison otherwise."
    "abs int_min": "  %m = shl i32 %t, 31\n  %x = call i32 @llvm.abs.i32(i32 %m, i1 true)",
    # fptosi: "If the value cannot fit in ty2, the result is a poison value."
    "fptosi range": "  %f = uitofp i32 %t to float\n  %g = fmul float %f, 1.0e+10\n  %x = fptosi float %g to i32",
    "fptoui range": "  %f = sitofp i32 %t to float\n  %g = fsub float 0.0, %f\n  %x = fptoui float %g to i32",
    # insertelement / extractelement: "If idx exceeds the length of val for a fixed-length vector, the result is
    # a poison value."
    "extractelement index": "  %vec = insertelement <2 x i32> <i32 1, i32 2>, i32 %t, i32 0\n"
                            "  %x = extractelement <2 x i32> %vec, i32 %t",
    "insertelement index": "  %vec = insertelement <2 x i32> <i32 1, i32 2>, i32 %v, i32 %t\n"
                           "  %x = extractelement <2 x i32> %vec, i32 0",
    # or: "If the disjoint flag is set, and the or has a one and the other has a zero bit in the same position,
    # the result is poison" (LangRef's wording: poison when both have a one)
    "or disjoint": "  %x = or disjoint i32 %t, 1",
    # zext: "If the nneg flag is set, and the argument is negative, the result is a poison value."
    "zext nneg": "  %n = sub i32 0, %t\n  %h = trunc i32 %n to i16\n  %x = zext nneg i16 %h to i32",
    # trunc: "If the nuw keyword is present, and any of the truncated bits are non-zero, the result is a poison
    # value."
    "trunc nuw": "  %w = shl i32 %t, 16\n  %h = trunc nuw i32 %w to i16\n  %x = zext i16 %h to i32",
    # IntrinsicsAMDGPU.td / the ISA: readlane of a lane that is not active reads no value the IR defines
    "readlane inactive": "  %odd = and i32 %t, 1\n  %c = icmp eq i32 %odd, 0\n  br i1 %c, label %ev, label %j\n"
                         "ev:\n  %r = call i32 @llvm.amdgcn.readlane.i32(i32 %t, i32 1)\n  br label %j\n"
                         "j:\n  %x = phi i32 [ %r, %ev ], [ 0, %entry ]",
    # lanes.dpp_unspecified_lanes: row_bcast:15 writes rows with no documented source (gfx942)
    "dpp row_bcast": "  %x = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %t, i32 322, i32 15, i32 15, i1 false)",
}

SINKS = {
    # "The pointer operand of a load, store or any other pointer dereferencing instruction"
    "store value": ("  store i32 %x, ptr addrspace(1) %p", "the value of a `store`"),
    "store address": ("  %q = getelementptr i32, ptr addrspace(1) %p, i32 %x\n  store i32 0, ptr addrspace(1) %q",
                      "the address of a `store`"),
    "load address": ("  %q = getelementptr i32, ptr addrspace(1) %p, i32 %x\n  %l = load i32, ptr addrspace(1) %q\n"
                     "  store i32 %l, ptr addrspace(1) %p", "the address of a `load`"),
    # br: "If 'cond' is poison or undef, this instruction has undefined behavior." (and switch likewise)
    "branch": ("  %c9 = icmp eq i32 %x, 9\n  br i1 %c9, label %a, label %b\na:\n  br label %b\nb:",
               "the condition of a `br`"),
    "switch": ("  switch i32 %x, label %b [ i32 9, label %a ]\na:\n  br label %b\nb:", "the condition of a `switch`"),
    # "The parameter operand of a call or invoke instruction, when the function or invoking call site has a
    # noundef attribute in the corresponding position."
    "noundef argument": ("  %u = call i32 @llvm.umax.i32(i32 noundef %x, i32 0)", "a `noundef` argument"),
    # "The divisor operand of a udiv, sdiv, urem or srem instruction."
    "divisor": ("  %d = or i32 %x, 1\n  %q = udiv i32 7, %d\n  store i32 %q, ptr addrspace(1) %p",
                "the divisor of `udiv`"),
}


@pytest.mark.parametrize("sink", sorted(SINKS))
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_source_is_undefined_behaviour_at_each_sink(source, sink):
    """Poison Values: "immediate undefined behavior occurs if a poison value is used as an instruction operand
    that has any values that trigger undefined behavior"; "Most instructions return poison when one of their
    arguments is poison" (here or/udiv/icmp/getelementptr pass it from the source to the sink)."""
    code, says = SINKS[sink]
    assert is_ub(run(SOURCES[source], code), says)


def test_the_source_of_the_poison_and_the_instruction_are_named():
    result = run("  %x = add nsw i32 %t, 2147483647")
    assert is_ub(result, "`add nsw` at IR line 7", "IR line 8 (store)")
    with pytest.raises(UndefinedBehaviour) as caught:  # NotModelled's subclass: every caller's "cannot judge"
        _run_direct(KERNEL.replace("SOURCE", "  %x = add nsw i32 %t, 2147483647").replace(
            "SINK", "  store i32 %x, ptr addrspace(1) %p"))
    assert isinstance(caught.value, NotModelled) and caught.value.instruction.startswith("IR line")


def _run_direct(text):
    kernel = core.Kernel(ir.parse(text), "k", "gfx942", 64)
    heap = GlobalMemory()
    address = heap.map(np.zeros(256, np.uint8))
    heap.seal()
    core.run_grid(kernel, {"out": np.array(address, np.uint64), "v": np.array(7, np.uint32)}, (1, 1, 1), 1, 0, heap)
    return heap.read_back(address, 256).view(np.int32)


def test_tracking_off_runs_as_before():
    """core.Kernel(poison_tracking=False): nothing tracked (the executor's cost before tracking existed)."""
    text = KERNEL.replace("SOURCE", "  %x = add nsw i32 %t, 2147483647").replace(
        "SINK", "  store i32 %x, ptr addrspace(1) %p")
    kernel = core.Kernel(ir.parse(text), "k", "gfx942", 64, poison_tracking=False)
    assert all(track is None for body, *_ in kernel.blocks.values() for *_, track in body)
    heap = GlobalMemory()
    address = heap.map(np.zeros(256, np.uint8))
    heap.seal()
    core.run_grid(kernel, {"out": np.array(address, np.uint64), "v": np.array(7, np.uint32)}, (1, 1, 1), 1, 0, heap)
    assert (heap.read_back(address, 256).view(np.int32) == (np.arange(64) + 2147483647).astype(np.int32)).all()


@pytest.mark.parametrize("code, says", [
    # udiv: "Division by zero is undefined behavior."
    ("  %x = udiv i32 7, %t", "`udiv` by zero"),
    ("  %x = urem i32 7, %t", "`urem` by zero"),
    # sdiv: "Overflow also leads to undefined behavior; this is a rare case, but can occur, for example, by doing
    # a 32-bit division of -2147483648 by -1."
    ("  %m = sub i32 -1, %t\n  %x = sdiv i32 -2147483648, %m", "INT_MIN by -1"),
])
def test_division_by_zero_and_overflow_are_immediate_ub_not_poison(code, says):
    assert is_ub(run(code + "\n  %y = freeze i32 %x", "  store i32 0, ptr addrspace(1) %p"), says)


@pytest.mark.parametrize("source", ["poison", "undef", "add nsw", "shl width", "fptosi range", "readlane inactive",
                                    "dpp row_bcast", "extractelement index"])
def test_freeze_stops_poison(source):
    """freeze: "If the argument is undef or poison, 'freeze' returns an arbitrary, but fixed, value of type 'ty'.
    Otherwise, this instruction is a no-op and returns the input argument." The executor keeps the bits it has."""
    out = ran(run(SOURCES[source] + "\n  %fx = freeze i32 %x", "  store i32 %fx, ptr addrspace(1) %p"))
    if source == "add nsw":  # the bits it holds: the wrapped sum
        assert (out == (np.arange(64) + 2147483647).astype(np.int64).astype(np.int32)).all()


def test_the_arm_select_does_not_take_passes_no_poison_on():
    """Poison Values: "Most instructions return poison when one of their arguments is poison. A notable exception
    is the select instruction." Lanes whose id is odd overflow; select takes the sum only on even lanes."""
    source = ("  %s = add nsw i32 %t, 2147483647\n  %odd = and i32 %t, 1\n  %c = icmp eq i32 %odd, 1\n"
              "  %x = select i1 %c, i32 %t, i32 %s")
    assert is_ub(run(source.replace("%c = icmp eq i32 %odd, 1", "%c = icmp eq i32 %odd, 0")), "`add nsw`")
    source = ("  %s = add nsw i32 %t, 2147483646\n  %big = icmp ugt i32 %t, 1\n"
              "  %x = select i1 %big, i32 %t, i32 %s")  # overflow only for t >= 2, where %t is taken
    out = ran(run(source))
    assert out[0] == 2147483646 and out[1] == 2147483647 and (out[2:] == np.arange(2, 64)).all()


def test_a_poison_condition_makes_select_poison():
    """select: with a poison condition, the result is poison (LangRef's Poison Values: select propagates poison
    from its condition, not from the arm it does not select)."""
    source = "  %c = icmp eq i32 %t, poison\n  %x = select i1 %c, i32 1, i32 2"
    assert is_ub(run(source), "`poison`")


def test_poison_only_on_lanes_a_branch_masks_off_does_not_count():
    """Lanes outside the execution mask never count: the overflowing lanes (t >= 1) skip the store."""
    source = ("  %x = add nsw i32 %t, 2147483647\n  %first = icmp eq i32 %t, 0\n"
              "  br i1 %first, label %st, label %done\nst:")
    out = ran(run(source, "  store i32 %x, ptr addrspace(1) %p\n  br label %done\ndone:"))
    assert out[0] == 2147483647 and (out[1:] == 0).all()


def test_a_phi_takes_the_poison_of_the_edge_taken():
    """phi: "the value specified by the pair corresponding to the predecessor basic block that executed just prior
    to the current block" carries that value's poison; the other edge's does not."""
    source = ("  %odd = and i32 %t, 1\n  %c = icmp eq i32 %odd, 1\n  br i1 %c, label %a, label %j\n"
              "a:\n  br label %j\nj:\n  %x = phi i32 [ undef, %a ], [ %t, %entry ]")
    assert is_ub(run(source), "`undef`")
    clean = source.replace("%x = phi", "%y = phi") + "\n  %x = select i1 %c, i32 5, i32 %y"
    out = ran(run(clean))
    assert (out[1::2] == 5).all() and (out[0::2] == np.arange(0, 64, 2)).all()


def test_vectors_track_each_element():
    """insertelement into undef, shufflevector with poison mask elements: only the elements that hold poison are
    poison ("If the shuffle mask selects ... an undef/poison element, the result element is poison")."""
    source = ("  %a = insertelement <4 x i32> undef, i32 %t, i32 0\n"
              "  %b = shufflevector <4 x i32> %a, <4 x i32> poison, <2 x i32> <i32 0, i32 poison>\n"
              "  %x = extractelement <2 x i32> %b, i32 0")
    assert (ran(run(source)) == np.arange(64)).all()
    assert is_ub(run(source.replace("<2 x i32> %b, i32 0", "<2 x i32> %b, i32 1")))
    assert is_ub(run(source.replace("<2 x i32> <i32 0, i32 poison>", "<2 x i32> <i32 1, i32 0>")), "`undef`")


def test_bytes_of_a_bitcast_stay_apart():
    """Triton's fp8 packing: poison bytes bitcast into an i32 whose defined half alone is read back. bitcast: "as
    if the value had been stored to memory and read back as type ty2"."""
    source = ("  %b = trunc i32 %t to i8\n  %v4 = insertelement <4 x i8> poison, i8 %b, i32 0\n"
              "  %w = bitcast <4 x i8> %v4 to i32\n  %back = bitcast i32 %w to <4 x i8>\n"
              "  %e = extractelement <4 x i8> %back, i32 0\n  %x = zext i8 %e to i32")
    assert (ran(run(source)) == np.arange(64)).all()
    assert is_ub(run(source.replace("%back, i32 0", "%back, i32 1")), "`poison`")


def test_an_fp8_word_half_undefined_is_read_only_where_defined():
    """Triton's fp8 packing (a Triton 3.9 kernel): each conversion writes its word's half, the other half keeps
    `old` (undef), and the byte truncated off is defined. trunc: "The bits that remain are the low bits of
    value"; only poisoned bits that remain make the result poison."""
    source = ("  %w = call i32 @llvm.amdgcn.cvt.pk.bf8.f32(float -1.0, float undef, i32 undef, i1 false)\n"
              "  %w2 = call i32 @llvm.amdgcn.cvt.pk.bf8.f32(float undef, float undef, i32 %w, i1 true)\n"
              "  %b = trunc i32 %w2 to i8\n  %x = zext i8 %b to i32")
    out = ran(run(source))
    assert (out == 0xC0).all()  # -1.0 in bf8 (e5m2 FNUZ, bias 16) on gfx942: sign 1, exponent 16 -> 0xC0
    assert is_ub(run(source.replace("trunc i32 %w2 to i8", "trunc i32 %w2 to i16").replace("zext i8", "zext i16")))


FIXTURES = {  # tests/amdgcn/test_emulate_cli.py's launches, and launches of the fixtures it has none for
    "add_i32": "a: u32[N]; b: u32[N]; c: u32[N] out; n: N; N: 300; grid: cdiv(N, 256); block: 256",
    "dpp": "in: u32[64]; out: u32[64] out; grid: 1; block: 64",
    "lds_barrier": "in: fp32[256]; out: fp32[256] out; grid: 1; block: 256",
    "lds_race": "in: fp32[256]; out: fp32[256] out; grid: 1; block: 256",
    "i64_ops": "in: i64[64]; out: i64[64] out; d: 12345; grid: 1; block: 64",
    "preload": "out: i32[64] out; v: 7; grid: 1; block: 64",
    "loop": "in: fp32[256]; out: fp32[64] out; n: 4; grid: 1; block: 64",
    "buffer": "in: u32[64]; out: u32[64] out; nbytes: 200; shift: 3; grid: 1; block: 64",
    "mixed": "in: fp32[256]; h: fp16[256]; out: fp32[256] out; grid: 1; block: 64",
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_ordinary_fixtures_run_with_no_undefined_behaviour(name):
    text = (DATA / f"{name}.ll").read_text()
    kernel = C.kernel_names(text)[0]
    launch = C.make_launch(FIXTURES[name], C.ir_params(text, kernel))
    if name == "dpp":
        # dpp.ll converts its input's bits, taken as a float, with fptosi: "If the value cannot fit in ty2, the
        # result is a poison value"; it freezes the result, so random bits are defined. Without the freeze they
        # are UB (rightly called)
        unfrozen = text.replace("%gi = freeze i32 %gi0", "%gi = add i32 %gi0, 0")
        assert unfrozen != text
        assert is_ub(C.run_ir(unfrozen, kernel, "gfx942", launch), "`fptosi`", "the value of a `store`")
    result = C.run_ir(text, kernel, "gfx942", launch)
    assert "undefined behaviour" not in result.unresolved, result.unresolved
    if name == "lds_race":  # the IR's own race, as before
        assert result.unresolved.startswith("a race between waves")
    else:
        assert not result.unresolved and not result.fault and result.outputs, (result.unresolved, result.fault)
