"""LLVM IR reduction with the real llvm-reduce and llc (Debian llvm-22): the property is kept, never "any crash"."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gfxhound.reduce.llvm_ir import ReduceError, asm_property, reduce_ir

LLC = "/usr/lib/llvm-22/bin/llc"
LLVM_REDUCE = "/usr/lib/llvm-22/bin/llvm-reduce"
ROOT = Path(__file__).resolve().parents[2]
LLC_FINDING = "28f1b1b801f666bf"  # Debian LLVM 22.1.8 llc: "Do not know how to split this operator's operand" on gfx950

pytestmark = pytest.mark.skipif(not (Path(LLC).exists() and Path(LLVM_REDUCE).exists()),
                                reason="needs Debian's llvm-22 (make tools)")

# An AMDGPU kernel with a lot going on, and one f64 fma among it: the planted property is "v_fma_f64 in the code".
PLANTED = """
target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n) {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %id to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %x = load float, ptr addrspace(1) %p
  %y = fmul float %x, 3.0
  %z = fadd float %y, 1.0
  %c = icmp slt i32 %id, %n
  br i1 %c, label %then, label %done
then:
  %q = getelementptr double, ptr addrspace(1) %out, i64 %idx
  %d = fpext float %z to double
  %e = call double @llvm.fma.f64(double %d, double %d, double 2.0)
  %s = fmul float %z, %z
  %t = fptosi float %s to i32
  %u = add i32 %t, %id
  %w = sitofp i32 %u to double
  %v = fadd double %e, %w
  store double %v, ptr addrspace(1) %q
  br label %done
done:
  %r = phi float [ %z, %then ], [ %y, %entry ]
  %o = getelementptr float, ptr addrspace(1) %in, i64 %idx
  store float %r, ptr addrspace(1) %o
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare double @llvm.fma.f64(double, double, double)
"""


def test_a_planted_instruction_property_is_reduced_to_a_few_lines(tmp_path):
    source = tmp_path / "planted.ll"
    source.write_text(PLANTED)
    result = reduce_ir(source, asm_property(r"^\s*v_fma_f64", "gfx942", LLC), tmp_path / "work",
                       llvm_reduce=LLVM_REDUCE, jobs=2, timeout_s=600)
    reduced = (tmp_path / "work" / "reduced.ll").read_text()
    assert result.lines_after < result.lines_before and result.lines_after <= 12, reduced
    assert "llvm.fma.f64" in reduced
    asm = subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O3", "-o", "-",
                          str(tmp_path / "work" / "reduced.ll")], capture_output=True, text=True).stdout
    assert "v_fma_f64" in asm


def test_an_input_without_the_property_is_refused(tmp_path):
    source = tmp_path / "planted.ll"
    source.write_text(PLANTED)
    with pytest.raises(ReduceError):
        reduce_ir(source, asm_property(r"v_mfma_", "gfx942", LLC), tmp_path / "work", llvm_reduce=LLVM_REDUCE)


@pytest.mark.slow
def test_a_real_llc_crash_from_a_campaign_reduces_with_its_signature(tmp_path, gfxhound_bin):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / LLC_FINDING, corpus / LLC_FINDING)
    proc = subprocess.run([gfxhound_bin, "reduce", LLC_FINDING[:8], "--corpus", str(corpus), "--json", "-j", "2"],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["property"]["signature"] == LLC_FINDING
    assert result["lines_before"] > 500 and result["lines_after"] <= 20
    # the record names the code generator: Debian's llc with Triton's flags, the command that reproduces
    assert result["codegen"]["kind"] == "llc" and "LLVM version 22" in result["codegen"]["version"]
    assert result["codegen"]["command"] == result["command"] and "-mcpu=gfx950" in result["command"]
    dest = corpus / LLC_FINDING / "reduced" / "llvm-ir"
    assert (dest / "reduced.ll").exists() and (dest / "command.txt").exists()
    # the recorded command reproduces the same failure
    cmd = (dest / "command.txt").read_text().split()
    out = subprocess.run(cmd, cwd=dest, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Do not know how to split this operator's operand" in out.stderr
    # a second reduction keeps the first one
    proc = subprocess.run([gfxhound_bin, "reduce", LLC_FINDING, "--corpus", str(corpus), "--timeout", "1"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and (corpus / LLC_FINDING / "reduced" / "llvm-ir.1" / "reduced.ll").exists()


def test_reduce_refuses_what_it_cannot_reduce_in_one_line(tmp_path, gfxhound_bin):
    """A Triton 3.4.0 crash does not reproduce with the installed release: say which release to use."""
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "050407154b648f34", corpus / "050407154b648f34")
    proc = subprocess.run([gfxhound_bin, "reduce", "05040715", "--corpus", str(corpus)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "triton-3.4.0" in proc.stderr
