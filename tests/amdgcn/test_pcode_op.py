"""The Op contract the machine relies on: inputs/outputs/widths, EXEC, partial writes, memory, NotModelled, cache."""
import numpy as np
import pytest

from gfxhound.executors.amdgcn.pcode import NotModelled, compile_op, coverage, unmodelled
from gfxhound.executors.amdgcn.pcode_data import FAMILIES
from pcode_run import lanes, vrun


class ByteMemory:
    """Little-endian bytes; Calc*Addr adds the address operands (the machine's job, kept trivial here)."""

    def __init__(self, size=256):
        self.bytes, self.helpers = bytearray(size), []

    def address(self, helper, *args):
        self.helpers.append(helper)
        return np.asarray(args[0], np.uint64) + (np.asarray(args[2], np.uint64) if helper == "CalcGlobalAddr" else 0)

    def load(self, addr, nbytes, lanes_on):
        addr, out = np.broadcast_to(addr, np.shape(lanes_on)), np.zeros(np.shape(lanes_on), np.uint64)
        for i in zip(*np.nonzero(np.atleast_1d(lanes_on))):
            a = int(np.atleast_1d(addr)[i])
            np.atleast_1d(out)[i] = int.from_bytes(self.bytes[a:a + nbytes], "little")
        return out

    def store(self, addr, nbytes, bits, lanes_on):
        addr, bits = np.broadcast_to(addr, np.shape(lanes_on)), np.broadcast_to(bits, np.shape(lanes_on))
        for i in zip(*np.nonzero(np.atleast_1d(lanes_on))):
            a = int(np.atleast_1d(addr)[i])
            self.bytes[a:a + nbytes] = int(np.atleast_1d(bits)[i]).to_bytes(nbytes, "little")

    def u32(self, a):
        return int.from_bytes(self.bytes[a:a + 4], "little")


def test_op_describes_its_registers():
    op = compile_op("v_addc_co_u32_e64")          # the e64 spelling names the same pseudocode
    assert op is compile_op("v_addc_co_u32")       # compiled once, cached
    assert (op.lanes, op.inputs, op.outputs) == (True, {"S0", "S1", "VCC"}, {"D0", "VCC"})
    assert op.per_lane == {"S0", "S1", "D0"} and op.lane_masks == {"VCC"}
    assert op.widths == {"S0": 32, "S1": 32, "VCC": 64, "D0": 32}
    assert op.families == ("VOP2", "VOP3SD") and "VCC.u64[laneId]" in op.text
    assert compile_op("v_lshlrev_b64").widths["S1"] == 64 and compile_op("v_mad_u64_u32").widths["S2"] == 64


def test_scalar_operand_broadcasts_to_every_lane():
    """An SGPR or constant operand of a VALU op is one int for all lanes."""
    assert vrun("v_add_u32", 3, S0=[1, 2, 3], S1=10) == {"D0": [11, 12, 13]}


def test_exec_mask_as_bool_array_and_inactive_lanes():
    out = compile_op("v_not_b32").run({"S0": lanes(0, 0, 0), "D0": lanes(5, 5, 5)},
                                      exec_mask=np.arange(64) % 2 == 0)
    assert [int(x) for x in out["D0"][:3]] == [0xFFFFFFFF, 5, 0xFFFFFFFF]


def test_partial_write_needs_the_old_value():
    """D0.f16 = ... leaves D0[31:16] unwritten: without the old D0 that is reported, never guessed as zero."""
    with pytest.raises(NotModelled, match="D0 is written in part"):
        compile_op("v_add_f16").run({"S0": lanes(0x3C00), "S1": lanes(0x3C00)}, exec_mask=1)
    with pytest.raises(NotModelled, match="written in part"):       # inactive lanes' VCC bits
        compile_op("v_cmp_eq_u32").run({"S0": lanes(1), "S1": lanes(1)}, exec_mask=1)
    # all 64 lanes on: every bit written (lanes 1..63 compare 0 == 0)
    assert compile_op("v_cmp_eq_u32").run({"S0": lanes(1), "S1": lanes(1)}) == {"D0": 2 ** 64 - 1}


def test_a_register_missing_from_inputs_is_a_caller_error():
    with pytest.raises(ValueError, match=r"inputs not supplied: \['S1'\]"):
        compile_op("v_add_u32").run({"S0": lanes(1)})
    with pytest.raises(TypeError, match="raw bits"):
        compile_op("v_add_u32").run({"S0": np.zeros(64, np.float32), "S1": 0})


def test_conditional_scalar_write_is_omitted_when_not_taken():
    assert compile_op("s_cmov_b32").run({"S0": 7, "SCC": 0}) == {}
    assert compile_op("s_cmov_b32").run({"S0": 7, "SCC": 1}) == {"D0": 7}


def test_not_modelled_names_the_construct():
    cases = {"v_readlane_b32": "across lanes", "s_getreg_b32": "HW_REGISTERS", "v_cvt_off_f32_i4": "CVT_OFF_TABLE",
             "v_cvt_pk_fp8_f32": "f32_to_fp8", "s_waitcnt": "not parsed", "v_div_scale_f32": "VCC",
             "v_mfma_f32_32x32x8_f16": "matrix", "v_cvt_pknorm_i16_f32": "f32_to_snorm"}
    for mnemonic, construct in cases.items():
        with pytest.raises(NotModelled, match=construct) as err:
            compile_op(mnemonic)
        assert err.value.mnemonic == mnemonic
    with pytest.raises(NotModelled, match="not in the CDNA pseudocode table"):
        compile_op("v_no_such_op")


def test_ds_atomic_runs_lanes_in_order():
    """DS_ADD_RTN_U32: tmp = MEM[addr].u32; MEM[addr].u32 += DATA.u32; RETURN_DATA.u32 = tmp -- three lanes on one
    address see each other's additions (lane order: 5, 5+1, 5+1+2)."""
    mem = ByteMemory()
    mem.bytes[0:4] = (5).to_bytes(4, "little")
    op = compile_op("ds_add_rtn_u32")
    assert op.memory and op.inputs == {"ADDR", "DATA", "OFFSET0", "OFFSET1"}
    out = op.run({"ADDR": lanes(0, 0, 0), "DATA": lanes(1, 2, 3), "OFFSET0": 0, "OFFSET1": 0, "RETURN_DATA": lanes()},
                 exec_mask=0b111, memory=mem)
    assert [int(x) for x in out["RETURN_DATA"][:3]] == [5, 6, 8] and mem.u32(0) == 11
    # the lanes share an address: the all-lanes attempt (pcode_reuse.Deferred, one address call) is dropped and
    # the lanes run one by one (three)
    assert mem.helpers == ["CalcDsAddr"] * 4


def test_ds_write_and_read_with_offset():
    """MEM[addr + OFFSET.u32].b32 = DATA[31 : 0]; RETURN_DATA[31:16].u16 = 16'U({ 8'0U, MEM[ADDR].u8 })."""
    mem = ByteMemory()
    compile_op("ds_write_b32").run({"ADDR": lanes(8, 12), "DATA": lanes(0xAABBCCDD, 0x11223344), "OFFSET": 4},
                                   exec_mask=0b11, memory=mem)
    assert (mem.u32(12), mem.u32(16)) == (0xAABBCCDD, 0x11223344)
    out = compile_op("ds_read_u8_d16_hi").run({"ADDR": lanes(12), "RETURN_DATA": lanes(0x1234)}, exec_mask=1, memory=mem)
    assert int(out["RETURN_DATA"][0]) == 0x00DD1234


def test_global_load_gets_the_whole_64_bit_address():
    """CalcGlobalAddr(ADDR.b32, SADDR.b32, OFFSET.b32): ADDR reaches the hook whole although the guide says .b32."""
    seen = []

    class Spy(ByteMemory):
        def address(self, helper, *args):
            seen.append(int(np.atleast_1d(args[0])[0]))
            return np.asarray(16, np.uint64)
    mem = Spy()
    mem.bytes[16:24] = (0x1122334455667788).to_bytes(8, "little")
    out = compile_op("global_load_dwordx2").run({"ADDR": lanes(1 << 40), "SADDR": 0, "OFFSET": 0}, exec_mask=1,
                                                memory=mem)
    assert seen == [1 << 40] and int(out["VDATA"][0]) == 0x1122334455667788


def test_scalar_load_is_one_access():
    mem = ByteMemory()
    mem.bytes[32:40] = (0xCAFEF00DDEADBEEF).to_bytes(8, "little")
    op = compile_op("s_load_dwordx2")
    assert not op.lanes and op.widths["SDATA"] == 64
    assert op.run({"SBASE": 32, "SOFFSET": 0, "OFFSET": 0}, memory=mem) == {"SDATA": 0xCAFEF00DDEADBEEF}


def test_memory_op_without_memory_is_refused():
    with pytest.raises(ValueError, match="memory="):
        compile_op("ds_read_b32").run({"ADDR": lanes(0), "OFFSET": 0})


def test_coverage_counts_every_table_entry():
    cov = coverage()
    assert sum(total for _, total in cov.values()) == sum(len(f) for f in FAMILIES.values())
    for family in ("SOP2", "VOP2", "VOPC", "FLAT", "GLOBAL", "SMEM", "SCRATCH"):
        ok, total = cov[family]
        assert ok >= total - 1, (family, cov[family], unmodelled())
    assert cov["MTBUF"][0] == 0                       # formatted buffer access is not modelled
    assert set(unmodelled()) == {n for n in FAMILIES if n in unmodelled()}
