"""A Triton kernel with a device assertion runs on the machine when the assertion holds: the address of the
assertion's printf format string (a data object, `printfFormat_0@rel32@lo+4`) is taken only on the failing path,
and only running that instruction is unresolved (machine_kernel._decoded). Before, every kernel with an
assertion was refused when it was decoded: 481 of 3,112 machine-code runs of the Triton 3.9.0 device campaigns
(gfx942 and gfx950) were unresolved for that alone."""
from pathlib import Path

import numpy as np
import pytest

from gfxhound.executors.amdgcn.abi import kernel_abis
from gfxhound.executors.amdgcn.codegen import Assembly
from gfxhound.oracle.crosscheck import run_machine
from gfxhound.oracle.crosscheck_launch import make_launch

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
LLD = "/usr/lib/llvm-22/bin/ld.lld"


@triton.jit
def checked(a, o, n):
    i = tl.arange(0, 64)
    # debug mode asserts that the add and the multiply do not overflow (messages in format strings): both hold for
    # a small n
    tl.store(o + i, ((tl.load(a + i) & 0xFFFF) + n) * 2)


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx950"])
@pytest.mark.parametrize("n, holds", [(5, True), (0x7FFFFFFF, False)])
def test_an_assertion_that_holds_runs_and_one_that_fails_is_unresolved(mcpu, n, holds, tmp_path, monkeypatch):
    from triton.backends.compiler import GPUTarget
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    if Path(LLD).exists():
        monkeypatch.setenv("TRITON_HIP_LLD_PATH", LLD)
    src = triton.compiler.ASTSource(checked, signature={"a": "*i32", "o": "*i32", "n": "i32"})
    text = triton.compile(src, target=GPUTarget("hip", mcpu, 64), options={"debug": True}).asm["amdgcn"]
    assert "printfFormat_0@rel32@lo" in text and "s_swappc_b64" in text, "no format string addressed"
    abi = kernel_abis(text)["checked"]
    params = [((("p", 1) if a.value_kind == "global_buffer" else ("i", 8 * a.size)), a.name or str(k))
              for k, a in enumerate(a for a in abi.kernargs if not a.hidden)]
    extra = "; ".join(f"arg{k}: u32[4]" for k in range(3, len(params)))   # Triton's scratch pointers
    launch = make_launch(f"arg0: u32[64]; arg1: u32[64] out; arg2: {n}; {extra}; grid: 1; block: 64", params, 0,
                         None)
    run = run_machine("checked", Assembly(text, mcpu, "s", path="checked.s"), "checked", launch, "forward")
    if holds:
        assert not run.unresolved and not run.fault, (run.unresolved, run.fault)
        a = np.asarray(launch.args[launch.names.index("arg0")]).view(np.int32).ravel()
        out = np.asarray(run.outputs["arg1"]).view(np.int32).ravel()
        assert (out == ((a & 0xFFFF) + n) * 2).all(), (a[:8], out[:8])
    else:   # the failing path: printf and a trap, neither modelled; never a wrong result
        assert run.unresolved, run.outputs
