"""`gfxhound fuzz --kernel FILE::FN --launch SPEC`: a user's own kernel, its launches drawn from the spec, compiled,
run in the interpreter against the user's reference, findings with repros that replay one launch."""
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.launch_spec import LaunchSpecError, parse
from gfxhound.fuzz.user_kernel import load
from gfxhound.fuzz.user_render import render_user

DATA = Path(__file__).parent.parent.parent / "fuzz" / "templates"  # the shipped templates, as a user would pass them
GEMM = f"{DATA}/persistent_gemm.py::persistent_gemm"
GEMM_LAUNCH = f"@{DATA}/persistent_gemm.launch"
MOE = f"{DATA}/moe_gemm.py::moe_gemm"
MOE_LAUNCH = f"@{DATA}/moe_gemm.launch"

KERNEL = '''from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (x * alpha + y){wrong}, mask=mask)


def reference(x_ptr, y_ptr, out_ptr, alpha, **_):
    return (x_ptr.float() * alpha + y_ptr.float()).to(out_ptr.dtype)
'''
WRONG = " + (offs == 77).to(tl.float16)"  # one element off, where the launch reaches it
LAUNCH = ("n: 1..3000; x_ptr: fp16[n]; y_ptr: fp16[n]; out_ptr: fp16[n] out; alpha: 0.5|2.0; BLOCK: 64|128|256; "
          "grid: cdiv(n, BLOCK); reference: reference")


def run_cli(gfxhound_bin, *args, timeout=600):
    return subprocess.run([gfxhound_bin, *args], capture_output=True, text=True, timeout=timeout)


def write_kernel(tmp_path, wrong=""):
    path = tmp_path / ("wrong.py" if wrong else "kernel.py")
    path.write_text(KERNEL.format(wrong=wrong))
    return path


def test_launches_are_drawn_as_the_spec_says():
    user = load(GEMM, GEMM_LAUNCH).to_json()
    caps = assume_all("gfx942")
    seen = set()
    for spec in itertools.islice(spec_stream(caps, 5, family="user", user=user), 40):
        args = {a["name"]: a for a in spec.user["args"]}
        M, N, K = (args[n]["value"] for n in "MNK")
        a, b, c = args["a_ptr"], args["b_ptr"], args["c_ptr"]
        assert a["shape"] == [M, K] and b["shape"] == [K, N] and c["shape"] == [M, N] and c["role"] == "out"
        assert a["dtype"] == b["dtype"] == c["dtype"] in ("fp16", "bf16")
        assert args["stride_am"]["value"] == a["strides"][0] and args["stride_bn"]["value"] == b["strides"][1]
        tiles = -(-M // args["BLOCK_M"]["value"]) * -(-N // args["BLOCK_N"]["value"])
        assert 1 <= spec.user["grid"][0] <= min(8, tiles) and spec.user["grid"][1:] == [1, 1]
        assert args["ACTIVATION"]["kind"] == "constexpr" and args["M"]["kind"] == "int"
        rendered = render_user(spec)
        kinds = {a["name"]: a["kind"] for a in rendered.args}
        assert kinds["a_ptr"] == "ptr" and kinds["BLOCK_K"] == "constexpr" and list(kinds) == list(args)
        seen.add((a["strides"][1] == 1, M % 16 == 0, spec.launch.num_warps, args["ACTIVATION"]["value"]))
    assert len(seen) >= 10  # orders, ragged sizes, warps and epilogues all vary
    moe = load(MOE, MOE_LAUNCH).to_json()
    for spec in itertools.islice(spec_stream(caps, 6, family="user", user=moe), 20):
        args = {a["name"]: a for a in spec.user["args"]}
        blocks = -(-args["R"]["value"] // args["BLOCK_M"]["value"])  # a dimension with a call in it
        lo, hi = args["experts_ptr"]["values"]  # -1..E-1, E a variable of the spec, not a parameter
        assert args["experts_ptr"]["shape"] == [blocks] and lo == -1 and 0 <= hi <= 7
        assert args["w_ptr"]["shape"][0] == hi + 1 and args["rows_ptr"]["values"][1] == args["x_ptr"]["shape"][0]
        assert spec.user["grid"][0] == blocks
    assert spec.spec_hash() == type(spec).loads(spec.dumps()).spec_hash() and spec.family == "user"


@pytest.mark.parametrize("text, words", [
    ("x: fp16[n]", "no 'grid' entry"),
    ("x fp16[n]; grid: 1", "write it as 'name: value'"),
    ("x: fp33[n]; grid: 1", "unknown dtype 'fp33'"),
    ("n: 1..; grid: 1", "is not an expression"),
    ("x: fp16[n] sideways; grid: 1", "unknown word 'sideways'"),
    ("x: fp16[n] col; grid: 1", "'col' (column-major) is for 2-D"),
    ("n: 1; n: 2; grid: 1", "given twice"),
    ("grid: 1; tolerance: 0.1", "tolerance is 'rtol, atol'"),
    ("grid: 1; knobs: maybe", "knobs is 'on' or 'off'"),
    ("x: fp16[4]; grid: 1; reference: ref", "no output tensor"),
    ("x: fp16[cdiv(9, 2), 3; grid: 1", "'[' is not closed"),
    ("grid: 1; tolerance: nan, nan", "tolerance is 'rtol, atol'"),
    ("x: i32[4] values 3; grid: 1", "'values LO..HI'"),
])
def test_bad_launch_specs_say_what_to_write(text, words):
    with pytest.raises(LaunchSpecError, match=re.escape(words)):
        parse(text)


def test_spec_forms_the_docs_promise():
    spec = parse("M: 2..9; x: fp16[M]; y: fp16[x.shape[0]] out; ids: i32[M] values 0 .. cdiv(M, 2); grid: 1")
    y, ids = spec.entry("y"), spec.entry("ids")
    assert y.dims == ["x.shape[0]"] and y.role == "out" and ids.values == ["0", "cdiv(M, 2)"]


def test_a_spec_that_never_draws_stops_the_stream(tmp_path):
    from gfxhound.fuzz.generate import NothingDrawn
    path = write_kernel(tmp_path)
    user = load(f"{path}::scaled_add", LAUNCH.replace("grid: cdiv(n, BLOCK)", "grid: 0")).to_json()
    with pytest.raises(NothingDrawn):
        next(spec_stream(assume_all("gfx942"), 0, family="user", user=user))


def test_the_files_main_block_does_not_run_in_a_repro(tmp_path):
    path = write_kernel(tmp_path)
    path.write_text(path.read_text() + '\n\nif __name__ == "__main__":\n    raise SystemExit(7)\n')
    user = load(f"{path}::scaled_add", LAUNCH).to_json()
    spec = next(spec_stream(assume_all("gfx942"), 0, family="user", user=user))
    script = tmp_path / "as_main.py"
    script.write_text(render_user(spec).source)
    got = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]


@pytest.mark.parametrize("kernel, launch, words", [
    ("{dir}/missing.py::k", LAUNCH, "no such file"),
    ("{dir}/kernel.py", LAUNCH, "write it as path/to/file.py::kernel_name"),
    ("{dir}/kernel.py::other", LAUNCH, "has no @triton.jit function 'other'"),
    ("{dir}/kernel.py::scaled_add", "n: 1..9; grid: 1", "no entry for x_ptr, y_ptr, out_ptr, alpha, BLOCK"),
    ("{dir}/kernel.py::scaled_add", LAUNCH.replace("cdiv(n, BLOCK)", "cdiv(n, BLOK)"), "'BLOK' is not an earlier"),
    ("{dir}/kernel.py::scaled_add", LAUNCH.replace("reference: reference", "reference: nothing"),
     "reference 'nothing' is not a function"),
    ("{dir}/broken.py::broken", "n: 1..9; x_ptr: fp32[n] out; BLOCK: 64; grid: 1", "does not compile at the launch "
     "spec's defaults (n=1, BLOCK=64, x_ptr=fp32[1])"),
    ("{dir}/kernel.py::scaled_add", "@{dir}/none.launch", "cannot read it"),
    ("{dir}/kernel.py::scaled_add", LAUNCH + "; num_warps: 'four'", "num_warps and num_stages are positive"),
    ("{dir}/kernel.py::scaled_add", LAUNCH.replace("x_ptr: fp16[n]", "x_ptr: fp16[n] values 5..1"),
     "values needs LO <= HI"),
])
def test_kernel_errors_are_one_line(gfxhound_bin, tmp_path, kernel, launch, words):
    write_kernel(tmp_path)
    (tmp_path / "broken.py").write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                                        "def broken(x_ptr, n, BLOCK: tl.constexpr):\n"
                                        "    offs = tl.arange(0, BLOCK)\n"
                                        "    tl.store(x_ptr + offs, undefined_name, mask=offs < n)\n")
    proc = run_cli(gfxhound_bin, "fuzz", "--kernel", kernel.format(dir=tmp_path),
                   "--launch", launch.format(dir=tmp_path), "--budget", "1", "--corpus", str(tmp_path / "c"))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_compile_campaign_of_a_user_kernel(gfxhound_bin, tmp_path):
    path = write_kernel(tmp_path)
    proc = run_cli(gfxhound_bin, "fuzz", "--kernel", f"{path}::scaled_add", "--launch", LAUNCH, "--budget", "12",
                   "--workers", "2", "--corpus", str(tmp_path / "c"), "--json", "--seed", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["kernels"] == 12 and summary["verdicts"] == {"pass": 12}, summary["verdicts"]
    cov = summary["coverage"]
    assert cov["op:user:kernel.py::scaled_add"]["kernels"] == 12
    assert sum(v["kernels"] for k, v in cov.items() if k.startswith("detail:user:BLOCK=")) == 12
    assert any(k.startswith("detail:ttgir:tt.load") for k in cov)


COPY2D = """import triton
import triton.language as tl


@triton.jit
def copy2d(x_ptr, out_ptr, M, N, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr):
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.arange(0, BN)
    mask = (om[:, None] < M) & (on[None, :] < N)
    x = tl.load(x_ptr + om[:, None] * sxm + on[None, :] * sxn, mask=mask)
    tl.store(out_ptr + om[:, None] * som + on[None, :] * son, x + (om[:, None] == 3).to(x.dtype), mask=mask)


def reference(x_ptr, **_):
    return x_ptr.clone()
"""


def test_wrong_result_in_a_column_major_output_is_found(gfxhound_bin, tmp_path):
    (tmp_path / "copy2d.py").write_text(COPY2D)
    launch = ("M: 4..40; N: 1..16; x_ptr: fp16[M, N]; out_ptr: fp16[M, N] out col; sxm: x_ptr.stride(0); "
              "sxn: x_ptr.stride(1); som: out_ptr.stride(0); son: out_ptr.stride(1); BM: 16; BN: 16; "
              "grid: cdiv(M, BM); reference: reference")
    proc = run_cli(gfxhound_bin, "fuzz", "--backend", "interpret", "--kernel", f"{tmp_path}/copy2d.py::copy2d",
                   "--launch", launch, "--budget", "4", "--workers", "1", "--corpus", str(tmp_path / "c"), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["verdicts"] == {"miscompile": 4}


def test_wrong_kernel_is_one_finding_whose_repro_replays_it(gfxhound_bin, tmp_path):
    path = write_kernel(tmp_path, WRONG)
    proc = run_cli(gfxhound_bin, "fuzz", "--backend", "interpret", "--kernel", f"{path}::scaled_add",
                   "--launch", LAUNCH, "--budget", "12", "--workers", "2", "--corpus", str(tmp_path / "c"),
                   "--json", "--seed", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    wrong = summary["verdicts"].get("miscompile", 0)
    assert wrong >= 6 and wrong + summary["verdicts"].get("pass", 0) == 12, summary["verdicts"]  # n <= 77 passes
    assert len(summary["findings"]) == 1  # one kernel, one bug: every wrong launch folds into one finding
    finding = next((tmp_path / "c").glob("*/finding.json"))
    example = finding.parent / "examples" / json.loads(finding.read_text())["examples"][0]
    assert "[77]: got" in json.loads((example / "run.json").read_text())["message"]
    repro = example / "repro.py"
    got = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert got.returncode == 1 and "bug present" in got.stdout, got.stdout + got.stderr
    fixed = tmp_path / "fixed.py"  # the same launch of the corrected kernel: the repro says the bug is gone
    fixed.write_text(repro.read_text().replace(repr(WRONG)[1:-1], ""))
    got = subprocess.run([sys.executable, str(fixed)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert got.returncode == 0 and "bug absent" in got.stdout, got.stdout + got.stderr


def test_an_emulated_finding_of_a_user_kernel_replays_on_the_cpu_executor(gfxhound_bin, tmp_path):
    """An emulate campaign's wrong result in a kernel file: its repro compiles the launch for the finding's AMD
    target and runs it on the embedded CPU executor, on this CPU-only machine (it used to ask for a GPU, and on an
    NVIDIA machine ran NVIDIA's compile of the kernel instead, which has not the AMD bug: "bug absent")."""
    path = write_kernel(tmp_path, WRONG)
    proc = run_cli(gfxhound_bin, "fuzz", "--backend", "emulate", "--kernel", f"{path}::scaled_add",
                   "--launch", LAUNCH, "--budget", "6", "--workers", "1", "--corpus", str(tmp_path / "c"),
                   "--json", "--seed", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["verdicts"].get("miscompile", 0) >= 1, proc.stdout[-2000:]
    finding = next((tmp_path / "c").glob("*/finding.json"))
    example = finding.parent / "examples" / json.loads(finding.read_text())["examples"][0]
    repro = example / "repro.py"
    assert "gfxhound's CPU executor (gfx942)" in repro.read_text()
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # as on a machine without an AMD GPU, whatever this one has
    got = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=env)
    assert got.returncode == 1 and "bug present" in got.stdout, got.stdout + got.stderr
    fixed = tmp_path / "fixed.py"
    fixed.write_text(repro.read_text().replace(repr(WRONG)[1:-1], ""))
    got = subprocess.run([sys.executable, str(fixed)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=env)
    assert got.returncode == 0 and "bug absent" in got.stdout, got.stdout + got.stderr


@pytest.mark.gpu
def test_real_world_shaped_kernel_on_a_gpu(gfxhound_bin, tmp_path):
    proc = run_cli(gfxhound_bin, "fuzz", "--backend", "device", "--kernel", GEMM, "--launch", GEMM_LAUNCH,
                   "--budget", "200", "--workers", "8", "--corpus", str(tmp_path / "c"), "--json", "--seed", "4")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["verdicts"] == {"pass": 200}, summary["findings"]
    assert summary["execution"]["mismatches"] == 0 and summary["execution"]["compared"] > 200


SCALED = """import triton
import triton.language as tl


@triton.jit
def scaled(a_ptr, b_ptr, bs_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m, offs_n, offs_k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    b_scale = tl.load(bs_ptr + offs_n[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a, None, "fp16", b, b_scale, "e5m2")
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c)
"""


def test_an_ice_in_a_user_kernel_is_drafted_with_its_file_and_launch(gfxhound_bin, tmp_path):
    """Triton 3.9.0's live AccelerateMatmul ICE (corpus/b0f7a29c2d2a6366: tl.dot_scaled with an unscaled fp16 side
    and matrix_instr_nonkdim=32 on gfx950), reached through a user's kernel whose spec names the knob: the same
    signature as the generated kernels', and a draft built on the user's file and the launch, reproduced."""
    (tmp_path / "scaled.py").write_text(SCALED)
    launch = ("M: 16; N: 16; K: 32; a_ptr: fp16[M, K]; b_ptr: fp8e5[K, N]; bs_ptr: e8m0[N, K // 32]; "
              "c_ptr: fp32[M, N] out; grid: 1; matrix_instr_nonkdim: 32; knobs: off")
    corpus = tmp_path / "c"
    proc = run_cli(gfxhound_bin, "fuzz", "--target", "gfx950", "--kernel", f"{tmp_path}/scaled.py::scaled",
                   "--launch", launch, "--budget", "2", "--workers", "1", "--corpus", str(corpus), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["verdicts"] == {"ice": 2} and [f["id"] for f in summary["findings"]] == ["b0f7a29c2d2a6366"]
    proc = run_cli(gfxhound_bin, "report", "b0f7a29c2d2a6366", "--corpus", str(corpus), "--out", str(tmp_path / "d"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    draft = (tmp_path / "d" / "draft.md").read_text()
    assert draft.splitlines()[1] == "# [AMD][gfx950] TritonAMDGPUAccelerateMatmul fails without a diagnostic of its own"
    assert "def scaled(" in draft and "matrix_instr_nonkdim=32" in draft and "b_ptr: fp8e5[32, 16]" in draft
    assert "checked before this draft was written" in draft and "Did not reproduce" not in draft
    assert "no undefined behaviour" not in draft.lower()
    from gfxhound.report.draft_text import code_blocks
    block = next(text for lang, text in code_blocks(draft) if lang == "python")  # runs as pasted, fails the same way
    (tmp_path / "pasted.py").write_text(block)
    got = subprocess.run([sys.executable, str(tmp_path / "pasted.py")], capture_output=True, text=True, timeout=300)
    assert got.returncode != 0 and "TritonAMDGPUAccelerateMatmul" in got.stderr, got.stderr[-2000:]
