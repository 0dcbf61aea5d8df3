"""What the executor needs to start a kernel, read from its assembly: the kernarg layout (``.amdgpu_metadata``),
which SGPRs hold what when the first instruction runs, how the work-item ids arrive in VGPRs, the kernarg
preload and its two entry points, LDS and scratch sizes, register counts (the ``.amdhsa_kernel`` descriptor).

Why from the descriptor and not from reading the code: the hardware sets registers up from the descriptor's
enable bits alone, so an executor that guessed from the instructions would agree with a backend that is wrong.
The layout rules are LLVM's AMDGPUUsage (llvm/docs/AMDGPUUsage.rst), "Initial Kernel Execution State":

- SGPRs: enabled registers are dense from SGPR0 in the fixed order of its "SGPR Register Set Up Order" table:
  user SGPRs (set by CP) Private Segment Buffer (4), Dispatch Ptr (2), Queue Ptr (2), Kernarg Segment Ptr (2),
  Dispatch Id (2), Flat Scratch Init (2), Preloaded Kernargs (kernarg_preload_spec_length), Private Segment
  Size (1); then the system SGPRs (set by ADC/SPI) from SGPR ``user_sgpr_count`` on: Work-Group Id X, Y, Z,
  Work-Group Info, Scratch Wavefront Offset. Only the first 16 user SGPRs are initialised.
- The Scratch Wavefront Offset SGPR exists only without *Architected flat scratch* (compute_pgm_rsrc2
  ENABLE_PRIVATE_SEGMENT: with it, the bit sets up FLAT_SCRATCH instead); gfx940-gfx950 and gfx11+ have it, and
  have no Private Segment Buffer ("Private Segment Buffer": not supported there).
- VGPRs: with *Packed work-item IDs* (gfx90a, gfx940-gfx950, gfx11+: the processor table's Target Properties)
  VGPR0 holds X in bits 0:9, Y in 10:19, Z in 20:29 (Y and Z 0 unless enable_vgpr_workitem_id is > 0 / > 1);
  otherwise X, Y, Z in VGPR0, 1, 2 as enabled.
- "Preloaded Kernel Arguments": kernarg_preload_spec_length dwords of the kernarg segment, from dword
  kernarg_preload_spec_offset, in consecutive user SGPRs after the last enabled non-preload user SGPR. Firmware
  that preloads starts the kernel 256 bytes past its entry; firmware that does not starts at the entry, where
  the compiler's compatibility prologue loads the same SGPRs and branches to the 256-byte point. Both entries
  are exposed (``entry``, ``preload_entry``) so the executor can run both and compare.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields

from gfxhound.executors.amdgcn.asm import Program, parse_program
from gfxhound.executors.amdgcn.asm_directives import kernel_descriptors, metadata, set_symbols, value

ABI_FORMAT = 1  # the newest KernelABI JSON this module reads
PACKED_WORKITEM_IDS = re.compile(r"^gfx(90a|94[012]|950|1[12]\w+)$")
ARCHITECTED_FLAT_SCRATCH = re.compile(r"^gfx(94[012]|950|1[12]\w+)$")
MAX_USER_SGPRS = 16
# (descriptor field, slot name, SGPRs), in the set-up order; kernarg preload sits between the 6th and 7th
USER_SGPRS = (("user_sgpr_private_segment_buffer", "private_segment_buffer", 4),
              ("user_sgpr_dispatch_ptr", "dispatch_ptr", 2), ("user_sgpr_queue_ptr", "queue_ptr", 2),
              ("user_sgpr_kernarg_segment_ptr", "kernarg_segment_ptr", 2),
              ("user_sgpr_dispatch_id", "dispatch_id", 2), ("user_sgpr_flat_scratch_init", "flat_scratch_init", 2))
SYSTEM_SGPRS = (("system_sgpr_workgroup_id_x", "workgroup_id_x"), ("system_sgpr_workgroup_id_y", "workgroup_id_y"),
                ("system_sgpr_workgroup_id_z", "workgroup_id_z"), ("system_sgpr_workgroup_info", "workgroup_info"))
DEFAULTS = {"system_sgpr_workgroup_id_x": 1}  # the assembler's default where a directive is not written


class AbiError(ValueError):
    """A kernel whose start cannot be set up from what its assembly says (one line)."""


@dataclass(frozen=True)
class KernArg:
    """One kernel argument of the metadata: its byte ``offset`` and ``size`` in the kernarg segment, its
    ``value_kind`` (by_value, global_buffer, hidden_block_count_x, ...), ``address_space`` for pointers."""
    name: str
    offset: int
    size: int
    value_kind: str
    address_space: str = ""

    @property
    def hidden(self) -> bool:
        return self.value_kind.startswith("hidden_")


@dataclass(frozen=True)
class SgprSlot:
    """SGPRs ``first`` .. ``first + count - 1`` hold ``what`` at the start (a slot name of USER_SGPRS or
    SYSTEM_SGPRS, "kernarg_preload", "private_segment_size" or "private_segment_wavefront_offset"); ``user``:
    set by CP from the dispatch (same for every wave) rather than per wave; ``kernarg_offset``: for
    kernarg_preload, the byte offset in the kernarg segment of the dword ``first`` receives."""
    what: str
    first: int
    count: int
    user: bool
    kernarg_offset: int | None = None


@dataclass(frozen=True)
class KernelABI:
    """How to start kernel ``name``. ``entry`` and ``preload_entry`` are instruction indices in the function of
    that name (asm.py Program); ``preload_entry`` is None without kernarg preload. Register counts are as the
    descriptor says them (None where it writes an expression that cannot be evaluated); ``descriptor`` keeps
    every .amdhsa_ field as written, for what is not modelled here."""
    name: str
    processor: str
    wavefront_size: int
    kernargs: tuple
    kernarg_size: int
    kernarg_align: int
    user_sgpr_count: int
    sgprs: tuple
    workitem_id: int
    packed_workitem_ids: bool
    architected_flat_scratch: bool
    group_segment_size: int
    private_segment_size: int
    enable_private_segment: bool
    dynamic_stack: bool
    next_free_vgpr: int | None
    next_free_sgpr: int | None
    accum_offset: int | None
    agpr_count: int | None
    max_flat_workgroup_size: int
    reqd_workgroup_size: tuple | None
    entry: int = 0
    preload_entry: int | None = None
    descriptor: tuple = ()
    format: int = ABI_FORMAT

    def sgpr(self, what: str) -> SgprSlot | None:
        return next((slot for slot in self.sgprs if slot.what == what), None)

    def kernarg(self, name: str) -> KernArg:
        for arg in self.kernargs:
            if arg.name == name:
                return arg
        raise KeyError(f"kernel {self.name} has no argument {name!r}")

    @property
    def preload(self) -> SgprSlot | None:
        return self.sgpr("kernarg_preload")

    def workitem_vgprs(self, x: int, y: int = 0, z: int = 0) -> tuple:
        """((VGPR, value), ...) one lane starts with for work-item id (x, y, z); ids not enabled read 0
        (packed) or have no VGPR (unpacked)."""
        y = y if self.workitem_id >= 1 else 0
        z = z if self.workitem_id >= 2 else 0
        if self.packed_workitem_ids:
            if max(x, y, z) >= 1 << 10:
                raise AbiError(f"work-item id ({x}, {y}, {z}) does not fit the packed 10-bit fields")
            return ((0, x | y << 10 | z << 20),)
        return tuple((i, v) for i, v in enumerate((x, y, z)[:self.workitem_id + 1]))

    def preloaded_values(self, kernarg_bytes: bytes) -> tuple:
        """((SGPR, value), ...) of the preloaded kernarg dwords, read little-endian from the kernarg segment."""
        slot = self.preload
        if slot is None:
            return ()
        data = bytes(kernarg_bytes).ljust(slot.kernarg_offset + 4 * slot.count, b"\0")
        return tuple((slot.first + i, int.from_bytes(data[slot.kernarg_offset + 4 * i:][:4], "little"))
                     for i in range(slot.count))

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["kernargs"] = [vars(a) for a in self.kernargs]
        out["sgprs"] = [vars(s) for s in self.sgprs]
        out["descriptor"] = [list(d) for d in self.descriptor]
        out["reqd_workgroup_size"] = list(self.reqd_workgroup_size) if self.reqd_workgroup_size else None
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @classmethod
    def from_json(cls, data: dict) -> "KernelABI":
        if data.get("format", 0) > ABI_FORMAT:
            raise ValueError(f"kernel ABI format {data.get('format')} is newer than this gfxhound; upgrade gfxhound")
        data = dict(data)
        data["kernargs"] = tuple(KernArg(**a) for a in data["kernargs"])
        data["sgprs"] = tuple(SgprSlot(**s) for s in data["sgprs"])
        data["descriptor"] = tuple(tuple(d) for d in data["descriptor"])
        if data.get("reqd_workgroup_size"):
            data["reqd_workgroup_size"] = tuple(data["reqd_workgroup_size"])
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


# ---- reading ------------------------------------------------------------------------------------------------
def _field(descriptor: dict, symbols: dict, key: str, kernel: str, default=0, required=False):
    if key not in descriptor:
        if required:
            raise AbiError(f"kernel {kernel}: its descriptor has no .amdhsa_{key}")
        return DEFAULTS.get(key, default)
    result = value(descriptor[key], symbols)
    if result is None and required:
        raise AbiError(f"kernel {kernel}: .amdhsa_{key} {descriptor[key]} is not a number this reader evaluates")
    return result


def _sgprs(name: str, processor: str, desc: dict, symbols: dict) -> tuple:
    """(user_sgpr_count, slots) in AMDGPUUsage's set-up order."""
    def get(key, default=0):  # an enable written as an expression this reader cannot evaluate: an error
        return _field(desc, symbols, key, name, default, required=key in desc)

    architected = bool(ARCHITECTED_FLAT_SCRATCH.match(processor))
    slots, at = [], 0
    for key, what, count in USER_SGPRS:
        if get(key):
            if architected and what == "private_segment_buffer":
                raise AbiError(f"kernel {name}: a private segment buffer on {processor}, which has "
                               "architected flat scratch and no such buffer")
            slots.append(SgprSlot(what, at, count, True))
            at += count
    preload = get("user_sgpr_kernarg_preload_length")
    if preload:
        if get("user_sgpr_private_segment_size"):
            raise AbiError(f"kernel {name}: kernarg preload with a private segment size SGPR, whose order "
                           "AMDGPUUsage leaves ambiguous")
        offset = get("user_sgpr_kernarg_preload_offset")
        slots.append(SgprSlot("kernarg_preload", at, preload, True, 4 * offset))
        at += preload
    if get("user_sgpr_private_segment_size"):
        slots.append(SgprSlot("private_segment_size", at, 1, True))
        at += 1
    count = _field(desc, symbols, "user_sgpr_count", name, at) if "user_sgpr_count" in desc else at
    if count is None or count < at:
        raise AbiError(f"kernel {name}: .amdhsa_user_sgpr_count {desc.get('user_sgpr_count')} is fewer than "
                       f"the {at} user SGPRs its descriptor enables")
    if at > MAX_USER_SGPRS:
        raise AbiError(f"kernel {name}: {at} user SGPRs enabled, and only the first {MAX_USER_SGPRS} are set up")
    at = count
    for key, what in SYSTEM_SGPRS:
        if get(key):
            slots.append(SgprSlot(what, at, 1, False))
            at += 1
    offset_key = "system_sgpr_private_segment_wavefront_offset"
    if not architected and (get(offset_key) or get("enable_private_segment")):
        slots.append(SgprSlot("private_segment_wavefront_offset", at, 1, False))
    return count, tuple(slots)


def _kernargs(name: str, meta: dict) -> tuple:
    out = []
    for arg in meta.get(".args") or []:
        try:
            out.append(KernArg(str(arg.get(".name", "")), int(arg[".offset"]), int(arg[".size"]),
                               str(arg[".value_kind"]), str(arg.get(".address_space", ""))))
        except (KeyError, TypeError, ValueError):
            raise AbiError(f"kernel {name}: a metadata argument without an offset, size or value kind: {arg}") \
                from None
    return tuple(out)


def _preload_entry(program: Program, name: str) -> int | None:
    """The instruction after the first 256-byte alignment inside the body (where llc puts the end of the
    compatibility prologue), or None."""
    try:
        function = program.function(name)
    except KeyError:
        return None
    return next((index for index, power in function.aligns if index > 0 and power >= 8), None)


def _kernel(name: str, desc: dict, meta: dict, symbols: dict, processor: str, program: Program) -> KernelABI:
    def req(key):
        return _field(desc, symbols, key, name, required=True)

    def opt(key, default=None):  # a count: None where written as an expression this reader cannot evaluate
        return _field(desc, symbols, key, name, default)

    def setting(key, default=0):  # a setting the start depends on: written, it must evaluate
        return _field(desc, symbols, key, name, default, required=key in desc)

    user_count, slots = _sgprs(name, processor, desc, symbols)
    preload_entry = _preload_entry(program, name) if any(s.what == "kernarg_preload" for s in slots) else None
    reqd = meta.get(".reqd_workgroup_size")
    return KernelABI(
        name=name, processor=processor, wavefront_size=int(meta.get(".wavefront_size", 64)),
        kernargs=_kernargs(name, meta),
        kernarg_size=int(meta.get(".kernarg_segment_size", setting("kernarg_size"))),
        kernarg_align=int(meta.get(".kernarg_segment_align", 8)), user_sgpr_count=user_count, sgprs=slots,
        workitem_id=setting("system_vgpr_workitem_id"),
        packed_workitem_ids=bool(PACKED_WORKITEM_IDS.match(processor)),
        architected_flat_scratch=bool(ARCHITECTED_FLAT_SCRATCH.match(processor)),
        group_segment_size=req("group_segment_fixed_size"), private_segment_size=req("private_segment_fixed_size"),
        enable_private_segment=bool(setting("enable_private_segment")),
        dynamic_stack=bool(setting("uses_dynamic_stack")),
        next_free_vgpr=opt("next_free_vgpr"), next_free_sgpr=opt("next_free_sgpr"), accum_offset=opt("accum_offset"),
        agpr_count=meta.get(".agpr_count"), max_flat_workgroup_size=int(meta.get(".max_flat_workgroup_size", 1024)),
        reqd_workgroup_size=tuple(reqd) if reqd else None, entry=0, preload_entry=preload_entry,
        descriptor=tuple(desc.items()))


def kernel_abis(text: str, program: Program | None = None) -> dict:
    """{kernel name: KernelABI} for every .amdhsa_kernel of an assembly text (asm.py's Program of the same
    text, parsed here when not given)."""
    program = program or parse_program(text)
    descriptors, symbols = kernel_descriptors(text), set_symbols(text)
    doc = metadata(text)
    metas = {str(k.get(".name")): k for k in doc.get("amdhsa.kernels") or []}
    found = re.search(r"(gfx\w+)", str(doc.get("amdhsa.target", "")))
    processor = program.processor or (found.group(1) if found else "")
    out = {}
    for name, desc in descriptors.items():
        if name not in metas:
            raise AbiError(f"kernel {name}: no .amdgpu_metadata entry (its arguments are unknown)")
        out[name] = _kernel(name, desc, metas[name], symbols, processor, program)
    return out


def kernel_abi(text: str, name: str | None = None, program: Program | None = None) -> KernelABI:
    """The KernelABI of kernel `name` (the only kernel when not given)."""
    abis = kernel_abis(text, program)
    if name is None:
        if len(abis) != 1:
            raise AbiError(f"{len(abis)} kernels in the text ({', '.join(abis) or 'none'}): name one")
        return next(iter(abis.values()))
    if name not in abis:
        raise AbiError(f"no kernel {name!r} in the text (have: {', '.join(abis) or 'none'})")
    return abis[name]
