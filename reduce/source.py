"""Source-level reduction of a user's own script (a kernel pasted from an upstream issue): a thin C-Vise wrapper.

The property is the one a user can state: running the script prints something matching `--expect` (the same
regular expression `gfxhound bisect --repro` takes). The user's file is never touched: C-Vise works on a copy in a
temporary folder, and the result is written next to the script as `<name>.reduced.py`. Line and blank passes only
(no topformflat regrouping, which is for C braces): a Python line deleted whole keeps its neighbours' indentation.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from gfxhound import procgroup
from gfxhound.atomic import write_atomic
from gfxhound.corpus_store.layout import REDUCE_LOG

from .llvm_ir import ReduceError

PASS_GROUP = {"first": [{"pass": "blank"}],
              "main": [{"pass": "lines", "arg": "None"}, {"pass": "balanced", "arg": "parens-inside"}],
              "last": [{"pass": "blank"}]}

TEST_SCRIPT = '''#!{python}
"""gfxhound interestingness test (written by gfxhound.reduce.source): exit 0 = the output still matches."""
import re
import subprocess
import sys

sys.path.append({root!r})  # appended: where gfxhound is, should this interpreter not have it installed
from gfxhound import procgroup

try:  # the script's own children (a compile) die with it on a timeout
    proc = procgroup.run([{target_python!r}, {name!r}], capture_output=True, text=True, timeout={timeout})
except subprocess.TimeoutExpired:
    sys.exit(1)
sys.exit(0 if re.search({expect!r}, proc.stdout + proc.stderr, re.M) else 1)
'''


@dataclass
class SourceReduction:
    script: str
    expect: str
    lines_before: int
    lines_after: int
    seconds: float
    output: str
    level: str = "source"
    format: int = 1

    def to_json(self):
        return asdict(self)


def matches(script: Path, expect: str, python: str, timeout: float, cwd: Path | None = None) -> bool:
    try:
        proc = procgroup.run([python, str(script)], capture_output=True, text=True, timeout=timeout,
                             cwd=cwd or script.parent)
    except subprocess.TimeoutExpired:
        return False
    return re.search(expect, proc.stdout + proc.stderr, re.M) is not None


def reduce_script(script: Path, expect: str, python: str = sys.executable, cvise: str = "cvise", jobs: int = 2,
                  timeout_s: float = 1800, test_timeout: float = 120, log=None) -> SourceReduction:
    """Reduce a copy of `script` while its output matches `expect`; writes `<script>.reduced.py`."""
    try:
        re.compile(expect)
    except re.error as exc:
        raise ReduceError(f"--expect is not a regular expression: {exc}") from None
    if shutil.which(cvise) is None and not Path(cvise).exists():
        raise ReduceError(f"{cvise} not found: install Debian's cvise (apt-get install cvise) or pass --cvise PATH")
    script = script.resolve()
    if not matches(script, expect, python, test_timeout):
        raise ReduceError(f"running {script.name} does not print anything matching {expect!r}: nothing to reduce")
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="gfxhound-source-") as tmp:
        work = Path(tmp)
        name = "repro.py"
        shutil.copyfile(script, work / name)
        test = work / "test.py"
        test.write_text(TEST_SCRIPT.format(python=sys.executable, target_python=python, name=name,
                                           timeout=test_timeout, expect=expect,
                                           root=str(Path(procgroup.__file__).resolve().parent.parent)))
        test.chmod(0o755)
        (work / "passes.json").write_text(json.dumps(PASS_GROUP))
        cmd = [cvise, "--n", str(max(1, jobs)), "--timeout", str(int(test_timeout) + 30), "--pass-group-file",
               str(work / "passes.json"), "--not-c", "--tidy", str(test), name]
        with open(work / REDUCE_LOG, "w") as logfile:
            try:
                # C-Vise's workers, the tests they run and those tests' children die with it (procgroup)
                procgroup.run(cmd, cwd=work, stdout=logfile, stderr=subprocess.STDOUT, timeout=timeout_s,
                              check=False)
            except subprocess.TimeoutExpired:
                logfile.write(f"\ngfxhound: C-Vise stopped after {timeout_s} s; keeping its best result\n")
            except KeyboardInterrupt:
                logfile.write("\ngfxhound: interrupted; keeping C-Vise's best result so far\n")
        reduced = work / name
        if not matches(reduced, expect, python, test_timeout, cwd=work):
            shutil.copyfile(script, reduced)
        out = script.with_name(script.stem + ".reduced.py")
        write_atomic(out, reduced.read_bytes())  # never a half-written result next to the user's script
    result = SourceReduction(str(script), expect, _lines(script), _lines(out), round(time.time() - started, 2),
                             str(out))
    if log:
        log(f"source: {result.lines_before} -> {result.lines_after} lines in {result.seconds} s: {out}")
    return result


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())
