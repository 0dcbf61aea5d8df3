"""Throughput of a `device` campaign against a bare multi-process `triton.compile` loop of the same kernels.

The device campaign compiles (through the JIT's warm-up) and evaluates the torch reference on CPU workers, and
launches on one worker per GPU. Its rate is compared with a bare loop that only compiles the same kernels for the
same GPU target on as many processes as the campaign has compile workers (target >= 0.85: neither the GPU nor the
oracle may be the bottleneck). Also printed: the share of wall time the GPU workers were busy, and the bare loop
on every core. Needs a GPU: `python -P bench/device_throughput.py [--kernels N]`.
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
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
    with tempfile.TemporaryDirectory() as corpus:
        campaign = Campaign(CampaignConfig(targets=[arch], corpus=corpus, backend="device", workers=workers,
                                           timeout=300, worker_env=ENV, caps_cache=caps_cache), specs=specs)
        stats = campaign.run()
        wall = time.time() - stats.started
        busy = campaign.gpus_busy / wall if wall else 0.0
    rate = stats.kernels / wall
    bare_same = bare(specs, caps, arch, workers)
    print(f"kernels: {len(specs)} on {arch}, {gpus} GPU(s), {workers} compile workers; verdicts "
          f"{dict(stats.verdicts)}")
    print(f"device campaign (compile + reference + launch + compare): {rate:6.2f} kernels/s")
    print(f"bare triton.compile loop, {workers} processes:              {bare_same:6.2f} kernels/s")
    print(f"ratio campaign/bare:                                      {rate / bare_same:6.3f}   (target >= 0.85)")
    print(f"GPU busy share:                                           {busy:6.3f}")
    from gfxhound.campaign.stats import _phases
    phases = _phases(stats, wall)
    print(f"where the campaign's time went (s): {phases}; GPU-side {dict(stats.execution)}")
    if os.environ.get("BENCH_OUT"):  # machine-readable figures for docs
        Path(os.environ["BENCH_OUT"]).write_text(json.dumps(
            {"kernels": len(specs), "rate": rate, "bare": bare_same, "ratio": rate / bare_same, "busy": busy,
             "phases": phases, "execution": dict(stats.execution),
             "verdicts": dict(stats.verdicts), "workers": workers, "gpus": gpus}))


if __name__ == "__main__":
    main()
