"""The executor: runs a kernel's LLVM IR for every workgroup of a grid, lanes in lockstep over numpy arrays.

One `Executor` runs one wave slot (wave k of a workgroup) for a batch of workgroups at once: its arrays hold
[workgroups x wave size] lanes, so one pass over the IR serves many programs. Divergence uses a reconvergence
stack (the immediate-post-dominator scheme of GPU simulators such as GPGPU-Sim): a branch whose lanes disagree runs
each side under its own execution mask until the branch's immediate post-dominator, where the lanes continue
together; a lane that returns leaves every mask. Phis take their incoming value on the edge, under the edge's mask.

The waves of a workgroup are separate executors that run *one after another* between barriers, in an order that
alternates at each barrier (waves 0..n-1, then n-1..0). Lockstep execution of all waves would hide a missing
barrier; this schedule is a legal one for the hardware, and it turns a missing barrier between an LDS write and
a read by another wave into a stale (0xFF-filled) read that shows in the outputs.
"""
from __future__ import annotations

import numpy as np

from . import access, intrinsics, poison, poison_compile  # noqa: F401 - poison_compile registers the compilers
from .errors import NotModelled
from .intrinsics import DeviceAssertion
from .memory import EmulatedFault, EmulatedRace, LocalMemory, Memories
from .ops import compile_op
from .values import constant, dtype_of, lanes_of, merge

BARRIER = intrinsics.BARRIER


class ExecutorError(Exception):
    """The executor itself failed on an instruction (a bug of ours): the kernel is unresolved, the line named."""
EXIT = None
MAX_BLOCKS = 2_000_000  # blocks one executor may run: more is a spin-wait on another workgroup, not modelled


class Kernel:
    """A parsed kernel function made ready to run: every instruction a closure, post-dominators known."""

    def __init__(self, module, name, arch, wave_size, poison_tracking=True):
        """`poison_tracking` off: no poison tracked (poison.py), as before it existed; `readlane` of an inactive
        lane is then NotModelled again. For callers that judge against another oracle and want the cost back."""
        fn = module.functions.get(name)
        self.poison_tracking = poison_tracking
        if fn is None:
            raise NotModelled(f"kernel {name} not found in the IR")
        self.fn, self.module, self.arch, self.wave_size = fn, module, arch, wave_size
        self.params = fn.params
        self.blocks, self.phi_in = {}, {}
        # pfn: each instruction's poison (poison.py), kept only where poison can reach it (may_be_poison)
        maybe = poison.may_be_poison(fn)
        if not poison_tracking:
            maybe, fn.poison_info = set(), dict.fromkeys(fn.poison_info, 0)
        for bname, block in fn.blocks.items():
            body = []
            for ins in block.body[:-1]:
                track = poison.Track(ins, self, fn.poison_info) if poison.needs(
                    ins, maybe, fn.poison_info, fn.poison_ignores) else None
                body.append((ins.res, self._compile(ins), ins, track))
            term = block.body[-1]
            if term.op not in ("br", "switch", "ret", "unreachable"):
                raise NotModelled(f"terminator {term.op}")
            cond = self.get(term.ops[0]) if term.op in ("br", "switch") and term.ops else None
            reader = poison.branch_operand(term)
            self.blocks[bname] = (body, term, cond, reader if reader and poison.needs(
                term, maybe, fn.poison_info, fn.poison_ignores) else None)
            for phi in block.phis:
                for pred, value in zip(phi.extra["from"], phi.ops):
                    # a phi that may hold poison takes each edge's poison (or its absence) with its value
                    reads = poison.Operand(value, phi.line) if phi.res in maybe else None
                    self.phi_in.setdefault((pred, bname), []).append((phi.res, self.get(value), phi.ty, reads))
        self.ipdom = _post_dominators(fn)
        # edges whose phis take an undef or poison constant: their poison is tracked even while none exists
        self.phi_poisoned = {edge for edge, items in self.phi_in.items() if any(p is not None and p.const is not None
                                                                                for *_, p in items)}

    def _compile(self, ins):
        if ins.op == "call":
            return intrinsics.compile_call(ins, self.get, self)
        if ins.op in access.COMPILERS:
            return access.COMPILERS[ins.op](ins, self.get)
        return compile_op(ins, self.get)

    def get(self, operand):
        """A getter `ex -> value` for an operand."""
        kind = operand[0]
        if kind == "%":
            name = operand[1]
            return lambda ex: ex.env[name]
        value = self.constant(operand)
        return lambda ex: value

    def constant(self, operand):
        kind = operand[0]
        if kind == "c":
            return constant(operand[1], operand[2])
        if kind == "g":
            space = self.module.globals.get(operand[1], (0, None))[0]
            if space == 3:
                if operand[1] != "global_smem":
                    raise NotModelled(f"LDS global @{operand[1]}")
                return np.array(0, np.uint32)
            return np.array(0, np.uint64)  # a constant string (an assertion's message): never dereferenced here
        if kind == "ce":
            return self._constexpr(operand)
        raise NotModelled(f"operand {operand}")

    def _constexpr(self, operand):
        _, ty, op, args = operand
        if op == "getelementptr":
            from .ops import gep_offsets
            src, operands = args
            base = self.constant(operands[0][1]).astype(np.int64)
            steps = gep_offsets(src, [t for t, _ in operands[1:]])
            for (kind, scale), (ity, idx) in zip(steps, operands[1:]):
                base = base + int(constant(ity, idx[2]).astype(np.int64)) * scale
            return base.astype(dtype_of(ty))
        if op in ("ptrtoint", "inttoptr", "addrspacecast", "bitcast"):
            return self.constant(args[1]).astype(dtype_of(ty))
        raise NotModelled(f"constant expression {op}")


def _post_dominators(fn):
    """Immediate post-dominator of each block (EXIT where the function's end is the only one).

    A block that ends in `unreachable` (a failed assertion's trap, in Triton before 3.8) never returns: it is not an
    exit, so a branch to it and around it reconverges where the other side goes (the lanes that take it end the
    wave). Counting it as an exit would put the join at the function's end, and the lanes that do not trap would
    run a cross-lane step of a scan without the lanes still inside the overflow check."""
    succ, dead_end = {}, set()
    for name, block in fn.blocks.items():
        term = block.body[-1]
        succ[name] = list(dict.fromkeys(term.extra.get("targets", []))) if term.op in ("br", "switch") else []
        if term.op == "unreachable":
            dead_end.add(name)
    names = list(fn.blocks)
    everything = set(names) | {EXIT}
    pdom = {n: set(everything) for n in names}
    changed = True
    while changed:
        changed = False
        for n in reversed(names):
            if n in dead_end:
                continue  # post-dominated by everything: it drops out of its predecessors' intersections
            inter = {EXIT} if not succ[n] else set.intersection(*(pdom[s] for s in succ[n]))
            new = inter | {n}
            if new != pdom[n]:
                pdom[n], changed = new, True
    ipdom = {}
    for n in names:
        strict = pdom[n] - {n}
        if pdom[n] == everything:  # only dead ends ahead: nothing to reconverge at
            ipdom[n] = EXIT
            continue
        ipdom[n] = next((d for d in strict if d is not EXIT and pdom[d] == strict), EXIT)
    return ipdom


class Executor:
    """One wave slot of a batch of workgroups (see the module docstring)."""

    def __init__(self, kernel: Kernel, slot, pids, num_warps, memories: Memories, args, grid):
        self.kernel = kernel
        s = kernel.wave_size
        self.n = len(pids) * s
        self.slot, self.num_warps, self.grid = slot, num_warps, grid
        lane = np.tile(np.arange(s, dtype=np.uint32), len(pids))
        self.lane = lane
        self.tid = lane + np.uint32(slot * s)
        self.pid = np.repeat(np.asarray(pids, np.uint32), s, axis=0)  # [n, 3]
        self.memories = memories
        self.env = dict(args)
        self.exited = np.zeros(self.n, bool)
        self.mask = np.ones(self.n, bool)
        self.full = True
        self.blocks_run = 0
        self.poison = {}  # SSA name -> (mask, source) where some lane holds poison (poison.py); empty: none

    def run(self):
        kernel = self.kernel
        stack = [[kernel.fn.entry, EXIT, np.ones(self.n, bool)]]
        env = self.env
        tracked = self.poison  # non-empty only while some value holds poison
        while stack:
            top = stack[-1]
            block = top[0]
            mask = top[2] & ~self.exited
            if block == top[1] or not mask.any():
                stack.pop()
                continue
            self.mask, self.full = mask, bool(mask.all())
            body, term, cond, cond_poison = kernel.blocks[block]
            for res, fn, ins, track in body:
                try:
                    if track is None:
                        out = fn(self)
                    elif not (track.always or tracked and not tracked.keys().isdisjoint(track.names)):
                        out = fn(self)  # no operand holds poison now: nor does the result (a loop's stale entry)
                        if res in tracked:
                            poison.store_entry(self, res, None)
                    elif track.before:  # a memory access: poison in its address is UB before it can fault
                        track(self, None)
                        out = fn(self)
                    else:
                        out = fn(self)
                        entry = track(self, out)
                        if res is not None and (entry is not None or tracked):
                            poison.store_entry(self, res, entry)
                except (NotModelled, EmulatedFault, EmulatedRace, DeviceAssertion):
                    raise
                except Exception as exc:  # an executor bug: say where, so it can be fixed (never a finding)
                    raise ExecutorError(f"IR line {ins.line} ({ins.op} {ins.extra.get('callee', '')}): "
                                        f"{type(exc).__name__}: {exc}") from exc
                if out is BARRIER:
                    yield
                    continue
                if res is not None:
                    env[res] = out if self.full else merge(mask, out, env.get(res))
            self.blocks_run += 1
            if self.blocks_run > MAX_BLOCKS:
                raise NotModelled("a loop ran more than 2,000,000 blocks (a spin-wait on another workgroup?)")
            if term.op not in ("br", "switch"):
                if term.op == "unreachable":
                    raise EmulatedFault("a lane reached `unreachable`")
                self.exited |= mask
                stack.pop()
                continue
            targets = term.extra["targets"]
            if cond is None:
                self._go(top, block, targets[0], mask)
                continue
            if cond_poison is not None and (tracked or cond_poison.const is not None):
                poison.check_branch(self, cond_poison, term)
            value = lanes_of(cond(self), self.n)
            if term.op == "br":
                ways = [(targets[0], mask & value), (targets[1], mask & ~value)]
            else:
                ways = self._switch_ways(term, value, mask)
            ways = [(t, m) for t, m in ways if m.any()]
            if len(ways) == 1:
                self._go(top, block, ways[0][0], mask)
                continue
            join = kernel.ipdom[block]
            for target, m in ways:
                self._transfer(block, target, m)
            if join == top[1]:
                stack.pop()
            else:
                top[0], top[2] = join, mask
            for target, m in reversed(ways):
                if target != join:
                    stack.append([target, join, m])

    @staticmethod
    def _switch_ways(term, value, mask):
        """(target, lanes) of a switch: each case's lanes, the default's the rest; a target of several cases once."""
        bits = term.extra["bits"]
        ways, taken = {}, np.zeros_like(mask)
        for case, target in zip(term.extra["cases"], term.extra["targets"][1:]):
            hit = mask & (value == (case & ((1 << bits) - 1))) & ~taken
            taken |= hit
            ways[target] = ways.get(target, np.zeros_like(mask)) | hit
        default = term.extra["targets"][0]
        ways[default] = ways.get(default, np.zeros_like(mask)) | (mask & ~taken)
        return list(ways.items())

    def _go(self, top, block, target, mask):
        self._transfer(block, target, mask)
        top[0] = target

    def _transfer(self, pred, target, mask):
        incoming = self.kernel.phi_in.get((pred, target))
        if not incoming:
            return
        values = [(res, get(self)) for res, get, _, _ in incoming]  # all read before any is written
        full = self.full and bool(mask.all())
        if self.poison or (pred, target) in self.kernel.phi_poisoned:  # a phi takes its edge's poison
            entries = [(res, p(self)) for res, _, _, p in incoming if p is not None]
            saved = self.mask, self.full
            self.mask, self.full = mask, full
            for res, entry in entries:
                poison.store_entry(self, res, entry)
            self.mask, self.full = saved
        for res, value in values:
            self.env[res] = value if full else merge(mask, value, self.env.get(res))


SCHEDULES = ("alternate", "forward", "reverse")


def run_grid(kernel: Kernel, args: dict, grid, num_warps, lds_bytes, heap, lanes_per_executor=2048,
             schedule="alternate"):
    """Run every workgroup of `grid` ((x, y, z)); `args` maps parameter names to values (0-d arrays). `schedule`:
    the order the waves take between barriers (alternating, or always the same way: a kernel whose outputs change
    with it has a race between its waves)."""
    gx, gy, gz = grid
    total = gx * gy * gz
    s = kernel.wave_size
    per = max(1, lanes_per_executor // s)
    for start in range(0, total, per):
        ids = np.arange(start, min(total, start + per))
        pids = np.stack([ids % gx, (ids // gx) % gy, ids // (gx * gy)], 1)
        lds = LocalMemory(len(ids), lds_bytes)
        wg_of_lane = np.repeat(np.arange(len(ids)), s)
        memories = Memories(heap, lds, wg_of_lane)
        runs = [(k, Executor(kernel, k, pids, num_warps, memories, args, grid).run()) for k in range(num_warps)]
        intervals = [0] * num_warps  # barriers each wave slot has passed: its k-th interval meets the others' k-th
        phase = 0
        while runs:
            backward = schedule == "reverse" or schedule == "alternate" and phase % 2 == 1
            for slot, run in (runs[::-1] if backward else runs):
                memories.wave = (slot, intervals[slot])
                try:
                    next(run)
                    intervals[slot] += 1
                except StopIteration:
                    runs = [r for r in runs if r[1] is not run]
            phase += 1
