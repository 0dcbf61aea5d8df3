"""The machine state a pseudocode text reads or writes without an operand naming it (SCC, VCC, EXEC, M0, the IEEE
mode bit): readers and writers shared by the SALU and VALU decoders (machine_decode.py, machine_valu.py)."""
from __future__ import annotations

from gfxhound.executors.amdgcn.machine import M32, M64
from gfxhound.executors.amdgcn.pcode import NotModelled

__all__ = ["_state_inputs", "_state_writers"]


def _state_inputs(op, mapped):
    """Registers the pseudocode reads that no operand names: taken from the wave."""
    get = {"SCC": lambda w: w.scc, "VCC": lambda w: w.vcc, "EXEC": lambda w: w.exec, "M0": lambda w: w.m0,
           "VCCZ": lambda w: int(w.vcc == 0), "EXECZ": lambda w: int(w.exec == 0),
           "WAVE_MODE.IEEE": lambda w: w.ieee}
    out = []
    for name in sorted((op.inputs | op.outputs) - set(mapped)):
        if name in get:
            out.append((name, get[name]))
        elif name in op.inputs:
            raise NotModelled(op.mnemonic, f"input {name} has no operand")
    return out


def _state_writers(op, mapped):
    put = {"SCC": lambda w, v: setattr(w, "scc", int(v) & 1), "VCC": lambda w, v: setattr(w, "vcc", int(v) & M64),
           "EXEC": lambda w, v: setattr(w, "exec", int(v) & M64), "M0": lambda w, v: setattr(w, "m0", int(v) & M32)}
    out = {}
    for name in op.outputs - set(mapped):
        if name not in put:
            raise NotModelled(op.mnemonic, f"output {name} has no operand")
        out[name] = put[name]
    return out
