"""LLVM IR reduction through the code generator that has the bug (gfxhound/codegen.py, reduce/through.py): a real llc
crash from tests/data/llvm reduced with `gfxhound reduce --ll`, and Triton 3.9's missing `s_waitcnt vmcnt(0)`
before `buffer_inv` (FACTS.md) reduced through its pinned AMD code generator, which Debian's llc does not share.
The call printed for each Triton release is checked against that release's own `make_amdgcn`."""
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.codegen import Codegen, llc_codegen, triton_codegen
from gfxhound.reduce.through import failure_of, memory_model_keys
from gfxhound.reduce.warm import Server, run

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LLC15 = "/usr/lib/llvm-15/bin/llc"
LLC22 = "/usr/lib/llvm-22/bin/llc"
LLVM_REDUCE = "/usr/lib/llvm-22/bin/llvm-reduce"
LLD = "/usr/lib/llvm-22/bin/ld.lld"
KEY = "gfx942: wait-before-inv vmcnt"
ENV = {"TRITON_HIP_LLD_PATH": LLD, "TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore"}

needs_llvm = pytest.mark.skipif(not (Path(LLC22).exists() and Path(LLVM_REDUCE).exists()),
                                reason="needs Debian's llvm-22 (make tools)")

# a kernel every release's LLVM reads (no syntax newer than LLVM 17), with work for the code generator
KERNEL = """
define amdgpu_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n) {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %id to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %x = load float, ptr addrspace(1) %p
  %y = fmul float %x, 3.0
  %z = fadd float %y, 1.0
  %old = atomicrmw fadd ptr addrspace(1) %out, float %z syncscope("agent") acquire
  %q = getelementptr float, ptr addrspace(1) %out, i64 %idx
  store float %old, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""

MAKE_AMDGCN = """
import sys
from triton._C.libtriton import llvm
from triton.backends.amd.compiler import HIPBackend
from triton.backends.compiler import GPUTarget
llvm.init_targets()  # make_llir's first step in a real compile
arch = sys.argv[1]
options = HIPBackend(GPUTarget("hip", arch, 64 if arch.startswith("gfx9") else 32)).parse_options({})
sys.stdout.write(HIPBackend.make_amdgcn(open(sys.argv[2]).read(), {}, options))
"""


def _pythons():
    """This venv's Triton and every older release's venv that is here: the checkout's (Makefile: setup-old) and
    those `gfxhound bisect --triton` cached ($GFXHOUND_CACHE/venvs)."""
    found = {"this": sys.executable}
    cache = Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound") / "venvs"
    for python in sorted([*ROOT.glob(".venv-triton-*/bin/python"), *cache.glob("triton-*/bin/python")]):
        found.setdefault(python.parent.parent.name.split("triton-")[-1], str(python))
    return [pytest.param(python, id=name) for name, python in found.items()]


@pytest.mark.parametrize("python", _pythons())
def test_the_call_each_release_names_is_the_one_its_make_amdgcn_makes(tmp_path, python):
    """The printed `python -c` call, run as printed, gives the assembly the release's own make_amdgcn gives
    (gfx1100 checks 3.5+'s -real-true16 feature, gfx1250 3.8+'s expert scheduling flag); the warm server gives
    the same."""
    ll = tmp_path / "k.ll"
    ll.write_text(KERNEL)
    release = subprocess.run([python, "-c", "import triton; print(triton.__version__)"], capture_output=True,
                             text=True, timeout=120).stdout.strip()
    for arch in ("gfx942", "gfx1100") + (("gfx1250",) if tuple(map(int, release.split(".")[:2])) >= (3, 6) else ()):
        codegen = triton_codegen(python, arch)
        assert codegen.kind == "triton" and codegen.version and codegen.call
        mine = subprocess.run(codegen.command(str(ll)), capture_output=True, text=True, timeout=300, env=dict(
            os.environ, PYTHONWARNINGS="ignore"))
        theirs = subprocess.run([python, "-c", MAKE_AMDGCN, arch, str(ll)], capture_output=True, text=True,
                                timeout=300, env=dict(os.environ, PYTHONWARNINGS="ignore"))
        assert mine.returncode == 0 and theirs.returncode == 0, mine.stderr[-2000:] + theirs.stderr[-2000:]
        assert mine.stdout == theirs.stdout and "global_atomic" in mine.stdout, arch
        with Server(codegen) as server:
            assert server is not None
            warm = run(codegen, ll, 120, server)
        assert warm.status == "ok" and warm.asm == mine.stdout
    if codegen.version.startswith("3.9"):
        assert codegen.revision and "compile_amdgpu(" in codegen.call and codegen.layer == "amd-codegen"
    else:
        assert not codegen.revision and "translate_to_asm(" in codegen.call and codegen.layer == "llvm-codegen"


@needs_llvm
@pytest.mark.slow  # 40-60 s on two busy cores: ~290 candidates, each an llc run and a judge process
@pytest.mark.skipif(not Path(LLC15).exists(), reason="needs Debian's llvm-15 (make tools)")
def test_reduce_ll_keeps_an_llc_crash_and_writes_only_the_output(tmp_path, gfxhound_bin):
    """llc 15's segfault in "Rename Disconnected Subregister Components" (tests/data/llvm): reduced through llc 15
    with the flags as typed (by llvm-22's llvm-reduce); the result lands in the current directory, nothing beside
    the input, and it crashes the same way."""
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    source = Path(shutil.copy(DATA / "llvm" / "segv-llc14-15.ll", tmp_path / "in"))
    proc = subprocess.run([gfxhound_bin, "reduce", "--ll", str(source), "--llc", LLC15, "--llc-args",
                           "-mtriple=amdgcn-amd-amdhsa -mcpu=gfx900 -O2", "--json", "-j", "2"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    out = tmp_path / "out" / "segv-llc14-15.reduced.ll"
    assert result["output"] == str(out) and out.exists()
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["segv-llc14-15.ll"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["segv-llc14-15.reduced.ll"]
    assert result["lines_after"] < result["lines_before"], out.read_text()
    assert result["codegen"]["kind"] == "llc" and result["codegen"]["version"].startswith("LLVM version 15")
    assert result["property"]["stage"] == "llc-verify" and \
        "Rename Disconnected Subregister Components" in result["property"]["normalised"]
    codegen = llc_codegen(LLC15, ["-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx900", "-O2"])
    before, after = codegen.run(source, 120), codegen.run(out, 120)
    assert before.status == after.status == "failed"
    assert failure_of(after)["normalised"] == failure_of(before)["normalised"]
    # the printed command reproduces it, run where the output is
    command = shlex.split(result["reproduce"])
    crash = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path / "out")
    assert crash.returncode != 0 and "Rename Disconnected Subregister Components" in crash.stderr


@needs_llvm
def test_reduce_ll_refuses_what_does_not_crash_in_one_line(tmp_path, gfxhound_bin):
    ll = tmp_path / "k.ll"
    ll.write_text(KERNEL)
    proc = subprocess.run([gfxhound_bin, "reduce", "--ll", str(ll), "--llc-args", "-mcpu=gfx942"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "compiles without a crash" in proc.stderr and "--expect" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.ll"]


def _memory_model_finding(tmp_path):
    from gfxhound.campaign import Campaign, CampaignConfig
    from gfxhound.spec import KernelSpec
    spec = KernelSpec.loads((DATA / "memory_model_spec.json").read_text())
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), kernels=1, workers=1, timeout=120,
                            worker_env=ENV)
    stats = Campaign(config, specs=[spec]).run()
    (finding,) = stats.findings.values()
    assert finding["normalised"] == KEY
    return finding["id"]


@needs_llvm
@pytest.mark.slow  # about 60 s: a one-kernel campaign, then ~40 s of reduction
def test_the_buffer_inv_defect_reduces_through_triton_39s_own_code_generator(tmp_path, gfxhound_bin):
    """Triton 3.9's pinned AMD code generator drops the wait before an acquire's buffer_inv when the earlier
    vector-memory events are no-return atomics: the kernel's LLVM IR, reduced through that code generator with
    `--level ir`, is a handful of lines that still lose the wait with it, and keep it with Debian's llc 22."""
    import triton
    if not triton.__version__.startswith("3.9"):
        pytest.skip("needs Triton 3.9 (the pinned AMD code generator)")
    signature = _memory_model_finding(tmp_path)
    proc = subprocess.run([gfxhound_bin, "reduce", signature[:8], "--level", "ir", "--corpus",
                           str(tmp_path / "corpus"), "--json", "-j", "2"], capture_output=True, text=True,
                          timeout=1800, cwd=tmp_path, env=dict(os.environ, **ENV))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    dest = Path(result["output"])
    reduced = (dest / "reduced.ll").read_text()
    assert result["lines_after"] <= 20 < result["lines_before"], reduced
    assert reduced.count("atomicrmw") >= 1, reduced
    assert result["codegen"]["kind"] == "triton" and result["codegen"]["revision"]
    assert result["layer"] == "amd-codegen" and result["property"]["key"] == KEY
    # the recorded command, run as written where the reduction lies, still loses the wait
    command = (dest / "command.txt").read_text()
    asm = subprocess.run(["sh", "command.txt"], capture_output=True, text=True, timeout=300, cwd=dest).stdout
    assert "compile_amdgpu(" in command and KEY in memory_model_keys(asm, "gfx942", reduced)
    # Debian's llc keeps it (why the reduction must run Triton's code generator)
    llc = llc_codegen(LLC22, ["-mcpu=gfx942", "-O3"]).run(dest / "reduced.ll", 120)
    if llc.status == "ok":
        assert KEY not in memory_model_keys(llc.asm, "gfx942", reduced)
    # polished like a hand-written test case: no datalayout, no atomic on a null pointer
    assert "datalayout" not in reduced and "null" not in reduced, reduced
    # the issue draft goes to LLVM, with the reduced IR, the call that shows it, and the missing wait
    proc = subprocess.run([gfxhound_bin, "report", signature[:8], "--corpus", str(tmp_path / "corpus")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=dict(os.environ, **ENV))
    assert proc.returncode == 0, proc.stderr[-2000:]
    draft = next((tmp_path / "corpus").glob("*/draft/draft.md")).read_text()
    assert draft.startswith("<!-- upstream: llvm/llvm-project -->"), draft[:200]
    assert "compile_amdgpu(" in draft and "atomicrmw" in draft and "missing s_waitcnt vmcnt(0) between" in draft
    print(reduced)  # the reduced IR, for the log of a slow run


def test_a_codegen_names_itself_and_round_trips(tmp_path):
    codegen = llc_codegen(LLC22, ["-mcpu=gfx90a"]) if Path(LLC22).exists() else None
    if codegen is None:
        pytest.skip("needs Debian's llvm-22")
    assert codegen.args[0] == "-mtriple=amdgcn-amd-amdhsa" and codegen.arch == "gfx90a"
    assert codegen.command("x.ll")[-3:] == ["-o", "-", "x.ll"] and codegen.layer == "external-llc"
    assert Codegen.from_json(json.loads(json.dumps(codegen.to_json()))) == codegen


AMDGCN_CRASH = "93260d1c0e8fc7a2"  # Triton 3.9 on gfx1100: "Cannot select ... AMDGPUISD::BUFFER_ATOMIC_SWAP" (f64)


def _needs_39():
    import triton
    if not triton.__version__.startswith("3.9"):
        pytest.skip("needs Triton 3.9 (the pinned AMD code generator)")


@needs_llvm
def test_an_amdgcn_crash_of_a_finding_reduces_through_its_own_code_generator(tmp_path, gfxhound_bin):
    """A crash in Triton 3.9's pinned AMD code generator (stage amdgcn) reduced with --level ir: the record names
    the code generator, its revision and the command; the draft stays Triton's (no llc reproduces it)."""
    _needs_39()
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / AMDGCN_CRASH, corpus / AMDGCN_CRASH)
    proc = subprocess.run([gfxhound_bin, "reduce", AMDGCN_CRASH[:8], "--level", "ir", "--corpus", str(corpus),
                           "--json", "-j", "2"], capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    dest = Path(result["output"])
    reduced = (dest / "reduced.ll").read_text()
    assert result["lines_after"] < result["lines_before"] and "buffer.atomic.swap.f64" in reduced, reduced
    assert result["codegen"]["kind"] == "triton" and result["codegen"]["revision"] in result["codegen"]["name"]
    assert result["signature"] == AMDGCN_CRASH and result["layer"] == "amd-codegen"
    crash = subprocess.run(["sh", "command.txt"], capture_output=True, text=True, timeout=300, cwd=dest)
    assert crash.returncode != 0 and "AMDGPUISD::BUFFER_ATOMIC_SWAP" in crash.stderr
    from gfxhound.corpus_store import Corpus
    from gfxhound.report.drafts import TRITON, choose_upstream
    assert choose_upstream(Corpus(str(corpus)), Corpus(str(corpus)).get(AMDGCN_CRASH)) == TRITON


@needs_llvm
def test_reduce_ll_through_triton_keeps_what_expect_matches(tmp_path, gfxhound_bin):
    """`gfxhound reduce --ll FILE --codegen triton --mcpu gfx1100 --expect REGEX`, written where -o says."""
    _needs_39()
    source = ROOT / "corpus" / AMDGCN_CRASH / "examples" / "80b7805fdc03f177" / "ir" / "kernel.llir"
    out = tmp_path / "chosen" / "small.ll"
    proc = subprocess.run([gfxhound_bin, "reduce", "--ll", str(source), "--codegen", "triton", "--mcpu", "gfx1100",
                           "--expect", r"Cannot select: .*BUFFER_ATOMIC_SWAP", "-o", str(out), "-j", "2"],
                          capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"wrote {out}" in proc.stdout and "compile_amdgpu" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chosen"]
    codegen = triton_codegen(sys.executable, "gfx1100")
    crashed = codegen.run(out, 120)
    assert crashed.status == "failed" and "BUFFER_ATOMIC_SWAP" in crashed.text
    assert len(out.read_text().splitlines()) < len(source.read_text().splitlines())


@needs_llvm
def test_reduce_ll_keeps_a_memory_model_defect_through_triton(tmp_path, gfxhound_bin):
    """The reduced buffer_inv IR (checked in): Triton 3.9's code generator loses the wait, Debian's llc keeps it,
    and `gfxhound reduce --ll --codegen triton --memory-model` keeps the defect (nothing left to remove); with
    `--codegen llc` the same command keeps llc's own, different defect."""
    _needs_39()
    source = DATA / "llvm" / "buffer-inv-triton39.ll"
    ir = source.read_text()
    triton39 = triton_codegen(sys.executable, "gfx942").run(source, 120)
    assert triton39.status == "ok" and KEY in memory_model_keys(triton39.asm, "gfx942", ir)
    llc = llc_codegen(LLC22, ["-mcpu=gfx942", "-O3"]).run(source, 120)
    assert llc.status == "ok" and KEY not in memory_model_keys(llc.asm, "gfx942", ir)
    proc = subprocess.run([gfxhound_bin, "reduce", "--ll", str(source), "--codegen", "triton", "--memory-model",
                           "--json"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["property"]["key"] == KEY and result["lines_after"] <= result["lines_before"]
    reduced = (tmp_path / "buffer-inv-triton39.reduced.ll").read_text()
    assert reduced.count("atomicrmw") == 2
    # Debian's llc 22.1.8 through the same CLI keeps the other defect it has on this IR: a release's buffer_wbl2
    # directly followed by the atomic (llvm/llvm-project#178316, FACTS.md), a different key
    proc = subprocess.run([gfxhound_bin, "reduce", "--ll", str(source), "--memory-model", "--llc-args",
                           "-mcpu=gfx942", "--json", "-o", "llc.ll"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["property"]["key"] == "gfx942: wait-after-wbl2 vmcnt"
