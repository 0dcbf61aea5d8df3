"""The emulate backend's speed figure on generated kernels: both executors' seconds against the compile's, a kernel
each, median (the campaign's `execution.speed.ratio_median`; target <= 2), with the machine-code executor's reuse
of results (executors/amdgcn/pcode_reuse.py) on and off, measured in the same run on the same kernels.

Every kernel is compiled afresh (TRITON_ALWAYS_COMPILE), in this process, as a campaign worker would. Kernels the
machine could not judge (unresolved, over its cap) are left out of the median, as the campaign leaves them out.
Run: `python -P bench/emulate_speed.py [--kernels 30] [--target gfx942] [--seed 7]`.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ENV = {"TRITON_ALWAYS_COMPILE": "1", "TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore",
       "TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld"}


def measure(specs, caps, arch, reuse: bool) -> list:
    """(compile seconds, executors' seconds) of each kernel both executors judged."""
    from gfxhound.executors.amdgcn import pcode
    from gfxhound.oracle import emulate_task
    pcode.REUSE = reuse
    pcode.RESULTS.table.clear()
    pairs = []
    for spec in specs:
        folder = Path(tempfile.mkdtemp(prefix="bench-emulate-"))
        task = {"spec": spec.to_json(), "caps": caps.to_json(), "arch": arch, "backend": "emulate",
                "task_dir": str(folder), "stderr_path": str(folder / "stderr.txt"), "llc": None, "timeout": 600}
        outcome = emulate_task.run_emulate(task)
        machine = outcome.get("machine") or {}
        if outcome.get("status") == "ok" and machine.get("status") in ("agree", "disagree", "hazard"):
            pairs.append((outcome["compile_s"], outcome["emulate_s"] + machine["s"]))
    return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=30)
    parser.add_argument("--target", default="gfx942")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.environ.update(ENV)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-emulate-cache-")
    from gfxhound.fuzz.capabilities import assume_all
    from gfxhound.fuzz.generate import spec_stream
    caps = assume_all(args.target)
    specs = [s for _, s in zip(range(args.kernels), spec_stream(caps, args.seed))]
    measure(specs[:1], caps, args.target, True)  # warm-up: imports, the pseudocode compiles
    rows = {}
    for reuse in (False, True):
        started = time.perf_counter()
        pairs = measure(specs, caps, args.target, reuse)
        ratios = [e / max(1e-6, c) for c, e in pairs]
        rows[reuse] = (len(pairs), statistics.median(c for c, _ in pairs), statistics.median(e for _, e in pairs),
                       statistics.median(ratios), time.perf_counter() - started)
    print(f"{args.target}, {args.kernels} kernels of seed {args.seed}, compiled afresh in this process")
    print("reuse  judged  compile_s(median)  executors_s(median)  ratio(median)  wall_s")
    for reuse, (n, c, e, r, wall) in rows.items():
        print(f"{'on' if reuse else 'off':5s}  {n:6d}  {c:17.3f}  {e:19.3f}  {r:13.2f}  {wall:6.1f}")
    print(f"executors' median seconds, reuse on over off: {rows[True][2] / rows[False][2]:.2f}")
    return 0 if rows[True][3] <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
