"""A release cache (bisect/builds.py's layout) whose entries are venvs that already exist: real releases
without a download, for the tests that bisect over them."""
import os
import shutil


def fake_cache(tmp_path, venvs):
    """A cache entry that is an existing venv: its pyvenv.cfg, and links to its interpreter and libraries."""
    cache = tmp_path / "venvs"
    for version, venv in venvs.items():
        entry = cache / f"triton-{version}"
        (entry / "bin").mkdir(parents=True)
        shutil.copyfile(venv / "pyvenv.cfg", entry / "pyvenv.cfg")
        os.symlink(venv / "bin" / "python", entry / "bin" / "python")
        for lib in ("lib", "lib64"):
            if (venv / lib).exists():
                os.symlink(venv / lib, entry / lib)
        (entry / ".complete").write_text(version)
    return cache
