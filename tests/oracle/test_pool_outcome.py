"""What a worker printed outside its task (compile warnings) and what the task said are joined into one outcome
text, except where the emulator says what it cannot judge: that reason names the construct (a campaign's unresolved
table once read "UserWarning: kpack is deprecated" for 391 gfx950 kernels)."""
from types import SimpleNamespace

from gfxhound.oracle.pool import CompilePool


class Done:
    def __init__(self, result):
        self._result = result

    def result(self):
        return dict(self._result)


def _outcome(tmp_path, printed, result):
    (tmp_path / "stderr.txt").write_text(printed)
    task = {"stderr_path": str(tmp_path / "stderr.txt"), "task_dir": str(tmp_path), "timeout": 5}
    return CompilePool.outcome(SimpleNamespace(timeout=5), task, Done(result))


WARNING = "/x/triton/backends/amd/compiler.py:86: UserWarning: kpack is deprecated starting from gfx950\n  warn()\n"


def test_an_unmodelled_construct_is_the_whole_reason(tmp_path):
    out = _outcome(tmp_path, WARNING, {"status": "unmodelled", "text": "call to llvm.amdgcn.ds.read.tr8.b64.v2i32"})
    assert out["text"] == "call to llvm.amdgcn.ds.read.tr8.b64.v2i32"


def test_a_crash_keeps_what_the_compiler_printed_before_the_task_text(tmp_path):
    out = _outcome(tmp_path, "LLVM ERROR: Cannot select\n", {"status": "exception", "text": "RuntimeError: boom"})
    assert out["text"] == "LLVM ERROR: Cannot select\nRuntimeError: boom"
    assert _outcome(tmp_path, "", {"status": "exception", "text": "RuntimeError: boom"})["text"] == \
        "RuntimeError: boom"
