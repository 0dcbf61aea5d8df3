"""The normaliser and failure classification, on texts shaped like the real ones (golden cases)."""
from gfxhound.signature import normalise, summarise, user_error_reason

LLVM_ABORT = """##gfxhound-stage ttir
##gfxhound-stage ttgir
##gfxhound-stage llir
##gfxhound-stage amdgcn
LLVM ERROR: Cannot select: t37: v4f16 = llvm.amdgcn.mfma.f32.32x32x8f16 t12, t5, /tmp/gfxhound-pool-abc/tasks/t17/kernel.py:12:3
"""

CHAINED = """##gfxhound-stage ttir
Traceback (most recent call last):
  File "/x/site-packages/triton/language/core.py", line 42, in wrapper
    return fn(*args, **kwargs)
ValueError: Expected dtype ['fp32', 'fp64'] but got fp16

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/x/site-packages/triton/compiler/code_generator.py", line 1200, in visit_Call
    raise CompilationError(self.jit_fn.src, node, repr(e)) from e
triton.compiler.errors.CompilationError: at 48:15:
    v_3 = tl.exp(v_1)
          ^
"""

PASS_FAILURE = """##gfxhound-stage ttir
##gfxhound-stage ttgir
/tmp/t9/kernel.py:20:12: error: failed to legalize operation 'tt.dot' that was explicitly marked illegal
Traceback (most recent call last):
  File "/x/site-packages/triton/backends/amd/compiler.py", line 300, in make_ttgir
    pm.run(mod)
RuntimeError: PassManager::run failed
"""


def test_normaliser_removes_noise_and_keeps_types():
    text = ("LLVM ERROR: in selection: t37: v4f16 = llvm.amdgcn.mfma.f32.32x32x8f16 %12, %arg3 at "
            "/tmp/x/kernel.py:12:3 #blocked3 tensor<64x32xf16, #mma1> v_12 in_0 0x7fff f32 i1 gfx942")
    out = normalise(text)
    for kept in ("v4f16", "llvm.amdgcn.mfma.f32.32x32x8f16", "f32", "i1", "gfx942", "#blocked", "#mma"):
        assert kept in out
    for gone in ("t37", "%12", "%arg3", "/tmp/x", ":12:3", "#blocked3", "64x32", "v_12", "in_0", "0x7fff"):
        assert gone not in out


def test_same_bug_in_two_kernels_has_one_signature():
    other = LLVM_ABORT.replace("t37", "t99").replace("t12", "t3").replace("t17", "t4").replace(":12:3", ":40:9")
    a, b = summarise(LLVM_ABORT, "signal:6"), summarise(other, "signal:6")
    assert a["signature"] == b["signature"]
    assert a["verdict"] == "ice" and a["stage"] == "amdgcn"
    assert a["message"].startswith("LLVM ERROR: Cannot select")


def test_different_stage_is_a_different_signature():
    moved = LLVM_ABORT.replace("##gfxhound-stage amdgcn\n", "")
    assert summarise(moved, "signal:6")["signature"] != summarise(LLVM_ABORT, "signal:6")["signature"]


def test_chained_compilation_error_takes_the_real_message():
    got = summarise(CHAINED, "exception")
    assert got["message"] == "CompilationError: Expected dtype ['fp32', 'fp64'] but got fp16"
    assert got["verdict"] == "user_error"


def test_pass_failure_names_the_diagnostic_and_stage():
    got = summarise(PASS_FAILURE, "exception")
    assert got["verdict"] == "ice" and got["stage"] == "ttgir"
    assert "failed to legalize operation 'tt.dot'" in got["message"]
    assert "make_ttgir" in got["frames"]


def test_timeout_and_user_errors():
    assert summarise("##gfxhound-stage llir\n", "timeout")["verdict"] == "timeout"
    assert user_error_reason("AssertionError: kpack must be 1 for gfx950")
    assert not user_error_reason("LLVM ERROR: Cannot select")


def test_the_kernel_file_name_does_not_split_a_bug():
    line = "LLVM ERROR: Cannot select: t1154: f64,ch = AMDGPUISD::BUFFER_ATOMIC_SWAP<...> t996, {}:{}:9"
    a = summarise(line.format("kernel.py", 58), "signal:6")
    b = summarise(line.format("repro.py", 501), "signal:6")
    c = summarise(line.format("/tmp/gfxhound-pool-x/tasks/t3/kernel.py", 12), "signal:6")
    assert a["signature"] == b["signature"] == c["signature"]


BARE_ASSERT = """Traceback (most recent call last):
  File "/x/site-packages/triton/language/semantic.py", line 1530, in dot
    assert acc.type.shape == ret_ty.shape and acc.type.element_ty == out_dtype
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AssertionError

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/x/site-packages/triton/compiler/code_generator.py", line 1200, in visit_Call
triton.compiler.errors.CompilationError: at 29:19:
            v_19 = tl.dot(v_7, v_8, v_18)
                   ^
"""


def test_a_bare_assert_is_named_by_its_source_line():
    got = summarise(BARE_ASSERT, "exception")
    assert got["message"] == ("CompilationError: assert acc.type.shape == ret_ty.shape and "
                              "acc.type.element_ty == out_dtype")


def test_the_program_name_before_an_assertion_does_not_split_a_bug():
    line = ("RuntimeError: PassManager::run failed | {}: /root/.triton/llvm/llvm-8957e64a/include/llvm/ADT/"
            "SmallVector.h:292: reference llvm::SmallVectorTemplateCommon<mlir::Value>::operator[](size_t): "
            "Assertion `idx < size()' failed.")
    texts = [f"Traceback (most recent call last):\n{line.format(p)}\n" for p in ("python3", "python", "python3.11")]
    sigs = {summarise(t.replace("Traceback (most recent call last):\n", "##gfxhound-stage llir\n"), "signal:6")[
        "signature"] for t in texts}
    assert len(sigs) == 1


def test_cannot_select_is_named_by_type_and_opcode_not_operands():
    gfx942 = ("LLVM ERROR: Cannot select: t353: f64,ch = AMDGPUISD::BUFFER_ATOMIC_SWAP<(volatile dereferenceable "
              "load store (s64) on %ir.7, align 1, addrspace 8)> # D:1 t352, t44, t41, Constant:i32<0>, t39")
    gfx1201 = ("LLVM ERROR: Cannot select: t2111: f64,ch = AMDGPUISD::BUFFER_ATOMIC_SWAP<(volatile dereferenceable "
               "load store (s64) on %ir.791, align 1, addrspace 8)> # D:1 t2110:1, t9, Register:i32 $sgpr_null")
    a, b = summarise(gfx942, "signal:6"), summarise(gfx1201, "signal:6")
    assert a["signature"] == b["signature"]
    assert a["normalised"].startswith("LLVM ERROR: Cannot select: tN: f64,ch = AMDGPUISD::BUFFER_ATOMIC_SWAP")
    other = summarise(gfx942.replace("f64", "f32"), "signal:6")
    assert other["signature"] != a["signature"]


def test_a_missing_linker_is_the_machine_not_the_compiler():
    text = ("##gfxhound-stage hsaco\nTraceback (most recent call last):\n"
            '  File "/x/triton/backends/amd/compiler.py", line 195, in path_to_rocm_lld\n'
            "Exception: ROCm linker /opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path.\n")
    assert summarise(text, "exception")["verdict"] == "unresolved"


def test_the_folders_above_triton_do_not_change_a_bugs_frames():
    """The bisection cache (~/.cache/gfxhound/venvs/triton-X) once dropped every frame of the same traceback, so a
    finding's repro said "a different failure" under the very release that found it."""
    trace = ('Traceback (most recent call last):\n  File "{root}/triton/compiler/compiler.py", line 300, in compile\n'
             '  File "{root}/triton/backends/amd/compiler.py", line 400, in make_llir\n'
             '  File "/work/gfxhound/oracle/compile_task.py", line 90, in run\n'
             'RuntimeError: PassManager::run failed\n')
    roots = ["/work/.venv/lib/python3.11/site-packages", "/root/.cache/gfxhound/venvs/triton-3.9.0/lib/python3.11/"
             "site-packages", "/home/u/gfxhound/.venv/lib/python3.11/dist-packages", "/src/triton/python"]
    found = [summarise(trace.format(root=root), "exception") for root in roots]
    assert {tuple(f["frames"]) for f in found} == {("compile", "make_llir")}
    assert len({f["signature"] for f in found}) == 1


def test_the_headline_is_the_diagnostic_not_the_build_path():
    """A summary shows the line that says what broke: the assertion (with its file and line, not the build
    directory and the templated function between them), the LLVM ERROR text, paths cut to file names."""
    from gfxhound.signature import headline
    ice = ("RuntimeError: PassManager::run failed | python: /root/.triton/llvm/llvm-8957e64a-almalinux-x64/include/"
           "llvm/ADT/SmallVector.h:292: reference llvm::SmallVectorTemplateCommon<mlir::Value>::operator[](size_type)"
           " [T = mlir::Value]: Assertion `idx < size()' failed.")
    assert headline(ice) == "SmallVector.h:292: Assertion `idx < size()' failed."
    assert headline("RuntimeError: PassManager::run failed | LLVM ERROR: Fatal pipeliner error\nmore") == \
        "LLVM ERROR: Fatal pipeliner error"
    linked = ("RuntimeError: LLD failed to link hsaco source /tmp/tmpahtr0az2 into object file /tmp/tmpl2_i73f8 "
              "because | error: amdgpu_user_sgpr_count smaller than than implied by enabled user SGPRs")
    assert headline(linked) == "error: amdgpu_user_sgpr_count smaller than than implied by enabled user SGPRs"
    assert headline("error: cannot open /home/me/work/kernel.py for reading") == \
        "error: cannot open kernel.py for reading"
    long = "out_0 (fp32, store): 192 of 256 elements wrong; " + "[0] expected 1, got 2; " * 20
    assert headline(long) == long.strip()  # never cut
    assert headline("") == ""
