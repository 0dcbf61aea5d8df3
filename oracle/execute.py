"""Launch a rendered kernel on real buffers: the CPU interpreter or the local GPU through torch (CUDA or ROCm).

Backend-neutral on purpose: torch's "cuda" device is HIP on ROCm, so the same code launches on AMD and NVIDIA.
Outputs are pre-filled (NaN for floats, a byte pattern for integers) so unwritten elements show, and every buffer
sits between two guard regions of a canary pattern, so a write past either end shows too. Inputs are checked to be
unchanged after the run.
"""
from __future__ import annotations

import torch

from gfxhound.fuzz import dtypes as D

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


class Buffer:
    """One kernel buffer with canaries either side; `view` is what the kernel gets."""

    def __init__(self, dtype, n, device, content=None, fill=None):
        size = D.nbytes(dtype)
        self.dtype, self.n, self.guard = dtype, n, GUARD_BYTES // size
        raw = torch.full(((2 * self.guard + n) * size,), CANARY_BYTE, dtype=torch.uint8)
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
        g = self.guard * D.nbytes(self.dtype)
        return bool(torch.equal(raw[:g], initial[:g])) and bool(torch.equal(raw[-g:], initial[-g:]))


def prepare(spec, rendered, inputs, device):
    """Buffers, the positional argument list and the constexpr keywords of a launch."""
    buffers, values, constexprs = {}, [], {}
    for arg in rendered.args:
        name, kind = arg["name"], arg["kind"]
        if kind == "ptr" and name.startswith("in_"):
            index = int(name[3:])
            spec_arg = spec.inputs[index]
            data = inputs[name]
            buffers[name] = Buffer(spec_arg["dtype"], data.numel(), device, content=data)
            values.append(buffers[name].view)
        elif kind == "ptr":
            index = int(name[4:])
            spec_arg = spec.outputs[index]
            n = numel(spec_arg["axes"], spec.sizes)
            fill = 0 if spec_arg["mode"] == "atomic" else fill_value(spec_arg["dtype"])
            buffers[name] = Buffer(spec_arg["dtype"], n, device, fill=fill)
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
