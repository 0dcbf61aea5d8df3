"""Collective specs: the Hypothesis strategy that draws a pattern and its parameters, the checks a stored spec
must pass, and the static decisions every stage shares (the heap layout, whether the interpreter can run it).

The parameters users vary in real communication kernels are drawn independently: memory order of the signal and
the wait, scope, how a wait polls, flag reuse (epoch numbers or self-resetting flags), the signal's atomic,
cache modifiers on remote accesses, how a peer pointer is found, ranks, message size (ragged tails), block size,
programs per rank and num_warps.
"""
from __future__ import annotations

import hypothesis.strategies as st

from gfxhound.spec import COLLECTIVE_FORMAT as FORMAT, KernelSpec, Launch, SpecError

from .. import odds
from .layout import FLAG_DTYPE, plan
from .patterns import PATTERNS

COLLECTIVE_VERSION = 1
RANKS = (2, 4, 8)
MAX_PROGRAMS = 32  # programs of all virtual ranks together: far below any GPU's compute units, so all are resident
SEMS = (("release", "acquire"), ("acq_rel", "acq_rel"), ("release", "acq_rel"), ("acq_rel", "acquire"))
CONTROLS = ("no-barrier", "relaxed")  # negative controls: sensitivity checks of the harness, never compiler bugs
SKEW = 2000  # relaxed polls odd ranks make before starting: a late peer (about a millisecond on a GPU)
DISTRIBUTED_SCOPE = "sys"  # across GPUs, agent scope does not order anything for the peer: sys is the only valid one


def layout_of(spec: KernelSpec):
    c, R = spec.collective, spec.ranks
    pattern = PATTERNS[c["pattern"]]
    counts = dict(pattern.counts(c, R))
    counts["FLAGS"] = sum(count for count, _ in pattern.flag_arrays(c, R).values())
    counts["ERR"] = 1
    dtypes = {"IN": c["dtype"], "OUT": pattern.out_dtype(c), "SCR": pattern.scr_dtype(c), "AUX": FLAG_DTYPE,
              "FLAGS": FLAG_DTYPE, "ERR": FLAG_DTYPE}
    from .. import dtypes as D
    return plan(counts, dtypes, {k: D.nbytes(v) for k, v in dtypes.items()})


def interpretable(spec: KernelSpec) -> bool:
    """Can the interpreter run it? It runs programs one at a time, program_id(0) outer and program_id(1) (the
    rank) inner, so a wait ends only if every program it waits for comes earlier (or is itself)."""
    c, R = spec.collective, spec.ranks
    pattern = PATTERNS[c["pattern"]]
    order = lambda pid, r: (pid, r)  # noqa: E731 - the interpreter's nesting
    return all(order(*waited) <= order(pid, r)
               for pid in range(c["programs"]) for r in range(R)
               for waited in pattern.waits(c, R, pid, r))


def has_waits(spec: KernelSpec) -> bool:
    c, R = spec.collective, spec.ranks
    pattern = PATTERNS[c["pattern"]]
    return any(pattern.waits(c, R, pid, r) for pid in range(c["programs"]) for r in range(R))


def check(spec: KernelSpec) -> None:
    """A stored collective spec this gfxhound cannot run is refused with what to do."""
    c = spec.collective
    if not isinstance(c, dict) or c.get("pattern") not in PATTERNS:
        raise SpecError(f"unknown collective pattern {c.get('pattern') if isinstance(c, dict) else c!r}; "
                        f"known: {', '.join(sorted(PATTERNS))}")
    missing = {"dtype", "n", "block", "programs", "sem", "scope", "poll", "flags", "signal", "load_cache",
               "store_cache", "pointers", "barrier", "control", "extra"} - set(c)
    if missing:
        raise SpecError(f"collective spec lacks {', '.join(sorted(missing))}; regenerate it with this gfxhound")
    if spec.ranks < 2:
        raise SpecError("a collective needs at least 2 ranks")


@st.composite
def collective_specs(draw, caps=None, patterns=None, ranks=None, controls=0.0, scope=None):
    """caps: the backend's exclusions (the interpreter: only kernels it can run, no bf16); patterns: restrict to
    these names; ranks: a fixed world size (one process per GPU); controls: the share of negative controls;
    scope: force one scope (sys across GPUs)."""
    interpret = caps is not None and caps.has("exclude:collective:later-waits")
    names = sorted(patterns or PATTERNS)
    if interpret:
        names = [n for n in names if _can_interpret(PATTERNS[n])] or names
    name = draw(st.sampled_from(names))
    pattern = PATTERNS[name]
    R = ranks or draw(st.sampled_from(RANKS))
    dtype = draw(st.sampled_from([d for d in pattern.dtypes if caps is None or caps.allows_dtype(d)]
                                 or list(pattern.dtypes)))
    block = draw(st.sampled_from([64, 128, 256, 512, 1024]))
    programs = draw(st.integers(pattern.min_programs,
                                max(pattern.min_programs, min(odds.COLLECTIVE_PROGRAMS_MAX, MAX_PROGRAMS // R))))
    n = max(1, block * draw(st.integers(*odds.COLLECTIVE_FULL_BLOCKS))
            + draw(st.sampled_from([0, 1, block // 2 + 3, block - 1])))
    c = {"pattern": name, "dtype": dtype, "n": n, "block": block, "programs": programs,
         "sem": list(draw(st.sampled_from(SEMS))), "scope": scope or draw(st.sampled_from(["gpu", "sys"])),
         "poll": draw(st.sampled_from(["cas", "add", "volatile"])),
         "flags": draw(st.sampled_from(pattern.flags_modes)), "signal": draw(st.sampled_from(["xchg", "add"])),
         "load_cache": draw(st.sampled_from(odds.menu(odds.COLLECTIVE_LOAD_CACHE))),
         "store_cache": draw(st.sampled_from(odds.menu(odds.COLLECTIVE_STORE_CACHE))),
         "pointers": draw(st.sampled_from(["table", "translate"])),
         "barrier": (not interpret) and pattern.optional_barrier and draw(st.booleans()),
         "control": None, "extra": _extra(draw, name, R, dtype, interpret),
         "order": draw(st.sampled_from(["up", "down"])),
         "skew": SKEW if draw(st.sampled_from(odds.menu(odds.COLLECTIVE_LATE_ODD_RANKS))) else 0}
    if c["flags"] == "reset" and c["poll"] != "cas":  # a self-resetting flag is consumed by a CAS: one poll kind
        c["poll"] = "cas"
    spec = KernelSpec(blocks={"M": block, "N": 1, "K": 1}, sizes={"M": n, "N": 1, "K": 1}, grid="M", inputs=[],
                      scalars=[], outputs=[], body=[],
                      launch=Launch(num_warps=draw(st.sampled_from(odds.menu(odds.COLLECTIVE_NUM_WARPS))),
                                    num_stages=draw(st.sampled_from([1, 2])) if name.startswith("gemm") else 1),
                      ranks=R, collective=c, meta={"generator": f"collective-{COLLECTIVE_VERSION}"}, format=FORMAT)
    if controls and has_waits(spec) and draw(st.floats(0, 1)) < controls:
        c["control"] = draw(st.sampled_from(CONTROLS))
    return spec


def _can_interpret(pattern) -> bool:
    return pattern.optional_barrier or pattern.name in ("spinlock_rmw", "reduce_scatter")


def _extra(draw, name, R, dtype, interpret):
    if name == "reduce_scatter":
        return {"mode": draw(st.sampled_from(["pull", "push"])) if dtype in ("fp32", "i32") else "pull"}
    if name == "all_to_all":
        splits = [[draw(st.sampled_from([0, 1, 7, 64, 130, 257])) for _ in range(R)] for _ in range(R)]
        return {"mode": "pull" if interpret else draw(st.sampled_from(["push", "pull"])), "splits": splits}
    if name.startswith("gemm"):
        BM, BN = draw(st.sampled_from([16, 32, 64])), draw(st.sampled_from([16, 32, 64]))
        BK = draw(st.sampled_from([16, 32]))
        M = draw(st.integers(1, odds.GEMM_M_TILES_MAX * BM))
        N = draw(st.integers(1, odds.GEMM_N_TILES_MAX * BN))
        K = draw(st.sampled_from([16, 32, 48, 64, 24, 40]))
        return {"M": M, "N": N, "K": K, "BM": BM, "BN": BN, "BK": BK}
    return {}
