"""Observability of an assembly plant's site, as the ISA defines it: a def-use pair on the executed path whose
chain reaches an output.

Why its own module: observability must not be read off the planted run's outcome (then every observable site
would be flagged by definition); it is a property of the ORIGINAL kernel's executed path. So the original runs
once on the machine with every step wrapped from outside (``Kernel.steps[i]``; nothing in executors/amdgcn is
changed) to record, in execution order, (wave, workgroup, instruction index, EXEC before, EXEC after); then a
forward taint analysis over that trace decides each site:

- the seed: the registers the edited instruction writes (seed "defs": every register operand in a destination
  field, plus implicit SCC/VCC/EXEC/M0 outputs of its pseudocode), on the lanes active when it ran (an SALU or
  SMEM op: the whole register); "waitcnt": a register a load writes that is read (by an executed instruction)
  after the removed wait's position and before a later wait retires that load, with the vmcnt/lgkmcnt counters
  counted as the machine counts them (oldest first) -- the reading instruction's results are the seed;
  "exec": EXEC in the lanes the removed restore would have changed (EXEC before xor EXEC after, on that run).
- propagation, per instruction executed after it: a per-lane op (VALU, vector memory, DS) taints the lanes it
  writes that had a tainted input lane (a tainted SGPR/VCC/M0 input taints every active lane; a tainted EXEC lane
  taints that lane of every destination, written or not); a scalar op taints its destinations if any input is
  tainted; writing a register with untainted inputs clears it (lanes outside EXEC keep theirs). v_readlane /
  v_writelane with an immediate lane and v_readfirstlane follow the lane; ds_(b)permute taints every active lane.
  LDS is one location per workgroup (a tainted DS store taints every later DS load of that workgroup: coarse).
- the output: a global/flat store (or atomic) whose data, address or EXEC has a tainted active lane; also a branch
  that reads a tainted SCC/VCC/EXEC (the path itself may change: counted as reaching the output, reason "branch").
  Stores are outputs, so a chain is followed to the end, not only to its first use.
- a site that never ran with an active lane is not observable ("not executed"); "hazard" sites (drop-hazard-nop)
  are never resolved: the machine has no wait-state model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gfxhound.executors.amdgcn.asm_operands import Imm, Reg, Special, Src, Waitcnt

M64 = (1 << 64) - 1
_SPECIAL_UNIT = {"vcc": "vcc", "vcc_lo": "vcc", "vcc_hi": "vcc", "exec": "exec", "exec_lo": "exec",
                 "exec_hi": "exec", "scc": "scc", "src_scc": "scc", "m0": "m0", "vccz": "vcc", "src_vccz": "vcc",
                 "execz": "exec", "src_execz": "exec"}
_STATE_UNIT = {"SCC": "scc", "VCC": "vcc", "EXEC": "exec", "M0": "m0", "VCCZ": "vcc", "EXECZ": "exec"}


@dataclass(frozen=True)
class Effects:
    """What one instruction reads and writes: units are ("v", n), ("s", n), ("a", n), ("vcc",), ("exec",),
    ("scc",), ("m0",), ("lds",). ``kind``: valu | salu | smem | vload | vstore | dsload | dsstore | branch |
    wait | nop | readlane | writelane | readfirstlane | permute. ``counters``: the wait counters a load counts
    on; ``lane``: the immediate lane of v_readlane/v_writelane (None: not immediate)."""
    kind: str
    defs: tuple = ()
    uses: tuple = ()
    counters: tuple = ()
    lane: int | None = None
    wait: Waitcnt | None = None


def units(op) -> list:
    if isinstance(op, Src):
        op = op.base
    if isinstance(op, Reg):
        return [(op.file, op.index + k) for k in range(op.count)]
    if isinstance(op, Special) and op.name in _SPECIAL_UNIT:
        return [(_SPECIAL_UNIT[op.name],)]
    return []


def _flat(ops) -> tuple:
    return tuple(u for o in ops for u in units(o))


def effects(ins) -> Effects:
    """The Effects of one Instruction, from its pseudocode's register names (pcode.compile_op) and the operand
    order the machine maps them by (machine.py's docstring)."""
    from gfxhound.oracle.asm_plants import _op, operand_names
    mn, ops = ins.mnemonic, list(ins.operands)
    if mn == "s_waitcnt":
        wc = ops[0] if ops else Waitcnt()
        if isinstance(wc, Imm):
            wc = Waitcnt(0, 0, 0)
        return Effects("wait", wait=wc)
    if mn in ("s_nop", "s_endpgm", "s_barrier", "s_setprio", "s_sleep") or mn.startswith(("buffer_wb", "buffer_inv")):
        return Effects("nop")
    if mn == "v_readlane_b32":
        lane = ops[2].value if isinstance(ops[2], Imm) else None
        return Effects("readlane", _flat(ops[:1]), _flat(ops[1:]), lane=lane)
    if mn == "v_writelane_b32":
        lane = ops[2].value if isinstance(ops[2], Imm) else None
        return Effects("writelane", _flat(ops[:1]), _flat(ops[1:]), lane=lane)
    if mn == "v_readfirstlane_b32":
        return Effects("readfirstlane", _flat(ops[:1]), _flat(ops[1:]))
    if mn in ("ds_permute_b32", "ds_bpermute_b32"):
        return Effects("permute", _flat(ops[:1]), _flat(ops[1:]), ("lgkm",))
    if mn.startswith("v_accvgpr_"):
        return Effects("valu", _flat(ops[:1]), _flat(ops[1:]))
    op = _op(mn)
    if op is None:   # the machine cannot run it either; a conservative guess: destination first
        return Effects("valu" if mn.startswith("v_") else "salu", _flat(ops[:1]), _flat(ops[1:]))
    fams = set(op.families)
    implicit_in = tuple((_STATE_UNIT[n],) for n in sorted(op.inputs) if n in _STATE_UNIT)
    implicit_out = tuple((_STATE_UNIT[n],) for n in sorted(op.outputs) if n in _STATE_UNIT)
    if op.memory:
        out = next((n for n in ("VDATA", "RETURN_DATA", "SDATA") if n in op.outputs), None)
        if "SMEM" in fams:
            return Effects("smem", _flat(ops[:1]), _flat(ops[1:]), ("lgkm",))
        if "DS" in fams:
            datas = [n for n in ("DATA", "DATA2") if n in op.inputs]
            has_dst = out is not None and len(ops) == 2 + len(datas)
            defs = _flat(ops[:1]) if has_dst else ()
            uses = _flat(ops[1:] if has_dst else ops)
            if out is None:
                return Effects("dsstore", (("lds",),), uses, ("lgkm",))
            return Effects("dsload", defs + ((("lds",),) if datas else ()), uses + (("lds",),), ("lgkm",))
        is_global = mn.startswith("global_")
        data = next((n for n in ("VDATA", "DATA") if n in op.inputs), None)
        has_dst = out is not None and (data is None or len(ops) == (4 if is_global else 3))
        counters = ("vm",) if is_global else ("vm", "lgkm")
        if has_dst and data is None:
            return Effects("vload", _flat(ops[:1]), _flat(ops[1:]), counters)
        return Effects("vstore", _flat(ops[:1]) if has_dst else (), _flat(ops[1:] if has_dst else ops), counters)
    if "PC" in op.outputs:
        return Effects("branch", (), implicit_in)
    if op.lanes:
        names = operand_names(ins, op)
        if len(names) != len(ops):
            return Effects("valu", _flat(ops[:1]), _flat(ops[1:]) + implicit_in)
        defs = tuple(u for n, o in zip(names, ops) if n in op.outputs and n != "VCC_IN" for u in units(o))
        uses = tuple(u for n, o in zip(names, ops)   # the carry-out slot "VCC" is a destination, VCC_IN the input
                     if n not in op.outputs or n == "VCC_IN" or n in op.inputs and n != "VCC" for u in units(o))
        mapped = {"VCC" if n == "VCC_IN" else n for n in names}
        defs += tuple((_STATE_UNIT[n],) for n in sorted(op.outputs - mapped) if n in _STATE_UNIT)
        uses += tuple((_STATE_UNIT[n],) for n in sorted(op.inputs - mapped) if n in _STATE_UNIT)
        return Effects("valu", defs, uses)
    # SALU: D0 first where the pseudocode writes one
    if "SOPK" in fams:
        names = ["D0", "S0"] if "D0" in op.widths else ["S0", "S1"]
    else:
        names = (["D0"] if "D0" in op.outputs else []) + [s for s in ("S0", "S1") if s in op.widths]
    defs = tuple(u for n, o in zip(names, ops) if n in op.outputs for u in units(o))
    uses = tuple(u for n, o in zip(names, ops) if n in op.inputs for u in units(o))
    mapped = set(names)
    defs += tuple(u for u in implicit_out if u not in defs and u[0].upper() not in mapped)
    uses += tuple((_STATE_UNIT[n],) for n in sorted(op.inputs - mapped) if n in _STATE_UNIT)
    return Effects("salu", defs, uses)


# ---- the trace ------------------------------------------------------------------------------------------------
def trace(assembly_text: str, kernel: str, launch, probes: dict | None = None) -> list:
    """Run the kernel once (crosscheck_launch's Launch: same inputs as the cross-check, wave order "forward")
    with every step wrapped; returns [(wave, workgroup, index, exec before, exec after)] in execution order.

    ``probes``: instruction index -> [planted Instruction, None]: each time that index runs with an active lane
    (or at all, for a scalar op), the planted instruction also runs, on a copy of the wave, and the second item
    becomes whether any register the original writes differs (True once any execution differs), or the reason it
    cannot run (a str: NotModelled)."""
    from gfxhound.executors.amdgcn.abi import kernel_abi
    from gfxhound.executors.amdgcn.asm import parse_program
    from gfxhound.executors.amdgcn.machine_kernel import Kernel
    from gfxhound.executors.amdgcn.run import launch as run_launch
    program = parse_program(assembly_text)
    abi = kernel_abi(assembly_text, kernel, program)
    k = Kernel(program.function(abi.name))
    log, waves = [], {}
    probe_steps = _probe_steps(k.function, probes or {})

    def wrap(i, step):
        def traced(w):
            before = w.exec
            if i in probe_steps:
                _probe(w, step, probe_steps[i], probes[i])
            else:
                step(w)
            key = waves.setdefault(id(w), (len(waves), w))[0]
            log.append((key, id(w.lds), i, before, w.exec))
        return traced
    k.steps = [wrap(i, s) for i, s in enumerate(k.steps)]
    run_launch(k, abi, [a.copy() if isinstance(a, np.ndarray) else a for a in launch.args], launch.grid,
               launch.block, schedule="forward")
    return log


def _probe_steps(function, probes: dict) -> dict:
    from gfxhound.executors.amdgcn.machine_decode import decode
    from gfxhound.executors.amdgcn.pcode import NotModelled
    out = {}
    for index, slot in probes.items():
        try:
            out[index] = (decode(slot[0]), effects(function.instructions[index]))
        except NotModelled as exc:
            slot[1] = f"not modelled: {exc}"
        except Exception as exc:  # noqa: BLE001 - the machine cannot take the planted statement: say why
            slot[1] = f"the machine cannot decode it: {type(exc).__name__}: {exc}"
    return out


def _copy(w):
    import copy
    c = copy.copy(w)
    c.s, c.v, c.a = list(w.s), w.v.copy(), w.a.copy()
    c.outstanding = {k: list(v) for k, v in w.outstanding.items()}
    c.hazards = list(w.hazards)
    return c


def _value(w, u):
    if u[0] in ("v", "a"):
        return getattr(w, u[0])[u[1]]
    if u[0] == "s":
        return w.s[u[1]]
    return getattr(w, u[0], None)


def _probe(w, step, probe, slot):
    planted_step, fx = probe
    if fx.kind in ("valu", "vload", "dsload") and not w.exec or slot[1] is True or isinstance(slot[1], str):
        step(w)
        return
    other = _copy(w)
    try:
        planted_step(other)
    except Exception as exc:  # noqa: BLE001 - NotModelled at run time, a fault: the value cannot be compared
        slot[1] = slot[1] if slot[1] is True else f"the planted instruction did not run: {type(exc).__name__}"
        step(w)
        return
    step(w)
    for u in fx.defs:
        if u == ("lds",):
            continue
        a, b = _value(w, u), _value(other, u)
        if isinstance(a, np.ndarray) and not np.array_equal(a, b) or not isinstance(a, np.ndarray) and a != b:
            slot[1] = True
            return
    if slot[1] is None:
        slot[1] = False


# ---- the analysis ---------------------------------------------------------------------------------------------
def _vector(u) -> bool:
    return u[0] in ("v", "a")


def hazard_observable(log: list, infos: list, index: int) -> tuple:
    """(observable, reason) of dropping the s_nop at `index`: replay each wave's executed instructions of the
    ORIGINAL run through the machine's wait-state rows (executors/amdgcn/machine_hazards.py) with that nop
    removed; it is observable when a checked row then has too few wait states. A nop no checked row needs may
    still guard a row of the guide's table the machine does not check: the reason says so."""
    from gfxhound.executors.amdgcn.machine_hazards import WaitStates
    waves, executed = {}, False
    for w, g, pc, eb, ea in log:
        if pc == index:
            executed = True
            continue
        broken = waves.setdefault((g, w), WaitStates()).issue(infos[pc])
        for rule, producer in broken:
            return True, f"rule {rule.number} ({rule.row}) between instructions {producer} and {pc}"
    if not executed:
        return False, "not executed"
    return False, "no checked wait-state row needs it (it may guard a row the machine does not check)"


def observe(log: list, fx: list, index: int, seed: str) -> tuple:
    """(observable: bool | None, reason) of the site at instruction `index`: `log` from trace(), `fx` the Effects
    of each instruction of the function. None: cannot be resolved (seed "hazard")."""
    if seed == "hazard":
        return None, "no wait-state hazard model"
    taint, lds, pending = {}, {}, {}
    executed = False
    for w, g, pc, eb, ea in log:
        e = fx[pc]
        t = taint.setdefault(w, {})
        ex = t.get(("exec",), 0)
        stale = 0
        if seed == "waitcnt":
            stale = _counters(pending.setdefault(w, {"vm": [], "lgkm": []}), e, pc, index, eb)
        if e.kind in ("wait", "nop"):
            if pc == index:
                executed = True
            continue
        lanes = stale
        for u in e.uses:
            if u == ("exec",):
                continue
            m = lds.get(g, 0) if u == ("lds",) else t.get(u, 0)
            if not m:
                continue
            if e.kind == "readlane" and _vector(u):
                m = M64 if e.lane is None or m >> e.lane & 1 else 0
            elif e.kind == "readfirstlane" and _vector(u):
                m = M64 if eb and m & (eb & -eb) else 0
            lanes |= m if _vector(u) or u == ("lds",) else M64
        if ("exec",) in e.uses and e.kind in ("salu", "branch"):
            lanes |= ex
        if e.kind == "branch":
            if lanes:
                return True, f"branch at instruction {pc} reads a tainted condition"
        elif e.kind in ("vstore", "dsstore"):
            if lanes & eb or ex:
                if e.kind == "vstore":
                    return True, f"store at instruction {pc}"
                lds[g] = M64
        per_lane = e.kind in ("valu", "vload", "dsload", "vstore", "permute", "writelane")
        for u in e.defs:
            if u == ("lds",):
                continue
            if e.kind == "writelane" and _vector(u):   # one lane written from a scalar: the others are kept
                src = any(t.get(x, 0) for x in e.uses if not _vector(x) and x != ("exec",))
                bit = M64 if e.lane is None else 1 << e.lane
                t[u] = t.get(u, 0) | bit if src else t.get(u, 0) & ~(0 if e.lane is None else bit)
                continue
            elif per_lane and _vector(u):
                if e.kind == "permute":
                    new = eb if lanes & eb else 0
                else:
                    new = lanes & eb
                t[u] = (t.get(u, 0) & ~eb) | new | ex
            elif per_lane:   # a lane mask or SGPR a VALU writes (carry-out, compare, readfirstlane)
                t[u] = M64 if lanes & eb or ex else 0
            else:            # scalar op: a lane mask (EXEC, VCC) keeps its tainted lanes, anything else is whole
                t[u] = lanes if u in (("exec",), ("vcc",)) or not lanes else M64
        if pc != index:
            continue
        if seed == "defs":
            active = eb if per_lane else M64
            if not active:
                continue
            executed = True
            for u in e.defs:
                if u == ("lds",):
                    lds[g] = M64
                elif per_lane and _vector(u):
                    t[u] = t.get(u, 0) | eb
                else:
                    t[u] = M64
            if e.kind == "vstore":
                return True, f"the site is a store (instruction {pc})"
        elif seed == "exec":
            executed = True
            if eb ^ ea:
                t[("exec",)] = t.get(("exec",), 0) | (eb ^ ea)
    return False, ("no chain to a store" if executed else "not executed")


def _counters(pending: dict, e: Effects, pc: int, site: int, eb: int) -> int:
    """The machine's counter model run on the planted path (the wait at `site` removed): returns the lanes of the
    current instruction that read a register an un-waited load writes (M64 for a scalar read), and advances the
    counters."""
    stale = 0
    loads = [d for entries in pending.values() for _, d in entries]
    if loads:
        for u in e.uses:
            if any(u in d for d in loads):
                stale = eb if e.kind not in ("salu", "smem", "branch") else M64
    if e.kind == "wait" and pc != site:
        for counter, n in (("vm", e.wait.vmcnt), ("lgkm", e.wait.lgkmcnt)):
            if n is not None and len(pending[counter]) > n:
                del pending[counter][:len(pending[counter]) - n]
    elif e.counters:   # every memory op counts, a store too (as the machine counts it)
        dests = frozenset(u for u in e.defs if u != ("lds",))
        for c in e.counters:
            pending[c].append((pc, dests))
    else:   # a register written again no longer holds the load's (stale or not) value
        for entries in pending.values():
            for k, (i, d) in enumerate(entries):
                if d & set(e.defs):
                    entries[k] = (i, d - set(e.defs))
    return stale if e.kind not in ("wait", "nop") else 0
