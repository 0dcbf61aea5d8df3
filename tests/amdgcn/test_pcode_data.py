"""The pseudocode table: pinned provenance, the generator's mapping, and the parser on the table's constructs."""
import ast
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import pcode_data, pcode_extract
from gfxhound.executors.amdgcn.pcode_parse import (Assign, Concat, For, If, Lambda, Num, ParseError, PartSel, Slice, Ty, View,
                                         parse)

WHEEL = Path("/tmp/tg") / pcode_extract.WHEEL


def test_table_records_its_source_and_has_no_runtime_dependency():
    src = Path(pcode_data.__file__).read_text()
    assert pcode_data.SOURCE["sha256"] == pcode_extract.WHEEL_SHA256 and pcode_data.SOURCE["version"] == "0.14.0"
    assert "CDNA4" in pcode_data.SOURCE["guide"] and "GENERATED" in src
    imports = [n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert imports == []


def test_table_maps_assembler_mnemonics():
    assert pcode_data.PCODE["ds_add_u32"] == ("addr = CalcDsAddr(ADDR.b32, OFFSET0.b32, OFFSET1.b32);\n"
                                              "tmp = MEM[addr].u32;\nMEM[addr].u32 += DATA.u32;\nRETURN_DATA.u32 = tmp")
    assert pcode_data.FAMILIES["v_add_u32"] == ("VOP2", "VOP3")
    assert pcode_data.FAMILIES["v_mov_b32"] == ("VOP1", "VOP3")     # the VOP3 form comes from the opcode enums
    assert pcode_data.FAMILIES["v_cmp_lt_f32"] == ("VOP3", "VOPC")
    assert pcode_data.FAMILIES["v_add_co_u32"] == ("VOP2", "VOP3SD")
    assert len(pcode_data.PCODE) == 1185 and all(k == k.lower() and not k.endswith("_e32") for k in pcode_data.PCODE)


def _wheel(pcode_src: str, enum_src: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(pcode_extract.MEMBER, pcode_src)
        zf.writestr(pcode_extract.ENUMS, enum_src)
    return buf.getvalue()


def test_generator_maps_members_and_refuses_disagreement(tmp_path, monkeypatch):
    enums = "class VOP2Op:\n  V_ADD_U32_E32 = 52\nclass VOP3Op:\n  V_ADD_U32_E64 = 308\n"
    good = "PCODE = {\n VOP2Op.V_ADD_U32_E32: 'D0.u32 = S0.u32 + S1.u32',\n VOP3Op.V_ADD_U32_E64: 'D0.u32 = S0.u32 + S1.u32',\n}"
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(_wheel(good, enums))
    monkeypatch.setattr(pcode_extract, "WHEEL_SHA256", hashlib.sha256(wheel.read_bytes()).hexdigest())
    texts, families = pcode_extract.build(*pcode_extract.read_wheel(wheel))
    assert texts == {"v_add_u32": "D0.u32 = S0.u32 + S1.u32"} and families == {"v_add_u32": ("VOP2", "VOP3")}
    bad = good.replace("S0.u32 + S1.u32',\n}", "S1.u32 + S0.u32',\n}")
    wheel.write_bytes(_wheel(bad, enums))
    monkeypatch.setattr(pcode_extract, "WHEEL_SHA256", hashlib.sha256(wheel.read_bytes()).hexdigest())
    with pytest.raises(SystemExit, match="disagree"):
        pcode_extract.build(*pcode_extract.read_wheel(wheel))
    monkeypatch.setattr(pcode_extract, "WHEEL_SHA256", "0" * 64)
    with pytest.raises(SystemExit, match="not the pinned"):
        pcode_extract.read_wheel(wheel)


@pytest.mark.skipif(not WHEEL.exists(), reason=f"pip download --no-deps tinygrad==0.14.0 -d {WHEEL.parent}")
def test_generator_reproduces_the_checked_in_table(tmp_path):
    out = tmp_path / "pcode_data.py"
    assert pcode_extract.main([str(WHEEL), "-o", str(out)]) == 0
    assert out.read_text() == Path(pcode_data.__file__).read_text()


def test_parser_on_the_tables_constructs():
    (a,) = parse("tmp[i] = S0.u32[i & 6'60U +: 6'4U] != 0U")
    assert isinstance(a.value.left, PartSel) and a.value.left.width == Num(4, Ty("u", 6))
    (a,) = parse("D0.u32[31 : 0] = S0.u32[0 : 31]")
    assert isinstance(a.targets[0], Slice) and isinstance(a.value, Slice) and a.value.hi == Num(0, Ty("i", 32))
    (a,) = parse("EXEC.u64[laneId] = D0.u64[laneId] = S0.f32 <> S1.f32;\n// D0 = VCC in VOPC encoding.")
    assert len(a.targets) == 2 and a.value.op == "<>"
    (a,) = parse("{ D1.u1, D0.u64 } = 65'B(65'U(S0.u32) * 65'U(S1.u32))")
    assert isinstance(a.targets[0], Concat) and a.value.ty == Ty("b", 65)
    lam, _ = parse("SAT8 = lambda(n) (\nif n <= 16'0 then\nreturn 8'0U\nelse\nreturn n[7 : 0].u8\nendif);\nD0 = SAT8(S0)")
    assert isinstance(lam, Lambda) and isinstance(lam.body[0], If)
    (loop,) = parse("for i in 0 : 31 do\nif S0.u32[i] == 1'1U then\ntmp = i;\nbreak\nendif\nendfor")
    assert isinstance(loop, For) and loop.hi == Num(31, Ty("i", 32))
    (a,) = parse("D0.f64 = 64'F(0xfff8000000000000LL)")
    assert a.value.expr == Num(0xFFF8000000000000, Ty("u", 64)) and isinstance(a.targets[0], View)
    assert parse("x = 0x100000000ULL")[0].value.ty == Ty("u", 64) and parse("x = 1.0F")[0].value.ty == Ty("f", 32)
    assert isinstance(parse("D0.f16 = 16'1.0 / S0.f16")[0], Assign)


def test_parser_refuses_prose():
    with pytest.raises(ParseError, match="prose"):
        parse('"Wait for all instructions to complete";')
    with pytest.raises(ParseError):
        parse("Offset[4:0]: Swizzle")
