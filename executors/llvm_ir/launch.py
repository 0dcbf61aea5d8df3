"""Launch a compiled AMD kernel on the CPU executor, as `kernel[grid](*args)` launches it on a GPU.

`EmulatedKernel(compiled, args_spec)[grid](*values, **constexprs)` takes the launch's CPU tensors and scalars, maps
each tensor's whole storage (the guard regions around a buffer included) into the executor's global memory, runs
every workgroup, and writes the bytes back into the tensors: the campaign's buffers, canaries and comparison work
unchanged (oracle/execute.py).
"""
from __future__ import annotations

import time

import numpy as np

from . import core, ir
from .errors import NotModelled
from .memory import GlobalMemory
from .values import dtype_of


def tensor_storage(tensor):
    """The tensor's whole storage as a writable numpy byte array, and the tensor's byte offset into it (the
    machine-code judge, oracle/emulate_machine.py, maps the same bytes)."""
    root = tensor._base if tensor._base is not None else tensor
    raw = root.view(-1).view(__import__("torch").uint8).numpy() if root.is_contiguous() else None
    if raw is None:
        raise NotModelled("a non-contiguous buffer")
    return raw, tensor.data_ptr() - root.data_ptr()


class EmulatedKernel:
    def __init__(self, compiled, arch, keep, lanes_per_executor=2048):
        """`keep`: which positional launch values are parameters of the compiled kernel (the runtime turns an
        integer argument equal to 1 into a constant, so the IR has no parameter for it)."""
        self.compiled, self.arch = compiled, arch
        self.keep = list(keep)
        md = compiled.metadata
        self.num_warps = int(md.num_warps)
        self.warp_size = int(getattr(md, "warp_size", 64) or 64)
        self.shared = int(getattr(md, "shared", 0) or 0)
        self.scratch = int(getattr(md, "global_scratch_size", 0) or 0)
        self.profile_scratch = int(getattr(md, "profile_scratch_size", 0) or 0)
        started = time.perf_counter()
        module = ir.parse(compiled.asm["llir"])
        # Triton's kernels are judged against torch: undefined behaviour in Triton's own IR that changes a result
        # is Triton's bug, to be reported, not an unresolved run; and tracking costs ~29% here (docs/emulate.md)
        self.kernel = core.Kernel(module, md.name, arch, self.warp_size, poison_tracking=False)
        self.prepare_s = time.perf_counter() - started
        self.lanes = lanes_per_executor
        self.schedule = "alternate"  # core.SCHEDULES
        self.last_run_s = 0.0

    def _implicit_args(self, grid):
        return implicit_args_block(grid, self.num_warps * self.warp_size)

    def __getitem__(self, grid):
        return lambda *values, **keywords: self.run(grid, values)

    def run(self, grid, values):
        import torch
        started = time.perf_counter()
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        values = [values[i] for i in self.keep]
        heap, mapped, args = GlobalMemory(), [], {}
        params = self.kernel.params
        for (ty, pname), value in zip(params, values):
            if isinstance(value, torch.Tensor):
                raw, offset = tensor_storage(value)
                address = heap.map(raw.copy())
                mapped.append((raw, address))
                args[pname] = np.array(address + offset, np.uint64)
            else:
                args[pname] = scalar_argument(ty, value)
        extra = params[len(values):]
        programs = grid[0] * grid[1] * grid[2]
        for (ty, pname), size in zip(extra, (self.scratch, self.profile_scratch)):
            # Triton's trailing global-scratch and profile-scratch pointers: a region per program when used
            args[pname] = np.array(heap.map(np.zeros(max(size, 0) * programs + 1, np.uint8)) if size else 0,
                                   np.uint64)
        args["__implicitarg"] = np.array(heap.map(self._implicit_args(grid)), np.uint64)
        if len(extra) > 2:
            raise NotModelled(f"{len(extra)} parameters beyond the launch's arguments")
        heap.seal()
        core.run_grid(self.kernel, args, grid, self.num_warps, self.shared, heap, self.lanes, self.schedule)
        for raw, address in mapped:
            raw[:] = heap.read_back(address, raw.size)
        self.last_run_s = time.perf_counter() - started


def implicit_args_block(grid, workgroup_size):
    """The hidden kernel arguments of code object v5 that Triton reads (`tl.num_programs`): block counts at 0, 4, 8
    (u32) and group sizes at 12, 14, 16 (u16); the remainders and the rest stay 0 (AMDGPUUsage, "Code Object V5
    Metadata", hidden_block_count_x ...)."""
    block = np.zeros(256, np.uint8)
    block[0:12] = np.array(grid, np.uint32).view(np.uint8)
    block[12:18] = np.array([workgroup_size, 1, 1], np.uint16).view(np.uint8)
    return block


def scalar_argument(ty, value):
    """A launch scalar as a 0-d numpy value of the IR parameter type `ty` (the bytes a kernarg holds)."""
    dt = dtype_of(ty)
    if ty[0] == "f":
        if ty[1] == "bfloat":
            raise NotModelled("a bfloat scalar argument")
        return np.array(value, dt)
    if ty[0] == "i":
        return np.array(int(value) & ((1 << ty[1]) - 1), dt) if ty[1] > 1 else np.array(bool(value))
    raise NotModelled(f"scalar argument of type {ty}")
