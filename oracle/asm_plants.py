"""Assembly plants: small, named edits of the machine code llc wrote, one planted variant per site, to measure how
often the cross-check (oracle/crosscheck.py: the IR executor and the unplanted -O levels vote against the planted
assembly) notices a backend bug of that shape.

Why a module of its own: like oracle/memory_model_plant.py, this is mutation testing of the oracle, not part of
it; nothing here runs inside a campaign or a repro. Why edit decoded ``Instruction`` records and write the text
back line-exactly: a site is one statement of llc's text (its 1-based ``line``), the edit is ``render()`` of a
changed record (or a comment where a statement is removed, so every other line keeps its number), and the
planted text is read by the same decode (asm.py) as any ``.s`` a maintainer attaches.

The plants (``PLANTS``; docs/asm-plants.md has the ISA's reason each is observable):

- ``drop-waitcnt``: an ``s_waitcnt`` with a vmcnt/lgkmcnt is removed (``relax=True``: each counter it writes is
  raised by one instead).
- ``swap-vop-operands``: src0 and src1 of a non-commutative VALU op (v_sub*, v_subrev*, v_sub*_co, shifts
  ``v_*rev``, v_lshl_add/or, v_bfe, v_alignbit ...) are swapped; an e32 form whose src1 would not be a VGPR becomes
  e64; a swap that puts a register of the wrong width in a field, or a literal in VOP3 (gfx9 has none), is no site.
- ``sdwa-sel``: one SDWA select changes (the first non-DWORD src sel, else src0_sel, else dst_sel).
- ``zext-for-sext``: a sign-extending op becomes its zero-extending twin (ZEXT below), or an SDWA ``sext(v)``
  source loses its sext.
- ``op-sel-hi``: bit 0 of op_sel_hi (VOP3P; written if llc left the default) or of op_sel (VOP3) flips.
- ``bitop3-table``: bit ``bit`` (default 0: all three inputs 0) of v_bitop3's truth table flips (gfx950).
- ``dropped-carry``: the high half of a multi-word add/sub loses its carry/borrow-in (CARRY below).
- ``drop-exec-restore``: an EXEC restore is removed: ``s_or_b64 exec, exec, s[..]`` (the join after a divergent
  region) or ``s_mov_b64 exec, s[..]`` where s[..] was last written (earlier in the text) by a saveexec or a
  ``s_mov_b64 s[..], exec`` (a saved copy of EXEC).
- ``drop-hazard-nop``: an ``s_nop N`` (llc inserts them only for wait-state hazards) is removed.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass

from gfxhound.executors.amdgcn.asm import Instruction, parse_program
from gfxhound.executors.amdgcn.asm_modifiers import Modifier
from gfxhound.executors.amdgcn.asm_operands import Imm, Reg, Special, Src, Waitcnt

__all__ = ["PLANTS", "Plant", "Site", "apply", "sites"]


@dataclass(frozen=True)
class Site:
    """One planted variant: the statement at ``line`` (instruction ``index`` of ``function``) becomes ``after``
    ("" : removed). ``seed`` names what observability starts from (asm_plants_flow.py): "defs" (the registers
    the edited instruction writes), "waitcnt" (the loads the removed wait retired), "exec" (the lanes the
    removed restore changed), "hazard" (a wait-state hazard: the machine's checked rows decide)."""
    plant: str
    function: str
    index: int
    line: int
    before: str
    after: str
    seed: str = "defs"

    def describe(self) -> str:
        return f"line {self.line}: {self.before} -> {self.after or '(removed)'}"


@dataclass(frozen=True)
class Plant:
    name: str
    what: str
    edit: object          # edit(instruction, function, mcpu) -> (new Instruction | None for removal, seed) or None
    observable: str       # the ISA's rule, one line (docs/asm-plants.md at length)


def _with(ins: Instruction, **changes) -> Instruction:
    return dataclasses.replace(ins, **changes)


def _op(mnemonic: str):
    from gfxhound.executors.amdgcn.pcode import NotModelled, compile_op
    try:
        return compile_op(mnemonic)
    except NotModelled:
        return None
    except Exception:  # noqa: BLE001 - a mnemonic the pseudocode tables lack: no field names to edit by
        return None


def operand_names(ins: Instruction, op) -> list:
    """The pseudocode name of each operand of a VALU op, in the machine's mapping (machine.py's docstring: D0,
    VCC|sdst, S0..S2, VCC_IN; VOPC D0 first; v_fmamk/fmaak's SIMM32). Kept here, not imported: the decoder is a
    private module of the machine."""
    mn, n = ins.mnemonic, len(ins.operands)
    srcs = [s for s in ("S0", "S1", "S2") if s in op.widths]
    if "VOPC" in op.families and "D0" in op.lane_masks:
        return ["D0"] + srcs
    dst = ["D0"] if "D0" in op.outputs else []
    if "D1" in op.outputs:
        return dst + ["D1"] + srcs
    if "VCC" in op.outputs:
        return dst + ["VCC"] + srcs + (["VCC_IN"] if "VCC" in op.inputs else [])
    if "SIMM32" in op.widths:
        return dst + (["S0", "SIMM32", "S1"] if "mk_" in mn else ["S0", "S1", "SIMM32"])
    if "VCC" in op.inputs and n == len(dst) + len(srcs) + 1:
        return dst + srcs + ["VCC"]
    return dst + srcs


def _valu_names(ins: Instruction):
    """(operand names, Op), or (None, Op/None) where the pseudocode is unknown or the count does not match."""
    op = _op(ins.mnemonic)
    if op is None or not op.lanes:
        return None, op
    names = operand_names(ins, op)
    return (names, op) if len(names) == len(ins.operands) else (None, op)


# ---- drop-waitcnt ---------------------------------------------------------------------------------------------
def _drop_waitcnt(ins, fn, mcpu, relax=False):
    if ins.mnemonic != "s_waitcnt" or not ins.operands:
        return None
    wc = ins.operands[0]
    if isinstance(wc, Imm) and wc.value == 0:
        wc = Waitcnt(0, 0, 0)
    if not isinstance(wc, Waitcnt) or (wc.vmcnt is None and wc.lgkmcnt is None):
        return None
    if not relax:
        return None, "waitcnt"
    raised = Waitcnt(None if wc.vmcnt is None else min(wc.vmcnt + 1, 63), wc.expcnt,
                     None if wc.lgkmcnt is None else min(wc.lgkmcnt + 1, 15))
    return _with(ins, operands=(raised,)), "waitcnt"


# ---- swap-vop-operands ----------------------------------------------------------------------------------------
NONCOMMUTATIVE = re.compile(r"^v_(sub|subrev|subb|subbrev)_|^v_(lshl|lshr|ashr)rev_|^v_(lshl|lshr|ashr)_b64$|"
                            r"^v_lshl_(add|or)_|^v_add_lshl_|^v_(bfe|alignbit|alignbyte|ldexp|bfm|sad)_")


def _fits(op_record, width: int) -> bool:
    base = op_record.base if isinstance(op_record, Src) else op_record
    return not isinstance(base, Reg) or base.count == max(1, (width + 31) // 32)


def _swap(ins, fn, mcpu):
    if not NONCOMMUTATIVE.match(ins.mnemonic) or ins.encoding in ("sdwa", "dpp", "e64_dpp"):
        return None
    names, op = _valu_names(ins)
    if names is None or "S0" not in names or "S1" not in names:
        return None
    i, j = names.index("S0"), names.index("S1")
    a, b = ins.operands[i], ins.operands[j]
    if a == b:   # `v_sub_u32 v1, v2, v2` swapped is the same instruction: no edit, no site
        return None
    if not (_fits(b, op.widths["S0"]) and _fits(a, op.widths["S1"])):
        return None
    operands = list(ins.operands)
    operands[i], operands[j] = b, a
    encoding = ins.encoding
    if encoding == "e32" and not (isinstance(a, Reg) and a.file == "v"):
        if any(isinstance(x, Imm) and not x.inline for x in (a, b)):
            return None  # a literal in VOP3: gfx9 cannot encode it
        encoding = "e64"
    return _with(ins, operands=tuple(operands), encoding=encoding), "defs"


# ---- sdwa-sel -------------------------------------------------------------------------------------------------
OTHER_SEL = {"BYTE_0": "BYTE_1", "BYTE_1": "BYTE_0", "BYTE_2": "BYTE_3", "BYTE_3": "BYTE_2", "WORD_0": "WORD_1",
             "WORD_1": "WORD_0", "DWORD": "WORD_0"}


def _sdwa_sel(ins, fn, mcpu):
    if ins.encoding != "sdwa":
        return None
    sels = [m for m in ins.modifiers if m.name in ("src0_sel", "src1_sel", "dst_sel")]
    if not sels:
        return None
    pick = next((m for m in sels if m.name != "dst_sel" and m.value != "DWORD"), None) or \
        next((m for m in sels if m.name == "src0_sel"), sels[0])
    mods = tuple(Modifier(m.name, OTHER_SEL[m.value]) if m is pick else m for m in ins.modifiers)
    return _with(ins, modifiers=mods), "defs"


# ---- zext-for-sext --------------------------------------------------------------------------------------------
ZEXT = {"v_bfe_i32": "v_bfe_u32", "v_ashrrev_i32": "v_lshrrev_b32", "v_ashrrev_i64": "v_lshrrev_b64",
        "v_ashrrev_i16": "v_lshrrev_b16", "v_ashr_i64": "v_lshr_b64", "s_ashr_i32": "s_lshr_b32",
        "s_ashr_i64": "s_lshr_b64", "s_bfe_i32": "s_bfe_u32", "s_bfe_i64": "s_bfe_u64",
        "v_cvt_f32_i32": "v_cvt_f32_u32", "v_cvt_f64_i32": "v_cvt_f64_u32", "v_mul_i32_i24": "v_mul_u32_u24",
        "v_mul_hi_i32_i24": "v_mul_hi_u32_u24", "v_mad_i32_i24": "v_mad_u32_u24", "v_mul_hi_i32": "v_mul_hi_u32",
        "v_mad_i64_i32": "v_mad_u64_u32", "global_load_sbyte": "global_load_ubyte",
        "global_load_sshort": "global_load_ushort", "flat_load_sbyte": "flat_load_ubyte",
        "flat_load_sshort": "flat_load_ushort", "buffer_load_sbyte": "buffer_load_ubyte",
        "buffer_load_sshort": "buffer_load_ushort", "ds_read_i8": "ds_read_u8", "ds_read_i16": "ds_read_u16",
        "s_load_sbyte": "s_load_ubyte", "s_load_sshort": "s_load_ushort"}


def _zext(ins, fn, mcpu):
    if ins.mnemonic in ZEXT:
        return _with(ins, mnemonic=ZEXT[ins.mnemonic]), "defs"
    if ins.encoding == "sdwa":
        for k, o in enumerate(ins.operands):
            if isinstance(o, Src) and o.sext:
                plain = o.base if not (o.neg or o.abs) else dataclasses.replace(o, sext=False)
                return _with(ins, operands=ins.operands[:k] + (plain,) + ins.operands[k + 1:]), "defs"
    return None


# ---- op-sel-hi ------------------------------------------------------------------------------------------------
VOP3P = re.compile(r"^v_(pk_|dot\d|fma_mix|mad_mix)")


def _op_sel(ins, fn, mcpu):
    hi, lo = ins.mod("op_sel_hi"), ins.mod("op_sel")
    mods = list(ins.modifiers)
    if hi is not None:
        k = next(n for n, m in enumerate(mods) if m.name == "op_sel_hi")
        mods[k] = Modifier("op_sel_hi", (1 - hi[0],) + tuple(hi[1:]))
    elif VOP3P.match(ins.mnemonic):
        names, _ = _valu_names(ins)
        count = len([n for n in (names or ()) if n in ("S0", "S1", "S2")]) or len(ins.operands) - 1
        mods.append(Modifier("op_sel_hi", (0,) + (1,) * (count - 1)))
    elif lo is not None:
        k = next(n for n, m in enumerate(mods) if m.name == "op_sel")
        mods[k] = Modifier("op_sel", (1 - lo[0],) + tuple(lo[1:]))
    else:
        return None
    return _with(ins, modifiers=tuple(mods)), "defs"


# ---- bitop3-table ---------------------------------------------------------------------------------------------
def _bitop3(ins, fn, mcpu, bit=0):
    table = ins.mod("bitop3")
    if not ins.mnemonic.startswith("v_bitop3") or table is None:
        return None
    mods = tuple(Modifier("bitop3", (int(table) ^ (1 << bit)) & 0xFF) if m.name == "bitop3" else m
                 for m in ins.modifiers)
    return _with(ins, modifiers=mods), "defs"


# ---- dropped-carry --------------------------------------------------------------------------------------------
CARRY = {"v_addc_co_u32": "v_add_co_u32", "v_subb_co_u32": "v_sub_co_u32", "v_subbrev_co_u32": "v_subrev_co_u32",
         "v_addc_u32": "v_add_co_u32", "s_addc_u32": "s_add_u32", "s_subb_u32": "s_sub_u32"}


def _carry(ins, fn, mcpu):
    if ins.mnemonic not in CARRY:
        return None
    if ins.mnemonic.startswith("s_"):   # SCC is the implicit carry-in; the twin ignores it
        return _with(ins, mnemonic=CARRY[ins.mnemonic]), "defs"
    names, _ = _valu_names(ins)
    if names is None or names[-1] != "VCC_IN":
        return None
    return _with(ins, mnemonic=CARRY[ins.mnemonic], operands=ins.operands[:-1]), "defs"


# ---- drop-exec-restore ----------------------------------------------------------------------------------------
SAVES = re.compile(r"^s_\w+_saveexec_b64$")


def _is_exec(o) -> bool:
    return isinstance(o, Special) and o.name == "exec"


def _saved_copy(fn, index: int, reg: Reg) -> bool:
    """Whether `reg` was last written (looking back in the text) by a saveexec or a copy of EXEC."""
    for prior in reversed(fn.instructions[:index]):
        if prior.operands and prior.operands[0] == reg and prior.mnemonic not in ("s_waitcnt", "s_nop"):
            return bool(SAVES.match(prior.mnemonic)) or \
                prior.mnemonic == "s_mov_b64" and len(prior.operands) == 2 and _is_exec(prior.operands[1])
    return False


def _exec_restore(ins, fn, mcpu):
    ops = ins.operands
    if ins.mnemonic == "s_or_b64" and len(ops) == 3 and _is_exec(ops[0]) and any(map(_is_exec, ops[1:])):
        return None, "exec"
    if ins.mnemonic == "s_mov_b64" and len(ops) == 2 and _is_exec(ops[0]) and isinstance(ops[1], Reg) and \
            ops[1].file == "s" and _saved_copy(fn, ins.index, ops[1]):
        return None, "exec"
    return None


# ---- drop-hazard-nop ------------------------------------------------------------------------------------------
def _hazard_nop(ins, fn, mcpu):
    return (None, "hazard") if ins.mnemonic == "s_nop" else None


PLANTS = {p.name: p for p in (
    Plant("drop-waitcnt", "an s_waitcnt is removed", _drop_waitcnt,
          "a register a load writes is read before a later wait retires the load"),
    Plant("swap-vop-operands", "src0 and src1 of a non-commutative VALU op are swapped", _swap,
          "a register the op writes (D0, carry-out) is read"),
    Plant("sdwa-sel", "an SDWA src/dst select changes", _sdwa_sel, "a register the op writes is read"),
    Plant("zext-for-sext", "a sign extension becomes a zero extension", _zext, "a register the op writes is read"),
    Plant("op-sel-hi", "a bit of op_sel_hi/op_sel flips", _op_sel, "a register the op writes is read"),
    Plant("bitop3-table", "a bit of v_bitop3's truth table flips", _bitop3, "a register the op writes is read"),
    Plant("dropped-carry", "the carry/borrow-in of a multi-word add/sub is dropped", _carry,
          "a register the op writes (D0, carry-out) is read"),
    Plant("drop-exec-restore", "an EXEC restore after a divergent region (or whole-wave code) is removed",
          _exec_restore, "EXEC differs in some lane and is read (every VALU/vector memory op reads it)"),
    Plant("drop-hazard-nop", "an s_nop llc inserted for a wait-state hazard is removed", _hazard_nop,
          "observable when a wait-state row the machine checks needs the nop (machine_hazards.py)"),
)}


def sites(text: str, plant: str, mcpu: str = "gfx942", function: str | None = None, **options) -> list:
    """Every Site of `plant` in the assembly `text` (every function, or `function`), in text order. ``options``
    go to the edit (``relax`` for drop-waitcnt, ``bit`` for bitop3-table)."""
    if plant not in PLANTS:
        raise KeyError(f"no plant {plant!r} (have: {', '.join(PLANTS)})")
    edit, out = PLANTS[plant].edit, []
    accepted = inspect.signature(edit).parameters
    options = {k: v for k, v in options.items() if k in accepted}   # an option of another plant is not this one's
    for fn in parse_program(text).functions:
        if function is not None and fn.name != function:
            continue
        for ins in fn.instructions:
            made = edit(ins, fn, mcpu, **options)
            if made is None:
                continue
            new, seed = made
            out.append(Site(plant, fn.name, ins.index, ins.line, ins.render(), new.render() if new else "", seed))
    return out


def apply(text: str, site: Site) -> str:
    """`text` with the site's line replaced (its indentation kept); a removed statement leaves a comment, so
    that every other line keeps its number. Raises ValueError if the line does not hold the site's statement."""
    from gfxhound.executors.amdgcn.asm import parse_statement, strip_comment
    lines = text.split("\n")
    old = lines[site.line - 1]
    stated = strip_comment(old).strip()
    if not stated or parse_statement(stated).render() != site.before:
        raise ValueError(f"line {site.line} is {old.strip()!r}, not the site's {site.before!r}")
    indent = old[:len(old) - len(old.lstrip())] or "\t"
    lines[site.line - 1] = indent + (site.after or f"; gfxhound plant {site.plant}: removed {site.before}")
    return "\n".join(lines)
