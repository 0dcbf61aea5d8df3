"""Reading LLVM IR for the memory-model check: what each atomic and fence is meant to be (kind, scope, ordering,
source location), and which IR atomic an asm atomic compiles.

Why a module of its own: the assembly alone cannot tell a relaxed atomic from a release one whose writeback was
dropped; the IR says what was asked for. Reading it is a parser over LLVM's textual syntax (``syncscope``,
orderings, ``!dbg`` locations, MMRA metadata) with nothing in common with the amdgcn scanner
(oracle/memory_model_amdgcn.py). Standard library only: the check is embedded in repro scripts.
"""
import re
from dataclasses import dataclass

from .memory_model_amdgcn import ATOMIC
from .memory_model_tables import RMW_STEM

_ORDERINGS = ("unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst")


@dataclass
class IrOp:
    kind: str        # atomicrmw:<op> | cmpxchg | load | store | fence | intrinsic
    scope: int       # 0 wavefront/singlethread, 1 workgroup, 2 agent, 3 system
    cross_as: bool   # not a *-one-as scope: the release also waits on lgkmcnt
    acquire: bool
    release: bool
    loc: tuple | None


def parse_llir(llir):
    """Every atomic, fence and atomic intrinsic call of the IR, in text order."""
    dbg = {}
    for m in re.finditer(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+), column: (\d+)", llir, re.M):
        dbg[m.group(1)] = (int(m.group(2)), int(m.group(3))) if int(m.group(2)) else None
    meta = dict(re.findall(r"^!(\d+) = (.*)$", llir, re.M))

    def local_only(line):
        """A fence whose MMRA (``amdgpu-synchronize-as``) names LDS and not global memory."""
        m = re.search(r"!mmra !(\d+)", line)
        if not m:
            return False
        text = meta.get(m.group(1), "")
        text += " ".join(meta.get(r, "") for r in re.findall(r"!(\d+)", text))
        return "amdgpu-synchronize-as" in text and "global" not in text
    ops = []
    for raw in llir.splitlines():
        line = raw.strip()
        if line.startswith(";") or not line:
            continue
        kind = None
        m = re.search(r"=\s*atomicrmw\s+(?:volatile\s+)?(\w+)", line)
        if m:
            kind = "atomicrmw:" + m.group(1)
        elif re.search(r"=\s*cmpxchg\b", line):
            kind = "cmpxchg"
        elif re.search(r"\bload atomic\b", line):
            kind = "load"
        elif re.match(r"store atomic\b", line):
            kind = "store"
        elif re.match(r"fence\b", line):
            kind = "fence"
        elif re.search(r"call\b.*@llvm\.amdgcn\.[\w.]*atomic[\w.]*\(", line) and "declare" not in line:
            kind = "intrinsic"
        if kind is None:
            continue
        sm = re.search(r'syncscope\("([^"]*)"\)', line)
        scope_text = sm.group(1) if sm else ""
        base = scope_text.replace("-one-as", "").replace("one-as", "")
        scope = {"": 3, "agent": 2, "workgroup": 1}.get(base, 0)
        tail = line[sm.end():] if sm else line
        orders = [w for w in re.findall(r"\b(\w+)\b", tail.split("!dbg")[0]) if w in _ORDERINGS]
        success = orders[0] if orders else None
        failure = orders[1] if kind == "cmpxchg" and len(orders) > 1 else None
        if kind == "intrinsic" or (kind == "fence" and local_only(line)):
            scope = 0
        dm = re.search(r"!dbg !(\d+)", line)
        ops.append(IrOp(kind, scope, "one-as" not in scope_text,
                        success in ("acquire", "acq_rel", "seq_cst") or failure in ("acquire", "seq_cst"),
                        success in ("release", "acq_rel", "seq_cst") or failure == "seq_cst",
                        dbg.get(dm.group(1)) if dm else None))
    return ops


def _kind_exact(ir_kind, stem):
    want = "cmpswap" if ir_kind == "cmpxchg" else RMW_STEM.get(ir_kind.partition(":")[2], "?")
    return stem == want or stem.startswith(want + "_") or (want == "add_f" and stem.startswith(("add_f", "pk_add")))


def _kind_fits(ir_kind, stem):
    """Loosely: AtomicExpand may turn any atomicrmw into a cmpswap loop."""
    return _kind_exact(ir_kind, stem) or (ir_kind.startswith("atomicrmw") and stem.startswith("cmpswap"))


def intent(ins, ir_atomics):
    """The (scope, acquire, release, cross_as) an asm atomic is meant to have, or None if the IR does not say:
    the IR atomics at its .loc (all of them if none is there), narrowed by operation kind until they agree."""
    stem = ATOMIC.match(ins.mnem).group(2)
    cands = [op for op in ir_atomics if ins.loc is not None and op.loc == ins.loc] or ir_atomics
    meant = {(op.scope, op.acquire, op.release, op.cross_as) for op in cands}
    if len(meant) == 1:
        return meant.pop()
    # several atomics with different orderings on one source line: narrow by kind only when the kind is
    # unambiguous, i.e. one IR atomic of the line has it. LLVM rewrites idempotent operations (an `or 0` came out
    # as an atomic add next to a real acq_rel add on the same line), so a kind shared by two IR atomics, or an
    # asm atomic that could be either, says nothing.
    exact = [op for op in cands if _kind_exact(op.kind, stem)]
    if len(exact) == 1 and not any(op.kind.endswith((":or", ":xor", ":and")) for op in cands):
        return exact[0].scope, exact[0].acquire, exact[0].release, exact[0].cross_as
    return None
