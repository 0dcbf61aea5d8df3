"""Reading amdgcn text for the memory-model check: instructions per function, their classes, and the outstanding
vmcnt / lgkmcnt at each one.

Why a module of its own: what the assembly *says* (which instruction is an atomic, an invalidate, a writeback;
how far ``s_waitcnt`` brings each counter down; which paths reach an instruction) is independent of what the memory
model *requires* (oracle/memory_model_tables.py) and of the rules that compare the two (oracle/memory_model.py).
Counters are modelled as in SIInsertWaitcnts, over the control-flow graph of the text (labels, ``s_branch``,
``s_cbranch_*``, ``s_endpgm``): an upper bound of outstanding events along every path, joined by maximum, so a wait
that is redundant because it was already satisfied counts as present. GFX9 encoding only. Standard library only:
the check is embedded in repro scripts.
"""
import re
from dataclasses import dataclass

from .memory_model_tables import CACHE_BITS, INVALIDATES, LGKM, VMEM

CAP = 63  # the hardware's largest vmcnt; outstanding counts saturate here
ATOMIC = re.compile(r"^(global|buffer|flat)_atomic_(\w+)")
_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):")
_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s+(\d+)")
_FUNC_TYPE = re.compile(r"\.type\s+([\w.$]+)\s*,\s*@function")
_ENDS = ("s_branch", "s_endpgm", "s_setpc_b64")  # no fall-through: a window does not cross them


@dataclass
class Ins:
    line: int
    text: str
    mnem: str
    ops: list
    loc: tuple | None


def instruction_shape(text):
    """Mnemonic plus cache-policy bits: ``global_atomic_add v0, v1, s[2:3] sc1`` -> ``global_atomic_add sc1``."""
    parts = text.replace(",", " ").split()
    if not parts:
        return ""
    return " ".join([parts[0]] + [p for p in parts[1:] if p in CACHE_BITS])


def is_inv(ins):
    return ins.mnem in INVALIDATES


def is_vmem(ins):
    return ins.mnem.startswith(VMEM) and not is_inv(ins)


def is_lgkm(ins):
    return ins.mnem.startswith(LGKM)


def is_memory(ins):
    return is_vmem(ins) or is_lgkm(ins) or is_inv(ins)


def is_atomic(ins):
    return bool(ATOMIC.match(ins.mnem))


def waitcnt_bounds(ins):
    """(vmcnt, lgkmcnt) bounds an ``s_waitcnt`` imposes (None: that counter is not waited on); GFX9 encoding."""
    args = " ".join(ins.ops)
    named = dict(re.findall(r"(vmcnt|expcnt|lgkmcnt)\((\d+)\)", args))
    if named:
        vm, lgkm = named.get("vmcnt"), named.get("lgkmcnt")
        return (int(vm) if vm is not None else None, int(lgkm) if lgkm is not None else None)
    m = re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*", args)
    if not m:
        return None, None
    imm = int(m.group(1), 0)
    vm = (imm & 0xF) | ((imm >> 14) & 0x3) << 4
    lgkm = (imm >> 8) & 0xF
    return (vm if vm < CAP else None, lgkm if lgkm < 15 else None)


def parse_functions(amdgcn):
    """Functions of the text: each a list of Ins plus {label: index of the next instruction}. A function runs from
    its ``.type name,@function`` label to its ``.Lfunc_end`` label; text without ``.type`` is one function."""
    names = set(_FUNC_TYPE.findall(amdgcn))
    funcs, current, labels, loc = [], (None if names else []), {}, None
    for n, raw in enumerate(amdgcn.splitlines(), 1):
        text = raw.split(";")[0].split("//")[0].rstrip()
        m = _LABEL.match(text) if text[:1] not in (" ", "\t") else None
        if m:
            name = m.group(1)
            if name in names or (name.startswith(".Lfunc_end") and current is not None):
                if current is not None:
                    funcs.append((current, labels))
                current, labels, loc = ([] if name in names else None), {}, None
            elif current is not None:
                labels[name] = len(current)
            continue
        if current is None:
            continue
        lm = _LOC.match(text)
        if lm:
            line, col = int(lm.group(1)), int(lm.group(2))
            loc = (line, col) if line else None
            continue
        body = text.strip()
        if not body or body.startswith("."):
            continue
        parts = body.split(None, 1)
        ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
        current.append(Ins(n, body, parts[0], ops, loc))
    if current:
        funcs.append((current, labels))
    return funcs


def _successors(ins_list, labels, i):
    ins = ins_list[i]
    if ins.mnem in ("s_endpgm", "s_setpc_b64", "s_endpgm_saved", "s_trap") or ins.mnem.startswith("s_rfe"):
        return []
    target = labels.get(ins.ops[0]) if ins.ops else None
    if ins.mnem == "s_branch":
        return [target] if target is not None else []
    nxt = [i + 1] if i + 1 < len(ins_list) else []
    if ins.mnem.startswith("s_cbranch") and target is not None:
        return nxt + [target]
    return nxt


def _transfer(ins, state):
    """State after ``ins``: (vm, lgkm, pending writebacks). Pending writebacks are discharged by any memory op."""
    vm, lgkm, pending = state
    if ins.mnem == "s_waitcnt":
        wvm, wlgkm = waitcnt_bounds(ins)
        vm = min(vm, wvm) if wvm is not None else vm
        lgkm = min(lgkm, wlgkm) if wlgkm is not None else lgkm
        return vm, lgkm, pending
    if is_memory(ins):
        pending = frozenset()
    if is_vmem(ins):
        vm = min(vm + 1, CAP)
        if ins.mnem == "buffer_wbl2":
            pending = frozenset([ins.line])
    if is_lgkm(ins):
        lgkm = min(lgkm + 1, CAP)
    return vm, lgkm, pending


def flow(ins_list, labels):
    """In-state (vm, lgkm, lines of pending writebacks) of every reachable instruction: upper bounds along all
    paths."""
    states = {}
    if not ins_list:
        return states
    work = [(0, (0, 0, frozenset()))]
    while work:
        i, state = work.pop()
        old = states.get(i)
        if old is not None:
            state = (max(old[0], state[0]), max(old[1], state[1]), old[2] | state[2])
            if state == old:
                continue
        states[i] = state
        out = _transfer(ins_list[i], state)
        work.extend((j, out) for j in _successors(ins_list, labels, i))
    return states


def window_back(ins_list, i):
    """Instructions before ``i`` up to the previous memory op (inclusive), not across an unconditional end."""
    out = []
    for j in range(i - 1, -1, -1):
        prev = ins_list[j]
        if prev.mnem in _ENDS:
            break
        out.append(j)
        if is_memory(prev) and prev.mnem != "buffer_wbl2":
            break
    return out


def window_fwd(ins_list, i):
    """Instructions after ``i`` up to the next memory op that is not an invalidate (inclusive)."""
    out = []
    for j in range(i + 1, len(ins_list)):
        nxt = ins_list[j]
        out.append(j)
        if (is_memory(nxt) and not is_inv(nxt)) or nxt.mnem in _ENDS:
            break
    return out


def inv_scope(table, seq):
    """Scope an invalidate sequence (list of Ins) provides, 0 if none."""
    if table == "gfx942":
        best = 0
        for ins in seq:
            if ins.mnem == "buffer_inv":
                bits = set(" ".join(ins.ops).split())
                best = max(best, 3 if {"sc0", "sc1"} <= bits else 2 if "sc1" in bits else 1 if "sc0" in bits else 0)
        return best
    mn = {ins.mnem for ins in seq}
    if "buffer_wbinvl1_vol" in mn or "buffer_wbinvl1" in mn:
        return 3 if "buffer_invl2" in mn else 2
    return 0


def wb_scope(table, ins):
    """Scope a writeback instruction provides, 0 if ``ins`` is none."""
    if ins.mnem != "buffer_wbl2":
        return 0
    if table == "gfx90a":
        return 3
    bits = set(" ".join(ins.ops).split())
    return 3 if {"sc0", "sc1"} <= bits else 2 if "sc1" in bits else 1
