"""Wait-state hazards checked on the executed path: pairs of instructions the hardware does not interlock, which
need a number of independent instructions or `s_nop` wait states between them (the CDNA3/CDNA4 ISA guides,
"Manually Inserted Wait States (NOPs)", the table of required wait states). A program that runs such a pair too
close gets the verdict `hazard` naming both instructions, whatever the values: the machine cannot know what stale
value the hardware would read, and LLVM's hazard recognizer is not the specification.

Why checked while running, not on the text: which producer reaches which consumer depends on the branches taken,
and the count of wait states between them is the count of instructions issued (one each; `s_nop N` is N+1).

The rules, as data (`RULES`). Each gives the guide's table row; the counts are the table's for gfx940-gfx950. Only
rows whose producer and consumer the machine can tell from an instruction's operands are here; the rest of the
table (MFMA/XDL rows, s_setreg, LDS-direct, M0 before s_sendmsg/GDS, export) is not checked, and the docs say so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gfxhound.executors.amdgcn.asm_operands import Reg, Special

__all__ = ["RULES", "Rule", "StepInfo", "step_info", "WaitStates"]

TRANS = re.compile(r"^v_(rcp|rsq|sqrt|log|exp|sin|cos|rcp_iflag)_(f16|f32|f64|legacy_f32|iflag_f32)$")
VMEM = ("buffer_", "global_", "flat_", "scratch_")


@dataclass(frozen=True)
class StepInfo:
    """What the hazard rules need of one instruction, read once from its record: the registers it writes and
    reads (as ('s'|'v'|'a', index) or 'exec'/'vcc'), and its kind."""
    index: int
    mnemonic: str
    valu: bool = False
    dpp: bool = False
    trans: bool = False
    vmem: bool = False
    lane_select: frozenset = frozenset()   # the SGPR a v_readlane/v_writelane takes its lane from
    writes: frozenset = frozenset()
    reads: frozenset = frozenset()
    dpp_source: frozenset = frozenset()    # the VGPRs of a DPP op's src0
    nops: int = 1                          # wait states this instruction provides when issued
    produces: tuple = ()                   # the rules it can start as a producer (read once: step_info)


@dataclass(frozen=True)
class Rule:
    number: int
    row: str            # the guide's words for the row
    waits: int
    producer: object    # StepInfo -> bool
    consumer: object    # (producer StepInfo, consumer StepInfo) -> bool


def _regs(op) -> set:
    base = getattr(op, "base", op)
    if isinstance(base, Reg) and base.file in ("s", "v", "a"):
        return {(base.file, base.index + k) for k in range(base.count)}
    if isinstance(base, Special):
        name = base.name
        if name.startswith("vcc"):
            return {"vcc"}
        if name.startswith("exec"):
            return {"exec"}
    return set()


def step_info(ins, valu: bool, outputs: int = 1) -> StepInfo:
    """The StepInfo of an Instruction. `outputs`: how many leading operands a VALU op writes (its destination,
    and a carry-out or compare mask written as an operand)."""
    mn, ops = ins.mnemonic, ins.operands
    writes, reads = set(), set()
    for k, op in enumerate(ops):
        (writes if valu and k < outputs else reads).update(_regs(op))
    if valu and mn.startswith("v_cmpx"):
        writes.add("exec")
    # the e32 forms write VCC without naming it; v_div_scale is VOP3B only and writes the SDST it names (with
    # s[0:1] there, VCC is not written and rule 4 does not apply to a v_div_fmas after it)
    if valu and ins.encoding in ("e32", "") and any(n in mn for n in ("_co_", "v_cmp_")) \
            and not any(_regs(o) == {"vcc"} for o in ops[:outputs]):
        writes.add("vcc")
    lane = frozenset(_regs(ops[2])) if mn in ("v_readlane_b32", "v_writelane_b32") and len(ops) > 2 else frozenset()
    dpp_src = frozenset(_regs(ops[outputs])) if ins.encoding == "dpp" and len(ops) > outputs else frozenset()
    nops = int(ops[0].value) + 1 if mn == "s_nop" and ops else 1
    info = StepInfo(ins.index, mn, valu=valu, dpp=ins.encoding == "dpp", trans=bool(TRANS.match(mn)),
                    vmem=mn.startswith(VMEM), lane_select=lane, writes=frozenset(writes), reads=frozenset(reads),
                    dpp_source=dpp_src, nops=nops)
    return replace(info, produces=tuple(r for r in RULES if r.producer(info)))


def _sgprs(regs) -> set:
    return {r for r in regs if r == "vcc" or (isinstance(r, tuple) and r[0] == "s")}


RULES = (
    Rule(1, "VALU writes VGPR; VALU DPP reads that VGPR", 2,     # any VGPR the DPP op reads, not only src0
         lambda p: p.valu and any(isinstance(r, tuple) and r[0] == "v" for r in p.writes),
         lambda p, c: c.dpp and bool(p.writes & c.reads)),
    Rule(2, "VALU writes EXEC; VALU DPP op", 5,
         lambda p: p.valu and "exec" in p.writes,
         lambda p, c: c.dpp),
    Rule(3, "VALU writes SGPR/VCC (readlane, cmp, add/sub, div_scale); V_{READ,WRITE}LANE using that SGPR/VCC as "
            "the lane select", 4,
         lambda p: p.valu and bool(_sgprs(p.writes)),
         lambda p, c: bool(_sgprs(p.writes) & c.lane_select)),
    Rule(4, "VALU writes VCC; V_DIV_FMAS", 4,
         lambda p: p.valu and "vcc" in p.writes,
         lambda p, c: c.mnemonic.startswith("v_div_fmas")),
    Rule(5, "VALU writes SGPR; VMEM reads that SGPR", 5,
         lambda p: p.valu and bool(_sgprs(p.writes) - {"vcc"}),
         lambda p, c: c.vmem and bool((_sgprs(p.writes) - {"vcc"}) & c.reads)),
    Rule(6, "VALU Trans op; non-trans VALU consuming the result", 1,
         lambda p: p.trans,
         lambda p, c: c.valu and not c.trans and bool(p.writes & c.reads)),
)
LONGEST = max(r.waits for r in RULES)


class WaitStates:
    """The recent producers of one wave, with the wait states issued since each; `issue(info)` checks `info`
    against them (returning the broken rules as (rule, producer index)) and records it."""

    def __init__(self):
        self.recent = []   # [producer StepInfo, rules it can start, wait states since]

    def issue(self, info: StepInfo) -> list:
        broken = []
        if self.recent:
            for entry in self.recent:
                producer, rules, since = entry
                for rule in rules:
                    if since < rule.waits and rule.consumer(producer, info):
                        broken.append((rule, producer.index))
                entry[2] += info.nops
            self.recent = [e for e in self.recent if e[2] < LONGEST]
        if info.produces:
            self.recent.append([info, info.produces, 0])
        return broken
