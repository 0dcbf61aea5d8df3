"""Every draft checked in under corpus/<id>/draft/ runs as pasted: its files saved under the names its command
uses, the command typed in a shell, and what the draft says came out comes out (the assembly it shows, or the
error it quotes). A draft whose Triton is not the installed one is skipped, not passed."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from gfxhound.report.draft_text import kernel_body
from gfxhound.report.draft_text import code_blocks

ROOT = Path(__file__).resolve().parents[2]
DRAFTS = sorted(ROOT.glob("corpus/*/draft/draft.md"))


def test_the_corpus_has_drafts():
    assert DRAFTS, "no draft checked in under corpus/*/draft/"


def _command(shell: str) -> list:
    """The lines to run: a `pip install triton==V` line is what the reader does first; here V must be installed."""
    lines = []
    for line in shell.strip().splitlines():
        wanted = re.match(r"pip install triton==(\S+)", line)
        if wanted:
            if wanted.group(1) != triton.__version__:
                pytest.skip(f"the draft needs triton {wanted.group(1)}; {triton.__version__} is installed")
            continue
        lines.append(line)
    return lines


def _section(markdown: str, name: str) -> str:
    found = re.search(rf"^## {name}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    return found.group(1) if found else ""


@pytest.mark.parametrize("draft", DRAFTS, ids=[d.parent.parent.name[:8] for d in DRAFTS])
def test_a_checked_in_draft_runs_as_pasted(draft, tmp_path):
    markdown = draft.read_text()
    blocks = code_blocks(markdown)
    shell = code_blocks(_section(markdown, "Command"))
    assert len(shell) == 1 and shell[0][0] == "sh", "one sh block under ## Command"
    lines = _command(shell[0][1])
    command = "\n".join(lines)
    for lang, text in blocks:
        assert text and not text[0].isspace(), f"a {lang} block starts indented"
    llvm = [text for lang, text in blocks if lang == "llvm"]
    python = [text for lang, text in blocks if lang == "python"]
    if "reduced.ll" in command:
        (tmp_path / "reduced.ll").write_text(llvm[0])
    script = re.search(r"\bpython (\w+\.py)", command)
    if script:
        (tmp_path / script.group(1)).write_text(python[0])
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", PYTHONWARNINGS="ignore")
    run = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env=env)
    shown = code_blocks(_section(markdown, "Output")) or code_blocks(_section(markdown, "Expected vs actual"))
    assert shown, "the draft shows what came out"
    lang, text = shown[0]
    if "\n## Wrong codes\n" in markdown:  # gfxhound casts: the very lines the draft quotes (stores, constants)
        assert run.returncode in (0, 1), run.stderr[-2000:]  # a generated snippet prints; a minimal.py exits 1
        assert all(line in run.stdout.splitlines() for line in text.splitlines()), run.stdout
    elif lang == "asm":  # a miscompile: the very instructions the draft shows
        assert run.returncode == 0, run.stderr[-2000:]
        assert kernel_body(run.stdout) == text.rstrip("\n")
    elif not re.search(r"LLVM ERROR|Assertion|Error", text):  # a wrong result's script: the lines it printed
        assert run.returncode == 1, run.stdout + run.stderr[-2000:]
        assert all(line in run.stdout.splitlines() for line in text.splitlines()), run.stdout
    else:  # a failure: it fails, with the error line the draft quotes
        assert run.returncode != 0
        quoted = next(x for x in text.splitlines() if re.search(r"LLVM ERROR|Assertion|Error", x))
        # from the error itself: the program name before an assertion is the interpreter's (python, python3)
        quoted = re.search(r"(LLVM ERROR.*|Assertion.*|\w*Error.*)", quoted).group(1).strip()
        assert quoted in run.stdout + run.stderr
