"""Real cross-compiles for AMD targets, with the runtime's argument specialisation mirrored."""
import json
from pathlib import Path

import pytest

from gfxhound.fuzz.capabilities import assume_all, introspect
from gfxhound.oracle.compile_task import run_compile
from gfxhound.spec import KernelSpec, Launch

TARGETS = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250"]


def matmul(huge_b=False, k_size=64, env=None):
    body = [{"op": "full", "args": [], "attrs": {"dtype": "fp32", "axes": "MN", "value": 0}},
            {"for": {"trip": ["cdiv", "K"], "stages": None, "carry": [0], "yield": [0], "body": [
                {"op": "load", "args": [1], "attrs": {"masked": False}},
                {"op": "load", "args": [1], "attrs": {"masked": False}},
                {"op": "dot_acc", "args": [1, 0, 0], "attrs": {}}]}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    inputs = [{"dtype": "fp16", "axes": "MK", "order": "row"},
              {"dtype": "fp16", "axes": "KN", "order": "col", **({"huge": True} if huge_b else {})}]
    return KernelSpec(blocks={"M": 32, "N": 32, "K": 32}, sizes={"M": 64, "N": 64, "K": k_size}, grid="MN",
                      inputs=inputs, scalars=[], outputs=[{"dtype": "fp32", "axes": "MN", "mode": "store"}],
                      body=body, launch=Launch(num_warps=4, num_stages=2, env=dict(env or {})))


def compile_spec(tmp_path, spec, arch, worker_env, monkeypatch):
    for key, value in worker_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    task = {"spec": spec.to_json(), "caps": assume_all(arch).to_json(), "arch": arch,
            "task_dir": str(tmp_path / "task"), "stderr_path": str(tmp_path / "stderr.txt")}
    return run_compile(task), tmp_path / "task" / "ir"


@pytest.mark.parametrize("arch", TARGETS)
def test_matmul_compiles_for_every_target_with_ir_and_resources(tmp_path, arch, worker_env, monkeypatch):
    if not introspect(arch).has("target"):
        pytest.skip(f"{arch} is not a target of this triton")
    result, ir = compile_spec(tmp_path, matmul(), arch, worker_env, monkeypatch)
    assert result["status"] == "ok", (tmp_path / "stderr.txt").read_text()[-3000:]
    for stage in ("ttir", "ttgir", "llir", "amdgcn"):
        assert (ir / f"kernel.{stage}").stat().st_size > 0
    res = result["resources"]
    assert res["vgpr_count"] > 0 and res["sgpr_count"] > 0 and 1 <= res["occupancy"] <= 32
    assert result["applied"]["num_warps"] == 4
    stages = (tmp_path / "stderr.txt").read_text()
    assert "##gfxhound-stage ttgir" in stages and "##gfxhound-stage amdgcn" in stages


def test_specialisation_mirrors_the_runtime(tmp_path, worker_env, monkeypatch):
    """Pointers get divisibility and (buffer ops on) pointer_range; a >2 GB view gets no pointer_range;
    ints divisible by 16 get divisibility; ints equal to 1 become constexprs (stride 1 of a contiguous dim)."""
    result, ir = compile_spec(tmp_path, matmul(huge_b=True, env={"AMDGCN_USE_BUFFER_OPS": "1"}), "gfx942",
                              worker_env, monkeypatch)
    assert result["status"] == "ok"
    header = (ir / "kernel.ttir").read_text().split("tt.func", 1)[1].split(") attributes", 1)[0]
    params = [p.strip() for p in header[header.index("(") + 1:].split("%")[1:]]
    by_position = params  # 3.9 names them after the source (%in_0), older releases %arg0: use positions
    in_0, s_in_0_0, in_1 = by_position[0], by_position[1], by_position[2]
    assert "tt.pointer_range = 32" in in_0 and "tt.divisibility = 16" in in_0
    assert "tt.pointer_range" not in in_1 and "tt.divisibility = 16" in in_1 and "ptr" in in_1
    # s_in_0_0 = K = 64 is divisible by 16; s_in_0_1 = 1 became a constexpr, so in_1 follows s_in_0_0 directly
    assert "i32 {tt.divisibility = 16" in s_in_0_0
    assert "amdg.buffer_store" in (ir / "kernel.ttgir").read_text()  # the buffer-op code path was compiled


def test_buffer_ops_off_leaves_global_memory_ops(tmp_path, worker_env, monkeypatch):
    result, ir = compile_spec(tmp_path, matmul(env={"AMDGCN_USE_BUFFER_OPS": "0"}), "gfx942", worker_env,
                              monkeypatch)
    assert result["status"] == "ok"
    assert "amdg.buffer_" not in (ir / "kernel.ttgir").read_text()
    assert "global_store" in (ir / "kernel.amdgcn").read_text()


def test_the_worker_cache_is_emptied_after_each_kernel(tmp_path, worker_env, monkeypatch):
    for key, value in worker_env.items():
        monkeypatch.setenv(key, value)
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    task = {"spec": matmul().to_json(), "caps": assume_all("gfx942").to_json(), "arch": "gfx942",
            "task_dir": str(tmp_path / "task"), "stderr_path": str(tmp_path / "stderr.txt")}
    assert run_compile(dict(task))["status"] == "ok"
    assert any(cache.iterdir())  # Triton did write its cache
    assert run_compile(dict(task, empty_cache=True))["status"] == "ok"
    assert not any(cache.iterdir())
