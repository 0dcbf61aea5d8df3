"""The one atomic file write: a reader (or a process killed mid-write) sees the old file or the new one, never half.

Why one: a corpus, a triage file, a nightly's records, a bisection's probe cache and the probed capabilities are
all read by later runs; a write that can be torn leaves a file the next run cannot load. Temp file in the same
directory (a unique name: two writers never share one), fsync, os.replace, fsync of the directory.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_synced(path, data) -> None:
    """Write `data` (str or bytes) to `path` and fsync it (no rename: for files inside a directory that is itself
    renamed into place)."""
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())


def fsync_dir(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path, data) -> Path:
    """Replace `path` with `data` (str or bytes) atomically, creating its directory; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{path.name}.", dir=path.parent)  # ".tmp-": corpus_store's garbage mark
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def install_dir(final, build) -> Path:
    """Build a directory under a `.tmp-` sibling name, then rename it into place: it appears complete or not at all."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".tmp-{final.name}.{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    build(tmp)
    fsync_dir(tmp)
    os.rename(tmp, final)
    fsync_dir(final.parent)
    return final
