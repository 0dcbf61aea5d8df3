"""Cost of keeping the bug's identity: gfxhound's signature-keeping llvm-reduce against a naive "llc crashes" test.

Both reduce the same checked-in LLVM IR finding with the same llvm-reduce, llc and -j. Printed: each one's time
and result size, the ratio of times (target <= 1.5: the signature check may cost little over a bare crash test),
and the signature the naive result crashes with (a naive test may slide to another crash; ours cannot).
Run: `python -P bench/reduce.py [--finding 28f1b1b8] [--jobs 2]`. Needs Debian's llvm-22.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LLC = "/usr/lib/llvm-22/bin/llc"
LLVM_REDUCE = "/usr/lib/llvm-22/bin/llvm-reduce"

NAIVE_TEST = """#!/bin/sh
# any crash of llc counts (what a hand-written llvm-reduce test usually checks)
{llc} -mtriple=amdgcn-amd-amdhsa -mcpu={arch} -O3 -verify-machineinstrs -filetype=null {fp} "$1" 2>/dev/null
code=$?
test "$code" -ge 128 -o "$code" -eq 1 && exit 0
exit 1
"""


def lines(path):
    return sum(1 for line in Path(path).read_text().splitlines() if line.strip())


def signature(arch, path, fp_contract):
    from gfxhound.compat import LLC_ENDED, llc_verify
    from gfxhound.signature import summarise
    status, text = llc_verify(LLC, arch, path, 120, fp_contract)
    if status not in ("failed", "timeout"):
        return f"(no failure: {status})"
    return summarise(text, "timeout" if status == "timeout" else LLC_ENDED)["signature"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--finding", default="28f1b1b8")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, alternating; medians are compared")
    args = parser.parse_args()
    from gfxhound.corpus_store import Corpus
    from gfxhound.reduce.llvm_ir import reduce_ir, signature_property
    corpus = Corpus(ROOT / "corpus")
    finding = corpus.get(args.finding)
    example = next(e for e in corpus.example_dirs(finding.signature) if (e / "ir" / "kernel.llir").exists())
    run = json.loads((example / "run.json").read_text())
    arch = run["target"]
    fp = bool(run.get("options_applied", {}).get("enable_fp_fusion", True))
    source = example / "ir" / "kernel.llir"
    ours_times, naive_times = [], []
    for _ in range(max(1, args.repeat)):
        with tempfile.TemporaryDirectory(prefix="bench-reduce-") as tmp:
            tmp = Path(tmp)
            start = time.perf_counter()
            ours = reduce_ir(source, signature_property(finding.signature, arch, LLC, fp), tmp / "ours",
                             llvm_reduce=LLVM_REDUCE, jobs=args.jobs, timeout_s=1800)
            ours_times.append(time.perf_counter() - start)
            test = tmp / "naive.sh"
            test.write_text(NAIVE_TEST.format(llc=LLC, arch=arch, fp="-fp-contract=fast" if fp else ""))
            test.chmod(0o755)
            naive_out = tmp / "naive.ll"
            start = time.perf_counter()
            subprocess.run([LLVM_REDUCE, f"--test={test}", f"-j={args.jobs}", "-o", str(naive_out), str(source)],
                           capture_output=True, text=True, timeout=1800)
            naive_times.append(time.perf_counter() - start)
            naive_lines = lines(naive_out) if naive_out.exists() else "?"
            naive_sig = signature(arch, naive_out, fp) if naive_out.exists() else "(no output)"
    ours_s, naive_s = statistics.median(ours_times), statistics.median(naive_times)
    print(f"finding {finding.signature} ({arch}), {lines(source)} lines of LLVM IR, llvm-reduce -j {args.jobs}, "
          f"median of {len(ours_times)} runs each")
    print(f"signature-keeping test: {ours_s:7.1f} s -> {ours.lines_after} lines (signature {finding.signature})")
    print(f"naive 'llc crashes':    {naive_s:7.1f} s -> {naive_lines} lines "
          f"(crashes with signature {naive_sig}{'' if naive_sig == finding.signature else ': another bug'})")
    print(f"time ratio ours/naive:  {ours_s / naive_s:7.2f}   (target <= 1.5; runs: "
          f"{', '.join(f'{a:.1f}/{b:.1f}' for a, b in zip(ours_times, naive_times))})")


if __name__ == "__main__":
    sys.exit(main())
