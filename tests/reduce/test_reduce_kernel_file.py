"""Source-level reduction of a kernel file's compile crash (reduce/python_ast.py, reduce/user_source.py): the
statement walk keeps only what the failure needs, parameters go with the arguments callers pass for them, and a
real finding in a user's kernel reduces to a short snippet that fails the same way and becomes the draft's
reproducer."""
import ast
import json
import subprocess
import sys
from pathlib import Path

from gfxhound.reduce.python_ast import reduce_python

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"

SOURCE = '''"""docstring"""
import triton


def helper(a, unused, b):
    junk = a * 2
    return a + b


def main(x, y, z, flag=True):
    t = helper(x, y, z)
    if flag:
        u = t + 1
        v = BUG(u)
    else:
        v = 0
    for i in range(3):
        v = v + i
    return v
'''


def test_the_statement_walk_keeps_what_the_predicate_needs():
    calls = []

    def interesting(text):
        """BUG is called with helper's sum plus one, as in the original (every argument 1): a semantic property,
        so a reduction must keep the data flow from the parameters through the helper."""
        calls.append(text)
        ast.parse(text)  # every candidate is valid Python
        seen = []
        scope = {"BUG": seen.append}
        try:
            exec(compile(text, "candidate", "exec"), scope)
            main = scope["main"]
            main(*[1] * main.__code__.co_argcount)
        except Exception:  # noqa: BLE001 - a candidate that no longer runs is not interesting
            return False
        return seen == [3]

    out = reduce_python(SOURCE, interesting, jobs=2)
    assert interesting(out)
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    assert "junk = a * 2" not in lines and "for i in range(3):" not in lines and '"""docstring"""' not in lines
    assert "def helper(a, b):" in lines and "def main(x, z):" in lines, out  # y and flag went; callers too
    assert any(line.startswith("t = helper(x, z)") for line in lines) and "v = BUG(u)" in lines, out
    assert len(lines) <= 10, out
    assert len(calls) < 120


def test_a_kernel_files_crash_reduces_to_a_short_snippet_and_draft(gfxhound_bin, tmp_path):
    corpus = tmp_path / "c"
    proc = subprocess.run([gfxhound_bin, "fuzz", "--kernel", f"{DATA}/pick_source.py::pick", "--launch",
                           f"@{DATA}/pick_source.launch", "--target", "gfx942", "--budget", "2", "--workers", "1",
                           "--corpus", str(corpus), "--json", "--seed", "1"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    findings = json.loads(proc.stdout)["findings"]
    assert [f["verdict"] for f in findings] == ["ice"], findings  # Triton 3.9.0's canonicalize-pointers crash
    signature = findings[0]["signature"]
    proc = subprocess.run([gfxhound_bin, "reduce", signature, "--corpus", str(corpus), "--json"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    reduced = corpus / signature / "reduced" / "source"
    kernel = (reduced / "kernel.py").read_text()
    assert summary["lines_before"] >= 35 and summary["lines_after"] <= 16, kernel
    assert "_unused_helper" not in kernel and "EXTRA" not in kernel and "def reference" not in kernel, kernel
    assert "tl.where(" in kernel, kernel  # what the crash needs stays
    run = subprocess.run([sys.executable, "snippet.py"], cwd=reduced, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "ifOp types must match in both arms" in run.stderr, run.stderr[-2000:]
    draft_dir = tmp_path / "draft"
    proc = subprocess.run([gfxhound_bin, "report", signature, "--corpus", str(corpus), "--out", str(draft_dir)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    draft = (draft_dir / "draft.md").read_text()
    assert "shrank the kernel file from" in draft and "_unused_helper" not in draft, draft[:3000]
    snippet = (draft_dir / "snippet.py").read_text()
    kernel = snippet.split('if "--child" in sys.argv:')[0]  # the check after it is the same in every snippet
    assert "def pick(" in snippet and len(kernel.splitlines()) < 60, snippet
    assert "sys.exit(125)" in snippet and "BUG = [" in snippet, snippet  # it tells the bug from another failure
