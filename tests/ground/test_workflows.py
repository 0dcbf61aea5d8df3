"""The GitHub Actions workflows are where GitHub runs them, valid against GitHub's workflow schema (the schema
check-jsonschema vendors: no network), and every script or make target they call exists in the repository."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def test_workflows_are_where_github_reads_them():
    assert [w.name for w in WORKFLOWS] == ["nightly-matrix.yml", "nightly-rocm.yml"]
    assert not list((ROOT / "ci").rglob("*.yml")), "a workflow outside .github/workflows is never run"


def test_workflows_match_githubs_schema():
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    if tool is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[test]')")
    run = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_what_the_workflows_call_exists():
    makefile = (ROOT / "Makefile").read_text()
    for workflow in WORKFLOWS:
        text = workflow.read_text()
        for script in re.findall(r"\b((?:ci|bench|\.ci)/[\w./-]+\.(?:sh|py))\b", text):
            assert (ROOT / script).exists(), f"{workflow.name} calls {script}, which does not exist"
        for target in re.findall(r"\bmake ([\w-]+)", text):
            assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"{workflow.name}: no make target {target}"
