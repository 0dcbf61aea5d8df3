"""`gfxhound emulate`: the IR executor and llc's code at each -O level on the machine-code executor judge each
other (oracle/crosscheck.py); the real CLI in a child process, the real llc-22."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.codegen import Assembly
from gfxhound.oracle.crosscheck import Run, compare, vote
from gfxhound.oracle.crosscheck_launch import boundary_values, draw, make_launch

DATA = Path(__file__).parent / "data"
LLC = codegen.find_llc() if Path(codegen.DEFAULT_LLC).exists() or shutil.which("llc-22") else None
pytestmark = pytest.mark.skipif(LLC is None, reason="no llc-22 (Debian's llvm-22)")
ADD = "a: u32[N]; b: u32[N]; c: u32[N] out; n: N; N: 300; grid: cdiv(N, 256); block: 256"


def emulate(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "gfxhound", "emulate", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def mutated_o2(tmp_path) -> Path:
    """llc's -O2 code of add_i32 with its one data add turned into a subtract: a planted miscompile."""
    text = codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text
    assert text.count("v_add_u32_e32") == 1
    path = tmp_path / "mutated.s"
    path.write_text(text.replace("v_add_u32_e32", "v_sub_u32_e32"))
    return path


def test_add_i32_agrees_at_o0_and_o2():
    out = emulate(DATA / "add_i32.ll", "--mcpu", "gfx942", "--opt", "0,2", "--launch", ADD)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "verdict: agree (exit 0)" in out.stdout
    row = next(line for line in out.stdout.splitlines() if line.split()[:2] == ["c", "out"])
    assert row.split()[2:] == ["A", "A", "A", "agree"]  # IR, O0, O2


def test_a_planted_miscompile_disagrees_and_is_named(tmp_path):
    out = emulate(DATA / "add_i32.ll", "--opt", "0,2", "--launch", ADD, "--asm", mutated_o2(tmp_path))
    assert out.returncode == 1, out.stdout + out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("disagree:"))
    assert line.startswith("disagree: c: mutated.s against IR, O0, O2")
    assert "first at index" in line


def test_compare_votes_a_mutated_assembly_down(tmp_path):
    mutated = codegen.from_s(mutated_o2(tmp_path), "gfx942")
    result = compare(DATA / "add_i32.ll", "gfx942", [2], ADD, extra={"mutant": mutated})
    assert result.exit_code == 1 and result.verdict["status"] == "disagree"
    (row,) = result.verdict["rows"]
    assert row["buffer"] == "c" and row["majority"] == ["IR", "O2"] and row["minority"] == ["mutant"]
    diff = row["first_difference"]
    a, b = result.launch.args[0], result.launch.args[1]
    i = diff["index"]
    assert diff["majority"] == int(a[i] + b[i]) and diff["value"] == int(a[i] - b[i])


def test_a_tie_is_unresolved_never_decided_by_a_favourite():
    same, other = np.arange(4, dtype=np.uint32), np.arange(4, dtype=np.uint32) + 1
    verdict = vote([Run("IR", {"out": same}), Run("O0", {"out": other})], {"out": "out"})
    assert verdict["status"] == "unresolved" and verdict["rows"][0]["verdict"] == "tie"
    verdict = vote([Run("IR", {"out": same}), Run("O0", {"out": other}), Run("O2", {"out": other})],
                   {"out": "out"})
    assert verdict["status"] == "disagree" and verdict["rows"][0]["minority"] == ["IR"]
    # a fault is an outcome: faults agree with each other wherever they are, and outvote bytes
    verdict = vote([Run("IR", fault="EmulatedFault: at 0x10"), Run("O0", fault="MachineFault: at 0x7f00"),
                    Run("O2", {"out": same})], {"out": "out"})
    assert verdict["rows"][0]["minority"] == ["O2"] and verdict["rows"][0]["majority"] == ["IR", "O0"]
    # an unresolved run makes the whole comparison unresolved, even when the rest agree
    verdict = vote([Run("IR", unresolved="LDS global @x"), Run("O0", {"out": same}), Run("O2", {"out": same})],
                   {"out": "out"})
    assert verdict["status"] == "unresolved" and verdict["unresolved"] == [{"run": "IR", "construct": "LDS global @x"}]


def test_an_unmodelled_instruction_is_unresolved_and_named():
    out = emulate(DATA / "pknorm.ll", "--launch", "in: u32[64]; out: u32[64] out; grid: 1; block: 64")
    assert out.returncode == 125, out.stdout + out.stderr
    assert "unresolved: v_cvt_pknorm_i16_f32: helper f32_to_snorm()" in out.stdout
    # DPP runs on both executors (two models of the guide's lane moves) and they agree
    out = emulate(DATA / "dpp.ll", "--launch", "in: u32[64]; out: u32[64] out; grid: 1; block: 64")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("spec, says", [
    ("a u32", "write it as 'name: value'"),
    ("a: u32[N]; grid: 1", "'N' is not given"),
    ("a: u32[4]; b: u32[4]; c: u32[4] out; grid: 1", "does not give the kernel's argument 'n'"),
    ("a: u32[4]; b: u32[4]; c: u32[4] out; n: 4", "no 'grid' entry"),
])
def test_a_bad_launch_is_one_line_and_exit_2(spec, says):
    out = emulate(DATA / "add_i32.ll", "--launch", spec)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1 and says in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
def test_fp8_runs_on_both_executors_in_the_targets_format(mcpu):
    """llvm.amdgcn.cvt.f32.fp8 of every byte pattern the launch draws (NaN codes included): the IR executor's
    conversion and the machine's (machine_fp8.py, FNUZ on gfx942, OCP on gfx950) are two models; they agree."""
    out = emulate(DATA / "fp8.ll", "--mcpu", mcpu, "--launch", "in: u32[64]; out: u32[64] out; grid: 1; block: 64")
    assert out.returncode == 0, out.stdout + out.stderr


def test_bad_options_are_exit_2():
    assert emulate(DATA / "add_i32.ll", "--opt", "0,5", "--launch", ADD).returncode == 2
    assert emulate(DATA / "nothing.ll", "--launch", ADD).returncode == 2


def _valid(stdout):
    """stdout whole is one object that docs/schemas/emulate.json accepts."""
    doc = json.loads(stdout)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "emulate.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return doc


def test_json_has_its_format_and_the_runs():
    out = emulate(DATA / "add_i32.ll", "--opt", "2", "--launch", ADD, "--json")
    assert out.returncode == 0, out.stderr
    doc = _valid(out.stdout)
    assert doc["format"] == "gfxhound.emulate/1" and doc["status"] == "agree" and doc["exit"] == 0
    assert [r["label"] for r in doc["runs"]] == ["IR", "O2"] and doc["grid"] == [2, 1, 1]
    assert doc["buffers"][0]["groups"] == [["IR", "O2"]]


def test_json_of_a_disagreement_and_of_an_unresolved_run(tmp_path):
    out = emulate(DATA / "add_i32.ll", "--opt", "0,2", "--launch", ADD, "--asm", mutated_o2(tmp_path), "--json")
    assert out.returncode == 1, out.stderr
    doc = _valid(out.stdout)
    assert doc["status"] == "disagree" and doc["buffers"][0]["minority"] == ["mutated.s"]
    out = emulate(DATA / "load_lds_u8.ll", "--opt", "2", "--launch", "in: u32[64]; out: u32[64] out; grid: 1",
                  "--json")
    assert out.returncode == 125, out.stderr
    doc = _valid(out.stdout)
    assert [u["run"] for u in doc["unresolved"]] == ["O2"] and doc["unresolved"][0]["construct"].startswith(
        "global_load_lds_ubyte: ")


def test_a_race_in_the_ir_itself_is_unresolved_not_blamed_on_the_ir_executor():
    out = emulate(DATA / "lds_race.ll", "--opt", "0,2",
                  "--launch", "in: fp32[256]; out: fp32[256] out; grid: 1; block: 256")
    assert out.returncode == 125, out.stdout + out.stderr
    assert "unresolved: a race between waves in the IR" in out.stdout


def test_block_option_and_a_64_bit_kernel_agree():
    out = emulate(DATA / "i64_ops.ll", "--opt", "0,1,2", "--block", "64",
                  "--launch", "in: i64[64]; out: i64[64] out; d: 12345; grid: 1")
    assert out.returncode == 0, out.stdout + out.stderr


def test_integer_inputs_carry_the_boundary_patterns():
    assert [int(v) for v in boundary_values(np.uint32)] == [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
    drawn = draw("i32", [300], np.random.default_rng(0))
    for v in boundary_values(np.int32):
        assert (drawn == v).sum() >= 1
    assert (draw("u32", [8], np.random.default_rng(0), role="out") == 0).all()
    launch = make_launch(ADD, [(("p", 1), "a"), (("p", 1), "b"), (("p", 1), "c"), (("i", 32), "n")], seed=3)
    assert launch.grid == (2, 1, 1) and launch.block == (256, 1, 1) and launch.args[3] == 300
    again = make_launch(ADD, [(("p", 1), "a"), (("p", 1), "b"), (("p", 1), "c"), (("i", 32), "n")], seed=3)
    assert np.array_equal(launch.args[0], again.args[0])


def test_a_lost_barrier_is_a_race_of_the_machine_code_and_disagrees(tmp_path):
    text = codegen.from_ll(DATA / "lds_barrier.ll", "gfx942", 2).text
    assert "\ts_barrier\n" in text
    (tmp_path / "nobarrier.s").write_text(text.replace("\ts_barrier\n", "", 1))
    for schedule in ("forward", "reverse"):  # whichever order goes first, the race shows
        out = emulate(DATA / "lds_barrier.ll", "--opt", "2", "--asm", tmp_path / "nobarrier.s", "--schedule",
                      schedule, "--launch", "in: fp32[256]; out: fp32[256] out; grid: 1; block: 256")
        assert out.returncode == 1, out.stdout + out.stderr
        line = next(line for line in out.stdout.splitlines() if line.startswith("disagree:"))
        assert line.startswith("disagree: out: nobarrier.s against IR, O2; a race between waves: out[")


def test_unnamed_parameters_go_by_position(tmp_path):
    text = (DATA / "add_i32.ll").read_text()
    for old, new in (("a", "0"), ("b", "1"), ("c", "2"), ("n", "3")):
        text = re.sub(rf"%{old}\b", f"%{new}", text)
    (tmp_path / "unnamed.ll").write_text(text)
    assert "i32 %3)" in text and not re.search(r"%[abcn]\b", text)
    out = emulate(tmp_path / "unnamed.ll", "--opt", "2", "--launch",
                  "arg0: u32[N]; arg1: u32[N]; arg2: u32[N] out; arg3: N; N: 300; grid: cdiv(N, 256); block: 256")
    assert out.returncode == 0, out.stdout + out.stderr
    out = emulate(tmp_path / "unnamed.ll", "--launch", "grid: 1")
    assert out.returncode == 2 and "(it takes arg0, arg1, arg2, arg3)" in out.stderr


def test_seeds_go_on_until_one_does_not_agree(tmp_path):
    out = emulate(DATA / "add_i32.ll", "--opt", "2", "--seeds", "3", "--seed", "4", "--json", "--launch",
                  "a: u32[N]; b: u32[N]; c: u32[N] out; n: N; N: 1..600; grid: cdiv(N, 256); block: 256")
    assert out.returncode == 0, out.stderr
    doc = _valid(out.stdout)
    assert doc["seeds_run"] == 3 and doc["seed"] == 6
    out = emulate(DATA / "add_i32.ll", "--opt", "2", "--seeds", "5", "--launch", ADD, "--asm", mutated_o2(tmp_path),
                  "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["seeds_run"] == 1  # the first seed shows it


def test_params_are_read_off_the_define_line_when_the_ir_reader_fails(monkeypatch):
    from gfxhound.oracle import crosscheck as C
    from gfxhound.executors.llvm_ir import ir
    text = (DATA / "preload.ll").read_text()
    want = ir.parse(text).functions["preload"].params

    def refuse(_):
        raise ValueError("unreadable")
    monkeypatch.setattr(ir, "parse", refuse)
    assert C.ir_params(text, "preload") == want == [(("p", 1), "out"), (("i", 32), "v")]
    launch = C.make_launch("out: i32[64] out; v: 7; grid: 1", want)
    run = C.run_ir(text, "preload", "gfx942", launch)
    assert run.unresolved.startswith("the IR executor cannot read the module (ValueError: unreadable)")


# --- a kernel as machine code (.s, code object), and Triton's own code generators --------------------------------
def add_i32_s(tmp_path, name="add_i32.s") -> Path:
    path = tmp_path / name
    path.write_text(codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text)
    return path


def add_i32_o(tmp_path) -> Path:
    path = tmp_path / "add_i32.o"
    subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O2", "-filetype=obj",
                    str(DATA / "add_i32.ll"), "-o", str(path)], check=True, timeout=60)
    return path


def test_a_dot_s_runs_as_is_and_prints_its_outputs(tmp_path):
    s = add_i32_s(tmp_path)
    out = emulate(s, "--launch", ADD)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"  add_i32.s {s} on the machine-code executor: ran" in out.stdout
    values = next(line.split(": ", 1)[1] for line in out.stdout.splitlines() if line.startswith("    c A: "))
    assert values.startswith("[0, 2, 4294967294, ") and values.endswith(", ...]")  # 0+0, 1+1, ~0+~0, ...
    doc = _valid(emulate(s, "--launch", ADD, "--json").stdout)
    assert [(r["label"], r["executor"], r["codegen"]) for r in doc["runs"]] == [("add_i32.s", "machine", str(s))]
    assert doc["status"] == "agree" and doc["buffers"][0]["values"][0][:2] == [0, 2]


def test_a_code_object_gives_the_outputs_of_its_dot_s(tmp_path):
    from gfxhound.oracle.crosscheck import compare_assembly
    s, o = add_i32_s(tmp_path), add_i32_o(tmp_path)
    from_s = compare_assembly({"s": codegen.from_s(s)}, ADD, seed=7)
    from_o = compare_assembly({"o": codegen.from_object(o)}, ADD, seed=7)
    assert from_s.exit_code == from_o.exit_code == 0
    assert np.array_equal(from_s.runs[0].outputs["c"], from_o.runs[0].outputs["c"])
    a, b = from_s.launch.args[:2]
    assert np.array_equal(from_o.runs[0].outputs["c"], a + b)  # u32 wraps as the kernel's add does
    out = emulate(o, "--launch", ADD, "--asm", s)  # the object and its .s vote together
    assert out.returncode == 0, out.stdout + out.stderr
    assert next(line for line in out.stdout.splitlines() if line.split()[:2] == ["c", "out"]).split()[2:] == \
        ["A", "A", "agree"]


def test_a_dot_s_and_an_edited_copy_tie_with_two_runs(tmp_path):
    """Two runs that differ have no majority: a tie, exit 125, never "the original is right"."""
    s = add_i32_s(tmp_path)
    edited = tmp_path / "edited.s"
    edited.write_text(s.read_text().replace("v_add_u32_e32", "v_sub_u32_e32"))
    out = emulate(s, "--asm", edited, "--launch", ADD)
    assert out.returncode == 125, out.stdout + out.stderr
    assert "unresolved: c: a tie between add_i32.s | edited.s" in out.stdout
    assert re.search(r"^    c B: \[0, 0, 0, 0, 0, ", out.stdout, re.M)  # x - x where the add gives x + x


def test_metadata_names_the_arguments_and_unnamed_ones_go_by_position():
    from gfxhound.oracle.crosscheck_launch import metadata_params
    assert metadata_params(codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2)) == (
        "add_i32", [(("p", 1), "a"), (("p", 1), "b"), (("p", 1), "c"), (("i", 32), "n")])
    out = emulate(DATA / "triton_vadd_gfx942.s", "--launch", "grid: 1")
    assert out.returncode == 2 and "(it takes arg0, arg1, arg2, arg3, arg4, arg5)" in out.stderr


@pytest.mark.parametrize("flags", [["--opt", "2"], ["--llc", "/usr/bin/true"], ["--codegen", "llc"],
                                   ["--triton", "3.9.0"]])
def test_code_generator_options_with_machine_code_are_usage_errors(tmp_path, flags):
    out = emulate(add_i32_s(tmp_path), "--launch", ADD, *flags)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert f"{flags[0]}: only for LLVM IR (.ll)" in out.stderr and "Traceback" not in out.stderr


def test_an_unknown_suffix_and_opt_none_alone_are_usage_errors(tmp_path):
    (tmp_path / "kernel.txt").write_text("")
    out = emulate(tmp_path / "kernel.txt", "--launch", ADD)
    assert out.returncode == 2 and "want LLVM IR (.ll), assembly (.s) or a code object (.o, .co, .hsaco)" in out.stderr
    out = emulate(DATA / "add_i32.ll", "--opt", "none", "--launch", ADD)
    assert out.returncode == 2 and "leaves no code generator" in out.stderr


def _triton_version():
    try:
        import triton
    except ImportError:
        return None
    return triton.__version__


@pytest.mark.skipif(_triton_version() is None, reason="this Python imports no Triton")
def test_codegen_triton_adds_a_run_of_tritons_own_code_generator():
    out = emulate(DATA / "add_i32.ll", "--opt", "2", "--codegen", "triton", "--launch", ADD, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    doc = _valid(out.stdout)
    label = f"triton-{_triton_version()}"
    assert [(r["label"], r.get("codegen")) for r in doc["runs"]] == [("IR", None), ("O2", "llc -O2"), (label, label)]
    assert doc["runs"][2]["tool"].startswith(f"triton {_triton_version()} ") and doc["buffers"][0]["groups"] == [
        ["IR", "O2", label]]


def test_a_cached_triton_release_votes_and_fewer_than_three_voters_warn():
    from gfxhound.cli.common import cache_dir
    if not (Path(cache_dir()) / "venvs" / "triton-3.7.1" / ".complete").exists():
        pytest.skip(f"no Triton 3.7.1 venv in {cache_dir()}/venvs (gfxhound bisect builds it)")
    out = emulate(DATA / "add_i32.ll", "--opt", "none", "--triton", "3.7.1", "--launch", ADD)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "triton-3.7.1 (Triton's own code generator, under " in out.stdout
    assert "warning: 2 runs vote" in out.stderr


def test_a_release_with_no_cached_venv_is_one_line_exit_2(tmp_path):
    import os
    out = subprocess.run([sys.executable, "-m", "gfxhound", "emulate", str(DATA / "add_i32.ll"), "--triton", "9.9.9",
                          "--launch", ADD], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "GFXHOUND_CACHE": str(tmp_path)})
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "--triton 9.9.9: no venv of Triton 9.9.9 in " in line and "--triton /path/to/python" in line
    out = emulate(DATA / "add_i32.ll", "--triton", "/nonexistent/python", "--launch", ADD)
    assert out.returncode == 2 and "neither a Triton release" in out.stderr


@pytest.mark.slow
def test_reduce_shrinks_a_real_llc_miscompile_and_keeps_it(tmp_path):
    """--reduce on llc-22's OR -1 fold (tests/amdgcn/data/history/or-minus-one-fold.ll, PR #189655) padded with an
    unrelated computation and store: llvm-reduce drops them, and the recorded command still shows -O2 outvoted by
    the IR executor and -O0 on the reduced module."""
    source = (DATA / "history" / "or-minus-one-fold.ll").read_text()
    padded = source.replace("  ret void", "  %j = mul i32 %x, 3\n  %j2 = xor i32 %j, 5\n"
                            "  %q2 = getelementptr i32, ptr addrspace(1) %out0, i64 100\n"
                            "  store i32 %j2, ptr addrspace(1) %q2\n  ret void", 1)
    ll = tmp_path / "padded.ll"
    ll.write_text(padded)
    launch = "in0: u32[64]; out0: u32[128] out; grid: 1; block: 64"
    proc = emulate(str(ll), "--opt", "0,2", "--launch", launch, "--reduce", str(tmp_path / "r"),
                   "--reduce-seconds", "400", timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = json.loads((tmp_path / "r" / "reduce.json").read_text())
    assert record["property"]["minority"] == ["O2"] and record["lines_after"] < record["lines_before"]
    reduced = (tmp_path / "r" / "reduced.ll").read_text()
    assert "%j2" not in reduced and " or " in reduced
    again = subprocess.run([sys.executable, "-m", "gfxhound", *record["command"][1:]],
                           cwd=tmp_path / "r", capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and "O2 against IR, O0" in again.stdout, again.stdout + again.stderr


VADD = "arg0: fp32[1024]; arg1: fp32[1024]; arg2: fp32[1024] out; arg3: 1000; arg4: i8[16]; arg5: i8[16]; grid: 4; " \
       "block: 256"


def test_a_kernel_that_preloads_runs_from_both_entries_and_they_must_agree(tmp_path):
    """Triton's vadd preloads 12 kernarg dwords: the machine runs it from the compatibility prologue (firmware
    without preloading) and from the preloaded entry 256 bytes in. Planting `s_mov_b32 s8, 5` in the prologue
    alone (n = 5 there, 1000 preloaded) makes the two entries disagree: a fault of the machine code."""
    text = (DATA / "triton_vadd_gfx942.s").read_text()
    good = emulate(DATA / "triton_vadd_gfx942.s", "--launch", VADD)
    assert good.returncode == 0, good.stdout + good.stderr
    planted = tmp_path / "prologue.s"
    planted.write_text(text.replace("\ts_waitcnt lgkmcnt(0)\n\ts_branch .LBB0_0",
                                    "\ts_waitcnt lgkmcnt(0)\n\ts_mov_b32 s8, 5\n\ts_branch .LBB0_0", 1))
    assert planted.read_text() != text
    out = emulate(planted, "--launch", VADD, "--asm", DATA / "triton_vadd_gfx942.s")
    assert "the preloaded entry and the compatibility prologue disagree: arg2[5]" in out.stdout, out.stdout
    assert out.returncode == 125  # two runs, one a fault: a tie, never a verdict for either
