"""Source-level reduction of a compile failure in a kernel file: a user's own kernel (`fuzz --kernel`) or one of
gfxhound's kernel templates (`--shape moe`, ...), both the `user` family. The file shrinks statement by statement
(reduce/python_ast.py) while the Triton snippet built from it (oracle/repro/snippet.py: the file, then the compile
the runtime would do at the failing launch) still fails with the finding's normalised message.

Why a level of its own: the spec level cannot shrink a kernel file (a user spec has no statements), and the IR
levels hand a maintainer TTIR, while a Triton issue wants a short Python kernel. The snippet is rebuilt from each
candidate, so a parameter the reducer drops leaves the compile's signature with it, and the result pastes and
runs as it is.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from gfxhound import procgroup
from gfxhound.corpus_store.layout import REDUCE_LOG, REDUCE_RECORD

from .llvm_ir import ReduceError
from .python_ast import reduce_python

SOURCE_LEVEL = "source"  # corpus/<signature>/reduced/source/: kernel.py (the reduced file), snippet.py
SNIPPET_FILE = "snippet.py"
_SNIPPET_LOCK = threading.Lock()  # triton_snippet sets the launch's environment knobs while it specialises


def same_failure(kernel: str, consts: dict, normalised: str, settings, work: Path) -> bool:
    """The snippet built from `kernel` fails, in a fresh process, with this normalised message."""
    from gfxhound.oracle.repro.snippet import triton_snippet
    from gfxhound.signature import summarise
    try:
        with _SNIPPET_LOCK:
            code = triton_snippet(kernel, consts)
    except Exception:  # noqa: BLE001 - a candidate that lost the launched function or no longer parses
        return False
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        (Path(tmp) / SNIPPET_FILE).write_text(code)
        try:
            proc = procgroup.run([sys.executable, SNIPPET_FILE], cwd=tmp, capture_output=True, text=True,
                                 timeout=settings.compile_timeout, env=_env(settings), errors="replace")
        except subprocess.TimeoutExpired:
            return False
    ended = (f"signal:{-proc.returncode}" if proc.returncode < 0 else "exception"
             if "Traceback (most recent call last)" in proc.stderr else f"exit:{proc.returncode}")
    return proc.returncode != 0 and summarise(proc.stdout + proc.stderr, ended)["normalised"] == normalised


def reduce_user_compile(corpus, finding, example, settings):
    """Reduce the example's kernel file; returns (summary, lines) for the CLI. The corpus gets reduced/source/."""
    from gfxhound.oracle.repro.snippet import constants, triton_snippet, user_module
    user = example.spec["user"]
    consts = constants(example.repro.read_text())
    if not consts.get("ARGS") or not consts.get("ARCH"):
        raise ReduceError(f"the example of {finding.signature} has no compile repro to take the launch from")
    started = time.time()
    source = user_module(user)
    log_lines = []

    def log(line):
        log_lines.append(f"{time.time() - started:7.1f}s {line}")
        settings.log(line)

    with tempfile.TemporaryDirectory(prefix="gfxhound-reduce-source-") as tmp:
        work = Path(tmp)
        test = lambda text: same_failure(text, consts, finding.normalised, settings, work)  # noqa: E731
        if not test(source):
            raise ReduceError(f"the kernel file of {finding.signature} does not fail the same way here; reduce it "
                              f"where it was found ({example.run.get('toolchain')}, {example.run.get('target')})")
        reduced = reduce_python(source, test, jobs=settings.jobs, log=log, deadline=started + settings.timeout)
        if not test(reduced):  # never keep a result that does not fail the same way
            reduced = source
    summary = {"level": SOURCE_LEVEL, "signature": finding.signature, "lines_before": _lines(source),
               "lines_after": _lines(reduced), "seconds": round(time.time() - started, 2), "format": 1}
    files = {"kernel.py": reduced, SNIPPET_FILE: triton_snippet(reduced, consts), REDUCE_LOG: "\n".join(log_lines),
             REDUCE_RECORD: json.dumps(summary, indent=1)}
    dest = corpus.write_reduced(finding.signature, SOURCE_LEVEL, files)
    summary["output"] = str(dest)
    return summary, [f"{finding.signature}: kernel file {summary['lines_before']} -> {summary['lines_after']} lines, "
                     f"the same failure, in {summary['seconds']} s", f"  {dest}/{SNIPPET_FILE}   (python "
                     f"{SNIPPET_FILE}: the reduced kernel and its compile)"]


def _env(settings):
    return dict(os.environ, **settings.env)


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())
