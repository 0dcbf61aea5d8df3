"""Launch a kernel on the CPU machine (machine.py): lay out global memory and the kernarg segment, start every wave
of every workgroup as the ABI (abi.py) says, run them, and hand back the buffers.

``launch(source, abi, args, grid, block)``:

- ``source``: an ``Assembly`` (codegen.py), assembly text, a ``Program`` (then ``abi`` is required) or a ``Kernel``
  decoded before (reuse it across launches: decoding is once per kernel); ``abi``: a ``KernelABI`` or None (read
  from the Assembly/text; the only kernel, or ``kernel=`` by name).
- ``args``: argument name (or position among the visible arguments: Triton leaves names empty) -> a numpy array
  (a pointer argument: its bytes are copied into a buffer of their own) or a scalar (a by-value argument: a numpy
  scalar as its bytes; a Python int masked to the argument's size; a Python float as f16/f32/f64 by size); or a
  list by position. ``outputs`` is keyed the same way.
- ``grid``: workgroups in x, y, z; ``block``: work-items per workgroup in x, y, z. Waves of a workgroup run one
  after another between s_barriers (``schedule``: which goes first); the last wave of a workgroup whose size is
  not a multiple of 64 starts with EXEC set for its real lanes only. Each workgroup has its own LDS
  (group_segment_size bytes, starting as the canary pattern).
- returns ``Result``: ``outputs`` (name -> the array of each pointer argument after the run, its dtype and shape),
  ``waves``, ``steps`` (instructions run), ``hazards`` (reads of a register whose load was not waited for),
  ``wait_hazards`` (pairs run closer than the guide's wait states allow: machine_hazards.py).

Memory: each buffer sits at a fake 64-bit address of its own 8 GiB window, straddling a 4 GiB boundary (so address
arithmetic that drops a carry into the high dword faults); everything outside the buffers is unmapped, and an
access that is not wholly inside one buffer raises ``MachineFault``. The kernarg segment is read-only; the AQL
dispatch packet is mapped for the dispatch pointer; the queue pointer is a region whose access is ``NotModelled``.
Scratch: each wave gets private_segment_fixed_size bytes per lane (machine_private.py), plus DYNAMIC_STACK for a
kernel with a dynamic stack (calls the code generator could not bound). Not started (``NotModelled``): scratch
before gfx940, float modes other than round-to-nearest
with denormals, wave32, the workgroup-info SGPR.
Hidden kernargs: block counts, group sizes, remainders (0), grid dims; global offsets 0; pointers (hostcall, heap,
queue, ...) 0, so a dereference faults.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from gfxhound.executors.amdgcn.abi import KernelABI, kernel_abi
from gfxhound.executors.amdgcn.asm import Program, parse_program
from gfxhound.executors.amdgcn.machine import CANARY, MachineFault, NotModelled, Wave
from gfxhound.executors.amdgcn.machine_kernel import Kernel
from gfxhound.executors.amdgcn.machine_private import PrivateMemory

__all__ = ["GlobalMemory", "MachineFault", "NotModelled", "Result", "launch"]

WINDOW = 1 << 33
DYNAMIC_STACK = 1024   # bytes per lane added for a kernel with a dynamic stack: the ROCm runtime's default stack
                       # size limit (hipLimitStackSize); the descriptor does not give one
FIRST_WINDOW = 0x7F00 << 32
MODES = {"float_round_mode_32": "0", "float_round_mode_16_64": "0", "float_denorm_mode_32": "3",
         "float_denorm_mode_16_64": "3"}


@dataclass
class Region:
    name: str
    base: int
    data: np.ndarray          # uint8
    writable: bool = True
    modelled: bool = True

    @property
    def end(self) -> int:
        return self.base + len(self.data)


class GlobalMemory:
    """Byte buffers at fake 64-bit addresses; load/store as the pseudocode's memory (little-endian)."""

    def __init__(self):
        self.regions: list[Region] = []

    def map(self, name: str, data: bytes | np.ndarray, writable: bool = True, modelled: bool = True,
            straddle: bool = True, base: int | None = None) -> int:
        buf = np.frombuffer(bytes(data), np.uint8).copy() if not isinstance(data, np.ndarray) else \
            np.ascontiguousarray(data).view(np.uint8).reshape(-1).copy()
        window = FIRST_WINDOW + WINDOW * len(self.regions)
        half = (len(buf) // 2 + 4095) & ~4095 if straddle else 0
        if base is None:
            base = window + (1 << 32) - half   # the buffer crosses the 4 GiB line inside its window
        self.regions.append(Region(name, base, buf, writable, modelled))
        return base

    def region(self, name: str) -> Region:
        return next(r for r in self.regions if r.name == name)

    def _table(self):
        """(bases, sizes, region indices), sorted by base, rebuilt when a region is mapped (regions do not overlap:
        each has its own window, LDS its own memory)."""
        if getattr(self, "_table_for", -1) != len(self.regions):
            order = np.argsort([r.base for r in self.regions], kind="stable")
            self._sorted = (np.array([self.regions[k].base for k in order], np.uint64),
                            np.array([len(self.regions[k].data) for k in order], np.uint64), order)
            self._table_for = len(self.regions)
        return self._sorted

    def _locate(self, addr, nbytes, lanes, instruction, store):
        a = np.atleast_1d(np.broadcast_to(np.asarray(addr, np.uint64), np.shape(lanes)))
        on = np.atleast_1d(np.asarray(lanes, bool))
        idx = np.flatnonzero(on)
        found = np.full(a.shape, -1)
        if self.regions and idx.size:
            bases, sizes, order = self._table()
            aa = a[idx]
            lo, hi = int(aa.min()), int(aa.max())
            k = int(np.searchsorted(bases, np.uint64(lo), side="right")) - 1
            if k >= 0 and hi + nbytes <= int(bases[k]) + int(sizes[k]):   # every lane in one region: most accesses
                found[idx] = order[k]
                return self._checked(a, idx, found, nbytes, instruction, store)
            pos = np.searchsorted(bases, aa, side="right") - 1      # the region with the greatest base <= address
            p = np.maximum(pos, 0)
            need = np.uint64(nbytes)
            with np.errstate(over="ignore"):
                inside = (pos >= 0) & (sizes[p] >= need) & (aa - bases[p] <= sizes[p] - need)
            found[idx[inside]] = order[p[inside]]
        return self._checked(a, idx, found, nbytes, instruction, store)

    def _checked(self, a, idx, found, nbytes, instruction, store):
        bad = idx[found[idx] < 0]
        if bad.size:
            lane = int(bad[0])
            raise MachineFault(f"{'store' if store else 'load'} of {nbytes} bytes at {int(a[lane]):#x} (lane {lane})"
                               " outside every buffer", instruction, int(a[lane]), lane)
        for k in set(found[idx].tolist()):
            r = self.regions[k]
            if not r.modelled:
                raise NotModelled(instruction.mnemonic if instruction else "memory", f"an access to {r.name}")
            if store and not r.writable:
                raise MachineFault(f"store into read-only {r.name}", instruction, int(a[idx[0]]))
        return a, idx, found

    def load(self, addr, nbytes, lanes, instruction=None):
        a, idx, found = self._locate(addr, nbytes, lanes, instruction, False)
        out = np.zeros(np.shape(lanes), np.uint64)
        flat = np.atleast_1d(out)
        shifts = (np.arange(nbytes, dtype=np.uint64) * np.uint64(8))
        for k in set(found[idx].tolist()):
            r, sel = self.regions[k], idx[found[idx] == k]
            offs = (a[sel] - np.uint64(r.base)).astype(np.int64)
            raw = r.data[offs[:, None] + np.arange(nbytes)].astype(np.uint64)
            flat[sel] = np.bitwise_or.reduce(raw << shifts, axis=1)
        return out

    def store(self, addr, nbytes, bits, lanes, instruction=None):
        a, idx, found = self._locate(addr, nbytes, lanes, instruction, True)
        b = np.atleast_1d(np.broadcast_to(np.asarray(bits), np.shape(lanes)))
        if nbytes <= 8 and b.dtype != object and self._store_at_once(a, idx, found, nbytes, b):
            return
        for lane in idx:   # ascending lane order: of lanes storing to one address, the highest lane's bytes stay
            r = self.regions[found[lane]]
            off = int(a[lane]) - r.base
            r.data[off:off + nbytes] = np.frombuffer(int(b[lane]).to_bytes(nbytes, "little"), np.uint8)

    def _store_at_once(self, a, idx, found, nbytes, b) -> bool:
        """Every lane's bytes in one numpy write, where no byte is written by two lanes (then lane order cannot
        matter); False, with nothing written, where some are."""
        shifts = np.arange(nbytes, dtype=np.uint64) * np.uint64(8)
        writes = []
        for k in set(found[idx].tolist()):
            r, sel = self.regions[k], idx[found[idx] == k]
            at = ((a[sel] - np.uint64(r.base)).astype(np.int64)[:, None] + np.arange(nbytes)).ravel()
            if np.unique(at).size != at.size:
                return False
            data = ((b[sel].astype(np.uint64)[:, None] >> shifts) & np.uint64(0xFF)).astype(np.uint8).ravel()
            writes.append((r, at, data))
        for r, at, data in writes:
            r.data[at] = data
        return True


@dataclass
class Result:
    outputs: dict
    waves: int = 0
    steps: int = 0
    hazards: list = field(default_factory=list)
    wait_hazards: list = field(default_factory=list)   # (workgroup, wave, rule, producer, consumer): machine_hazards
    memory: GlobalMemory | None = None


def _scalar_bytes(value, size: int, name: str) -> bytes:
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, np.generic):
        raw = value.tobytes()
        if len(raw) != size:
            raise ValueError(f"argument {name}: {value.dtype} is {len(raw)} bytes, the kernel takes {size}")
        return raw
    if isinstance(value, bool) or isinstance(value, int):
        return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    if isinstance(value, float):
        return struct.pack({2: "<e", 4: "<f", 8: "<d"}[size], value)
    raise TypeError(f"argument {name}: a numpy array or a scalar, not {type(value).__name__}")


def _resolve(source, abi, kernel):
    if isinstance(source, Kernel):
        if abi is None:
            raise ValueError("a Kernel needs its KernelABI")
        return source, abi
    text = getattr(source, "text", source if isinstance(source, str) else None)
    program = source if isinstance(source, Program) else parse_program(text)
    if abi is None:
        if text is None:
            raise ValueError("a Program needs its KernelABI (or pass the Assembly)")
        abi = kernel_abi(text, kernel, program)
    return Kernel(program.function(abi.name), program=program), abi


def _check_modes(abi: KernelABI):
    desc = dict(abi.descriptor)
    for key, want in MODES.items():
        if desc.get(key, want) != want:
            raise NotModelled("kernel", f"{key} = {desc[key]} (only round-to-nearest-even with denormals is modelled)")
    if (abi.private_segment_size or abi.enable_private_segment) and not abi.architected_flat_scratch:
        raise NotModelled("kernel", "scratch without architected flat scratch (before gfx940)")
    if abi.wavefront_size != 64:
        raise NotModelled("kernel", f"wave{abi.wavefront_size}")


def _check_allocation(function, abi: KernelABI):
    """Registers past the descriptor's allocation are the code generator's bug (the hardware gives the wave only
    what the descriptor asks for): VGPRs v0..accum_offset-1 (gfx90a+: AGPRs follow from accum_offset in one file
    of next_free_vgpr), SGPRs s0..next_free_sgpr-1 (VCC and the other named registers are reserved apart)."""
    vgprs = abi.accum_offset if abi.accum_offset else abi.next_free_vgpr
    agprs = abi.next_free_vgpr - abi.accum_offset if abi.accum_offset and abi.next_free_vgpr else None
    limits = {"v": vgprs, "a": agprs, "s": abi.next_free_sgpr}
    for ins in function.instructions:
        for op in ins.operands:
            op = getattr(op, "base", op)
            limit = limits.get(getattr(op, "file", None))
            if limit is not None and op.last >= limit:
                raise MachineFault(f"register {op} beyond the descriptor's allocation ({op.file}0..{op.file}"
                                   f"{limit - 1})", ins)


def _by_argument(abi, args) -> dict:
    """args (a dict by name or position, or a sequence by position) -> {KernArg: (key, value)}: positions count
    the kernel's visible arguments (Triton's metadata leaves names empty)."""
    visible = [a for a in abi.kernargs if not a.hidden]
    if isinstance(args, (list, tuple)):
        if len(args) != len(visible):
            raise ValueError(f"kernel {abi.name} takes {len(visible)} arguments, {len(args)} given")
        return {a: (i, v) for i, (a, v) in enumerate(zip(visible, args))}
    out, left = {}, dict(args)
    for i, a in enumerate(visible):
        key = a.name if a.name and a.name in left else i if i in left else None
        if key is None:
            raise ValueError(f"kernel {abi.name}: argument {a.name or i!r} not given")
        out[a] = (key, left.pop(key))
    if left:
        raise ValueError(f"kernel {abi.name} has no argument(s) {sorted(map(str, left))}")
    return out


def _kernargs(abi, args, grid, block, mem):
    seg = bytearray(max(abi.kernarg_size, 8))
    buffers = {}
    hidden = {"hidden_block_count_x": grid[0], "hidden_block_count_y": grid[1], "hidden_block_count_z": grid[2],
              "hidden_group_size_x": block[0], "hidden_group_size_y": block[1], "hidden_group_size_z": block[2],
              "hidden_grid_dims": sum(1 for g, b in zip(grid, block) if g * b > 1) or 1}
    given = _by_argument(abi, args)
    for arg in abi.kernargs:
        if arg.hidden:
            raw = (hidden.get(arg.value_kind, 0) & ((1 << 8 * arg.size) - 1)).to_bytes(arg.size, "little")
        else:
            key, value = given[arg]
            if arg.value_kind in ("global_buffer", "dynamic_shared_pointer") or arg.address_space == "global":
                offset = 0
                if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
                    value, offset = value  # (storage, byte offset): a tensor inside a larger allocation
                if not isinstance(value, np.ndarray):
                    raise TypeError(f"argument {key} is a pointer: pass a numpy array (or (array, byte offset))")
                base = mem.map(f"argument {key}", value)
                buffers[key] = (f"argument {key}", value)
                raw = (base + int(offset)).to_bytes(8, "little")[:arg.size]
            else:
                raw = _scalar_bytes(value, arg.size, str(key))
        seg[arg.offset:arg.offset + arg.size] = raw
    return bytes(seg), buffers


def _dispatch_packet(abi, grid, block, kernarg_base) -> bytes:
    p = bytearray(64)
    struct.pack_into("<HHHHHHIIIII", p, 0, 0, 3, *block, 0, *(g * b for g, b in zip(grid, block)),
                     abi.private_segment_size, abi.group_segment_size)
    struct.pack_into("<Q", p, 40, kernarg_base)
    return bytes(p)


def launch(source, abi: KernelABI | None = None, args: dict | None = None, grid=(1, 1, 1), block=(64, 1, 1),
           kernel: str | None = None, preload_entry: bool = False, max_steps: int = 1_000_000,
           schedule: str = "forward", dynamic_lds: int = 0) -> Result:
    """Run every workgroup of `grid` (see the module docstring); ``preload_entry``: start at the kernarg-preload
    entry (firmware that preloads) instead of the compatibility prologue; ``schedule``: wave order between
    barriers (``_run_group``); ``dynamic_lds``: bytes of LDS the launch adds to the descriptor's fixed group
    segment (Triton's kernels declare none and are launched with their `shared` bytes)."""
    if schedule not in ("forward", "reverse", "alternate"):
        raise ValueError(f"schedule {schedule!r}: forward, reverse or alternate")
    grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
    threads = block[0] * block[1] * block[2]
    if threads < 1 or min(grid) < 1:
        raise ValueError(f"empty launch: grid {grid}, block {block}")
    program_kernel, abi = _resolve(source, abi, kernel)
    if threads > abi_max(abi):
        raise ValueError(f"block {block} exceeds max_flat_workgroup_size {abi_max(abi)}")
    program_kernel.max_steps = max_steps
    _check_modes(abi)
    _check_allocation(program_kernel.function, abi)
    mem = GlobalMemory()
    seg, buffers = _kernargs(abi, args or {}, grid, block, mem)
    kernarg_base = mem.map("kernarg segment", seg, writable=False, straddle=False)
    dispatch = mem.map("dispatch packet", _dispatch_packet(abi, grid, block, kernarg_base), writable=False,
                       straddle=False)
    queue = mem.map("queue", bytes(256), writable=False, modelled=False, straddle=False)
    entry = abi.preload_entry if preload_entry and abi.preload_entry is not None else abi.entry
    user = {"kernarg_segment_ptr": kernarg_base, "dispatch_ptr": dispatch, "queue_ptr": queue, "dispatch_id": 0,
            "private_segment_size": abi.private_segment_size}
    result = Result({}, memory=mem)
    ieee = int(dict(abi.descriptor).get("ieee_mode", "1") or 0)
    if dynamic_lds < 0:
        raise ValueError(f"dynamic_lds {dynamic_lds}: a byte count")
    group = abi.group_segment_size + dynamic_lds
    lds_init = np.frombuffer(CANARY.to_bytes(4, "little") * ((group + 3) // 4), np.uint8)
    for gz in range(grid[2]):
        for gy in range(grid[1]):
            for gx in range(grid[0]):
                ids = {"workgroup_id_x": gx, "workgroup_id_y": gy, "workgroup_id_z": gz}
                lds = None
                if group:
                    lds = GlobalMemory()
                    lds.map("LDS", lds_init[:group], base=0)
                waves = []
                for first in range(0, threads, 64):
                    wave = _start_wave(abi, user, ids, seg, block, first, min(64, threads - first), ieee)
                    wave.mem, wave.lds = mem, lds
                    size = abi.private_segment_size + (DYNAMIC_STACK if abi.dynamic_stack else 0)
                    if size:
                        wave.private = PrivateMemory(size, CANARY.to_bytes(4, "little"))
                    waves.append(wave)
                _run_group(program_kernel, waves, entry, schedule)
                for k, wave in enumerate(waves):
                    result.waves += 1
                    result.steps += wave.steps
                    result.hazards += [(gx, gy, gz, k, *h) for h in wave.hazards]
                    result.wait_hazards += [(gx, gy, gz, k, *h) for h in wave.wait_hazards]
    for key, (region, array) in buffers.items():
        data = mem.region(region).data
        result.outputs[key] = data.view(array.dtype).reshape(array.shape).copy() if array.size else array.copy()
    return result


def _run_group(kernel: Kernel, waves: list, entry: int, schedule: str = "forward"):
    """The waves of one workgroup, each in turn up to its next s_barrier (or s_endpgm), until all have ended; a
    barrier releases when every wave that has not ended reaches it. Between barriers the waves run one after
    another: wave 0 first ("forward"), last first ("reverse"), or alternating per interval ("alternate") -- one
    valid interleaving each; outputs that change with `schedule` mean a race between the waves."""
    for phase in range(1 << 62):
        order = waves[::-1] if schedule == "reverse" or schedule == "alternate" and phase % 2 else waves
        for wave in order:
            if not wave.done:
                kernel.run(wave, entry if phase == 0 else None)
        if all(w.done for w in waves):
            return


def abi_max(abi) -> int:
    return abi.max_flat_workgroup_size if abi is not None and abi.max_flat_workgroup_size else 1024


def _start_wave(abi, user, ids, seg, block, first, n, ieee) -> Wave:
    w = Wave(ieee)
    for slot in abi.sgprs:
        if slot.what == "kernarg_preload":
            continue
        if slot.what in user:
            value = user[slot.what]
        elif slot.what in ids:
            value = ids[slot.what]
        else:
            raise NotModelled("kernel", f"initial SGPR {slot.what}")
        for k in range(slot.count):
            w.s[slot.first + k] = (value >> (32 * k)) & 0xFFFFFFFF
    for sgpr, value in abi.preloaded_values(seg):
        w.s[sgpr] = value
    flat = np.arange(first, first + n)
    bx, by = block[0], block[1]
    xs, ys, zs = flat % bx, (flat // bx) % by, flat // (bx * by)
    for lane in range(n):
        for vgpr, value in abi.workitem_vgprs(int(xs[lane]), int(ys[lane]), int(zs[lane])):
            w.v[vgpr, lane] = value
    w.exec = (1 << n) - 1
    w.scc = 0
    w.m0 = CANARY
    return w
