"""Compiles one instruction's AMD pseudocode (``pcode_data``) into an ``Op`` that runs a whole wave at once.

Why compile: the executor runs each instruction many times; parsing and typing its pseudocode once, into a tree
of Python closures over numpy lane arrays, makes a run a handful of vector operations. The pseudocode describes
one lane; the closures run it for all 64 lanes under the EXEC mask, ``if`` and ``break`` as masks (SIMT style).

Interface (for the machine): ``op = compile_op("v_add_co_u32")`` (cached; raises ``NotModelled``), then
``op.run(inputs, exec_mask, memory=None) -> dict``:

- ``inputs`` maps register names (``op.inputs``: S0 S1 S2 D0 SCC VCC EXEC M0 PC SIMM16 OPSEL ...) to raw bits:
  a Python int (a scalar operand or a wave-wide register) or a uint32/uint64 array of 64 lanes. ``op.widths``
  says how many bits each register has (S0 of ``v_lshlrev_b64`` is 64: two VGPRs). Pass the old value of every
  register in ``op.outputs`` too: bits the pseudocode does not write (the high half of a 16-bit result, another
  lane's VCC bit) are taken from it, and a partial write without it raises ``NotModelled``.
- ``exec_mask``: the 64-bit EXEC (int, or bool[64]) for a per-lane op (``op.lanes``); ignored otherwise.
- The result maps each written register to its new raw bits: a uint64 array of 64 lanes for a per-lane
  register (``op.per_lane``; inactive lanes hold the old value), an int for a scalar one. VCC, EXEC, a VOPC's D0
  and a VOP3SD's D1 are wave-wide lane masks (``op.lane_masks``) written bit by bit.
- ``memory`` (DS/FLAT/GLOBAL/SMEM ops, ``op.memory``): an object with ``address(helper, *args)`` for the
  guide's ``Calc*Addr`` helpers (``op.address_hooks``; a text without one uses ``MEM[ADDR]``, ADDR the final
  address), ``load(addr, nbytes, lanes) -> uint64[]`` and ``store(addr, nbytes, bits, lanes)``.
  Read-modify-write ops run lane by lane in ascending lane order.
- ``op.approximate``: the guide bounds the hardware's error (sqrt, exp, rcp...); we compute the IEEE value.
- Source and output modifiers (abs/neg, opsel of 16-bit VOP3 sources, omod, clamp) are not in the pseudocode:
  the machine applies them around ``run``, except ``OPSEL``/``OPSEL_HI`` where ``op.inputs`` names them.

A construct it does not model (cross-lane VGPR access, hardware registers, fp8 formats...) raises
``NotModelled(mnemonic, construct)`` at compile time, or at run time if only some inputs reach it.
Decisions where the guide is ambiguous: docs/amdgcn-pcode.md.
"""
from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import pcode_lib as L
from .pcode_compile import Compiler
from .pcode_data import FAMILIES, PCODE
from .pcode_expr import LANE_ID, PER_LANE
from .pcode_lib import NotModelled
from .pcode_parse import ParseError, Ty, parse
from .pcode_reuse import Deferred, Results

__all__ = ["NotModelled", "Op", "compile_op", "coverage", "unmodelled"]

LANE_FAMILIES = frozenset({"VOP1", "VOP2", "VOP3", "VOPC", "VOP3SD", "VOP3P", "DS", "FLAT", "GLOBAL", "SCRATCH",
                           "MUBUF", "MTBUF"})


def _zero_or_denormal(bits: int):
    m = L.MANT[bits]
    return lambda f: (f.v["S0"] >> np.uint64(m)) & L.ones(bits - 1 - m) == 0


# Inputs on which an instruction's pseudocode contradicts the guide's own prose: run() reports them NotModelled
# rather than compute the literal pseudocode (docs/amdgcn-pcode.md, decision table).
DISAGREEMENTS = {
    f"v_frexp_exp_{k}": ("a zero or denormal input: exponent(x) - bias + 1 is not the exponent of frexp, which the"
                         " guide's prose promises", _zero_or_denormal(w))
    for k, w in (("i32_f32", 32), ("i32_f64", 64), ("i16_f16", 16))
}


class _Frame:
    """One run's state: values (v), bits written per register (w), current lanes (m), retired lanes (dead)."""
    __slots__ = ("v", "w", "m", "dead", "mem", "round", "supplied")


@dataclass(frozen=True, eq=False)
class Op:
    """One instruction's compiled pseudocode; see the module docstring for ``run``'s contract."""
    mnemonic: str
    families: tuple[str, ...]
    lanes: bool                  # runs per lane under EXEC (VALU, vector memory) rather than once (SALU, SMEM)
    inputs: frozenset[str]       # registers the pseudocode reads before writing them
    outputs: frozenset[str]      # registers it may write
    widths: dict[str, int]       # bits of each register it names
    per_lane: frozenset[str]     # registers with one value per lane
    lane_masks: frozenset[str]   # wave-wide registers it writes one lane's bit at a time
    approximate: bool            # the guide bounds the result's error (sqrt, exp, log, sin, rcp...): we are exact
    memory: bool
    address_hooks: frozenset[str]  # Calc*Addr helpers it calls; none: MEM[ADDR] takes ADDR as the final address
    text: str                    # the guide's pseudocode
    _body: Callable
    _serial: bool                # reads and writes memory: lanes run one after another

    def run(self, inputs: dict, exec_mask=None, memory=None) -> dict:
        key = None
        if REUSE and not self.memory and memory is None:   # a pure function of its inputs: a repeat is a lookup
            key = RESULTS.key(self, exec_mask if self.lanes else None, inputs)   # the Op, not its name: a
            # variant (compile_variant) runs another text under the same mnemonic
            out = RESULTS.get(key) if key is not None else None
            if out is not None:
                return out
        if REUSE and self._serial and self.lanes and memory is not None:
            out = self._together(inputs, exec_mask, memory)
            if out is not None:
                return out
        f, mask = self._frame(inputs, exec_mask, memory)
        self._execute(f, [LANE_ID == i for i in np.flatnonzero(mask)] if self._serial and self.lanes else [mask])
        out = self._collect(f, mask)
        if key is not None:
            RESULTS.put(key, out)
        return out

    def _together(self, inputs, exec_mask, memory):
        """A read-modify-write run of every lane at once, its stores held back (pcode_reuse.Deferred): the result
        if no two lanes touched a common byte (then the guide's lane order cannot matter), else None."""
        deferred = Deferred(memory)
        try:
            f, mask = self._frame(inputs, exec_mask, deferred)
            if np.count_nonzero(mask) < 2:
                return None
            self._execute(f, [mask])
            out = self._collect(f, mask)
        except Exception:  # noqa: BLE001 - a fault or a refusal is raised again, in lane order, by the serial run
            return None
        if not deferred.disjoint():
            return None
        deferred.commit()
        return out

    def _frame(self, inputs, exec_mask, memory):
        f = _Frame()
        f.v, f.w, f.mem, f.round = {}, {}, memory, L.ROUND_NEAREST_EVEN
        if self.lanes:
            em = (1 << 64) - 1 if exec_mask is None else exec_mask
            if isinstance(em, (int, np.integer)):
                mask, exec_bits = _lane_mask(int(em) & ((1 << 64) - 1)), int(em) & ((1 << 64) - 1)
            else:
                mask = np.asarray(em, bool).reshape(64)
                exec_bits = int(np.bitwise_or.reduce(np.where(mask, L.LANE_BITS, np.uint64(0))))
            inputs = {"EXEC": exec_bits, **inputs}
        else:
            mask = np.asarray(True)
        for name, value in inputs.items():
            if name in self.widths:
                f.v[name] = _normal(value, self.widths[name], self.mnemonic)
        f.supplied = frozenset(f.v)
        if self.inputs - f.supplied:
            raise ValueError(f"{self.mnemonic}: inputs not supplied: {sorted(self.inputs - f.supplied)}")
        if memory is None and self.memory:
            raise ValueError(f"{self.mnemonic} accesses memory: pass memory=")
        for name in self.outputs:
            f.w[name] = L.const(Ty("b", self.widths[name]), 0)
            f.v.setdefault(name, f.w[name])
        if self.mnemonic in DISAGREEMENTS and np.any(DISAGREEMENTS[self.mnemonic][1](f) & mask):
            raise NotModelled(self.mnemonic, DISAGREEMENTS[self.mnemonic][0])
        return f, mask

    def _execute(self, f, masks) -> None:
        with np.errstate(all="ignore"):
            try:
                for m in masks:
                    f.dead = np.zeros_like(m)
                    self._body(f, m)
            except L.LibError as e:
                raise NotModelled(self.mnemonic, str(e)) from None

    def _collect(self, f: _Frame, mask) -> dict:
        out = {}
        for name in sorted(self.outputs):
            full, v, w = L.ones(self.widths[name]), f.v[name], f.w[name]
            if name in self.per_lane:
                v, w = (x.copy() if getattr(x, "shape", None) == (64,) else np.broadcast_to(x, (64,)).copy()
                        for x in (v, w))
                if not ((w != 0) & mask).any():
                    continue
                if (mask & (w == 0)).any():
                    raise NotModelled(self.mnemonic, f"{name} is not assigned in every active lane")
                partial = bool(((w != full) & mask).any())
            else:
                if not np.any(w != 0):
                    continue
                partial, v = bool(np.any(w != full)), int(v)
            if partial and name not in f.supplied:
                raise NotModelled(self.mnemonic, f"{name} is written in part: supply its old value")
            out[name] = v
        return out


_MASKS: dict = {}
RESULTS = Results()   # pure instructions' runs by their inputs (pcode_reuse.py)
REUSE = True          # False: every run computed in full, lane by lane where memory is read and written (tests, bench)


def _lane_mask(bits: int) -> np.ndarray:
    """bool[64] of an EXEC value (read-only, shared: a wave runs few distinct EXEC values)."""
    mask = _MASKS.get(bits)
    if mask is None:
        if len(_MASKS) > 4096:
            _MASKS.clear()
        mask = ((np.uint64(bits) >> LANE_ID) & np.uint64(1)) == 1
        mask.setflags(write=False)
        _MASKS[bits] = mask
    return mask


def _normal(value, width: int, mn: str):
    """A register value as raw bits of ``width``: an int, or an integer array of 64 lanes."""
    if isinstance(value, (int, np.integer)):
        return L.const(Ty("b", width), int(value))
    arr = np.asarray(value)
    if arr.dtype.kind not in "uibO" or arr.shape not in ((), (64,)):
        raise TypeError(f"{mn}: register values are raw bits (an int, or 64 integer lanes), not {arr.dtype}{arr.shape}")
    if width > 64:
        return L.as_wide(arr) & L.ones(width)
    if arr.dtype == object:
        arr = arr & int(L.ones(64))
    return arr.astype(np.uint64) & L.ones(width)


_OPS: dict[str, object] = {}


def compile_op(mnemonic: str) -> Op:
    """The cached ``Op`` of an instruction (assembler spelling; ``_e32``/``_e64`` suffixes ignored)."""
    name = mnemonic.lower().removesuffix("_e32").removesuffix("_e64")
    if name not in _OPS:
        try:
            _OPS[name] = _build(name)
        except NotModelled as e:
            _OPS[name] = e
    op = _OPS[name]
    if isinstance(op, NotModelled):
        raise op
    return op


# v_bitop3_b16/_b32 write their result as `D.b32 = tmp.b32` where every other text writes D0; an instruction with one
# destination, so D is read as D0 (a decision, tabled in docs/amdgcn-pcode.md)
_D_AS_D0 = re.compile(r"(?<![A-Za-z0-9_])D\.(?=[a-z])")


def compile_variant(name: str, text: str) -> Op:
    """The Op of `text` standing for instruction `name` (its encodings are name's): for an instruction whose
    semantics the guide gives two ways (machine_valu.fma_mix runs both and refuses where they differ)."""
    return _build(name, text)


def _build(name: str, text: str | None = None) -> Op:
    if name not in PCODE:
        raise NotModelled(name, "not in the CDNA pseudocode table")
    text = PCODE[name] if text is None else text
    lanes = any(fam in LANE_FAMILIES for fam in FAMILIES[name])
    if name.startswith(("v_mfma", "v_smfmac")):
        raise NotModelled(name, "a matrix (MFMA) instruction: the guide gives a formula, not pseudocode")
    try:
        body = parse(_D_AS_D0.sub("D0.", text))
    except ParseError as e:
        raise NotModelled(name, f"pseudocode not parsed ({e})") from None
    c = Compiler(name, lanes)
    try:
        run = c.compile(body)
    except L.LibError as e:
        raise NotModelled(name, str(e)) from None
    outputs = frozenset(r for r, info in c.regs.items() if info["written"])
    return Op(name, FAMILIES[name], lanes, frozenset(r for r, info in c.regs.items() if info["read"]), outputs,
              {r: c.width(r) for r in c.regs},
              frozenset(r for r in c.regs if lanes and r in PER_LANE and r not in c.lane_masks),
              frozenset(c.lane_masks & outputs), "approx" in c.flags, bool(c.flags & {"load", "store", "addr"}),
              frozenset(c.hooks), text, run, {"load", "store"} <= c.flags)


def unmodelled() -> dict[str, str]:
    """mnemonic -> the construct that stops its pseudocode from compiling."""
    out = {}
    for name in sorted(PCODE):
        try:
            compile_op(name)
        except NotModelled as e:
            out[name] = e.construct
    return out


def coverage() -> dict[str, tuple[int, int]]:
    """family -> (instructions whose pseudocode compiles, instructions in the table); a mnemonic counts in every
    family that encodes it (v_add_u32 in VOP2 and VOP3)."""
    bad, counts = unmodelled(), {}
    for name, fams in FAMILIES.items():
        for fam in fams:
            c = counts.setdefault(fam, [0, 0])
            c[0] += name not in bad
            c[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}
