import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LLD = "/usr/lib/llvm-22/bin/ld.lld"


@pytest.fixture(scope="session")
def old_python():
    """The Python of a venv with an older Triton release (Makefile: setup-old), or skip."""
    path = os.environ.get("GFXHOUND_OLD_PYTHON") or str(ROOT / ".venv-triton-3.4.0" / "bin" / "python")
    if not Path(path).exists():
        pytest.skip("no older-Triton venv: run 'make setup-old'")
    return path


@pytest.fixture(scope="session")
def gfxhound_bin():
    return str(Path(sys.executable).parent / "gfxhound")


@pytest.fixture
def worker_env():
    env = {"TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore"}
    if Path(LLD).exists():
        env["TRITON_HIP_LLD_PATH"] = LLD
    return env
