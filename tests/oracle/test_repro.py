"""Repro scripts follow the protocol: 0 absent, 1 same signature present, 125 cannot test; never a signal."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.corpus_store import Corpus
from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.render import render
from gfxhound.oracle.repro.compile import render_repro
from gfxhound.signature import summarise
from gfxhound.spec import KernelSpec, Launch

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld", "PYTHONWARNINGS": "ignore"}


def small_spec(options=None):
    body = [{"op": "load", "args": [0], "attrs": {"masked": True}},
            {"op": "exp", "args": [0], "attrs": {}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": 64, "N": 16, "K": 16}, sizes={"M": 100, "N": 16, "K": 16}, grid="M",
                      inputs=[{"dtype": "fp32", "axes": "M", "order": "row"}], scalars=[],
                      outputs=[{"dtype": "fp32", "axes": "M", "mode": "store"}], body=body,
                      launch=Launch(options=dict(options or {})))


def write_repro(tmp_path, spec, arch, expected):
    path = tmp_path / "repro.py"
    path.write_text(render_repro(render(spec, assume_all(arch)), arch, expected, "triton-test", spec.spec_hash(),
                                 timeout_s=300))
    return path


def run(path, python=sys.executable):
    return subprocess.run([python, str(path)], capture_output=True, text=True, env=ENV, timeout=600)


def child_failure(path, python=sys.executable):
    """What the repro's child prints when it fails, judged like a campaign judges it."""
    proc = subprocess.run([python, str(path), "--child"], capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode != 0, proc.stdout
    return summarise(proc.stdout + proc.stderr, "exception")


FAKE = {"signature": "0" * 16, "verdict": "ice", "stage": "llir", "normalised": "LLVM ERROR: something"}


def test_absent_bug_exits_0(tmp_path):
    proc = run(write_repro(tmp_path, small_spec(), "gfx942", FAKE))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bug absent" in proc.stdout


def test_same_failure_exits_1_and_a_different_one_125(tmp_path):
    spec = small_spec()
    spec.launch.num_warps = 3  # Triton rejects this: a real, stable failure to stand in for a bug
    path = write_repro(tmp_path, spec, "gfx942", FAKE)
    real = child_failure(path)
    assert real["verdict"] == "user_error" and "power of 2" in real["message"]
    assert run(path).returncode == 125  # a failure, but not the expected one
    path = write_repro(tmp_path, spec, "gfx942", real)
    proc = run(path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bug present" in proc.stdout


def test_a_crashing_child_never_kills_the_parent(tmp_path):
    path = write_repro(tmp_path, small_spec(), "gfx942", FAKE)
    source = path.read_text().replace('    compiled = compile_for_amd(',
                                      '    os.kill(os.getpid(), 11)\n    compiled = compile_for_amd(', 1)
    path.write_text(source)
    proc = run(path)
    assert proc.returncode == 125, (proc.returncode, proc.stdout)


def test_no_triton_is_cannot_test(tmp_path):
    path = write_repro(tmp_path, small_spec(), "gfx942", FAKE)
    proc = subprocess.run(["/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable, "-I",
                           str(path)], capture_output=True, text=True, timeout=120)
    if proc.returncode != 125 and "bug absent" in proc.stdout:
        pytest.skip("the system Python has triton installed")
    assert proc.returncode == 125


def checked_in_findings():
    corpus = Corpus(ROOT / "corpus")
    return [f for f in corpus.findings() if f.verdict in ("ice", "timeout")] if (ROOT / "corpus").exists() else []


def older_release_findings():
    import triton
    return [f for f in checked_in_findings() if f.toolchains != [f"triton-{triton.__version__}"]]


@pytest.mark.slow
@pytest.mark.parametrize("finding", older_release_findings(), ids=lambda f: f.signature)
def test_checked_in_findings_replay_under_their_release_and_not_under_ours(finding, old_python, tmp_path):
    """Findings a campaign found on an older release: present there (exit 1), and exit 0 or 125 on ours."""
    old = subprocess.run([old_python, "-c", "import triton; print(triton.__version__)"], capture_output=True,
                         text=True).stdout.strip()
    examples = [e for e in Corpus(ROOT / "corpus").example_dirs(finding.signature)
                if json.loads((e / "run.json").read_text())["toolchain"] == f"triton-{old}"]
    if not examples:
        pytest.skip(f"found with {finding.toolchains}, the old venv has triton-{old}")
    example = examples[0]
    present = run(example / "repro.py", python=old_python)
    assert present.returncode == 1, present.stdout + present.stderr
    ours = run(example / "repro.py")
    assert ours.returncode in (0, 125), ours.stdout + ours.stderr
    gfxhound = str(Path(sys.executable).parent / "gfxhound")
    if example == Corpus(ROOT / "corpus").example_dirs(finding.signature)[0]:  # replay runs the first example
        replay = subprocess.run([gfxhound, "corpus", "replay", finding.signature[:8], "--corpus",
                                 str(ROOT / "corpus"), "--python", old_python], capture_output=True, text=True,
                                env=ENV, timeout=600)
        assert replay.returncode == 1 and replay.stdout.strip().endswith("present"), replay.stdout + replay.stderr


def current_release_findings():
    import triton
    return [f for f in checked_in_findings() if f"triton-{triton.__version__}" in f.toolchains]


@pytest.mark.parametrize("finding", current_release_findings(), ids=lambda f: f.signature)
def test_checked_in_findings_of_the_installed_release_are_still_present(finding):
    """Live bugs of the release `make setup` installs: their repros say `present` until upstream fixes them."""
    import triton
    example = next(e for e in Corpus(ROOT / "corpus").example_dirs(finding.signature)
                   if json.loads((e / "run.json").read_text())["toolchain"] == f"triton-{triton.__version__}")
    proc = run(example / "repro.py")
    if proc.returncode == 0:  # good news, not a failure of ours: the toolchain here no longer has the bug
        pytest.skip(f"no longer present with this toolchain: {proc.stdout.strip()}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
