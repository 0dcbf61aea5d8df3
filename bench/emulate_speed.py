"""The emulate backend's speed figure on generated kernels: both executors' seconds against the compile's, a kernel
each, median (the campaign's `execution.speed.ratio_median`; target <= 2), with the machine-code executor's reuse
of results (executors/amdgcn/pcode_reuse.py) on and off, measured in the same run on the same kernels.

Every kernel is compiled afresh (TRITON_ALWAYS_COMPILE), in this process, as a campaign worker would, once without
the reuse and once with it. Kernels the machine could not judge either way (unresolved, over its cap) are left out
of the medians, as the campaign leaves them out. Exit 0 when the median ratio with the reuse is at most 2.
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


def _judge(spec, caps, arch):
    """(compile seconds, executors' seconds), or None where the machine could not judge the kernel."""
    from gfxhound.oracle import emulate_task
    folder = Path(tempfile.mkdtemp(prefix="bench-emulate-"))
    task = {"spec": spec.to_json(), "caps": caps.to_json(), "arch": arch, "backend": "emulate",
            "task_dir": str(folder), "stderr_path": str(folder / "stderr.txt"), "llc": None, "timeout": 600}
    outcome = emulate_task.run_emulate(task)
    machine = outcome.get("machine") or {}
    if outcome.get("status") == "ok" and machine.get("status") in ("agree", "disagree", "hazard"):
        return outcome["compile_s"], outcome["emulate_s"] + machine["s"]
    return None


def measure(specs, caps, arch) -> dict:
    """{reuse: [(compile s, executors' s)]} over the kernels judged both ways; each kernel runs without the reuse
    and then with it, one after the other, so a slower spell of the machine weighs on both alike."""
    from gfxhound.executors.amdgcn import pcode
    pairs = {False: [], True: []}
    for spec in specs:
        got = {}
        for reuse in (False, True):
            pcode.REUSE = reuse
            pcode.RESULTS.table.clear()   # no kernel profits from another's runs
            got[reuse] = _judge(spec, caps, arch)
        if got[False] and got[True]:
            for reuse in got:
                pairs[reuse].append(got[reuse])
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
    _judge(specs[0], caps, args.target)  # warm-up: imports, the pseudocode compiles
    started = time.perf_counter()
    rows = {}
    for reuse, pairs in measure(specs, caps, args.target).items():
        rows[reuse] = (len(pairs), statistics.median(c for c, _ in pairs), statistics.median(e for _, e in pairs),
                       statistics.median(e / max(1e-6, c) for c, e in pairs))
    wall = time.perf_counter() - started
    print(f"{args.target}, {args.kernels} kernels of seed {args.seed}, compiled afresh in this process")
    print(f"reuse  judged  compile_s(median)  executors_s(median)  ratio(median)     ({wall:.0f} s in all)")
    for reuse, (n, c, e, r) in rows.items():
        print(f"{'on' if reuse else 'off':5s}  {n:6d}  {c:17.3f}  {e:19.3f}  {r:13.2f}")
    print(f"executors' median seconds, reuse on over off: {rows[True][2] / rows[False][2]:.2f}")
    return 0 if rows[True][3] <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
