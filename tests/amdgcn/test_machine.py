"""gfxhound.executors.amdgcn.machine/run: llc-22's code for the fixture kernels run on the CPU machine, at -O0 and -O2, for
gfx942 and gfx950, with boundary inputs; the expected values are plain numpy / Python integers written here, never
gfxhound's LLVM IR executor (executors/llvm_ir), which this machine exists to cross-check."""
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.machine import CANARY, MachineFault, NotModelled, Wave
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.run import launch

DATA = Path(__file__).parent / "data"
TARGETS = pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
LEVELS = pytest.mark.parametrize("opt", [0, 2])
FILL = 0x5A5A5A5A


@lru_cache(maxsize=None)
def asm(kernel: str, mcpu: str = "gfx942", opt: int = 2):
    return codegen.from_ll(DATA / f"{kernel}.ll", mcpu, opt)


def add_inputs(n: int, size: int):
    a = (np.arange(size, dtype=np.uint64) * 2654435761 % 2 ** 32).astype(np.uint32)
    b = (np.arange(size, dtype=np.uint64) * 40503 % 2 ** 32).astype(np.uint32)
    a[:4] = [0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0]
    b[:4] = [1, 0x80000000, 1, 0xFFFFFFFF]
    return a, b, np.full(size, FILL, np.uint32)


@TARGETS
@LEVELS
def test_add_i32_bounds_check_and_wraparound(mcpu, opt):
    """c[i] = a[i] + b[i] (mod 2^32) for i < n = 300: the second workgroup's waves are partly or wholly past n."""
    n = 300
    a, b, c = add_inputs(n, 512)
    r = launch(asm("add_i32", mcpu, opt), None, {"a": a, "b": b, "c": c, "n": n}, grid=(2, 1, 1), block=(256, 1, 1))
    want = c.copy()
    want[:n] = a[:n] + b[:n]
    assert r.outputs["c"].tolist() == want.tolist()
    assert r.outputs["c"][0] == 0 and r.outputs["c"][1] == 0 and r.outputs["c"][2] == 0x80000000
    assert r.waves == 8 and r.hazards == []


@TARGETS
@LEVELS
def test_add_i32_partial_waves(mcpu, opt):
    """Blocks of 100 work-items: the second wave of each has EXEC for 36 lanes only; lanes past it never store."""
    n = 600
    a, b, c = add_inputs(n, n)
    r = launch(asm("add_i32", mcpu, opt), None, {"a": a, "b": b, "c": c, "n": n}, grid=(3, 1, 1), block=(100, 1, 1))
    want = c.copy()
    for wg in range(3):
        i = wg * 256 + np.arange(100)
        i = i[i < n]
        want[i] = a[i] + b[i]
    assert r.outputs["c"].tolist() == want.tolist() and r.waves == 6


def test_negative_n_stores_nothing():
    a, b, c = add_inputs(0, 64)
    r = launch(asm("add_i32"), None, {"a": a, "b": b, "c": c, "n": -1})
    assert (r.outputs["c"] == FILL).all()


def loop_expected(x: np.ndarray, n: int) -> np.ndarray:
    acc = np.zeros(64, np.float32)
    for k in range(n):
        acc = (acc + x[k * 64:(k + 1) * 64] * np.float32(0.5)).astype(np.float32)
        acc = (acc + np.float32(0.15915494309189535)).astype(np.float32)
    return acc


@TARGETS
@LEVELS
@pytest.mark.parametrize("n", [0, 1, 3])
def test_loop_float_accumulation(mcpu, opt, n):
    """A backward branch on SCC, 0.5 and 1/(2*pi) as inline constants, round-to-nearest f32 adds."""
    x = (np.arange(64 * max(n, 1), dtype=np.float32) * np.float32(0.37) - np.float32(5)).astype(np.float32)
    x[:3] = [np.float32(3.4028235e38), np.float32(-0.0), np.float32(1e-45)]
    out = np.full(64, np.nan, np.float32)
    r = launch(asm("loop", mcpu, opt), None, {"in": x, "out": out, "n": n})
    assert r.outputs["out"].view(np.uint32).tolist() == loop_expected(x, n).view(np.uint32).tolist()


def i64_expected(x, d):
    out = []
    for v in x:
        m = v * 6364136223846793005 % 2 ** 64
        s = (v - 2 ** 64 if v >= 2 ** 63 else v) >> 7
        a = ((m // d >> 33) + s) % 2 ** 64
        out.append(a if a > 2 ** 32 else 2 ** 64 - 1)
    return out


@TARGETS
@LEVELS
@pytest.mark.parametrize("d", [1, 3, 0x1_0000_0003, 2 ** 64 - 1])
def test_i64_multiply_divide_shift_compare(mcpu, opt, d):
    """The udiv expansion (v_rcp_f32, carries through VCC and SGPR pairs, v_mad_u64_u32, v_cndmask)."""
    x = [0, 1, 2 ** 64 - 1, 2 ** 63, 2 ** 63 - 1, 0xFFFFFFFF, 2 ** 32, 12345678901234567, 0x8000000080000000]
    x = np.array(x + [(i * 0x9E3779B97F4A7C15) % 2 ** 64 for i in range(64 - len(x))], np.uint64)
    out = np.zeros(64, np.uint64)
    r = launch(asm("i64_ops", mcpu, opt), None, {"in": x, "out": out, "d": d})
    assert r.outputs["out"].tolist() == i64_expected(x.tolist(), d)


@TARGETS
@LEVELS
def test_grid_2d_workgroup_and_packed_workitem_ids(mcpu, opt):
    width, height = 32, 48
    out = np.full(width * height, FILL, np.uint32)
    r = launch(asm("grid_2d", mcpu, opt), None, {"out": out, "width": width}, grid=(2, 3, 1), block=(16, 16, 1))
    y, x = np.mgrid[0:height, 0:width]
    assert r.outputs["out"].tolist() == (x * 3 + y).reshape(-1).astype(np.uint32).tolist()


@TARGETS
@pytest.mark.parametrize("preload", [False, True])
def test_kernarg_preload_both_entries(mcpu, preload):
    """The compatibility prologue (entry) and the preloaded SGPRs (256-byte entry) give the same answer."""
    out = np.zeros(64, np.uint32)
    r = launch(asm("preload", mcpu), None, {"out": out, "v": 0xFFFFFFF0}, preload_entry=preload)
    assert r.outputs["out"].tolist() == [(0xFFFFFFF0 + t) % 2 ** 32 for t in range(64)]
    assert r.steps == (4 if preload else 8)


def test_out_of_range_store_faults():
    """n past the end of c (a, b large enough): the store of the first lane past c's end faults."""
    a, b, _ = add_inputs(0, 512)
    c = np.zeros(100, np.uint32)
    with pytest.raises(MachineFault, match="store of 4 bytes") as err:
        launch(asm("add_i32"), None, {"a": a, "b": b, "c": c, "n": 512}, grid=(2, 1, 1), block=(256, 1, 1))
    assert err.value.instruction.mnemonic == "global_store_dword" and err.value.lane == 36


def test_out_of_range_load_faults():
    a, b, c = add_inputs(0, 64)
    with pytest.raises(MachineFault, match="load of 4 bytes"):
        launch(asm("add_i32"), None, {"a": a[:10], "b": b, "c": c, "n": 64})


def test_unmodelled_instruction_is_named_when_it_runs():
    """Decoding does not refuse the kernel (a path no wave takes may hold what the machine does not model: Triton's
    failed-assertion s_trap, tests/amdgcn/test_machine_assert.py); the wave that reaches it does, naming it."""
    text = asm("add_i32").text.replace("v_add_u32_e32 v2, v6, v7", "s_trap 2")
    a, b, c = add_inputs(64, 64)
    with pytest.raises(NotModelled) as err:
        launch(text, None, {"a": a, "b": b, "c": c, "n": 64})
    assert err.value.mnemonic == "s_trap"


def test_registers_start_as_canaries():
    w = Wave()
    assert w.s[17] == CANARY and int(w.v[100, 5]) == CANARY and int(w.a[3, 63]) == CANARY


def test_kernel_decodes_once_and_is_reusable():
    from gfxhound.executors.amdgcn.abi import kernel_abi
    from gfxhound.executors.amdgcn.asm import parse_program
    text = asm("add_i32").text
    program = parse_program(text)
    abi = kernel_abi(text, "add_i32", program)
    k = Kernel(program.function("add_i32"))
    for n in (5, 64):
        a, b, c = add_inputs(n, 64)
        r = launch(k, abi, {"a": a, "b": b, "c": c, "n": n})
        assert r.outputs["c"][:n].tolist() == (a[:n] + b[:n]).tolist() and (r.outputs["c"][n:] == FILL).all()


@TARGETS
@LEVELS
def test_lds_and_barrier_across_four_waves(mcpu, opt):
    """Every lane writes lds[t], s_barrier, then reads lds[255 - t]: written by another wave of the workgroup, so
    the result is right only if all four waves reach the barrier before any reads."""
    x = (np.arange(512, dtype=np.float32) * np.float32(1.25) - np.float32(100)).astype(np.float32)
    out = np.zeros(512, np.float32)
    t = np.arange(256)
    want = (x[:256] + x[255 - t]).astype(np.float32)   # both workgroups read `in` from 0 (the kernel ignores wg id)
    for schedule in ("forward", "reverse", "alternate"):
        r = launch(asm("lds_barrier", mcpu, opt), None, {"in": x, "out": out}, grid=(2, 1, 1), block=(256, 1, 1),
                   schedule=schedule)
        assert r.outputs["out"][:256].view(np.uint32).tolist() == want.view(np.uint32).tolist()
        assert r.waves == 8


@TARGETS
@pytest.mark.parametrize("preload", [False, True])
def test_triton_vadd_by_position(mcpu, preload):
    """Triton's own code (kernarg preload, v_readfirstlane, s_load_dwordx8), its arguments unnamed in the metadata
    so passed by position; 4 waves per workgroup, n = 1000 so the last workgroup is partly masked off."""
    text = codegen.from_s(DATA / f"triton_vadd_{mcpu}.s")
    n = 1000
    x = np.linspace(-3, 3, 1024, dtype=np.float32)
    y = np.arange(1024, dtype=np.float32) * np.float32(0.5)
    out = np.full(1024, -7, np.float32)
    scratch = np.zeros(16, np.uint8)
    r = launch(text, None, [x, y, out, n, scratch, scratch], grid=(4, 1, 1), block=(256, 1, 1),
               preload_entry=preload)
    want = out.copy()
    want[:n] = x[:n] + y[:n]
    assert r.outputs[2].view(np.uint32).tolist() == want.view(np.uint32).tolist() and r.waves == 16


def test_a_race_between_waves_changes_with_the_schedule():
    """Without the barrier, wave 0 (run first) reads lds[192..255] before wave 3 wrote it: the LDS canary."""
    x = np.ones(256, np.float32)
    runs = {s: launch(asm("lds_race"), None, {"in": x, "out": np.zeros(256, np.float32)}, block=(256, 1, 1),
                      schedule=s).outputs["out"] for s in ("forward", "reverse")}
    assert runs["forward"][255] == 2.0 and runs["reverse"][0] == 2.0
    assert runs["forward"][0] != 2.0 and runs["reverse"][255] != 2.0


def test_float_atomics_add_at_the_address_the_encoding_builds():
    """Decision 37: the tabled GLOBAL_ATOMIC_ADD_F32 and BUFFER_ATOMIC_ADD_F32 write MEM[ADDR] with no address
    helper; the address is SADDR + VADDR + offset:16 ("Global ... address = SGPR base + VGPR offset + inst
    offset"), and for the buffer the V# base + VGPR offset (offen), range-checked against NUM_RECORDS = 16 bytes.
    Lane t adds x[t] to acc[4 + t % 4] and to acc[t % 4]; the sums are of small integers (exact in any order)."""
    x = (np.arange(64) % 7 + 1).astype(np.float32)
    acc = np.zeros(12, np.float32)
    r = launch(asm("fatomic"), None, {"x": x, "acc": acc})
    want = np.array([x[k::4].sum() for k in range(4)], np.float32)
    assert r.outputs["acc"][:4].tolist() == want.tolist()
    assert r.outputs["acc"][4:8].tolist() == want.tolist()
    assert r.outputs["acc"][8:].tolist() == [0.0] * 4


@TARGETS
def test_a_constant_on_a_packed_operand_is_one_element_in_the_low_half(mcpu):
    """Decision 38: `v_pk_add_f32 v[2:3], v[0:1], 1.0 op_sel_hi:[1,0]` and `v_pk_add_f16 v1, v1, 1.0
    op_sel_hi:[1,0]` (llc's code for adding a splat 1.0) add 1.0 to both elements: the float inline constant is the
    element's 1.0 (0x3f800000, 0x3c00) in the low element, which op_sel_hi:[.,0] selects for the high one too.
    Read as an f64 1.0 (0x3ff00000_00000000) both halves would add 0.0 and 1.875 (the high dword as f32)."""
    x = np.array([[1.5, -2.25]] * 64, np.float32)
    h = np.array([[0.5, 3.0]] * 64, np.float16)
    o, om, oh = np.zeros_like(x), np.zeros_like(x), np.zeros_like(h)
    s16 = np.array([[0, 0x8000]] * 63 + [[0xFFFF, 7]], np.uint16)
    r = launch(asm("pkconst", mcpu), None, {"a": x, "h": h, "o": o, "oh": oh, "om": om, "s": s16,
                                            "os": np.zeros_like(s16)})
    # `v_pk_add_u16 v1, v1, -1`: an integer inline constant is the 32-bit sign-extended -1, so both halves add -1
    assert r.outputs["os"].tolist() == (s16 - np.uint16(1)).tolist()
    assert r.outputs["o"].tolist() == (x + np.float32(1.0)).tolist()
    assert r.outputs["oh"].tolist() == (h + np.float16(1.0)).tolist()
    assert r.outputs["om"].tolist() == (x * np.float32(0.1)).tolist()


@TARGETS
@LEVELS
def test_neg_and_abs_on_an_untyped_select_flip_and_clear_the_sign_bit(mcpu, opt):
    """Decision 39: `v_cndmask_b32_e64 v1, |v2|, -v1, vcc` (llc's select of fneg x and fabs y): the modifiers act
    on bit 31 of the selected 32-bit value. r = x < y ? -x : |y|, NaN, infinities and signed zeros included."""
    x = np.array([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0] * 8, np.float32)
    y = np.array([2.0, -3.0, -0.0, 1.0, -np.inf, 0.5, 1.0, -np.nan] * 8, np.float32)
    r = launch(asm("cndmask_negabs", mcpu, opt), None, {"a": x, "b": y, "o": np.zeros(64, np.float32)})
    want = np.where(x < y, -x, np.abs(y)).astype(np.float32)
    assert r.outputs["o"].view(np.uint32).tolist() == want.view(np.uint32).tolist()
