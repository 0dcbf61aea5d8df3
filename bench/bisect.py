"""Bisection cost: probes used against ceil(log2 n), and what a warm cache buys.

Two ranges, each bisected twice with two *different* repros; the second runs on the cache the first left, and its
time is printed as a ratio to the first (target <= 0.2):

- Triton releases 3.4.0..3.9.0 (real wheels): the crash eaa29264 (fixed in 3.9.0, a fix bisection), then the
  frontend miscompile 03cc1f52 (since 3.5.0, a regression). Cold means an empty venv cache: pass --cache DIR to
  reuse one (then both runs are warm, and the ratio says so).
  Run twice: without prefetching, and with it (the default: while a probe runs, the venvs the next step may need
  are built in the background, so a later bisection over the range finds more of them).
- Commits L0..L9 of the synthetic llvm-project of the tests (real CMake/Ninja builds), two different .ll inputs.

Run: .venv/bin/python -P bench/bisect.py [--cache DIR] [--skip-releases]
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GFXHOUND = str(Path(sys.executable).parent / "gfxhound")


def timed(argv: list) -> tuple:
    start = time.time()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    seconds = time.time() - start
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(argv[:4])}... failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout), seconds


def report(name: str, runs: list):
    print(f"\n{name}")
    for label, record, seconds, built in runs:
        n = len(record["candidates"])
        probing = sum(p["seconds"] for p in record["probes"])  # each probe's time, its venv or build included
        print(f"  {label:<44} {len(record['probes'])} probes for {n} candidates (ceil(log2 n) + 2 ends = "
              f"{math.ceil(math.log2(n)) + 2}); {seconds:6.1f} s ({probing:.1f} s in probes); built {built}; "
              f"answer {(record['first_new'] or record.get('verdict', '?'))[:12]}")
    ratio = runs[1][2] / runs[0][2]
    print(f"  second / first (warm cache, different repro): {ratio:.3f}  (target <= 0.2)")
    return ratio


def releases(cache: Path, scratch: Path, prefetch: bool):
    corpus = scratch / f"corpus-{prefetch}"
    shutil.copytree(ROOT / "corpus" / "eaa292644627f3a9", corpus / "eaa292644627f3a9")
    common = ["--triton", "3.4.0..3.9.0", "--cache", str(cache), "--json"] + ([] if prefetch else ["--no-prefetch"])
    first, t1 = timed([GFXHOUND, "bisect", "eaa29264", "--fix", "--corpus", str(corpus), *common])
    second, t2 = timed([GFXHOUND, "bisect", "--repro", str(ROOT / "corpus" / "03cc1f52451e1522" / "minimal.py"),
                        *common])
    from gfxhound.bisect.releases import VenvCache
    VenvCache(cache).wait_idle()  # a prefetch still running belongs to no measured run; let it end before cleanup
    return report(f"Triton releases 3.4.0..3.9.0, {'with' if prefetch else 'without'} prefetching", [
        ("eaa29264 (crash; --fix)", first, t1, f"{len(first['venvs_built'])} venvs in {first['venv_seconds']} s"),
        ("03cc1f52 minimal.py (miscompile; regression)", second, t2,
         f"{len(second['venvs_built'])} venvs in {second['venv_seconds']} s")])


def commits(scratch: Path):
    sys.path.insert(0, str(ROOT / "tests"))
    from synthetic_repos import fake_llvm
    repo, hashes = fake_llvm(scratch / "repos")
    runs = []
    for label, text in (("shl 40", "shl 3\nshl 40\n"), ("shl 64 (a different input)", "shl 64\n")):
        ll = scratch / f"{len(runs)}.ll"
        ll.write_text(text)
        record, seconds = timed([GFXHOUND, "bisect", "--commits", f"{hashes[0]}..{hashes[-1]}", "--repo", str(repo),
                                 "--recipe", "llvm", "--input", str(ll), "--cache", str(scratch / "cache"),
                                 "--jobs", "2", "--json"])
        runs.append((label, record, seconds, f"{record['builds_built']} builds"))
    return report("Commits L0..L9 of the synthetic llvm-project (real CMake/Ninja builds)", runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", help="a venv cache to reuse (default: a fresh one, so the first run is cold)")
    parser.add_argument("--skip-releases", action="store_true", help="only the commit bisection (no downloads)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-bisect-") as tmp:
        scratch = Path(tmp)
        commits(scratch)
        if not args.skip_releases:
            for prefetch in (False, True):
                releases(Path(args.cache) if args.cache else scratch / f"venvs-{prefetch}", scratch, prefetch)


if __name__ == "__main__":
    main()
