"""Collectives across real GPUs: one process per GPU, launched by torchrun, every process drawing the same specs.

    torchrun --nproc-per-node 2 -m gfxhound.oracle.distributed --kernels 200 --seed 0

Each rank owns one heap; the kernel finds its peers' heaps through a table of their addresses, exactly as on
virtual ranks (oracle/collective.py), but with one grid row per process (`rank_base` = the process's rank) and
`sys` scope (agent scope orders nothing for another GPU). Where the heaps come from:

- `--heap symm` (default on CUDA): torch symmetric memory (`symm_mem.empty` + `rendezvous`; `buffer_ptrs` is the
  table). Verified on NVIDIA.
- `--heap ipc`: each process allocates with torch and shares an IPC handle (`_share_cuda_`, opened with peer
  access by torch); the same calls are HIP IPC on ROCm. UNVERIFIED on AMD hardware (none was available); run on
  NVIDIA to check the mechanism.

Every process judges its own heap after every launch; rank 0 gathers the judgements and prints one JSON
summary. A spec that fails is printed whole, so it can be replayed (on virtual ranks: `gfxhound fuzz` with the
same pattern) and kept.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HEAP_BYTES = 32 << 20  # one heap per process, sized for the largest spec the strategy draws
MAX_SPIN = 1 << 22  # processes launch with some skew: a longer bound than on one GPU


def _heaps(kind, device, group):
    import torch
    import torch.distributed as dist
    if kind == "symm":
        import torch.distributed._symmetric_memory as symm_mem
        heap = symm_mem.empty(HEAP_BYTES, dtype=torch.uint8, device=device)
        handle = symm_mem.rendezvous(heap, group.group_name if hasattr(group, "group_name") else group)
        return heap, [int(p) for p in handle.buffer_ptrs], handle
    heap = torch.empty(HEAP_BYTES, dtype=torch.uint8, device=device)
    shared = heap.untyped_storage()._share_cuda_()
    handles = [None] * dist.get_world_size()
    dist.all_gather_object(handles, shared)
    opened, ptrs = [], []
    for r, h in enumerate(handles):
        if r == dist.get_rank():
            ptrs.append(heap.data_ptr())
            continue
        # opened in this process's own device context (the handle names the owner's device), so the mapping is
        # a peer mapping this GPU's kernels can use
        storage = torch.UntypedStorage._new_shared_cuda(device.index, *h[1:])
        opened.append(storage)
        ptrs.append(storage.data_ptr())
    return heap, ptrs, opened


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gfxhound.oracle.distributed")
    parser.add_argument("--kernels", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--patterns", default="", help="comma-separated pattern names (default: all)")
    parser.add_argument("--controls", type=float, default=0.0, help="share of negative controls")
    parser.add_argument("--heap", choices=["symm", "ipc"], default="symm")
    parser.add_argument("--json", help="also write the summary here (rank 0)")
    args = parser.parse_args(argv)

    import torch
    import torch.distributed as dist

    from gfxhound.fuzz.collective.spec import DISTRIBUTED_SCOPE
    from gfxhound.fuzz.generate import spec_stream
    from gfxhound.fuzz.render import render

    from .collective import Judgement, case_of, fill, judge, launch_options
    from .compile_task import load_kernel
    from .accepted_options import accepted_options as _accepted_options

    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    if world < 2:
        print("gfxhound.oracle.distributed: needs 2 or more processes (torchrun --nproc-per-node N)", file=sys.stderr)
        return 2
    heap, ptrs, keep = _heaps(args.heap, device, dist.group.WORLD)
    bases = torch.tensor(ptrs, dtype=torch.int64, device=device)
    options = {"patterns": [p for p in args.patterns.split(",") if p]} if args.patterns else {}
    stream = spec_stream(None, args.seed, family="collectives",
                         collective=dict(options, ranks=world, scope=DISTRIBUTED_SCOPE, controls=args.controls))
    work = Path(tempfile.mkdtemp(prefix=f"gfxhound-dist-{rank}-"))
    tally, failures, started = Counter(), [], time.time()
    for index in range(args.kernels):
        spec = next(stream)
        case = case_of(spec)
        c = spec.collective
        if case["nbytes"] > HEAP_BYTES:
            tally["skipped:heap"] += 1
            continue
        rendered = render(spec, None)
        kernel = load_kernel(rendered.source, work / f"k{index}.py", rendered.kernel_name)
        launch = launch_options(rendered, _accepted_options(), "device")
        try:  # compile before the first barrier: the launches of all ranks then start together
            kernel.warmup(bases, rank, c["n"], 1, MAX_SPIN, R=world, BLOCK=c["block"], NPROG=c["programs"],
                          **launch, grid=(c["programs"], 1, 1))
        except Exception:  # noqa: BLE001 - the launch below meets the same failure and reports it
            pass
        judgement, error = Judgement(), ""
        view = heap[:case["nbytes"]]
        try:
            for epoch in (1, 2):
                fill(case, [view], rank_of=rank, first=epoch == 1)
                torch.cuda.synchronize()
                dist.barrier()
                kernel[(c["programs"], 1, 1)](bases, rank, c["n"], epoch, MAX_SPIN, R=world, BLOCK=c["block"],
                                              NPROG=c["programs"], **launch)
                torch.cuda.synchronize()
                dist.barrier()
                judge(case, [view], epoch, judgement, rank_of=rank)
        except Exception as exc:  # noqa: BLE001 - a compile or launch failure is data, reported with its spec
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        mine = {"ok": judgement.ok and not error, "problems": judgement.problems[:3], "error": error,
                "compared": judgement.compared}
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        if rank == 0:
            ok = all(m["ok"] for m in everyone)
            tally["kernels"] += 1
            tally["compared"] += sum(m["compared"] for m in everyone)
            key = f"control:{c['control']}:{'missed' if ok else 'caught'}" if c["control"] else \
                ("pass" if ok else "error" if any(m["error"] for m in everyone) else "wrong")
            tally[key] += 1
            tally[f"pattern:{c['pattern']}"] += 1
            if not ok and not c["control"]:
                failures.append({"spec": spec.to_json(), "ranks": everyone})
    if rank == 0:
        summary = {"world": world, "heap": args.heap, "seed": args.seed, "seconds": round(time.time() - started, 1),
                   "device": torch.cuda.get_device_name(device), "tally": dict(sorted(tally.items())),
                   "failures": failures[:20]}
        text = json.dumps(summary, indent=1)
        print(text)
        if args.json:
            Path(args.json).write_text(text + "\n")
    dist.barrier()
    del keep
    dist.destroy_process_group()
    return 0 if rank != 0 or not failures else 1


if __name__ == "__main__":
    sys.exit(main())
