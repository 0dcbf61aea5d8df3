"""The building blocks every pattern is written in: peer pointers, signals, bounded waits, barriers, locks and
grid-stride loops, rendered as Triton source for one parameter set.

Why rendered text and not one generic @triton.jit library: the parameters under test (memory order, scope, how a
wait polls, cache modifiers, pointer source) must be literal in the kernel, as users write them, so that each
variant is a different compiled program and its code sequences can be checked (oracle/memory_model.py).
"""
from __future__ import annotations

import contextlib

from .. import dtypes as D

ACC = {"fp32": "fp32", "fp16": "fp32", "bf16": "fp32", "i32": "i32"}  # what sums accumulate in


def helpers(c: dict) -> str:
    """The module-level @triton.jit helpers for parameter set `c` (sem, scope, poll, pointers, control)."""
    rel, acq = c["sem"]
    if c.get("control") == "relaxed":
        rel = acq = "relaxed"
    scope = c["scope"]
    out = []
    if c["pointers"] == "translate":  # Iris: a pointer into my heap, moved to the same offset in a peer's heap
        out.append('''@triton.jit
def _translate(ptr, src, dst, bases):
    src_base = tl.load(bases + src)
    dst_base = tl.load(bases + dst)
    offset = tl.cast(ptr, tl.uint64) - src_base.to(tl.uint64)
    return tl.cast(tl.cast(dst_base, tl.pointer_type(tl.int8)) + offset, ptr.dtype)


@triton.jit
def _region(bases, me, peer, OFFSET: tl.constexpr):
    mine = tl.cast(tl.load(bases + me), tl.pointer_type(tl.int8)) + OFFSET
    return _translate(mine, me, peer, bases)
''')
    else:  # a table of peer base pointers, as torch symmetric memory hands out (buffer_ptrs)
        out.append('''@triton.jit
def _region(bases, me, peer, OFFSET: tl.constexpr):
    return tl.cast(tl.load(bases + peer), tl.pointer_type(tl.int8)) + OFFSET
''')
    value = "epoch" if c["flags"] == "epoch" else "1"
    if c["signal"] == "add":
        signal = f'tl.atomic_add(flag, 1, sem="{rel}", scope="{scope}")'
    else:
        signal = f'tl.atomic_xchg(flag, {value}, sem="{rel}", scope="{scope}")'
    poll_sem = "relaxed" if c["poll"] == "volatile" else acq
    poll = {"cas": f'tl.atomic_cas(flag, target, target, sem="{poll_sem}", scope="{scope}")',
            "add": f'tl.atomic_add(flag, 0, sem="{poll_sem}", scope="{scope}")',
            "volatile": "tl.load(flag, volatile=True)"}[c["poll"]]
    # a relaxed poll is made an acquire by one acquiring read once the value is seen (the fence users write). Its
    # result is used: with the result unused, H100 runs of Triton 3.6 read stale data after it (a known bug,
    # docs/collectives.md), which every ring all-reduce would otherwise meet again
    after = (f'\n    v = tl.atomic_add(flag, 0, sem="{acq}", scope="{scope}")' if c["poll"] == "volatile" else "")
    out.append(f'''@triton.jit
def _signal(flag, epoch):
    {signal}
''')
    out.append(_bounded_spin("_wait_value", "flag, target, max_spin, err", poll, "target", scope, after))
    cas = 'tl.atomic_cas({}, {}, {}, sem="%s", scope="%s")' % (acq, scope)
    out.append(_bounded_spin("_wait_reset", "flag, max_spin, err", cas.format("flag", 1, 0), "1", scope))
    out.append(_bounded_spin("_lock", "lock, max_spin, err", cas.format("lock", 0, 1), "0", scope))
    out.append(f'''@triton.jit
def _arrive(counter):
    tl.atomic_add(counter, 1, sem="{rel}", scope="{scope}")


@triton.jit
def _unlock(lock):
    tl.atomic_xchg(lock, 0, sem="{rel}", scope="{scope}")
''')
    return "\n\n".join(out)


def _bounded_spin(name, params, poll, until, scope, after=""):
    """A helper that polls until the value is `until` or `max_spin` polls have passed, then counts a give-up
    into `err`: a lost signal becomes a counted result instead of a hung GPU."""
    return f'''@triton.jit
def {name}({params}):
    v = {poll}
    i = 0
    while (v != {until}) & (i < max_spin):
        v = {poll}
        i += 1{after}
    if v != {until}:
        tl.atomic_add(err, 1, sem="relaxed", scope="{scope}")
'''


class Emitter:
    """Collects the kernel body of one pattern. `flag_arrays` (name -> (count, kind)) is laid out in FLAGS in
    order; kind is "signal" (each slot signalled once per launch), "lock" or "counter" (NPROG arrivals a launch)."""

    def __init__(self, c: dict, layout, flag_arrays: dict):
        self.c = c
        self.layout = layout
        self.lines: list[str] = []
        self.depth = 1
        self.flag_start, start = {}, 0
        for name, (count, _kind) in flag_arrays.items():
            self.flag_start[name] = start
            start += count

    # --- text ----------------------------------------------------------------------------------------------------
    def line(self, text: str):
        self.lines.append("    " * self.depth + text)

    @contextlib.contextmanager
    def indented(self):
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    @contextlib.contextmanager
    def chunks(self, length: str, offs="offs", mask="m", start="0", reader=False):
        """A grid-stride loop over `length` elements from `start`: program pid takes blocks pid, pid + NPROG, ...
        A reader of data another program wrote walks them last block first when the spec's `order` is "down":
        right after a barrier it then meets the blocks written last, where a missing barrier shows."""
        if reader and self.c.get("order") == "down":
            self.line(f"_cnt = (tl.cdiv({length}, BLOCK) - pid + NPROG - 1) // NPROG")
            self.line("for _k in range(0, _cnt):")
            with self.indented():
                self.line("_s = (pid + (_cnt - 1 - _k) * NPROG) * BLOCK")
                self.line(f"{offs} = {start} + _s + tl.arange(0, BLOCK)")
                self.line(f"{mask} = _s + tl.arange(0, BLOCK) < {length}")
                yield
            return
        self.line(f"for _s in range(pid * BLOCK, {length}, NPROG * BLOCK):")
        with self.indented():
            self.line(f"{offs} = {start} + _s + tl.arange(0, BLOCK)")
            self.line(f"{mask} = _s + tl.arange(0, BLOCK) < {length}")
            yield

    @contextlib.contextmanager
    def ranks(self, var="p"):
        self.line(f"for {var} in range(R):")
        with self.indented():
            yield

    # --- expressions ---------------------------------------------------------------------------------------------
    def ptr(self, region: str, rank: str = "rank", dtype: str | None = None) -> str:
        reg = self.layout[region]
        tl = D.tl(dtype or reg.dtype)
        return f"tl.cast(_region(bases, rank, {rank}, {reg.offset}), tl.pointer_type({tl}))"

    def flag(self, array: str, index: str, rank: str = "rank") -> str:
        base = self.layout["FLAGS"].offset
        start = self.flag_start[array]
        return f"tl.cast(_region(bases, rank, {rank}, {base}), tl.pointer_type(tl.int32)) + {start} + {index}"

    def load(self, ptr: str, offs="offs", mask="m", remote=True, other="0") -> str:
        cache = self.c["load_cache"] if remote else ""
        extra = f', cache_modifier="{cache}"' if cache else ""
        return f"tl.load({ptr} + {offs}, mask={mask}, other={other}{extra})"

    def store(self, ptr: str, value: str, offs="offs", mask="m", remote=True):
        cache = self.c["store_cache"] if remote else ""
        extra = f', cache_modifier="{cache}"' if cache else ""
        self.line(f"tl.store({ptr} + {offs}, {value}, mask={mask}{extra})")

    def acc(self, value: str) -> str:
        return f"{value}.to({D.tl(ACC[self.c['dtype']])})"

    def out(self, value: str) -> str:
        return f"{value}.to({D.tl(self.c['dtype'])})"

    # --- synchronisation -----------------------------------------------------------------------------------------
    @property
    def control(self):
        return self.c.get("control")

    def signal(self, flag_ptr: str):
        self.line(f"_signal({flag_ptr}, epoch)")

    def wait(self, flag_ptr: str):
        """Wait for one signal slot; a negative control without its barrier skips the wait."""
        if self.control == "no-barrier":
            return
        if self.c["flags"] == "epoch":
            self.line(f"_wait_value({flag_ptr}, epoch, max_spin, err)")
        else:
            self.line(f"_wait_reset({flag_ptr}, max_spin, err)")

    def barrier(self, array: str, k: int = 0):
        """All ranks' program `pid` meet: signal every peer's slot (k, pid, rank), then wait for every slot of mine.
        The CTA barriers put every thread's stores before the signal and every thread's loads after the wait."""
        index = f"({k} * NPROG + pid) * R"
        self.line("tl.debug_barrier()")
        with self.ranks("_p"):
            self.signal(self.flag(array, f"{index} + rank", "_p"))
        if self.control != "no-barrier":
            with self.ranks("_p"):
                self.wait(self.flag(array, f"{index} + _p"))
        self.line("tl.debug_barrier()")
