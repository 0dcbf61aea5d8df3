"""What GitHub's actions and services do that later steps need, simulated here: the cache, the artifacts, the
checkouts (of a snapshot of this working tree), and reading the JUnit reports."""
from __future__ import annotations

import fnmatch
import glob
import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from .expressions import UsageError

ROOT = Path(__file__).resolve().parents[2]


# --- the simulated services ------------------------------------------------------------------------------------
class Services:
    """The cache and the artifacts, kept in the dry run's state directory across jobs (and nights: the cache)."""

    def __init__(self, state: Path):
        self.cache = state / "cache"
        self.artifacts = state / "artifacts"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.artifacts.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _paths(text: str) -> list:
        return [line.strip() for line in str(text).splitlines() if line.strip()]

    def cache_save(self, ws: Path, inputs: dict) -> str:
        key = inputs["key"]
        entry = self.cache / key
        if entry.exists():
            return f"cache key {key} exists already: not saved (entries are immutable)"
        saved = []
        for p in self._paths(inputs["path"]):
            if p.startswith("!"):
                raise UsageError(f"cache path {p}: exclusions are not supported (nor by actions/cache)")
            src = ws / p.rstrip("/")
            if src.exists():
                _copy(src, entry / "files" / p.rstrip("/"))
                saved.append(p)
        if not saved:
            return "cache: none of the paths exist, nothing saved"
        (entry / "created").write_text(str(time.time_ns()))
        return f"cache saved as {key}: {', '.join(saved)}"

    def cache_restore(self, ws: Path, inputs: dict, outputs: dict) -> str:
        key, prefixes = inputs["key"], self._paths(inputs.get("restore-keys", ""))
        entries = sorted((e for e in self.cache.iterdir() if (e / "created").exists()),
                         key=lambda e: int((e / "created").read_text()), reverse=True)
        found = next((e for e in entries if e.name == key), None)
        for prefix in prefixes:
            found = found or next((e for e in entries if e.name.startswith(prefix)), None)
        outputs.update({"cache-hit": "true" if found and found.name == key else "false",
                        "cache-primary-key": key, "cache-matched-key": found.name if found else ""})
        if not found:
            return f"cache: nothing for {key} nor the prefixes {prefixes} (a first night)"
        for p in self._paths(inputs["path"]):
            src = found / "files" / p.rstrip("/")
            if src.exists():
                _copy(src, ws / p.rstrip("/"))
        return f"cache restored from {found.name}"

    def upload(self, ws: Path, run_key: str, inputs: dict) -> str:
        """run_key: <workflow>/<run id>: artifacts belong to one run of one workflow."""
        patterns = self._paths(inputs["path"])
        matched = [Path(m) for p in patterns for m in glob.glob(str(ws / p.rstrip("/")))]
        if not matched:
            return f"artifact {inputs['name']}: no files found for {patterns} (warning, as on GitHub)"
        root = matched[0] if len(matched) == 1 and matched[0].is_dir() else Path(os.path.commonpath(
            [m if m.is_dir() and len(matched) > 1 else m.parent for m in matched]))
        dest = self.artifacts / run_key / inputs["name"]
        if dest.exists():
            raise UsageError(f"artifact {inputs['name']} uploaded twice in run {run_key}")
        for m in matched:
            _copy(m, dest / m.relative_to(root) if m != root else dest)
        files = sum(1 for f in dest.rglob("*") if f.is_file())
        return f"artifact {inputs['name']}: {files} files from {root.relative_to(ws) if root != ws else '.'}/"

    def download(self, ws: Path, run_key: str, inputs: dict) -> str:
        base = self.artifacts / run_key
        names = sorted(d.name for d in base.iterdir()) if base.exists() else []
        if inputs.get("pattern"):
            names = [n for n in names if fnmatch.fnmatch(n, inputs["pattern"])]
        elif inputs.get("name"):
            names = [n for n in names if n == inputs["name"]]
        dest = ws / inputs.get("path", ".")
        for n in names:
            single = inputs.get("name") and not inputs.get("pattern")
            _copy(base / n, dest if single or inputs.get("merge-multiple") in (True, "true") else dest / n)
        return f"artifacts {names or 'none'} into {inputs.get('path', '.')}/"


def _copy(src: Path, dest: Path):
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
    else:
        shutil.copy2(src, dest)


# --- the repository a checkout gives -----------------------------------------------------------------------------
def snapshot(dest: Path, empty_corpus: bool) -> Path:
    """This working tree as a one-commit repository (tracked files and untracked ones git does not ignore, less
    scratch/): what a checkout of it would give once committed."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, check=True).stdout
    for name in sorted(set(filter(None, listing.split("\0")))):
        src = ROOT / name
        if name.startswith("scratch/") or not src.is_file() and not src.is_symlink():
            continue
        if empty_corpus and name.startswith("corpus/") and name.count("/") > 1 and "/perfset/" not in name:
            continue  # the findings (their replay takes minutes every night); triage.json and README stay
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name, follow_symlinks=False)
    git = ["git", "-c", "user.name=dry run", "-c", "user.email=dry-run@localhost", "-c", "init.defaultBranch=main"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the working tree, for the dry run"]):
        subprocess.run(git + argv, cwd=dest, check=True, capture_output=True, timeout=120)
    return dest


def checkout(repo: Path, dest: Path):
    """What actions/checkout gives: a fresh clone of the snapshot at `dest` (whatever was there is removed)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(repo), str(dest)], check=True, capture_output=True, timeout=120)


def _junit(ws: Path, patterns: str) -> str:
    files = sorted(f for p in Services._paths(patterns) for f in glob.glob(str(ws / p)))
    if not files:
        return f"no JUnit report matches {patterns!r} (the action warns)"
    tests = failures = 0
    for f in files:
        root = ET.parse(f).getroot()
        for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
            tests += int(suite.get("tests", 0))
            failures += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return f"{len(files)} report(s), {tests} tests, {failures} failing (published as a check run on GitHub)"
