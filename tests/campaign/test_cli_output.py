"""The summary as people meet it: in an 80-column terminal (a real pseudo-terminal, so rich draws its table) and
in a CI log (a pipe): every finding id whole, every first error line complete (folded on a terminal, one line in a
log), no carriage returns in a log."""
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

SUMMARY = {"kernels": 10, "duration_s": 3.2, "kernels_per_s": 3.1, "toolchain": "triton-3.9.0", "targets": ["gfx942"],
           "interrupted": False, "stopped_by": "", "verdicts": {"pass": 8, "ice": 1, "miscompile": 1},
           "user_errors": {}, "findings": [
               {"id": "72383ef3cce81c9a", "signature": "72383ef3cce81c9a", "verdict": "ice", "stage": "ttgir",
                "target": "gfx942", "new": True, "configuration": "default", "family": "f1", "normalised": "a",
                "first_error_line": "error: Failures have been detected while processing an MLIR pass pipeline "
                                    "[pass TritonAMDGPUAccelerateMatmul] then the rest of a long line END1"},
               {"id": "0b24f87e8b82386a", "signature": "0b24f87e8b82386a", "verdict": "miscompile", "stage": "",
                "target": "gfx942", "new": False, "configuration": "default", "family": "f2", "normalised": "b",
                "first_error_line": "SmallVector.h:292: Assertion `idx < size()' failed. END2"}]}
PRINT = "import json, sys\nfrom gfxhound.cli.fuzz_summary import print_summary\nprint_summary(json.loads(sys.argv[1]))\n"


def _in_a_terminal(columns):
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "TERM")}
    proc = subprocess.Popen([sys.executable, "-c", PRINT, json.dumps(SUMMARY)], stdout=follower, stderr=follower,
                            env=dict(env, TERM="xterm-256color"))
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode())


@pytest.mark.parametrize("columns", [80, 60])  # rich folds an id it may squeeze at 60 columns unless told not to
def test_a_narrow_terminal_shows_whole_ids_and_whole_lines(columns):
    text = _in_a_terminal(columns)
    lines = text.splitlines()
    assert all(len(line.rstrip("\r")) <= columns for line in lines), text
    for finding in SUMMARY["findings"]:
        assert finding["id"] in text, text
    squashed = re.sub(r"\s+", "", text)  # a long line folds onto more lines: its characters are all there
    assert "END1" in squashed and "END2" in squashed
    assert "[passTritonAMDGPUAccelerateMatmul]" in squashed  # brackets in a message are text, not rich markup


def test_a_ci_log_gets_plain_lines():
    proc = subprocess.run([sys.executable, "-c", PRINT, json.dumps(SUMMARY)], capture_output=True, text=True,
                          timeout=60, env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stdout and "\x1b" not in proc.stdout
    for finding in SUMMARY["findings"]:
        row = next(line for line in proc.stdout.splitlines() if line.startswith(finding["id"]))
        assert row.endswith(finding["first_error_line"]), row  # the whole line, on the id's row


def test_the_reach_matrix_is_printed_with_every_unreached_cell_and_its_reason():
    from gfxhound.fuzz.reach import report
    reach = report({"target:gfx942": {"kernels": 10, "share": 1.0},
                    "detail:ttgir:gfx942:tt.reduce@blocked": {"kernels": 3, "share": 0.3}}, ["gfx942"])
    proc = subprocess.run([sys.executable, "-c", PRINT, json.dumps(dict(SUMMARY, reach=reach))], capture_output=True,
                          text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    assert proc.returncode == 0, proc.stderr
    head = next(line for line in proc.stdout.splitlines() if line.startswith("reach matrix"))
    assert f"{reach['reached']} of {reach['supported']} supported cells reached" in head
    rows = [line for line in proc.stdout.splitlines() if line.lstrip().startswith("unreached")]
    cells = {(c["op"], c["layout"]) for c in reach["unreached"]}
    assert len(rows) == len(cells) and reach["reached"] >= 1
    assert not any(line.lstrip().startswith("not lowered") for line in proc.stdout.splitlines())
