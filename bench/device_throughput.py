"""Throughput of a `device` campaign against a bare multi-process `triton.compile` loop of the same kernels.

The device campaign compiles (through the JIT's warm-up) and evaluates the torch reference on CPU workers, and
launches on `--gpu-workers` workers per GPU. Its rate is compared with a bare loop that only compiles the same
kernels for the same GPU target on as many processes as the campaign has compile workers (target >= 0.85: neither
the GPU nor the oracle may be the bottleneck). Also printed: the share of wall time the GPUs were busy launching,
where a launch worker's turn goes, and the campaign's phases; `--gpu-workers 1,2,4` compares launch workers per
GPU. Needs a GPU: `python -P bench/device_throughput.py [--kernels N]`.
"""
import argparse
import itertools
import json
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

ENV = {"TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore"}


def _bare_worker(args):
    specs_json, caps_json, arch, index = args
    from gfxhound import compat
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.fuzz.render import render
    from gfxhound.oracle.compile_task import load_kernel
    from gfxhound.spec import KernelSpec
    from triton.backends.compiler import GPUTarget
    caps = Capabilities.from_json(caps_json)
    work = Path(tempfile.mkdtemp(prefix=f"bench-dev-{index}-"))
    os.environ["TRITON_CACHE_DIR"] = str(work / "cache")
    target = GPUTarget("cuda", int(arch[5:]), 32) if arch.startswith("cuda:") else GPUTarget("hip", arch, 64)
    done = 0
    for i, data in enumerate(specs_json):
        rendered = render(KernelSpec.from_json(data), caps)
        (work / f"k{i}").mkdir()
        kernel = load_kernel(rendered.source, work / f"k{i}" / "kernel.py", rendered.kernel_name)
        try:
            compat.compile_for_target(kernel, rendered.args, target, rendered.options, rendered.env)
            done += 1
        except Exception:  # noqa: BLE001 - rejected kernels cost their time too
            pass
    return done


def bare(specs, caps, arch, processes):
    chunks = [[s.to_json() for s in specs[i::processes]] for i in range(processes)]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes) as pool:
        pool.map(_bare_worker, [([], caps.to_json(), arch, -1 - i) for i in range(processes)])  # warm imports
        start = time.perf_counter()
        pool.map(_bare_worker, [(chunk, caps.to_json(), arch, i) for i, chunk in enumerate(chunks)])
        return len(specs) / (time.perf_counter() - start)


def _trace(trace, started):
    """Where prepared kernels waited: for a pool queue (submitted -> began), in the worker, for the main loop to
    see the result (ended -> seen), and when the campaign's kernels were done (the tail)."""
    if not trace:
        return {}
    queued = sorted(b - s for s, b, e, seen, pid in trace)
    worked = sorted(e - b for s, b, e, seen, pid in trace)
    seen = sorted(seen - e for s, b, e, seen, pid in trace)
    done = sorted(seen - started for s, b, e, seen, pid in trace)
    first = {}  # each worker's first task: when the worker was ready
    for s, b, e, _, pid in trace:
        first[pid] = min(first.get(pid, b), b)
    ready = sorted(b - started for b in first.values())
    n = len(trace)
    return {"n": n, "queued_mean": round(sum(queued) / n, 3), "queued_max": round(queued[-1], 2),
            "worked_sum": round(sum(worked), 1), "worked_max": round(worked[-1], 2),
            "seen_mean": round(sum(seen) / n, 3), "seen_max": round(seen[-1], 2),
            "workers_ready_at": [round(r, 1) for r in ready],
            "done_at": {f"p{q}": round(done[min(n - 1, n * q // 100)], 1) for q in (50, 90, 99, 100)}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--gpu-workers", default="1", help="launch workers per GPU; a list (1,2,4) runs each")
    args = parser.parse_args()
    os.environ.update(ENV)
    import torch

    from gfxhound.campaign import Campaign, CampaignConfig
    from gfxhound.cli.fuzz import _device_target
    from gfxhound.fuzz.generate import spec_stream
    arch = _device_target()
    gpus = torch.cuda.device_count()
    workers = max(1, (os.cpu_count() or 2) - gpus)
    from gfxhound.cli.common import cache_dir
    caps_cache = cache_dir()  # the capabilities a campaign on this machine probed already (a minute otherwise)
    with tempfile.TemporaryDirectory() as corpus:  # probe once (cached), then generate the kernels
        probe = Campaign(CampaignConfig(targets=[arch], corpus=corpus, backend="device", workers=workers,
                                        timeout=300, worker_env=ENV, caps_cache=caps_cache), specs=[])
        probe.run()
        caps = probe.caps[arch]
    specs = list(itertools.islice(spec_stream(caps, args.seed), args.kernels))
    runs = []
    for lanes in [int(n) for n in args.gpu_workers.split(",")]:
        with tempfile.TemporaryDirectory() as corpus:
            campaign = Campaign(CampaignConfig(targets=[arch], corpus=corpus, backend="device", workers=workers,
                                               gpu_workers=lanes, timeout=300, worker_env=ENV,
                                               caps_cache=caps_cache), specs=specs)
            campaign.trace = []
            stats = campaign.run()
            wall = time.time() - stats.started - stats.phases["stop"]  # to the last kernel, as bench/throughput
        runs.append((lanes, stats, wall, campaign.gpus_busy / gpus / wall if wall else 0.0,
                     _trace(campaign.trace, stats.started)))
    bare_same = bare(specs, caps, arch, workers)
    from gfxhound.campaign.stats import _phases
    print(f"kernels: {len(specs)} on {arch}, {gpus} GPU(s), {workers} compile workers")
    print(f"bare triton.compile loop, {workers} processes: {bare_same:6.2f} kernels/s")
    figures = []
    for lanes, stats, wall, busy, trace in runs:
        rate = stats.kernels / wall
        ex = dict(stats.execution)
        launched = max(1, ex.get("launched", 0))
        turn = {k[5:-3]: round(v / launched, 1) for k, v in sorted(ex.items()) if k.startswith("turn_")}
        print(f"launch workers per GPU {lanes}: campaign {rate:6.2f} kernels/s, ratio {rate / bare_same:6.3f} "
              f"(target >= 0.85), GPU busy share {busy:6.3f}; verdicts {dict(stats.verdicts)}")
        print(f"  where the campaign's time went (s): {_phases(stats, wall)}")
        print(f"  a launch worker's turn, mean ms: {turn}")
        print(f"  compile workers, s: {trace}; adaptive timeouts {stats.timeouts}")
        figures.append({"gpu_workers": lanes, "rate": rate, "ratio": rate / bare_same, "busy": busy,
                        "phases": _phases(stats, wall), "turn_ms": turn, "execution": ex,
                        "trace": trace, "timeouts": stats.timeouts,
                        "verdicts": dict(stats.verdicts)})
    if os.environ.get("BENCH_OUT"):  # machine-readable figures for docs
        Path(os.environ["BENCH_OUT"]).write_text(json.dumps(
            {"kernels": len(specs), "bare": bare_same, "workers": workers, "gpus": gpus, "runs": figures}))


if __name__ == "__main__":
    main()
