"""The codegen.py an LLVM draft ships (gfxhound/report/codegen_snippet.py) runs with every Triton release 3.4 on:
it makes the call that release's own `make_amdgcn` makes (3.9's `compile_amdgpu`, 3.4-3.8's
`llvm.translate_to_asm`), so the draft's check can run it at the bisection's last good release. f311e39e's script
(the buffer_inv defect of Triton 3.9's pinned AMD code generator) exits 1 at 3.9.0 and 0 at every older release."""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.oracle.memory_model import Violation
from gfxhound.codegen import triton_codegen
from gfxhound.report.codegen_snippet import codegen_script

ROOT = Path(__file__).resolve().parents[2]
FINDING = ROOT / "corpus" / "f311e39e1081bf24"
WHERE = "LLVM 6bc4aaf6641c56ee104f6200c96a6a571bc77052"  # draft_codegen.py's `where` for f311e39e
VIOLATION = Violation("acquire-agent:wait-before-inv", 0, "global_atomic_smax v0, v1, s[0:1]",
                      "s_waitcnt vmcnt(0) before buffer_inv sc1")
ENV = dict(os.environ, PYTHONWARNINGS="ignore")

# a kernel every release's LLVM reads, with work for the code generator (tests/reduce/test_reduce_codegen.py's)
KERNEL = """
define amdgpu_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n) {
entry:
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %id to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %x = load float, ptr addrspace(1) %p
  %y = fmul float %x, 3.0
  %old = atomicrmw fadd ptr addrspace(1) %out, float %y syncscope("agent") acquire
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
llvm.init_targets()
arch = sys.argv[1]
options = HIPBackend(GPUTarget("hip", arch, 64 if arch.startswith("gfx9") else 32)).parse_options({})
sys.stdout.write(HIPBackend.make_amdgcn(open(sys.argv[2]).read(), {}, options))
"""


def _version(python: str) -> str:
    return subprocess.run([python, "-c", "import triton; print(triton.__version__)"], capture_output=True, text=True,
                          timeout=120, env=ENV).stdout.strip()


def _releases():
    """This venv's Triton and every release venv `gfxhound bisect --triton` cached."""
    found = {"this": sys.executable}
    cache = Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound") / "venvs"
    for python in sorted(cache.glob("triton-*/bin/python")):
        found.setdefault(python.parent.parent.name.split("triton-")[-1], str(python))
    return [pytest.param(python, id=name) for name, python in found.items()]


def _recorded(arch: str) -> dict:
    """A reduction's record of the 3.9 call for `arch`, as `gfxhound reduce --ll` writes it."""
    import triton.backends.amd.compiler as compiler
    if not hasattr(compiler, "compile_amdgpu"):
        pytest.skip("needs Triton 3.9 (compile_amdgpu) in this venv: the drafts record its call")
    return triton_codegen(sys.executable, arch).to_json()


def _f311e39e() -> tuple:
    record = json.loads((FINDING / "reduced" / "llvm-ir" / "reduce.json").read_text())
    return record["codegen"], (FINDING / "reduced" / "llvm-ir" / "reduced.ll").read_text()


def test_the_checked_in_f311e39e_script_is_the_generated_one():
    """corpus/f311e39e1081bf24/draft/codegen.py is regenerated (`gfxhound report f311e39e --force`), not edited."""
    recorded, _ = _f311e39e()
    script = codegen_script(recorded, WHERE, VIOLATION)
    assert script == (FINDING / "draft" / "codegen.py").read_text()
    ast.parse(script)
    assert all(len(line) <= 110 for line in script.splitlines())
    assert 'hasattr(compiler, "compile_amdgpu")' in script and "llvm.translate_to_asm(" in script
    assert "__version__" not in script  # gfx942, no schedule hint: nothing to tell releases apart by version


@pytest.mark.parametrize("python", _releases())
def test_f311e39e_script_exits_1_at_39_and_0_at_each_older_release(tmp_path, python):
    """The non-vacuity `gfxhound report --check` asks for: the fault at 3.9.0, none at 3.4.0-3.8.0 (3.8.0 is
    bisect.json's last good release); never 125 (cannot test) on a release 3.4 on."""
    recorded, ll = _f311e39e()
    (tmp_path / "codegen.py").write_text(codegen_script(recorded, WHERE, VIOLATION))
    (tmp_path / "reduced.ll").write_text(ll)
    proc = subprocess.run([python, "codegen.py", "reduced.ll"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=ENV)
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    if _version(python).startswith("3.9"):
        assert proc.returncode == 1 and last.startswith("reproduced: no s_waitcnt vmcnt(0)"), proc.stdout[-500:]
    else:
        assert proc.returncode == 0 and last.startswith("not reproduced: s_waitcnt vmcnt(0) is between"), \
            proc.stdout[-500:] + proc.stderr[-2000:]
    assert "global_atomic_smax" in proc.stdout and "buffer_inv sc1" in proc.stdout


@pytest.mark.parametrize("python", _releases())
def test_the_script_makes_the_call_each_releases_make_amdgcn_makes(tmp_path, python):
    """The script's compile (a crash draft's child, `codegen.py FILE --child`, prints the assembly) gives what the
    release's own HIPBackend.make_amdgcn gives: gfx942, gfx1100 (3.5+'s -real-true16), gfx1250 (3.8's expert
    scheduling flag; 3.6 on, where LLVM knows the target)."""
    release = tuple(int(x) for x in _version(python).split(".")[:2])
    (tmp_path / "k.ll").write_text(KERNEL)
    for arch in ("gfx942", "gfx1100") + (("gfx1250",) if release >= (3, 6) else ()):
        script = codegen_script(_recorded(arch), "LLVM x", None, "LLVM ERROR: Cannot select", "LLVM ERROR: x")
        (tmp_path / "codegen.py").write_text(script)
        mine = subprocess.run([python, "codegen.py", "k.ll", "--child"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, env=ENV)
        theirs = subprocess.run([python, "-c", MAKE_AMDGCN, arch, "k.ll"], cwd=tmp_path, capture_output=True,
                                text=True, timeout=300, env=ENV)
        assert mine.returncode == 0 and theirs.returncode == 0, mine.stderr[-2000:] + theirs.stderr[-2000:]
        assert mine.stdout == theirs.stdout + "\n" and "global_atomic" in mine.stdout, arch
        parent = subprocess.run([python, "codegen.py", "k.ll"], cwd=tmp_path, capture_output=True, text=True,
                                timeout=300, env=ENV)
        assert parent.returncode == 0 and "not reproduced: the IR compiled" in parent.stdout, arch


def test_release_dependent_arguments_are_written_only_where_a_release_differs():
    """gfx11's features and the attention hint's flag differ by release (version-checked: no helper tells them
    apart); gfx1250's flag asks 3.8's helper where it exists; a call recorded from an older release still gives a
    3.9 branch, through 3.9's own helpers for the triple and flags."""
    base = {"kind": "triton", "arch": "gfx1100", "extra": {"fp_fusion": False, "schedule_hint": "none"},
            "code": 'import sys\nfrom triton._C.libtriton import llvm\nllvm.init_targets()\nsys.stdout.write('
                    'llvm.translate_to_asm(open(sys.argv[1]).read(), "amdgcn-amd-amdhsa", "gfx1100", "-real-true16", '
                    '[], False, False, False))\n', "version": "3.8.0"}
    gfx11 = codegen_script(base, "the LLVM that Triton 3.8.0 bundles", VIOLATION)
    ast.parse(gfx11)
    assert 'compiler.get_amd_codegen_target_triple("gfx1100")' in gfx11 and "enable_fp_fusion=False" in gfx11
    assert 'features = "" if triton.__version__.startswith("3.4.") else "-real-true16"' in gfx11
    assert '"gfx1100", features, [], False, *[False] * falses)' in gfx11 and "import triton\n" in gfx11
    hint = codegen_script(dict(base, arch="gfx942", extra={"schedule_hint": "attention"}), "x", VIOLATION)
    assert 'flags = ["sink-insts-to-avoid-spills"] if triton.__version__.startswith(("3.4.", "3.5.")) else []' \
        in hint and '"gfx942", "", flags, True, *[False] * falses)' in hint
    big = codegen_script(dict(base, arch="gfx1250"), "x", VIOLATION)
    assert 'expert = getattr(compiler, "is_expert_scheduling_enabled", None)' in big
    assert 'flags = ["amdgpu-expert-scheduling-mode"] if expert and expert("gfx1250") else []' in big
    assert "__version__" not in big and "import triton\n" not in big
    for script in (gfx11, hint, big):
        ast.parse(script)
        assert all(len(line) <= 110 for line in script.splitlines()), script
