"""Fill, launch and judge the heaps of a collective: plain data in, verdict data out.

Standalone on purpose (numpy and torch only, no gfxhound import): a collective finding's repro script embeds this
file's source and a serialised case, so the repro runs with triton and torch alone, as the repro protocol asks,
and judges exactly as the campaign did. oracle/collective.py builds the case from a spec.

A case is a dict: ranks, programs, n, block, control, flags ("epoch" | "reset"), dtype (the data dtype), regions
{name: {offset, count, dtype, canary: [start, length]}}, nbytes, inputs [per rank {region: float64 array}],
expected [per rank {region: {want, absum, terms, acc}}], flag_arrays [[name, count, kind]], zero [regions].
"""
from __future__ import annotations

import numpy as np

CANARY_BYTE = 0xA5
INT_FILL = -1999999999  # what NaN is for int32 regions: far outside every value a pattern computes
UNIT_ROUNDOFF = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "i32": 0.0}
TORCH_DTYPE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "i32": "int32"}
ITEMSIZE = {"fp32": 4, "fp16": 2, "bf16": 2, "i32": 4}
ACC = {"fp32": "fp32", "fp16": "fp32", "bf16": "fp32", "i32": "i32"}
LAUNCHES = 2  # a second launch reuses the flags the first one left (epoch numbers, self-reset)


class Judgement:
    def __init__(self):
        self.compared = 0
        self.mismatches = 0
        self.gave_up = 0  # spin-waits that hit max_spin (ERR)
        self.other = 0  # canaries, inputs and flags found wrong
        self.problems = []  # one line each, the first few

    def add(self, line):
        if len(self.problems) < 8:
            self.problems.append(line)

    def wrong(self, line):
        self.other += 1
        self.add(line)

    @property
    def ok(self):
        return not self.mismatches and not self.gave_up and not self.other


def _torch_dtype(name):
    import torch
    return getattr(torch, TORCH_DTYPE[name])


def _view(heap, region):
    start = region["offset"]
    return heap[start:start + region["count"] * ITEMSIZE[region["dtype"]]].view(_torch_dtype(region["dtype"]))


def _fill_value(region):
    return INT_FILL if region["dtype"] == "i32" else float("nan")


def fill(case, heaps, rank_of=None, first=True):
    """Write the inputs, the NaN (or zero) fills and the canaries; FLAGS and ERR are zeroed on the first launch
    only: later launches find the flags the earlier ones left, as a real job's next collective does."""
    import torch
    for index, heap in enumerate(heaps):
        r = index if rank_of is None else rank_of
        if first:
            heap.fill_(CANARY_BYTE)
        for name, region in case["regions"].items():
            start, length = region["canary"]
            heap[start:start + length] = CANARY_BYTE
            if region["count"] == 0:
                continue
            view = _view(heap, region)
            if name in ("IN", "AUX"):
                values = case["inputs"][r].get(name)
                if values is not None:
                    view.copy_(torch.from_numpy(np.asarray(values, dtype=np.float64)).to(view.dtype))
            elif name in ("OUT", "SCR"):
                view.fill_(0 if name in case["zero"] else _fill_value(region))
            elif first:
                view.zero_()


def judge(case, heaps, launch, judgement, rank_of=None):
    """Compare every rank's heap after launch number `launch` (1-based)."""
    import torch
    for index, heap in enumerate(heaps):
        r = index if rank_of is None else rank_of
        host = heap.cpu()
        for name, region in case["regions"].items():
            start, length = region["canary"]
            if not bool((host[start:start + length] == CANARY_BYTE).all()):
                judgement.wrong(f"rank {r}: the canary after {name} was overwritten (out-of-bounds write)")
        for name in ("IN", "AUX"):
            region = case["regions"][name]
            if region["count"] and name in case["inputs"][r]:
                got = _view(host, region).to(torch.float64).numpy()
                if not np.array_equal(got, np.asarray(case["inputs"][r][name], dtype=np.float64)):
                    judgement.wrong(f"rank {r}: the kernel modified its {name} region")
        gave_up = int(_view(host, case["regions"]["ERR"])[0])
        if gave_up:
            judgement.gave_up += gave_up
            judgement.add(f"rank {r}: {gave_up} spin-wait(s) gave up after max_spin polls (launch {launch})")
        _judge_flags(case, host, r, launch, judgement)
        for name, expect in case["expected"][r].items():
            _judge_region(case, host, r, name, expect, judgement)


def _judge_flags(case, host, r, launch, judgement):
    import torch
    flags = _view(host, case["regions"]["FLAGS"]).to(torch.int64).numpy()
    start = 0
    for name, count, kind in case["flag_arrays"]:
        got = flags[start:start + count]
        start += count
        if case["control"] == "no-barrier" and kind != "counter":
            continue  # a wait left out leaves self-resetting flags set: that is the control, not a finding
        want = {"signal": launch if case["flags"] == "epoch" else 0, "counter": launch * case["programs"]}.get(kind, 0)
        wrong = np.flatnonzero(got != want)
        if wrong.size:
            judgement.wrong(f"rank {r}: flag array {name!r} ({kind}) holds {got[wrong[0]]} at slot {wrong[0]}, "
                            f"expected {want} after launch {launch}")


def _judge_region(case, host, r, name, expect, judgement):
    import torch
    region = case["regions"][name]
    got = _view(host, region).to(torch.float64).numpy()
    want = np.asarray(expect["want"], dtype=np.float64)
    judgement.compared += want.size
    fill = np.isnan(want)
    if region["dtype"] == "i32":
        bad = np.where(fill, got != INT_FILL, got != np.nan_to_num(want))
    else:
        acc = expect["acc"] or ACC[case["dtype"]]
        bound = np.zeros_like(want)
        if expect["terms"]:
            bound = expect["terms"] * UNIT_ROUNDOFF[acc] * np.asarray(expect["absum"]) + \
                UNIT_ROUNDOFF[region["dtype"]] * np.abs(np.nan_to_num(want))
        with np.errstate(invalid="ignore"):
            close = np.abs(got - want) <= bound
        bad = np.where(fill, ~np.isnan(got), ~close)
    count = int(bad.sum())
    if count:
        judgement.mismatches += count
        i = int(np.flatnonzero(bad)[0])
        judgement.add(f"rank {r}: {name}[{i}] = {got[i]!r}, expected {want[i]!r} ({count} of {want.size} wrong)")


def run_virtual(case, kernel, options, device, max_spin, launches=LAUNCHES):
    """All ranks on one device: one heap each, rank = program_id(1)."""
    import torch
    heaps = [torch.empty(case["nbytes"], dtype=torch.uint8, device=device) for _ in range(case["ranks"])]
    bases = torch.tensor([h.data_ptr() for h in heaps], dtype=torch.int64, device=device)
    judgement = Judgement()
    grid = (case["programs"], case["ranks"], 1)
    for launch in range(1, launches + 1):
        fill(case, heaps, first=launch == 1)
        kernel[grid](bases, 0, case["n"], launch, max_spin, R=case["ranks"], BLOCK=case["block"],
                     NPROG=case["programs"], **options)
        if device != "cpu":
            torch.cuda.synchronize()
        judge(case, heaps, launch, judgement)
    return judgement
