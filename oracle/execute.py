"""Launch a rendered kernel on real buffers: the CPU interpreter or the local GPU through torch (CUDA or ROCm).

Backend-neutral on purpose: torch's "cuda" device is HIP on ROCm, so the same code launches on AMD and NVIDIA.
Outputs are pre-filled (NaN for floats, a byte pattern for integers) so unwritten elements show, and every buffer
sits between two guard regions of a canary pattern, so a write past either end shows too. Inputs are checked to be
unchanged after the run.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D
from gfxhound.fuzz.axes import extent, follows_k
from gfxhound.fuzz.render import input_strides, memory_shape, row_major_strides

from .inputs import numel
from .numeric import TORCH

GUARD_BYTES = 256  # keeps every buffer 16-byte aligned, as the compile-only specialisation assumes
CANARY_BYTE = 0xA5
INT_FILL_BYTE = 0x5A


def fill_value(dtype):
    """The pre-fill of a store output, as the dtype's value (NaN for floats, 0x5A.. for integers)."""
    if D.is_float(dtype):
        return float("nan")
    bits = D.DTYPES[dtype].bits
    raw = int.from_bytes(bytes([INT_FILL_BYTE]) * (bits // 8), "little", signed=True)
    return raw


def reach(spec, axes, strides):
    """The largest element index any block-padded lane of the launch can address in a buffer: the guard after a
    buffer covers it, so even a kernel that drops a mask writes into our canaries, not into someone's heap."""
    top = 0
    for axis, stride in zip(axes, strides):
        if axis == "2":
            padded = 2
        elif follows_k(axis):
            padded = max(-(-spec.sizes["K"] // spec.blocks["K"]), 3) * extent(axis, spec.blocks)
        else:
            padded = -(-spec.sizes[axis] // spec.blocks[axis]) * spec.blocks[axis]
        top += (padded - 1) * int(stride)
    return top + 1


class Buffer:
    """One kernel buffer with canaries either side; `view` is what the kernel gets."""

    def __init__(self, dtype, n, device, content=None, fill=None, reach=0):
        size = D.nbytes(dtype)
        self.dtype, self.n, self.guard = dtype, n, GUARD_BYTES // size
        self.after = self.guard + max(0, reach - n)
        raw = torch.full(((self.guard + self.after + n) * size,), CANARY_BYTE, dtype=torch.uint8)
        self.whole = raw.view(TORCH[dtype]) if dtype != "i1" else raw
        body = self.whole[self.guard:self.guard + n]
        if content is not None:
            body.copy_(content)
        elif fill is not None:
            body.fill_(fill)
        self.initial = self.whole.clone()
        self.whole = self.whole.to(device)
        self.view = self.whole[self.guard:self.guard + n]

    def read(self):
        whole = self.whole.cpu()
        return whole, whole[self.guard:self.guard + self.n]

    def guards_intact(self, whole):
        raw, initial = whole.view(torch.uint8), self.initial.view(torch.uint8)
        g, a = self.guard * D.nbytes(self.dtype), self.after * D.nbytes(self.dtype)
        return bool(torch.equal(raw[:g], initial[:g])) and bool(torch.equal(raw[-a:], initial[-a:]))


def prepare(spec, rendered, inputs, device):
    """Buffers, the positional argument list and the constexpr keywords of a launch."""
    buffers, values, constexprs = {}, [], {}
    for arg in rendered.args:
        name, kind = arg["name"], arg["kind"]
        if kind == "ptr" and name.startswith("in_"):
            index = int(name[3:])
            spec_arg = spec.inputs[index]
            data = inputs[name]
            buffers[name] = Buffer(spec_arg["dtype"], data.numel(), device, content=data,
                                   reach=reach(spec, spec_arg["axes"], input_strides(spec_arg, spec.sizes)))
            values.append(buffers[name].view)
        elif kind == "ptr":
            index = int(name[4:])
            spec_arg = spec.outputs[index]
            n = numel(spec_arg["axes"], spec.sizes)
            fill = 0 if spec_arg["mode"] == "atomic" else fill_value(spec_arg["dtype"])
            strides = row_major_strides(memory_shape(spec_arg["axes"], spec.sizes)) if spec_arg["axes"] else []
            buffers[name] = Buffer(spec_arg["dtype"], n, device, fill=fill,
                                   reach=reach(spec, spec_arg["axes"], strides))
            values.append(buffers[name].view)
        elif kind == "float":
            values.append(float(arg["value"]))
        elif kind == "constexpr":
            constexprs[name] = arg["value"]
        else:
            values.append(int(arg["value"]))
    return buffers, values, constexprs


def launch(kernel, rendered, values, constexprs, options, device):
    kernel[rendered.grid](*values, **constexprs, **options)
    if device != "cpu":
        torch.cuda.synchronize()


def collect(spec, buffers):
    """Outputs as CPU tensors, plus what the canaries and the inputs say."""
    outputs, problems = {}, []
    for name, buf in buffers.items():
        whole, body = buf.read()
        if not buf.guards_intact(whole):
            problems.append(f"{name}: a guard region around the buffer was overwritten (out-of-bounds write)")
        if name.startswith("in_"):
            if not torch.equal(whole.view(torch.uint8), buf.initial.view(torch.uint8)):
                problems.append(f"{name}: the kernel modified an input buffer")
        else:
            outputs[name] = body.clone()
    return outputs, problems
