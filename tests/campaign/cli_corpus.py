"""Helpers of the CLI command tests: a tiny corpus written through the store (as a campaign writes one), and the
real command line run in this process with its exit code and output."""
import json
import sys
from pathlib import Path

from gfxhound.corpus_store import Corpus

ROOT = Path(__file__).resolve().parents[2]
LONG_ID = "72383ef3cce81c4a"
SHORT_ID = "0123456789abcdef"
# a real-looking first line: the build's path is long, the assertion the reader needs is at its end
LONG_MESSAGE = ("RuntimeError: PassManager::run failed | python: /root/.triton/llvm/llvm-8957e64a-almalinux-x64/"
                "include/llvm/ADT/some/very/deeply/nested/directory/of/the/build/SmallVector.h:292: reference "
                "llvm::SmallVectorTemplateCommon<mlir::Value>::operator[](size_type) [T = mlir::Value]: "
                "Assertion `idx < size()' failed.")
LONG_HEADLINE = "SmallVector.h:292: Assertion `idx < size()' failed."
# the repro prints where it runs (replay runs it in its example's folder) and says "present" (exit 1)
REPRO = "import os, sys\nprint('ran in', os.getcwd())\nsys.exit(1)\n"


def _execution(sig, message, spec):
    return dict(signature=sig, verdict="ice", stage="llir", message=message, normalised=message[:60],
                spec_hash=spec, target="gfx942", toolchain="triton-3.9.0", time="2026-11-20T00:00:00+00:00")


def _files(spec):
    return {"spec.json": json.dumps({"hash": spec}), "repro.py": REPRO, "run.json": "{}", "caps.json": "{}"}


def tiny_corpus(root: Path) -> Corpus:
    """Two findings: one whose first line is long (a deep build path before the assertion), one short."""
    corpus = Corpus(root)
    corpus.record(_execution(LONG_ID, LONG_MESSAGE, "5pec0001"), _files("5pec0001"))
    corpus.record(_execution(SHORT_ID, "LLVM ERROR: Cannot select: t7: i32 = foo", "5pec0002"), _files("5pec0002"))
    return corpus


def cli(capsys, *argv):
    """(exit code, stdout, stderr) of `gfxhound ARGV` run in this process; a usage error exits through argparse."""
    from gfxhound.cli import main
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, words):
    """What every user error looks like: exit 2, one line that says what is wrong, no traceback."""
    assert code == 2, err
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert words in err, err


def python():
    return sys.executable
