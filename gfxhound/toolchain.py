"""What a campaign tests: the Triton in this interpreter, named precisely enough to find it again.

A finding is only useful upstream with the exact toolchain: the wheel (`triton`, or ROCm's `pytorch-triton-rocm`),
a local build (its git commit, from PEP 610's direct_url.json or the source tree), and a custom AMD code generator
(`TRITON_AMD_CODEGEN_PATH`, and the revision the library reports). `describe()` runs in the interpreter under test
(a campaign worker), so it sees what the compiles see.
"""
from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

DISTRIBUTIONS = ("triton", "pytorch-triton-rocm", "pytorch-triton", "triton-nightly")
TOOLCHAIN_FORMAT = 1


def _distribution():
    from importlib import metadata
    for name in DISTRIBUTIONS:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _git_commit(path: Path):
    try:
        proc = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def describe() -> dict:
    import triton
    dist = _distribution()
    location = Path(triton.__file__).resolve().parent
    source, commit, url = "wheel", None, None
    direct = json.loads(dist.read_text("direct_url.json") or "{}") if dist else {}
    if direct:  # installed from a directory or a VCS URL, not an index: a local build
        url = direct.get("url")
        commit = (direct.get("vcs_info") or {}).get("commit_id")
        source = "editable" if (direct.get("dir_info") or {}).get("editable") else "local-build"
        if commit is None and url and url.startswith("file://"):
            commit = _git_commit(Path(url[len("file://"):]))
    elif dist is None or not str(location).startswith(str(Path(dist.locate_file("")).resolve())):
        source, commit = "source-tree", _git_commit(location)
    codegen = {}
    try:  # Triton 3.9+: a separately pinned AMD code generator library
        from triton.backends.amd import compiler as amd
        if hasattr(amd, "get_amd_codegen_revision"):
            codegen = {"revision": amd.get_amd_codegen_revision(),
                       "custom_path": os.environ.get("TRITON_AMD_CODEGEN_PATH") or None}
    except Exception as exc:  # noqa: BLE001 - a broken codegen library is worth recording, not fatal here
        codegen = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    name = dist.metadata["Name"] if dist else "triton"
    version = triton.__version__
    ident = f"{name}-{version}"
    if commit and source != "wheel" and commit[:10] not in version:
        ident += f"+g{commit[:10]}"
    if codegen.get("custom_path"):
        ident += f"+codegen-{re.sub(r'[^0-9a-zA-Z]', '', codegen.get('revision') or 'custom')[:10]}"
    lld = os.environ.get("TRITON_HIP_LLD_PATH")
    return {"format": TOOLCHAIN_FORMAT, "id": ident, "distribution": name, "version": version, "source": source,
            "commit": commit, "url": url if source != "wheel" else None, "amd_codegen": codegen,
            "lld": _tool_version(lld) if lld else None, "python": platform.python_version(),
            "platform": platform.platform(terse=True), "specialisation": _specialisation()}


def _specialisation():
    """How argument specialisation (tt.divisibility, tt.pointer_range) is decided in this interpreter
    (gfxhound/compat.py): the release's own hooks, with a torch stand-in, or a fallback with its notice."""
    try:
        from gfxhound import compat
        return compat.specialisation_report()
    except Exception as exc:  # noqa: BLE001 - a Triton without a HIP backend (a stand-in, a CUDA-only build)
        return {"method": "unknown", "exact": False, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _tool_version(path: str):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


if __name__ == "__main__":
    print(json.dumps(describe(), indent=1))
    sys.exit(0)
