"""The check a pasted reproducer ends in: exit 1 only when the described failure shows, 0 when the kernel compiles,
125 for anything else (an exception outside the compile included: Python's own exit for one is 1, "present");
read by bisection through the same protocol. Real Triton 3.9.0 compiles of the reduced kernel of corpus/01f5c6fa
(an rtz downcast to tl.float8e5b16 that trips an assertion in the AMD lowering), and stand-in compiles that print
what a failing pass prints, for the checks that need no Triton."""
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from gfxhound.corpus_store import Corpus
from gfxhound.oracle.repro.snippet import constants, triton_snippet, with_check
from gfxhound.protocol import ABSENT, EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT, PRESENT, SKIP, outcome, run_repro
from gfxhound.report.draft_check import bug_parts
from gfxhound.report.draft_text import prune_unused

ROOT = Path(__file__).resolve().parents[2]
SIG = "01f5c6fa9ca3e32d"
needs_39 = pytest.mark.skipif(triton.__version__ != "3.9.0", reason="the assertion is Triton 3.9.0's")


@pytest.fixture(scope="module")
def bare():
    """The finding's reduced kernel and the compile the runtime would do, as the draft generator writes it."""
    reduced = Corpus(ROOT / "corpus").reduction(SIG, "spec")
    return triton_snippet(prune_unused(reduced.kernel.read_text()), constants(reduced.repro.read_text()))


@pytest.fixture(scope="module")
def message():
    return Corpus(ROOT / "corpus").get(SIG).message


def _run(code: str, tmp_path: Path, *flags):
    (tmp_path / "snippet.py").write_text(code)
    return subprocess.run([sys.executable, *flags, "snippet.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)


def test_the_bug_is_the_assertions_own_words(message):
    assert bug_parts(message) == ["number of elements must be greater than zero"]


@needs_39
def test_the_snippet_exits_1_when_the_described_assertion_shows(bare, message, tmp_path):
    run = _run(with_check(bare, bug_parts(message)), tmp_path)
    assert run.returncode == EXIT_PRESENT == 1, run.stdout + run.stderr[-2000:]
    assert run.stdout.startswith("reproduced: ") and "number of elements must be greater than zero" in run.stdout
    assert "Assertion `numElements" in run.stderr  # the compile's own output, for the reader
    assert outcome(run.returncode) == PRESENT


@needs_39
def test_another_failure_is_125_and_bisection_skips_it(bare, tmp_path):
    """The same compile, expecting another failure: what a release that fails differently looks like."""
    (tmp_path / "snippet.py").write_text(with_check(bare, ["Unsupported conversion from 'f32' to 'f8E5M2FNUZ'"]))
    run = _run((tmp_path / "snippet.py").read_text(), tmp_path)
    assert run.returncode == EXIT_CANNOT_TEST == 125, run.stdout + run.stderr[-2000:]
    assert run.stdout.startswith("other failure (cannot test): ") and "number of elements" in run.stdout
    judged, _ = run_repro(sys.executable, tmp_path / "snippet.py", 600)  # what `gfxhound bisect --repro` runs
    assert judged == SKIP


@needs_39
def test_a_kernel_that_compiles_exits_0(bare, message, tmp_path):
    fine = bare.replace('fp_downcast_rounding="rtz"', 'fp_downcast_rounding="rtne"')
    assert fine != bare
    run = _run(with_check(fine, bug_parts(message)), tmp_path)
    assert run.returncode == EXIT_ABSENT == 0, run.stdout + run.stderr[-2000:]
    assert run.stdout.strip() == "not reproduced: the kernel compiled" and outcome(run.returncode) == ABSENT


def test_a_python_without_triton_cannot_test(bare, message, tmp_path):
    run = _run(with_check(bare, bug_parts(message)), tmp_path, "-S")  # -S: no site-packages, no triton
    assert run.returncode == 125 and run.stdout.startswith("other failure (cannot test): "), run.stderr[-2000:]


def test_the_compile_moves_under_the_child_guard_and_the_kernel_stays_first(bare):
    pasted = with_check(bare, ["x"])
    kernel, guard, check = pasted.index("def kernel("), pasted.index('if "--child" in sys.argv:'), \
        pasted.index("BUG = ")
    assert kernel < guard < check
    assert "\n    triton.compile(src" in pasted and "\ntriton.compile(" not in pasted
    assert pasted.count("sys.exit(1)") == 1 and "sys.excepthook = cannot_test" in pasted
    assert pasted.index("sys.excepthook = cannot_test") < pasted.index("import triton")  # it covers the imports
    assert with_check("import triton\nprint(triton.__version__)\n", ["x"]) is None  # nothing to check: left alone


def test_a_hang_is_the_bug_when_the_finding_is_one(bare):
    pasted = with_check(bare, None, timeout=30)
    assert "BUG" not in pasted and 'print("reproduced: the compile did not finish in 30 s")' in pasted


@pytest.mark.parametrize("message, parts", [
    ("LLVM ERROR: Cannot select: t2111: f64,ch = AMDGPUISD::BUFFER_ATOMIC_SWAP<(load store (s64) on %ir.5)> t0",
     ["LLVM ERROR: Cannot select", "f64,ch = AMDGPUISD::BUFFER_ATOMIC_SWAP"]),
    ("RuntimeError: PassManager::run failed | error: Failures have been detected while processing an MLIR pass "
     "pipeline [pass TritonAMDGPUAccelerateMatmul]",
     ["Failures have been detected while processing an MLIR pass pipeline", "TritonAMDGPUAccelerateMatmul"]),
    ("RuntimeError: PassManager::run failed | python3: /x/llvm/Support/Casting.h:566: decltype(auto) llvm::cast("
     "const From &) [To = mlir::triton::gpu::AMDMfmaEncodingAttr, From = mlir::Attribute]: Assertion `isa<To>(Val) "
     "&& \"cast<Ty>() argument of incompatible type!\"' failed.",
     ["cast<Ty>() argument of incompatible type!", "To = mlir::triton::gpu::AMDMfmaEncodingAttr"]),
    ("RuntimeError: failed to translate module to LLVM IR | error: could not find LLVM intrinsic: "
     "\"llvm.amdgcn.raw.ptr.buffer.atomic.exch\"",
     ["could not find LLVM intrinsic: \"llvm.amdgcn.raw.ptr.buffer.atomic.exch\""]),
])
def test_the_parts_leave_out_what_changes_from_run_to_run(message, parts):
    assert bug_parts(message) == parts


def test_a_generic_assertion_takes_the_failing_pass_from_the_output():
    message = ("RuntimeError: PassManager::run failed | python3: /x/ADT/SmallVector.h:292: reference "
               "llvm::SmallVectorTemplateCommon<T>::operator[](size_type): Assertion `idx < size()' failed.")
    output = "note: Pipeline failed while executing [`TritonAMDGPUStreamPipeline` on 'builtin.module' operation]"
    assert bug_parts(message, output) == ["idx < size()", "TritonAMDGPUStreamPipeline"]


def _fake(printed: str) -> str:
    """A snippet whose "compile" prints `printed` to stderr and raises, as a failing pass pipeline does."""
    return ("import sys\n\n\ndef compile_it():\n    sys.stderr.write(" + repr(printed) + ")\n"
            "    raise RuntimeError('PassManager::run failed')\n\n\ncompile_it()\n")


BARE = ("<x>:1:1: error: Failures have been detected while processing an MLIR pass pipeline\n"
        "<x>:1:1: note: Pipeline failed while executing [`TritonAMDGPUAccelerateMatmul` on 'builtin.module' "
        "operation]: reproducer generated at `std::errs, please share the reproducer above with Triton project.`\n")
PIPELINE = ["Failures have been detected while processing an MLIR pass pipeline", "TritonAMDGPUAccelerateMatmul"]


@pytest.mark.parametrize("printed, rc, said", [
    (BARE, EXIT_PRESENT, "reproduced: TritonAMDGPUAccelerateMatmul failed without a diagnostic of its own"),
    # the same pass failing with a diagnostic of its own (Triton 3.4 to 3.7 on a bf16 operand with a scale)
    ("<x>:3:9: error: 'amdg.upcast_mxfp' op NYI: fpType must be E2M1, E4M3, or E5M2\n" + BARE, EXIT_CANNOT_TEST,
     "other failure (cannot test): <x>:3:9: error: 'amdg.upcast_mxfp' op NYI: fpType must be E2M1, E4M3, or E5M2"),
    ("python: Foo.cpp:9: void f(): Assertion `x' failed.\n" + BARE, EXIT_CANNOT_TEST,
     "other failure (cannot test): python: Foo.cpp:9: void f(): Assertion `x' failed."),
])
def test_a_pass_that_fails_without_saying_why_is_the_bug_only_alone(printed, rc, said, tmp_path):
    """b0f7a29c: a SIGFPE in BlockedToMFMA that MLIR's crash recovery turns into a bare pipeline failure. Its parts
    (the pipeline failure, the pass) match any failure of that pass; `alone` makes any other diagnostic another
    failure, so an older release's 'op NYI' reads 125, not 1."""
    run = _run(with_check(_fake(printed), PIPELINE, start=r"compile_it\(\)", alone=True), tmp_path)
    assert run.returncode == rc and run.stdout.strip().splitlines()[-1] == said, run.stdout + run.stderr
    loose = _run(with_check(_fake(printed), PIPELINE, start=r"compile_it\(\)"), tmp_path)
    assert loose.returncode == EXIT_PRESENT, loose.stdout  # without it, every one of them read as the bug


def test_an_exception_outside_the_compile_is_125_with_one_line(tmp_path):
    """A kernel this Triton cannot even define (an exception in the parent, before any child runs): one line, 125,
    not Python's 1 and a traceback."""
    code = "import sys\n\nraise KeyError('no such dtype')\n\n\ndef compile_it():\n    pass\n\n\ncompile_it()\n"
    run = _run(with_check(code, ["x"], start=r"compile_it\(\)"), tmp_path)
    assert run.returncode == EXIT_CANNOT_TEST, run.stdout + run.stderr
    assert run.stdout.strip() == "other failure (cannot test): KeyError: 'no such dtype'" and "Traceback" not in \
        run.stderr


def test_parts_found_only_across_lines_still_exit_1_with_a_verdict(tmp_path):
    """Every part in the output, the first on no single line (a message wrapped by the compiler): still the bug,
    and a verdict line rather than a StopIteration (which Python would turn into exit 1 with a traceback)."""
    run = _run(with_check(_fake("first half\nsecond half\n"), ["half\nsecond"], start=r"compile_it\(\)"), tmp_path)
    assert run.returncode == EXIT_PRESENT and run.stdout.startswith("reproduced: "), run.stdout + run.stderr
