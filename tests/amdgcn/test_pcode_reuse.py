"""The machine's two ways of running the pseudocode less often (executors/amdgcn/pcode_reuse.py) give what the plain
run gives: a repeat of a pure instruction's inputs is a lookup of the same outputs, and a read-modify-write
instruction's lanes run together only where no two touch a common byte, with the lane-by-lane result."""
import numpy as np
import pytest

from gfxhound.executors.amdgcn import pcode
from gfxhound.executors.amdgcn.pcode import compile_op

RNG = np.random.default_rng(5)


@pytest.fixture
def reuse(monkeypatch):
    """Switch the reuse on or off for one run: reuse(False) is the plain run."""
    monkeypatch.setattr(pcode, "RESULTS", pcode.Results())

    def switch(on: bool):
        monkeypatch.setattr(pcode, "REUSE", on)
    return switch


def _lanes(bits=32):
    return RNG.integers(0, 1 << bits, 64, dtype=np.uint64)


def _same(a: dict, b: dict):
    assert sorted(a) == sorted(b)
    for name in a:
        assert np.array_equal(np.asarray(a[name], np.uint64), np.asarray(b[name], np.uint64)), name


PURE = {
    "v_add_u32": lambda: {"S0": _lanes(), "S1": _lanes()},
    "v_cndmask_b32": lambda: {"S0": _lanes(), "S1": _lanes(), "VCC": int(RNG.integers(0, 1 << 63))},
    "v_fma_f32": lambda: {"S0": _lanes(), "S1": _lanes(), "S2": 0x3F800000},
    "v_cmp_gt_f32": lambda: {"S0": _lanes(), "S1": _lanes(), "D0": 0, "VCC": 0},
    "s_and_b64": lambda: {"S0": int(RNG.integers(0, 1 << 63)), "S1": int(RNG.integers(0, 1 << 63))},
    "s_add_u32": lambda: {"S0": int(RNG.integers(0, 1 << 32)), "S1": 0xFFFFFFFF},
}


@pytest.mark.parametrize("mnemonic", sorted(PURE))
def test_a_repeat_is_a_lookup_of_the_plain_run_s_outputs(mnemonic, reuse):
    op, inputs = compile_op(mnemonic), PURE[mnemonic]()
    inputs = {k: v for k, v in inputs.items() if k in op.widths}
    exec_mask = int(RNG.integers(1, 1 << 63)) if op.lanes else None
    reuse(False)
    plain = op.run(dict(inputs), exec_mask)
    reuse(True)
    first = op.run(dict(inputs), exec_mask)
    assert (pcode.RESULTS.hits, pcode.RESULTS.misses) == (0, 1)
    again = op.run(dict(inputs), exec_mask)
    assert pcode.RESULTS.hits == 1
    _same(plain, first)
    _same(plain, again)
    for value in again.values():   # a caller that writes into what it got cannot change a later hit
        if isinstance(value, np.ndarray):
            value[:] = 0
    _same(plain, op.run(dict(inputs), exec_mask))
    other = dict(inputs, S0=inputs["S0"] ^ 1 if isinstance(inputs["S0"], int) else inputs["S0"] ^ np.uint64(1))
    reuse(False)
    plain_other = op.run(dict(other), exec_mask)
    reuse(True)
    _same(plain_other, op.run(dict(other), exec_mask))   # other inputs: computed, not confused with the first


def test_a_value_whose_bytes_do_not_identify_it_is_never_a_key():
    wide = np.array([1 << 100] * 64, dtype=object)
    assert pcode.Results().key("v_add_u32", 1, {"S0": wide}) is None
    assert pcode.Results().key("v_add_u32", 1, {"S0": 5}) is not None


class Memory:
    """Little-endian bytes at addresses from 0; counts the store calls; a load past the end faults."""

    def __init__(self, size=1024, seed=None):
        self.stores = 0
        self.bytes = (RNG if seed is None else np.random.default_rng(seed)).integers(0, 256, size, dtype=np.uint8)

    def address(self, helper, *args):
        return np.asarray(args[0], np.uint64) + (np.asarray(args[1], np.uint64) | np.asarray(args[2], np.uint64))

    def load(self, addr, nbytes, lanes):
        out = np.zeros(64, np.uint64)
        for lane in np.flatnonzero(np.broadcast_to(lanes, (64,))):
            a = int(np.broadcast_to(addr, (64,))[lane])
            if a + nbytes > len(self.bytes):
                raise IndexError(f"load at {a} (lane {lane})")
            out[lane] = int.from_bytes(self.bytes[a:a + nbytes].tobytes(), "little")
        return out

    def store(self, addr, nbytes, bits, lanes):
        self.stores += 1
        for lane in np.flatnonzero(np.broadcast_to(lanes, (64,))):
            a = int(np.broadcast_to(addr, (64,))[lane])
            self.bytes[a:a + nbytes] = np.frombuffer(int(np.broadcast_to(bits, (64,))[lane]).to_bytes(nbytes,
                                                                                                       "little"),
                                                     np.uint8)


ATOMICS = {   # name -> the inputs besides the address
    "ds_add_u32": lambda: {"DATA": _lanes(), "OFFSET0": 0, "OFFSET1": 0},
    "ds_max_i32": lambda: {"DATA": _lanes(), "OFFSET0": 4, "OFFSET1": 0},
    "ds_cmpst_b32": lambda: {"DATA": _lanes(2), "DATA2": _lanes(), "OFFSET0": 0, "OFFSET1": 0},
    "global_atomic_add_f32": lambda: {"DATA": _lanes()},
}


def _atomic(mnemonic, addresses, exec_mask, reuse_on, reuse, fault_at=None):
    op = compile_op(mnemonic)
    memory = Memory()
    before = memory.bytes.copy()
    inputs = ATOMICS[mnemonic]()
    inputs = {k: v for k, v in inputs.items() if k in op.widths}
    inputs["ADDR"] = np.asarray(addresses, np.uint64)
    inputs.setdefault("RETURN_DATA", np.zeros(64, np.uint64))
    reuse(reuse_on)
    out = op.run(inputs, exec_mask, memory=memory)
    return out, memory, before


@pytest.mark.parametrize("mnemonic", sorted(ATOMICS))
def test_atomics_on_distinct_addresses_run_together_with_the_lane_order_result(mnemonic, reuse):
    addresses = RNG.permutation(64) * 8   # every lane its own word
    exec_mask = int(RNG.integers(1 << 40, 1 << 63))
    state = RNG.bit_generator.state
    plain, plain_memory, _ = _atomic(mnemonic, addresses, exec_mask, False, reuse)
    RNG.bit_generator.state = state
    together, memory, _ = _atomic(mnemonic, addresses, exec_mask, True, reuse)
    _same(plain, together)
    assert np.array_equal(plain_memory.bytes, memory.bytes)
    assert plain_memory.stores == bin(exec_mask).count("1") and memory.stores == 1   # one run, not one a lane


@pytest.mark.parametrize("mnemonic", sorted(ATOMICS))
def test_atomics_where_lanes_share_bytes_run_lane_by_lane(mnemonic, reuse):
    """Eight lanes a word, and words two bytes apart (overlapping): the guide's order decides, so the lanes run
    one after another, as without the reuse."""
    for addresses in (np.arange(64) % 8 * 4, np.arange(64) * 2):
        state = RNG.bit_generator.state
        plain, plain_memory, _ = _atomic(mnemonic, addresses, (1 << 64) - 1, False, reuse)
        RNG.bit_generator.state = state
        together, memory, _ = _atomic(mnemonic, addresses, (1 << 64) - 1, True, reuse)
        _same(plain, together)
        assert np.array_equal(plain_memory.bytes, memory.bytes)
        assert memory.stores == 64


def test_a_lane_that_faults_faults_as_in_lane_order(reuse):
    """Lane 3's address is past the memory: the plain run stores lanes 0-2 and then faults at lane 3; so does the
    run with the reuse (nothing its all-lanes attempt held back was stored)."""
    op = compile_op("ds_add_u32")
    addresses = np.arange(64, dtype=np.uint64) * 4
    addresses[3] = 4096
    inputs = {"ADDR": addresses, "DATA": _lanes(), "OFFSET0": 0, "OFFSET1": 0, "RETURN_DATA": np.zeros(64, np.uint64)}
    after = []
    for on in (False, True):
        memory = Memory(seed=1)
        reuse(on)
        with pytest.raises(IndexError, match="lane 3"):
            op.run(dict(inputs), (1 << 64) - 1, memory=memory)
        after.append((memory.bytes.copy(), memory.stores))
    assert after[0][1] == after[1][1] == 3 and np.array_equal(after[0][0], after[1][0])


def test_a_store_writes_every_lane_at_once_with_the_lane_order_bytes(monkeypatch):
    """run.GlobalMemory.store: lanes on distinct bytes in one write; lanes sharing bytes (the same word, or words
    two bytes apart) keep the highest lane's bytes, as one lane after another would."""
    from gfxhound.executors.amdgcn import run
    bits = RNG.integers(0, 1 << 32, 64, dtype=np.uint64)
    on = RNG.random(64) < 0.8
    for addresses in (RNG.permutation(64) * 4, np.arange(64) % 8 * 4, np.arange(64) * 2):
        kept = []
        for at_once in (True, False):
            if not at_once:
                monkeypatch.setattr(run.GlobalMemory, "_store_at_once", lambda *args: False)
            memory = run.GlobalMemory()
            base = memory.map("buffer", np.zeros(512, np.uint8))
            memory.store(np.uint64(base) + addresses.astype(np.uint64), 4, bits, on)
            kept.append(memory.region("buffer").data.copy())
            monkeypatch.undo()
        assert np.array_equal(kept[0], kept[1])
        assert kept[0].any()


def test_two_texts_under_one_mnemonic_are_two_keys(reuse):
    """machine_valu.fma_mix runs CDNA's and RDNA3's texts of v_fma_mix_f32 (pcode.compile_variant): one's result
    must never answer for the other's."""
    from gfxhound.executors.amdgcn.pcode import compile_variant
    base = compile_op("v_add_u32")
    other = compile_variant("v_add_u32", base.text.replace("+", "-"))
    inputs = {"S0": _lanes(), "S1": _lanes()}
    reuse(True)
    added, subtracted = base.run(dict(inputs), 1), other.run(dict(inputs), 1)
    assert int(added["D0"][0]) == (int(inputs["S0"][0]) + int(inputs["S1"][0])) & 0xFFFFFFFF
    assert int(subtracted["D0"][0]) == (int(inputs["S0"][0]) - int(inputs["S1"][0])) & 0xFFFFFFFF
