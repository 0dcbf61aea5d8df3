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

This module holds the rules and the report. The tables are data in oracle/memory_model_tables.py, the assembly
scanner and counter model in oracle/memory_model_amdgcn.py, the IR reader in oracle/memory_model_llir.py; the
planted violation that tests the check is oracle/memory_model_plant.py. A memory-model finding's repro runs the
check standalone: `standalone_source()` pastes the four modules into one text that needs only the standard library.
"""
from dataclasses import asdict, dataclass, field

from .memory_model_amdgcn import (flow, instruction_shape, inv_scope, is_atomic, is_inv, is_memory, parse_functions,
                                  wb_scope, window_back, window_fwd)
from .memory_model_llir import intent, parse_llir
from .memory_model_tables import INVALIDATE, SCOPE_NAMES, TABLES, WRITEBACK


@dataclass
class Violation:
    rule: str         # short stable id, e.g. "acquire-agent:wait-before-inv"
    line: int         # 1-based line in the amdgcn text
    instruction: str  # the atomic/fence instruction text, stripped
    missing: str      # what is missing, e.g. "s_waitcnt vmcnt(0) before buffer_inv sc1"

    def message(self):
        """One line for a bug signature: rule, instruction shape (no registers, no line), what is missing."""
        return f"{self.rule}: {instruction_shape(self.instruction)}: missing {self.missing}"


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


def _scope_name(rank):
    return SCOPE_NAMES.get(rank, "wavefront")


# ---- the check ----

def check(amdgcn, arch, llir=None):
    """Check one kernel's amdgcn text against the memory-model table of ``arch`` (see the module docstring)."""
    base = arch.split(":")[0]
    table = TABLES.get(base)
    if table is None:
        return Report(arch, None, 0, 0, [], unsupported=f"no AMDGPUUsage memory-model table implemented for {base}"
                      " (implemented: " + ", ".join(sorted(TABLES)) + ")")
    ir = parse_llir(llir) if llir else []
    ir_atomics = [op for op in ir if op.kind.startswith(("atomicrmw", "cmpxchg", "intrinsic"))]
    violations, seen = [], set()
    atomics = fences = 0

    def report(rule, ins, missing):
        key = (rule, ins.line, missing)
        if key not in seen:
            seen.add(key)
            violations.append(Violation(rule, ins.line, ins.text, missing))

    funcs = parse_functions(amdgcn)
    for ins_list, labels in funcs:
        states = flow(ins_list, labels)
        by_line = {x.line: x for x in ins_list}
        for i, ins in enumerate(ins_list):
            if is_atomic(ins):
                atomics += 1
            state = states.get(i)
            # acquire: the first invalidate of a sequence needs vmcnt == 0
            if is_inv(ins) and not (i and is_inv(ins_list[i - 1])):
                seq = [ins]
                for j in range(i + 1, len(ins_list)):
                    if not is_inv(ins_list[j]):
                        break
                    seq.append(ins_list[j])
                scope = inv_scope(table, seq)
                back = window_back(ins_list, i)
                owner = next((ins_list[j] for j in back if is_memory(ins_list[j])), None)
                attached = owner is not None and is_atomic(owner)
                if not attached:
                    fences += 1
                if state is not None and state[0] > 0 and scope:
                    inv_text = "; ".join(s.text for s in seq)
                    subject = owner if attached else ins
                    report(f"{'acquire' if attached else 'fence-acquire'}-{_scope_name(scope)}:wait-before-inv",
                           subject, f"s_waitcnt vmcnt(0) before {inv_text}")
            if ins.mnem == "buffer_wbl2":
                fwd = window_fwd(ins_list, i)
                target = next((ins_list[j] for j in fwd if is_memory(ins_list[j])), None)
                if target is None or not is_atomic(target):
                    fences += 1
            # release: at the first memory op after a writeback, neither counter may be outstanding
            if state is not None and state[2] and is_memory(ins):
                for wb_line in sorted(state[2]):
                    wb = by_line[wb_line]
                    attached = is_atomic(ins)
                    rule = f"{'release' if attached else 'fence-release'}-{_scope_name(wb_scope(table, wb))}"
                    subject = ins if attached else wb
                    if state[0] > 0:
                        report(rule + ":wait-after-wbl2", subject, f"s_waitcnt vmcnt(0) after {wb.text}")
                    if state[1] > 0 and not any(not op.cross_as for op in ir):
                        report(rule + ":wait-after-wbl2", subject, f"s_waitcnt lgkmcnt(0) after {wb.text}")
            if ir_atomics and is_atomic(ins):
                meant = intent(ins, ir_atomics)
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
        back = [ins_list[j] for j in window_back(ins_list, i)]
        if need_wb and not any(wb_scope(table, x) >= scope for x in back):
            report(f"release-{name}:wbl2-missing", ins, f"{need_wb} before the atomic")
        # after a writeback the waits are the wait-after-wbl2 rule's; without one they are checked here
        has_wb = any(x.mnem == "buffer_wbl2" for x in back)
        if not has_wb and state is not None and scope >= 2 and state[0] > 0:
            report(f"release-{name}:wait-before-atomic", ins, "s_waitcnt vmcnt(0) before the atomic")
        if not has_wb and state is not None and cross_as and state[1] > 0:
            report(f"release-{name}:wait-before-atomic", ins, "s_waitcnt lgkmcnt(0) before the atomic")
    if acquire and scope >= 2:
        after = [ins_list[j] for j in window_fwd(ins_list, i) if is_inv(ins_list[j])]
        if inv_scope(table, after) < scope:
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
        subject = next((x for x in here if is_atomic(x)), None) or next((x for x in here if is_memory(x)), here[0])
        if op.release and WRITEBACK[table].get(name):
            if not any(wb_scope(table, x) >= op.scope for x in here):
                report(f"{prefix}-release-{name}:wbl2-missing", subject, f"{WRITEBACK[table][name]} for the {prefix}")
        if op.acquire:
            invs = [x for x in here if is_inv(x)]
            if inv_scope(table, invs) < op.scope:
                report(f"{prefix}-acquire-{name}:inv-missing", subject, f"{INVALIDATE[table][name]} for the {prefix}")


def standalone_source():
    """The check as one text that runs with ``exec`` in an empty namespace (the repro of a memory-model finding
    embeds it, fuzz/repro.py): the tables, the amdgcn scanner, the IR reader and this module, in that order, with
    the imports between them dropped (the names are already there)."""
    import ast
    import inspect
    import sys

    from . import memory_model_amdgcn, memory_model_llir, memory_model_tables
    parts = []
    for module in (memory_model_tables, memory_model_amdgcn, memory_model_llir, sys.modules[__name__]):
        text = inspect.getsource(module)
        ours = set()
        for node in ast.parse(text).body:
            if isinstance(node, ast.ImportFrom) and node.level:
                ours.update(range(node.lineno, node.end_lineno + 1))
        lines = [line for n, line in enumerate(text.splitlines(), 1) if n not in ours]
        parts.append(f"# ---- gfxhound's oracle/{module.__name__.rsplit('.', 1)[-1]}.py (embedded) ----\n"
                     + "\n".join(lines) + "\n")
    return "\n".join(parts)
