"""A campaign's configuration, the one error a user can cause, and the budget's syntax."""
from __future__ import annotations

from dataclasses import dataclass, field


class CampaignError(Exception):
    """A problem the user can fix (unknown target, unusable corpus...): one line, no traceback."""


@dataclass
class CampaignConfig:
    targets: list
    corpus: str
    backend: str = "compile"
    seconds: float | None = None
    kernels: int | None = None
    workers: int = 2
    gpu_workers: int = 1  # device: launch workers per GPU (oracle/gpu_pool.py: when more than one helps)
    seed: int = 0
    timeout: float = 60.0  # the ceiling: no compile gets longer (a first run gets less: see timeouts.py)
    timeout_floor: float = 10.0  # the least a first run gets once the median is known
    timeout_factor: float = 10.0  # a first run gets this many times the running median
    grace: float = 30.0  # after the budget or a first Ctrl-C/SIGTERM, in-flight kernels get this long
    clock_start: float | None = None  # when the time budget began (the CLI's start); None: when run() begins
    verbose: bool = False  # workers' own output on the console instead of their log files
    max_ops: int = 24
    worker_env: dict = field(default_factory=dict)
    caps_cache: str | None = None
    lld: str = "/usr/lib/llvm-22/bin/ld.lld"
    llc: str | None = None  # run `llc -verify-machineinstrs` on each kernel's LLVM IR when set
    plant: str | None = None  # a planted bug (oracle/planted.py): its kernel family, mutated; nothing is recorded
    machine_code: bool = True  # emulate: Triton's machine code judged too (oracle/emulate_machine.py)
    family: str = "kernels"  # or "collectives": communication patterns (fuzz/collective/)
    collective: dict = field(default_factory=dict)  # collectives: patterns, controls (negative-control share)
    shapes: tuple = ()  # kernels: only these kernel shapes (fuzz/shapes.py); empty: random kernels, some shapes
    user: dict | None = None  # family "user": the user's kernel and launch spec (fuzz/user_kernel.UserKernel JSON)
