"""The llc -verify-machineinstrs oracle, with Debian's real llc: ok, cannot-test and a real crash."""
import shutil
from pathlib import Path

import pytest

from gfxhound.compat import LLC_ENDED, llc_verify
from gfxhound.signature import summarise

LLC = "/usr/lib/llvm-22/bin/llc"
MFMA = Path(__file__).resolve().parents[1] / "data" / "mfma_32x32x8f16.ll"
pytestmark = pytest.mark.skipif(not Path(LLC).exists(), reason="needs Debian's llvm-22 (make tools)")


def test_mfma_compiles_where_it_exists():
    assert llc_verify(LLC, "gfx942", MFMA) == ("ok", "")


def test_cannot_select_on_an_arch_without_mfma_is_an_ice_in_llc():
    status, text = llc_verify(LLC, "gfx1100", MFMA)
    assert status == "failed"
    got = summarise(text, LLC_ENDED)
    assert got["verdict"] == "ice" and got["stage"] == "llc-verify"
    assert got["message"] == "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma.f32.32x32x8f16"
    # the same bug on another wave32 arch is a different finding only by arch-free text: same signature
    assert summarise(llc_verify(LLC, "gfx1201", MFMA)[1], LLC_ENDED)["signature"] == got["signature"]


def test_unparsable_ir_and_unknown_processor_are_cannot_test(tmp_path):
    bad = tmp_path / "bad.ll"
    bad.write_text("define void @f() {\n  %x = fadd float -inf, 1.0\n  ret void\n}\n")
    assert llc_verify(LLC, "gfx942", bad)[0] == "unparsable"
    assert llc_verify(LLC, "gfx9999", MFMA)[0] == "unsupported"


def test_missing_llc_is_cannot_test(tmp_path):
    assert llc_verify(str(tmp_path / "no-llc"), "gfx942", MFMA)[0] == "unsupported"


def test_a_module_this_llc_finds_broken_is_version_skew(tmp_path):
    skewed = tmp_path / "skew.ll"  # an intrinsic called with a signature this LLVM does not have
    skewed.write_text("declare <4 x float> @llvm.amdgcn.wmma.f32.16x16x4.f32.v8f32.v2f32(<2 x float>)\n"
                      "define amdgpu_kernel void @k(ptr addrspace(1) %o) {\n"
                      "  %r = call <4 x float> @llvm.amdgcn.wmma.f32.16x16x4.f32.v8f32.v2f32(<2 x float> zeroinitializer)\n"
                      "  store <4 x float> %r, ptr addrspace(1) %o\n  ret void\n}\n")
    status, text = llc_verify(LLC, "gfx1250", skewed)
    assert status == "unparsable", text


def test_the_judge_turns_an_llc_crash_into_an_ice_in_llc_verify():
    from gfxhound.oracle.judge import judge_compile
    status, text = llc_verify(LLC, "gfx1100", MFMA)
    execution = judge_compile({"status": "llc_" + status, "text": text, "duration": 0.5,
                               "resources": {"vgpr_count": 8}, "checks": {"llc": status}},
                              "abc", "gfx1100", "triton-test", {})
    assert execution.verdict == "ice" and execution.stage == "llc-verify"
    assert execution.message.startswith("LLVM ERROR: Cannot select")
    assert execution.checks == {"llc": "failed"} and execution.resources == {"vgpr_count": 8}
