"""Static memory-model check of AMD GPU assembly: are the waits, writebacks and invalidates that LLVM's AMDGPU
memory model requires around each atomic and fence present in the amdgcn text?

Why: a compiler bug that drops one ``s_waitcnt`` or ``buffer_inv`` next to an acquire or release compiles and
runs, and fails only as a rare race on real hardware. This oracle finds it without a GPU, on every fuzzed kernel,
so it must never fire on what Triton 3.9 correctly emits (docs/memory-model.md holds the survey it is built on).

What it implements: LLVM ``AMDGPUUsage.rst``, section "Memory Model", tables "AMDHSA Memory Model Code Sequences
GFX90A" (gfx90a) and "... GFX942" (gfx942, and gfx950, which LLVM lowers with the same GFX940 cache control), for
the global address space, not TgSplit, not OpenCL. The rules:

- acquire (atomicrmw/cmpxchg/load atomic acquire or stronger, fence acquire) at agent or system scope: the
  invalidate (gfx942 ``buffer_inv sc1`` / ``buffer_inv sc0 sc1``; gfx90a ``buffer_wbinvl1_vol`` /
  ``buffer_invl2; buffer_wbinvl1_vol``) must be preceded by ``s_waitcnt vmcnt(0)``: at the invalidate no vector
  memory operation may be outstanding. Checked on every invalidate in the text.
- release at agent/system scope on gfx942, system scope on gfx90a: ``buffer_wbl2`` (``sc1`` agent, ``sc0 sc1``
  system) followed by ``s_waitcnt lgkmcnt(0) & vmcnt(0)``: at the first memory instruction after a ``buffer_wbl2``
  neither counter may be outstanding (the writeback itself counts on vmcnt). Checked on every writeback.
- with the LLVM IR (``llir``), which says what each atomic is meant to be: a release atomic must have its
  writeback right before it (``release-*:wbl2-missing``) and no outstanding vmcnt (agent/system) or lgkmcnt (any
  scope at or above workgroup, unless the scope is ``*-one-as``) at it; an acquire atomic must have its invalidate
  right after it (``acquire-*:inv-missing``); a system-scope atomic on gfx942 must carry ``sc1``; an agent/system
  fence, load atomic or store atomic must have its writeback / invalidate among the instructions of its source
  location. Asm atomics are matched to IR atomics by ``.loc`` line:column, then by operation kind; an ambiguous one
  gets only the assembly-driven checks.

Counters are modelled as in SIInsertWaitcnts, over the control-flow graph of the text (labels, ``s_branch``,
``s_cbranch_*``, ``s_endpgm``): an upper bound of outstanding vmcnt / lgkmcnt events along every path, joined by
maximum, so a wait that is redundant because it was already satisfied counts as present. Not modelled (so not
checked): TgSplit mode; LDS (``ds_*``) and scratch atomics as atomics; workgroup-scope fences (Triton's barrier
fences: their only trace is a wait that may already be satisfied); seq_cst's extra leading wait on loads; calls
(``s_swappc``) and indirect branches; non-kernel function entries (assumed to start with nothing outstanding); the
exact placement of the wait inside the window (only that the counter is zero where the table needs it). Other
arches (GFX10/11 ``s_waitcnt_vscnt``/``buffer_gl*_inv``, GFX12 ``s_wait_*``/``global_inv``) get a report with
``unsupported`` set and nothing checked.
"""
import re
from dataclasses import asdict, dataclass, field

# arch -> which AMDGPUUsage code-sequence table applies
TABLES = {"gfx90a": "gfx90a", "gfx942": "gfx942", "gfx950": "gfx942"}
SCOPES = {"workgroup": 1, "agent": 2, "system": 3}
CAP = 63  # the hardware's largest vmcnt; outstanding counts saturate here

# release scopes that need an L2 writeback, and its text, per table
WRITEBACK = {"gfx942": {"agent": "buffer_wbl2 sc1", "system": "buffer_wbl2 sc0 sc1"},
             "gfx90a": {"system": "buffer_wbl2"}}
INVALIDATE = {"gfx942": {"agent": "buffer_inv sc1", "system": "buffer_inv sc0 sc1"},
              "gfx90a": {"agent": "buffer_wbinvl1_vol", "system": "buffer_invl2; buffer_wbinvl1_vol"}}

_INVALIDATES = ("buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_invl2", "buffer_wbinvl1_sc")
_VMEM = ("buffer_", "global_", "flat_", "scratch_", "tbuffer_", "image_")
_LGKM = ("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_atomic", "s_buffer_atomic", "s_dcache_wb",
         "s_memtime", "s_memrealtime", "ds_", "flat_")
_ATOMIC = re.compile(r"^(global|buffer|flat)_atomic_(\w+)")
_CACHE_BITS = ("sc0", "sc1", "nt", "glc", "slc", "dlc", "scc")
_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):")
_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s+(\d+)")
_FUNC_TYPE = re.compile(r"\.type\s+([\w.$]+)\s*,\s*@function")
_ORDERINGS = ("unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst")


@dataclass
class Violation:
    rule: str         # short stable id, e.g. "acquire-agent:wait-before-inv"
    line: int         # 1-based line in the amdgcn text
    instruction: str  # the atomic/fence instruction text, stripped
    missing: str      # what is missing, e.g. "s_waitcnt vmcnt(0) before buffer_inv sc1"

    def message(self):
        """One line for a bug signature: rule, instruction shape (no registers, no line), what is missing."""
        return f"{self.rule}: {_shape(self.instruction)}: missing {self.missing}"


@dataclass
class Report:
    arch: str
    table: str | None        # which memory-model table was applied ("gfx942"), None if unsupported
    atomics: int             # atomic instructions seen
    fences: int              # fence sequences seen (invalidates / writebacks not attached to an atomic)
    violations: list = field(default_factory=list)
    unsupported: str | None = None   # why nothing was checked (unknown arch)

    def to_json(self):
        out = asdict(self)
        out["violations"] = [dict(asdict(v), message=v.message()) for v in self.violations]
        return out


@dataclass
class _Ins:
    line: int
    text: str
    mnem: str
    ops: list
    loc: tuple | None


def _shape(text):
    """Mnemonic plus cache-policy bits: ``global_atomic_add v0, v1, s[2:3] sc1`` -> ``global_atomic_add sc1``."""
    parts = text.replace(",", " ").split()
    if not parts:
        return ""
    return " ".join([parts[0]] + [p for p in parts[1:] if p in _CACHE_BITS])


def _is_inv(ins):
    return ins.mnem in _INVALIDATES


def _is_vmem(ins):
    return ins.mnem.startswith(_VMEM) and not _is_inv(ins)


def _is_lgkm(ins):
    return ins.mnem.startswith(_LGKM)


def _is_memory(ins):
    return _is_vmem(ins) or _is_lgkm(ins) or _is_inv(ins)


def _is_atomic(ins):
    return bool(_ATOMIC.match(ins.mnem))


def _wait(ins):
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


def _parse(amdgcn):
    """Functions of the text: each a list of _Ins plus {label: index of the next instruction}. A function runs from
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
        current.append(_Ins(n, body, parts[0], ops, loc))
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
        wvm, wlgkm = _wait(ins)
        vm = min(vm, wvm) if wvm is not None else vm
        lgkm = min(lgkm, wlgkm) if wlgkm is not None else lgkm
        return vm, lgkm, pending
    if _is_memory(ins):
        pending = frozenset()
    if _is_vmem(ins):
        vm = min(vm + 1, CAP)
        if ins.mnem == "buffer_wbl2":
            pending = frozenset([ins.line])
    if _is_lgkm(ins):
        lgkm = min(lgkm + 1, CAP)
    return vm, lgkm, pending


def _flow(ins_list, labels):
    """In-state of every reachable instruction (upper bounds along all paths)."""
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


def _window_back(ins_list, i):
    """Instructions before ``i`` up to the previous memory op (inclusive), not across an unconditional end."""
    out = []
    for j in range(i - 1, -1, -1):
        prev = ins_list[j]
        if prev.mnem in ("s_branch", "s_endpgm", "s_setpc_b64"):
            break
        out.append(j)
        if _is_memory(prev) and prev.mnem != "buffer_wbl2":
            break
    return out


def _window_fwd(ins_list, i):
    """Instructions after ``i`` up to the next memory op that is not an invalidate (inclusive)."""
    out = []
    for j in range(i + 1, len(ins_list)):
        nxt = ins_list[j]
        out.append(j)
        if (_is_memory(nxt) and not _is_inv(nxt)) or nxt.mnem in ("s_branch", "s_endpgm", "s_setpc_b64"):
            break
    return out


def _inv_scope(table, seq):
    """Scope an invalidate sequence (list of _Ins) provides, 0 if none."""
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


def _wb_scope(table, ins):
    if ins.mnem != "buffer_wbl2":
        return 0
    if table == "gfx90a":
        return 3
    bits = set(" ".join(ins.ops).split())
    return 3 if {"sc0", "sc1"} <= bits else 2 if "sc1" in bits else 1


def _scope_name(rank):
    return {1: "workgroup", 2: "agent", 3: "system"}.get(rank, "wavefront")


# ---- LLVM IR: what each atomic and fence is meant to be ----

@dataclass
class _IrOp:
    kind: str        # atomicrmw:<op> | cmpxchg | load | store | fence | intrinsic
    scope: int       # 0 wavefront/singlethread, 1 workgroup, 2 agent, 3 system
    cross_as: bool   # not a *-one-as scope: the release also waits on lgkmcnt
    acquire: bool
    release: bool
    loc: tuple | None


def _parse_llir(llir):
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
        ops.append(_IrOp(kind, scope, "one-as" not in scope_text,
                         success in ("acquire", "acq_rel", "seq_cst") or failure in ("acquire", "seq_cst"),
                         success in ("release", "acq_rel", "seq_cst") or failure == "seq_cst",
                         dbg.get(dm.group(1)) if dm else None))
    return ops


# IR atomicrmw operation -> the asm atomic's opcode stem (``global_atomic_<stem>``)
_RMW_STEM = {"xchg": "swap", "add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "max": "smax",
             "min": "smin", "umax": "umax", "umin": "umin", "fadd": "add_f", "fmax": "max_f", "fmin": "min_f",
             "uinc_wrap": "inc", "udec_wrap": "dec"}


def _kind_exact(ir_kind, stem):
    want = "cmpswap" if ir_kind == "cmpxchg" else _RMW_STEM.get(ir_kind.partition(":")[2], "?")
    return stem == want or stem.startswith(want + "_") or (want == "add_f" and stem.startswith(("add_f", "pk_add")))


def _kind_fits(ir_kind, stem):
    """Loosely: AtomicExpand may turn any atomicrmw into a cmpswap loop."""
    return _kind_exact(ir_kind, stem) or (ir_kind.startswith("atomicrmw") and stem.startswith("cmpswap"))


def _intent(ins, ir_atomics):
    """The (scope, acquire, release, cross_as) an asm atomic is meant to have, or None if the IR does not say:
    the IR atomics at its .loc (all of them if none is there), narrowed by operation kind until they agree."""
    stem = _ATOMIC.match(ins.mnem).group(2)
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


# ---- the check ----

def check(amdgcn, arch, llir=None):
    """Check one kernel's amdgcn text against the memory-model table of ``arch`` (see the module docstring)."""
    base = arch.split(":")[0]
    table = TABLES.get(base)
    if table is None:
        return Report(arch, None, 0, 0, [], unsupported=f"no AMDGPUUsage memory-model table implemented for {base}"
                      " (implemented: " + ", ".join(sorted(TABLES)) + ")")
    ir = _parse_llir(llir) if llir else []
    ir_atomics = [op for op in ir if op.kind.startswith(("atomicrmw", "cmpxchg", "intrinsic"))]
    violations, seen = [], set()
    atomics = fences = 0

    def report(rule, ins, missing):
        key = (rule, ins.line, missing)
        if key not in seen:
            seen.add(key)
            violations.append(Violation(rule, ins.line, ins.text, missing))

    funcs = _parse(amdgcn)
    for ins_list, labels in funcs:
        states = _flow(ins_list, labels)
        by_line = {x.line: x for x in ins_list}
        for i, ins in enumerate(ins_list):
            if _is_atomic(ins):
                atomics += 1
            state = states.get(i)
            # acquire: the first invalidate of a sequence needs vmcnt == 0
            if _is_inv(ins) and not (i and _is_inv(ins_list[i - 1])):
                seq = [ins]
                for j in range(i + 1, len(ins_list)):
                    if not _is_inv(ins_list[j]):
                        break
                    seq.append(ins_list[j])
                scope = _inv_scope(table, seq)
                back = _window_back(ins_list, i)
                owner = next((ins_list[j] for j in back if _is_memory(ins_list[j])), None)
                attached = owner is not None and _is_atomic(owner)
                if not attached:
                    fences += 1
                if state is not None and state[0] > 0 and scope:
                    inv_text = "; ".join(s.text for s in seq)
                    subject = owner if attached else ins
                    report(f"{'acquire' if attached else 'fence-acquire'}-{_scope_name(scope)}:wait-before-inv",
                           subject, f"s_waitcnt vmcnt(0) before {inv_text}")
            if ins.mnem == "buffer_wbl2":
                fwd = _window_fwd(ins_list, i)
                target = next((ins_list[j] for j in fwd if _is_memory(ins_list[j])), None)
                if target is None or not _is_atomic(target):
                    fences += 1
            # release: at the first memory op after a writeback, neither counter may be outstanding
            if state is not None and state[2] and _is_memory(ins):
                for wb_line in sorted(state[2]):
                    wb = by_line[wb_line]
                    attached = _is_atomic(ins)
                    rule = f"{'release' if attached else 'fence-release'}-{_scope_name(_wb_scope(table, wb))}"
                    subject = ins if attached else wb
                    if state[0] > 0:
                        report(rule + ":wait-after-wbl2", subject, f"s_waitcnt vmcnt(0) after {wb.text}")
                    if state[1] > 0 and not any(not op.cross_as for op in ir):
                        report(rule + ":wait-after-wbl2", subject, f"s_waitcnt lgkmcnt(0) after {wb.text}")
            if ir_atomics and _is_atomic(ins):
                meant = _intent(ins, ir_atomics)
                if meant is not None:
                    _check_atomic(table, ins_list, i, state, meant, report)
    if ir:  # over all functions: a location's code may sit in a helper the kernel calls
        _check_ir_sites(table, [ins for ins_list, _ in funcs for ins in ins_list], ir, report)
    violations.sort(key=lambda v: (v.line, v.rule, v.missing))
    return Report(arch, table, atomics, fences, violations)


def _check_atomic(table, ins_list, i, state, meant, report):
    """The IR says what this atomic is: its release writeback/waits and its acquire invalidate must be there."""
    ins = ins_list[i]
    scope, acquire, release, cross_as = meant
    name = _scope_name(scope)
    if table == "gfx942" and scope == 3 and "sc1" not in " ".join(ins.ops).split():
        report("atomic-system:sc1-missing", ins, "sc1 on the system-scope atomic")
    if release and scope >= 1:
        need_wb = WRITEBACK[table].get(name)
        back = [ins_list[j] for j in _window_back(ins_list, i)]
        if need_wb and not any(_wb_scope(table, x) >= scope for x in back):
            report(f"release-{name}:wbl2-missing", ins, f"{need_wb} before the atomic")
        # after a writeback the waits are the wait-after-wbl2 rule's; without one they are checked here
        has_wb = any(x.mnem == "buffer_wbl2" for x in back)
        if not has_wb and state is not None and scope >= 2 and state[0] > 0:
            report(f"release-{name}:wait-before-atomic", ins, "s_waitcnt vmcnt(0) before the atomic")
        if not has_wb and state is not None and cross_as and state[1] > 0:
            report(f"release-{name}:wait-before-atomic", ins, "s_waitcnt lgkmcnt(0) before the atomic")
    if acquire and scope >= 2:
        after = [ins_list[j] for j in _window_fwd(ins_list, i) if _is_inv(ins_list[j])]
        if _inv_scope(table, after) < scope:
            report(f"acquire-{name}:inv-missing", ins, f"{INVALIDATE[table][name]} after the atomic")


def _check_ir_sites(table, ins_list, ir, report):
    """Fences, load atomics and store atomics at agent/system scope: their writeback / invalidate must be among
    the instructions of their source location (matched by .loc line:column; ops without a location are skipped)."""
    by_loc = {}
    for ins in ins_list:
        if ins.loc is not None:
            by_loc.setdefault(ins.loc, []).append(ins)
    for op in ir:
        if op.kind not in ("fence", "load", "store") or op.loc is None or op.scope < 2:
            continue
        here = by_loc.get(op.loc)
        if not here:
            continue
        name = _scope_name(op.scope)
        prefix = "fence" if op.kind == "fence" else op.kind + "-atomic"
        subject = next((x for x in here if _is_atomic(x)), None) or next((x for x in here if _is_memory(x)), here[0])
        if op.release and WRITEBACK[table].get(name):
            if not any(_wb_scope(table, x) >= op.scope for x in here):
                report(f"{prefix}-release-{name}:wbl2-missing", subject, f"{WRITEBACK[table][name]} for the {prefix}")
        if op.acquire:
            invs = [x for x in here if _is_inv(x)]
            if _inv_scope(table, invs) < op.scope:
                report(f"{prefix}-acquire-{name}:inv-missing", subject, f"{INVALIDATE[table][name]} for the {prefix}")


def remove_fence_wait(amdgcn):
    """The planted violation: the same assembly with the s_waitcnt that a fence/acquire/release sequence needs
    deleted (the first one found); returns (new_text, 1-based line removed). Raises ValueError if there is none.

    Candidates: the ``s_waitcnt`` that zeroes vmcnt between the last memory op and an invalidate, or between a
    ``buffer_wbl2`` and the next memory op."""
    found = []
    for ins_list, _ in _parse(amdgcn):
        for i, ins in enumerate(ins_list):
            if _is_inv(ins) and not (i and _is_inv(ins_list[i - 1])):
                window = _window_back(ins_list, i)
            elif ins.mnem == "buffer_wbl2":
                window = _window_fwd(ins_list, i)
            else:
                continue
            for j in window:
                cand = ins_list[j]
                if cand.mnem == "s_waitcnt" and _wait(cand)[0] == 0:
                    found.append(cand.line)
                    break
    if not found:
        raise ValueError("no s_waitcnt vmcnt(0) of an acquire/release/fence sequence in this assembly")
    line = min(found)
    lines = amdgcn.split("\n")
    del lines[line - 1]
    return "\n".join(lines), line
