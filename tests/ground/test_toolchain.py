"""What a campaign names as the toolchain under test: the installed wheel, a ROCm build installed from a local
checkout (PEP 610 direct_url.json with its commit), and a custom AMD code generator library."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESCRIBE = [sys.executable, "-c", "import json; from gfxhound.toolchain import describe; print(json.dumps(describe()))"]


def _describe(env=None, argv=DESCRIBE):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_the_installed_wheel(tmp_path):
    import triton
    detail = _describe()
    assert detail["id"] == f"triton-{triton.__version__}" and detail["source"] == "wheel"
    assert detail["commit"] is None and detail["format"] == 1


def test_a_custom_amd_code_generator_is_named(tmp_path):
    import os

    from triton.backends.amd.compiler import get_amd_codegen_path
    library = get_amd_codegen_path()
    detail = _describe(dict(os.environ, TRITON_AMD_CODEGEN_PATH=library))
    assert detail["amd_codegen"]["custom_path"] == library
    assert detail["id"].startswith("triton-3.9.0+codegen-") and detail["amd_codegen"]["revision"]


def test_a_local_rocm_build_is_named_with_its_commit(tmp_path):
    """A stand-in distribution: pytorch-triton-rocm installed from a local checkout (dist-info with PEP 610's
    direct_url.json), seen by a bare interpreter that has nothing else."""
    site = tmp_path / "site"
    (site / "triton").mkdir(parents=True)
    (site / "triton" / "__init__.py").write_text('__version__ = "3.4.0+rocm6.4"\n')
    info = site / "pytorch_triton_rocm-3.4.0+rocm6.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pytorch-triton-rocm\nVersion: 3.4.0+rocm6.4\n")
    (info / "RECORD").write_text("triton/__init__.py,,\n")
    (info / "top_level.txt").write_text("triton\n")
    commit = "0123456789abcdef0123456789abcdef01234567"
    (info / "direct_url.json").write_text(json.dumps({"url": "file:///src/triton", "vcs_info": {
        "vcs": "git", "commit_id": commit}}))
    gfxhound_src = str(ROOT / "gfxhound" / "toolchain.py")
    argv = [sys.executable, "-S", "-c", f"import sys, json; sys.path[:0] = [{str(site)!r}]; "
            f"import importlib.util as u; s = u.spec_from_file_location('t', {gfxhound_src!r}); "
            f"m = u.module_from_spec(s); s.loader.exec_module(m); print(json.dumps(m.describe()))"]
    detail = _describe({"PATH": "/usr/bin:/bin"}, argv)
    assert detail["distribution"] == "pytorch-triton-rocm" and detail["source"] == "local-build"
    assert detail["commit"] == commit and detail["id"] == "pytorch-triton-rocm-3.4.0+rocm6.4+g0123456789"
