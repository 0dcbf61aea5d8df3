"""Throughput of a `compile` campaign against a bare in-process `triton.compile` loop over the same kernels.

Prints ratios measured in the same run (targets: campaign/bare >= 0.85 with one worker; 2 workers >= 1.8x one).
Run from anywhere: `make bench` or `python -P bench/throughput.py [--kernels N] [--target gfx942]`.
"""
import argparse
import json
from collections import Counter
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {"TRITON_ALWAYS_COMPILE": "1", "TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore",
       "TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld"}


def bare_loop(specs_path, caps_path, arch):
    """Child process: render and import every kernel first, then time only triton.compile over them."""
    from gfxhound import compat
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.fuzz.render import render
    from gfxhound.oracle.compile_task import load_kernel
    from gfxhound.spec import KernelSpec
    caps = Capabilities.from_json(json.loads(Path(caps_path).read_text()))
    work = Path(tempfile.mkdtemp(prefix="bench-bare-"))
    os.environ["TRITON_CACHE_DIR"] = str(work / "cache")
    jobs = []
    for i, data in enumerate(json.loads(Path(specs_path).read_text())):
        rendered = render(KernelSpec.from_json(data), caps)
        (work / f"k{i}").mkdir()
        jobs.append((load_kernel(rendered.source, work / f"k{i}" / "kernel.py", rendered.kernel_name), rendered))
    compat.compile_for_amd(jobs[0][0], jobs[0][1].args, arch, jobs[0][1].options, jobs[0][1].env)  # warm-up
    start, failed = time.perf_counter(), 0
    for kernel, rendered in jobs:
        try:
            compat.compile_for_amd(kernel, rendered.args, arch, rendered.options, rendered.env)
        except Exception:  # noqa: BLE001 - the campaign counts these too
            failed += 1
    print(json.dumps({"seconds": time.perf_counter() - start, "kernels": len(jobs), "failed": failed}))


CAPS_CACHE = tempfile.mkdtemp(prefix="bench-caps-")  # probe once, not once per measured campaign


def campaign_rate(specs, arch, workers):
    from gfxhound.campaign import Campaign, CampaignConfig
    with tempfile.TemporaryDirectory() as corpus:
        config = CampaignConfig(targets=[arch], corpus=corpus, workers=workers, timeout=300, worker_env=ENV,
                                caps_cache=CAPS_CACHE)
        campaign = Campaign(config, specs=specs)
        stats = campaign.run()
        return stats.kernels / (time.time() - stats.started), stats, campaign.caps[arch]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=60)
    parser.add_argument("--target", default="gfx942")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bare", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        return bare_loop(*args.bare)
    os.environ.update(ENV)
    import itertools

    from gfxhound.fuzz.capabilities import introspect
    from gfxhound.fuzz.generate import spec_stream
    caps0 = introspect(args.target)
    t0 = time.perf_counter()
    specs = list(itertools.islice(spec_stream(caps0, args.seed), args.kernels))
    gen_rate = len(specs) / (time.perf_counter() - t0)
    # the bare loop compiles each kernel once: a metamorphic pair's second compile is work, not overhead
    specs = [s.replace(pair=None) for s in specs]
    # The bare loop has no isolation: a kernel that aborts the compiler would kill it. Classify first (untimed)
    # and measure all three on the kernels that compile.
    _, first, caps = campaign_rate(specs, args.target, 2)
    failing = {h: v for h, v in first.verdict_of.items() if v != "pass"}
    specs = [s for s in specs if s.spec_hash() not in failing]
    rate1, stats1, _ = campaign_rate(specs, args.target, 1)
    rate2, stats2, _ = campaign_rate(specs, args.target, 2)
    with tempfile.TemporaryDirectory() as tmp:
        specs_path, caps_path = Path(tmp) / "specs.json", Path(tmp) / "caps.json"
        specs_path.write_text(json.dumps([s.to_json() for s in specs]))
        caps_path.write_text(caps.dumps())
        out = subprocess.run([sys.executable, "-P", __file__, "--bare", str(specs_path), str(caps_path), args.target],
                             capture_output=True, text=True, env={**os.environ, **ENV}, check=True).stdout
    bare = json.loads(out.strip().splitlines()[-1])
    bare_rate = bare["kernels"] / bare["seconds"]
    print(f"kernels: {len(specs)} on {args.target} (left out, not compiling: {dict(Counter(failing.values()))}); "
          f"generation alone: {gen_rate:.0f} kernels/s")
    print(f"bare triton.compile loop (1 process):  {bare_rate:6.2f} kernels/s")
    print(f"campaign, 1 worker:                    {rate1:6.2f} kernels/s  verdicts {dict(stats1.verdicts)}")
    print(f"campaign, 2 workers:                   {rate2:6.2f} kernels/s")
    print(f"ratio campaign(1 worker)/bare:         {rate1 / bare_rate:6.3f}   (target >= 0.85)")
    print(f"speed-up 2 workers / 1 worker:         {rate2 / rate1:6.3f}   (target >= 1.8, on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
