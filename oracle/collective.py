"""The collective oracle: fill every rank's heap, launch the pattern (epoch 1, 2, ...: flags are reused), and
judge each rank's regions against the float64 reference, the error counter, the final flag state, the canaries
and the untouched inputs.

Backend-neutral: heaps are torch tensors on `device` ("cpu" under the interpreter, "cuda" on NVIDIA and on ROCm,
where torch's cuda device is HIP). How the heaps are allocated and how their addresses reach the kernel is the
caller's (virtual ranks here; one process per GPU in oracle/distributed.py).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.collective.emit import ACC
from gfxhound.fuzz.collective.layout import CANARY_BYTE
from gfxhound.fuzz.collective.patterns import PATTERNS
from gfxhound.fuzz.collective.spec import layout_of

INT_FILL = -1999999999  # what NaN is for int32 regions: far outside every value a pattern computes
UNIT_ROUNDOFF = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "i32": 0.0}
LAUNCHES = 2  # a second launch reuses the flags the first one left (epoch numbers, self-reset)


@dataclass
class Case:
    """Everything the launcher and the judge need for one collective spec, computed once."""
    spec: object
    layout: object
    inputs: list  # per rank {region: float64 values}
    expected: list  # per rank {region: Expect}
    flag_arrays: dict

    @property
    def ranks(self):
        return self.spec.ranks


@dataclass
class Judgement:
    compared: int = 0
    mismatches: int = 0
    gave_up: int = 0  # spin-waits that hit max_spin (ERR)
    other: int = 0  # canaries, inputs and flags found wrong
    problems: list = field(default_factory=list)  # one line each, first few kept

    def add(self, line):
        if len(self.problems) < 8:
            self.problems.append(line)

    def wrong(self, line):
        self.other += 1
        self.add(line)

    @property
    def ok(self):
        return not self.mismatches and not self.gave_up and not self.other


def seed_of(spec) -> int:
    return int(hashlib.sha256(spec.spec_hash().encode()).hexdigest()[:8], 16)


def case_of(spec) -> Case:
    c, R = spec.collective, spec.ranks
    pattern = PATTERNS[c["pattern"]]
    inputs = pattern.inputs(c, R, np.random.default_rng(seed_of(spec)))
    return Case(spec, layout_of(spec), inputs, pattern.expected(c, R, inputs), pattern.flag_arrays(c, R))


def _torch_dtype(name):
    import torch
    return getattr(torch, D.DTYPES[name].torch)


def _view(heap, region):
    return heap[region.offset:region.offset + region.nbytes].view(_torch_dtype(region.dtype))


def _fill_value(region):
    return INT_FILL if D.is_int(region.dtype) else float("nan")


def fill(case: Case, heaps: list, rank_of=None, first=True):
    """Write the inputs, the NaN (or zero) fills and the canaries; FLAGS and ERR are zeroed on the first launch
    only: later launches find the flags the earlier ones left, as a real job's next collective does."""
    import torch
    pattern = PATTERNS[case.spec.collective["pattern"]]
    for index, heap in enumerate(heaps):
        r = index if rank_of is None else rank_of
        layout = case.layout
        if first:
            heap.fill_(CANARY_BYTE)
        for region in layout.regions.values():
            start, length = region.canary
            heap[start:start + length] = CANARY_BYTE
            if region.count == 0:
                continue
            view = _view(heap, region)
            if region.name in ("IN", "AUX"):
                values = case.inputs[r].get(region.name)
                view.copy_(torch.from_numpy(np.asarray(values, dtype=np.float64)).to(view.dtype))
            elif region.name in ("OUT", "SCR"):
                view.fill_(0 if region.name in pattern.zero else _fill_value(region))
            elif first:
                view.zero_()


def judge(case: Case, heaps: list, launch: int, judgement: Judgement, rank_of=None):
    """Compare every rank's heap after launch number `launch` (1-based)."""
    import torch
    c = case.spec.collective
    P = c["programs"]
    for index, heap in enumerate(heaps):
        r = index if rank_of is None else rank_of
        host = heap.cpu()
        for region in case.layout.regions.values():
            start, length = region.canary
            if not bool((host[start:start + length] == CANARY_BYTE).all()):
                judgement.wrong(f"rank {r}: the canary after {region.name} was overwritten (out-of-bounds write)")
        for name in ("IN", "AUX"):
            region = case.layout[name]
            if region.count and name in case.inputs[r]:
                got = _view(host, region).to(torch.float64).numpy()
                if not np.array_equal(got, np.asarray(case.inputs[r][name], dtype=np.float64)):
                    judgement.wrong(f"rank {r}: the kernel modified its {name} region")
        gave_up = int(_view(host, case.layout["ERR"])[0])
        if gave_up:
            judgement.gave_up += gave_up
            judgement.add(f"rank {r}: {gave_up} spin-wait(s) gave up after max_spin polls (launch {launch})")
        _judge_flags(case, host, r, launch, P, judgement)
        for name, expect in case.expected[r].items():
            _judge_region(case, host, r, name, expect, judgement)


def _judge_flags(case, host, r, launch, P, judgement):
    import torch
    flags = _view(host, case.layout["FLAGS"]).to(torch.int64).numpy()
    c = case.spec.collective
    start = 0
    for name, (count, kind) in case.flag_arrays.items():
        got = flags[start:start + count]
        start += count
        if c.get("control") == "no-barrier" and kind != "counter":
            continue  # a wait left out leaves self-resetting flags set: that is the control, not a finding
        if kind == "signal":
            want = launch if c["flags"] == "epoch" else 0
        elif kind == "counter":
            want = launch * P
        else:  # lock
            want = 0
        wrong = np.flatnonzero(got != want)
        if wrong.size:
            judgement.wrong(f"rank {r}: flag array {name!r} ({kind}) holds {got[wrong[0]]} at slot {wrong[0]}, "
                          f"expected {want} after launch {launch}")


def _judge_region(case, host, r, name, expect, judgement):
    import torch
    region = case.layout[name]
    got = _view(host, region).to(torch.float64).numpy()
    want = expect.want
    judgement.compared += want.size
    fill = np.isnan(want)
    if D.is_int(region.dtype):
        bad = np.where(fill, got != INT_FILL, got != np.nan_to_num(want))
    else:
        acc = expect.acc or ACC[case.spec.collective["dtype"]]
        bound = np.zeros_like(want)
        if expect.terms:
            bound = expect.terms * UNIT_ROUNDOFF[acc] * expect.absum + UNIT_ROUNDOFF[region.dtype] * np.abs(
                np.nan_to_num(want))
        with np.errstate(invalid="ignore"):
            close = np.abs(got - want) <= bound
        bad = np.where(fill, ~np.isnan(got), ~close)
    count = int(bad.sum())
    if count:
        judgement.mismatches += count
        i = int(np.flatnonzero(bad)[0])
        judgement.add(f"rank {r}: {name}[{i}] = {got[i]!r}, expected {want[i]!r} ({count} of {want.size} wrong)")


def launch_options(rendered, accepted, device) -> dict:
    """num_warps/num_stages, plus a cooperative launch where the backend offers one: it refuses a grid that
    cannot be resident at once instead of letting spin-waits deadlock."""
    options = {"num_warps": rendered.options["num_warps"], "num_stages": rendered.options["num_stages"]}
    if device != "cpu" and "launch_cooperative_grid" in accepted:
        options["launch_cooperative_grid"] = True
    return options


def resident_limit(device) -> int | None:
    """Programs that are surely resident at once: one per compute unit (a program that fits at all fits alone)."""
    if device == "cpu":
        return None
    import torch
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def run_virtual(case: Case, kernel, rendered, options, device, max_spin, launches=LAUNCHES) -> Judgement:
    """All ranks on one device: one heap each, rank = program_id(1)."""
    import torch
    heaps = [torch.empty(case.layout.nbytes, dtype=torch.uint8, device=device) for _ in range(case.ranks)]
    bases = torch.tensor([h.data_ptr() for h in heaps], dtype=torch.int64, device=device)
    judgement = Judgement()
    c = case.spec.collective
    grid = (c["programs"], case.ranks, 1)
    for launch in range(1, launches + 1):
        fill(case, heaps, first=launch == 1)
        kernel[grid](bases, 0, c["n"], launch, max_spin, R=case.ranks, BLOCK=c["block"], NPROG=c["programs"],
                     **options)
        if device != "cpu":
            torch.cuda.synchronize()
        judge(case, heaps, launch, judgement)
    return judgement
