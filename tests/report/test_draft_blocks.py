"""A draft's code blocks run as pasted: the reproducer saved as the file the command names, the command typed in a
shell, and the failure the draft describes comes out. Checked on a real finding of the installed Triton."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import triton

from gfxhound.report.draft_text import code_blocks, headline, prune_unused

ROOT = Path(__file__).resolve().parents[2]


def _finding_dir(signature: str) -> Path:
    """The finding's folder in the checked-in corpus, under its id or the id it was renamed to (aliases.json)."""
    aliases = ROOT / "corpus" / "aliases.json"
    renamed = json.loads(aliases.read_text())["aliases"] if aliases.exists() else {}
    return ROOT / "corpus" / renamed.get(signature, signature)


@pytest.mark.skipif(triton.__version__ != "3.9.0", reason="the finding is an internal compiler error of Triton 3.9.0")
def test_the_blocks_of_a_triton_draft_run_as_pasted(tmp_path, gfxhound_bin):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "93260d1c0e8fc7a2", corpus / "93260d1c0e8fc7a2")
    proc = subprocess.run([gfxhound_bin, "report", "93260d1c", "--corpus", str(corpus), "--out", str(tmp_path / "d")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    draft = (tmp_path / "d" / "draft.md").read_text()
    title = draft.splitlines()[1]
    assert "Cannot select: f64 AMDGPUISD::BUFFER_ATOMIC_SWAP" in title and "t2111" not in title
    blocks = code_blocks(draft)
    python = [text for lang, text in blocks if lang == "python"]
    shell = [text for lang, text in blocks if lang == "sh"]
    assert len(python) == 1 and len(shell) == 1
    assert not python[0][0].isspace() and "import triton" in python[0]
    assert "offs_2" not in python[0]  # the reduced spec's unused prologue is not in the reproducer
    command = shell[0].strip().splitlines()[0]
    script = command.split()[1]
    paste = tmp_path / "paste"
    paste.mkdir()
    (paste / script).write_text(python[0])
    env = dict(os.environ, PATH=f"{Path(os.sys.executable).parent}:{os.environ['PATH']}", PYTHONWARNINGS="ignore")
    run = subprocess.run(["bash", "-c", command], cwd=paste, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode != 0
    assert "LLVM ERROR: Cannot select" in run.stderr and "BUFFER_ATOMIC_SWAP" in run.stderr
    assert "Not reduced" not in draft and "shrank the generated kernel's body from" in draft


def test_a_title_names_the_assertion_and_where_it_failed():
    message = ("RuntimeError: PassManager::run failed | python: /x/include/llvm/ADT/SmallVector.h:292: reference "
               "llvm::SmallVectorTemplateCommon<mlir::Value>::operator[](size_type): Assertion `idx < size()' failed.")
    assert headline(message) == "assertion `idx < size()` failed in SmallVector.h"
    llc = "RuntimeError: x | LLVM ERROR: Do not know how to split this operator's operand! [signal:N]"
    assert headline(llc) == "LLVM ERROR: Do not know how to split this operator's operand!"


def test_pruning_keeps_what_has_an_effect_and_what_it_reads():
    kernel = ("@triton.jit\ndef kernel(p, q, N, BLOCK: tl.constexpr):\n"
              "    pid = tl.program_id(0)\n    unused = tl.arange(0, 2)\n    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
              "    x = tl.load(p + offs, mask=offs < N)\n    y = tl.atomic_add(q + offs, x)\n")
    pruned = prune_unused(kernel)
    assert "unused" not in pruned and "y = tl.atomic_add" in pruned and "x = tl.load" in pruned
    assert pruned.startswith("@triton.jit\ndef kernel(p, q, N, BLOCK: tl.constexpr):\n")


@pytest.mark.skipif(triton.__version__ != "3.9.0", reason="the finding is fixed by Triton 3.9.0")
def test_a_bug_the_newest_triton_no_longer_has_is_not_drafted_as_new(tmp_path, gfxhound_bin, old_python):
    """0b24f87e crashes Triton 3.4.0 and compiles on 3.9.0: a maintainer would close it as fixed."""
    corpus = tmp_path / "corpus"
    found = _finding_dir("0b24f87e8b82386a")
    shutil.copytree(found, corpus / found.name)
    argv = [gfxhound_bin, "report", found.name[:8], "--corpus", str(corpus), "--python", old_python,
            "--out", str(tmp_path / "d")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "fails with triton-3.4.0 but not with triton 3.9.0" in proc.stderr and not (tmp_path / "d").exists()
    forced = subprocess.run(argv + ["--force"], capture_output=True, text=True, timeout=600)
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert "Also fails the same way" not in (tmp_path / "d" / "draft.md").read_text()


def test_a_long_assertion_is_cut_in_its_condition_not_in_where_it_failed():
    message = ("RuntimeError: PassManager::run failed | python3: /project/third_party/amd/lib/TritonAMDGPUToLLVM/"
               "ConvertFpCastOpToLLVM.cpp:2490: SmallVector<Value> createDestOps(...) const: Assertion `numElements && "
               "\"number of elements must be greater than zero\"' failed.")
    title = headline(message)
    assert title.endswith("` failed in ConvertFpCastOpToLLVM.cpp") and len(title) <= 100, title
    assert title.startswith("assertion `numElements && ")
