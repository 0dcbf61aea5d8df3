"""The launch ``gfxhound emulate`` gives both executors (crosscheck.py): a ``--launch`` spec (fuzz/launch_spec.py's
grammar, plus ``block:`` and the unsigned dtypes u8/u16/u32/u64 and i16) turned into arguments in the kernel's
parameter order. Integer inputs are drawn from a seed with boundary patterns (0, 1, all ones, the sign bit alone,
the largest signed value) mixed in; float inputs are normal values with 0, -0, 1, -1 mixed in; outputs start
zero-filled. The kernel's parameters come from the IR (``ir_params``) or, for a kernel given as assembly or a
code object, from its kernel metadata (``metadata_params``). Why its own module: the runs and the vote are
crosscheck.py's job, what they run on is this one's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

# dtype name -> numpy dtype; the fuzzer's names plus unsigned ones and i16
NUMPY = {"fp32": np.float32, "fp16": np.float16, "fp64": np.float64, "i8": np.int8, "i16": np.int16,
         "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
         "i1": np.uint8}
EXTRA_DTYPES = {"u8": "i8", "u16": "i32", "u32": "i32", "u64": "i64", "i16": "i32"}  # stand-ins for parse()


class LaunchError(ValueError):
    """A launch spec that cannot be used with this kernel: one line."""


@dataclass
class Launch:
    """What every run gets: ``args`` in the kernel's parameter order (numpy arrays for pointers, ints/floats for
    by-value ones), ``names`` of those parameters, ``roles`` name -> in | out | inout for the tensors, the grid
    and the block (x, y, z)."""
    names: list
    args: list
    roles: dict
    grid: tuple
    block: tuple
    seed: int = 0
    values: dict = field(default_factory=dict)  # every spec entry's value (the report shows the scalars)


# --- the kernel's parameters, from the IR --------------------------------------------------------------------
def kernel_names(text: str) -> list:
    return re.findall(r"define\s+(?:[\w()\"]+\s+)*?amdgpu_kernel\s+void\s+@\"?([\w.$]+)", text)


def ir_params(text: str, name: str) -> list:
    """The kernel's parameters as (type, name): the IR executor's reader's, or, where it cannot read the module
    (the IR run then says why), read off the define line (pointers, integers, floats; anything else as is)."""
    from gfxhound.executors.llvm_ir import ir
    try:
        fn = ir.parse(text).functions.get(name)
    except Exception:  # noqa: BLE001 - the IR run reports the reader's failure as unresolved
        fn = None
    if fn is not None:
        return fn.params
    found = re.search(rf"define\s[^\n]*?@\"?{re.escape(name)}\"?\s*\(", text)
    if found is None:
        raise LaunchError(f"no kernel @{name} in the module")
    depth, end = 1, found.end()
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    inside = text[found.end():end - 1]
    params = []
    for k, part in enumerate(p.strip() for p in re.split(r",(?![^(]*\))", inside) if p.strip()):
        words = part.split()
        pname = next((w[1:] for w in reversed(words) if w.startswith("%")), str(k))
        if part.startswith("ptr"):
            space = re.match(r"ptr\s+addrspace\((\d+)\)", part)
            params.append((("p", int(space.group(1)) if space else 0), pname))
        elif re.match(r"i\d+\b", part):
            params.append((("i", int(words[0][1:])), pname))
        elif words[0] in ("half", "bfloat", "float", "double"):
            params.append((("f", words[0]), pname))
        else:
            params.append(((words[0],), pname))
    return params


# --- the kernel's parameters, from machine code's kernel metadata ---------------------------------------------
# With no LLVM IR (a .s or a code object given as it is) there is no parameter list to read the spec against:
# the visible arguments of the kernel metadata (``.amdgpu_metadata`` ``.args``, read by executors/amdgcn/abi.py) in
# order, a pointer where the machine treats one as a pointer (``global_buffer`` or address space global), else a
# by-value integer of the argument's size (``.type_name`` is not written for every language; the kernarg bytes
# are the same). An unnamed argument (Triton's metadata leaves names empty) is ``arg<position>``.
# the metadata's .address_space -> LLVM's AMDGPU address space number (AMDGPUUsage, "Address Spaces")
ADDRESS_SPACES = {"generic": 0, "global": 1, "region": 2, "local": 3, "constant": 4, "private": 5}


def metadata_params(assembly, kernel: str | None = None, label: str = "") -> tuple:
    """(kernel, [(type, name), ...]) of `kernel` (the only kernel when None) in the shape ir_params gives, from
    the assembly's kernel metadata. A LaunchError (one line) when the text has no such kernel or no metadata."""
    from gfxhound.executors.amdgcn.abi import AbiError, kernel_abis
    from gfxhound.executors.amdgcn.asm import AsmError
    where = label or assembly.path or "the assembly"
    try:
        abis = kernel_abis(assembly.text)
    except (AbiError, AsmError) as exc:  # no metadata, or metadata (or text) it cannot read
        raise LaunchError(f"{where}: cannot read its kernel metadata ({(str(exc).splitlines() or [type(exc).__name__])[0][:200]})") from None
    if not abis:
        raise LaunchError(f"{where} has no kernel to launch (no .amdhsa_kernel descriptor with its .amdgpu_metadata)")
    if kernel is None:
        if len(abis) != 1:
            raise LaunchError(f"{where} has {len(abis)} kernels ({', '.join(abis) or 'none'}); name one with --kernel")
        kernel = next(iter(abis))
    elif kernel not in abis:
        raise LaunchError(f"no kernel {kernel} in {where} (it has {', '.join(abis) or 'none'})")
    params = []
    for arg in (a for a in abis[kernel].kernargs if not a.hidden):
        if arg.value_kind in ("global_buffer", "dynamic_shared_pointer") or arg.address_space == "global":
            params.append((("p", ADDRESS_SPACES.get(arg.address_space, 1)), arg.name))
        else:
            params.append((("i", 8 * arg.size), arg.name))
    return kernel, params


# --- the launch ------------------------------------------------------------------------------------------------
def _spec(text: str):
    """fuzz/launch_spec.py's parse, with the dtypes it does not know (u32, ...) stood in and remembered."""
    from gfxhound.fuzz import launch_spec as LS
    real, undo = {}, []

    def stand_in(m):
        real[m["name"]] = m["dtype"]
        undo.append((f"{m['name']}: {EXTRA_DTYPES[m['dtype']]}[", m[0]))
        return undo[-1][0]
    pattern = r"(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<dtype>" + "|".join(EXTRA_DTYPES) + r")\s*\["
    try:
        spec = LS.parse(re.sub(pattern, stand_in, text))
    except LS.LaunchSpecError as exc:
        message = str(exc)
        for stood, original in undo:
            message = message.replace(stood, original)
        raise LaunchError(message) from None
    for entry in spec.entries:
        if entry.name in real:
            entry.dtype = real[entry.name]
            for stood, original in undo:
                entry.text = entry.text.replace(stood, original)
    return spec


def _evaluate_all(spec, rng):
    """Every entry's value; an entry may refer to one written after it (`n: N; N: 300`), cycles refused."""
    from gfxhound.fuzz import launch_spec as LS
    values, pending = {}, [e for e in spec.entries if e.name not in ("reference", "knobs", "tolerance")]
    while pending:
        left = []
        for entry in pending:
            try:
                values[entry.name] = _value(entry, values, rng, LS)
            except LS.LaunchSpecError as exc:
                if "is not an earlier entry" not in str(exc):
                    raise LaunchError(str(exc)) from None
                left.append((entry, exc))
        if len(left) == len(pending):
            raise LaunchError(str(left[0][1]).replace("is not an earlier entry (entries are evaluated in order)",
                                                      "is not given (nor a helper such as cdiv)"))
        pending = [e for e, _ in left]
    return values


class _Tensor:
    """A tensor entry as later entries see it (`x.stride(0)`, `x.shape[1]`, `x.numel()`), and how to draw it."""

    def __init__(self, shape, strides, entry, bounds):
        self.shape, self._strides, self.entry, self.bounds = tuple(shape), tuple(strides), entry, bounds

    def stride(self, dim):
        return self._strides[dim]

    def numel(self):
        return int(np.prod(self.shape))


def _value(entry, values, rng, LS):
    if entry.kind == "tensor":
        shape = [LS.evaluate(d, values, entry.text) for d in entry.dims]
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise LaunchError(f"launch spec entry {entry.text!r}: dimensions must be whole numbers >= 0, got {shape}")
        bounds = [LS.evaluate(v, values, entry.text) for v in entry.values] if entry.values else None
        return _Tensor(shape, LS.strides_of(shape, "row"), entry, bounds)
    if entry.kind == "range":
        lo, hi = (LS.evaluate(x, values, entry.text) for x in entry.exprs)
        return int(rng.integers(int(lo), int(hi) + 1))
    if entry.kind == "choice":
        return LS.evaluate(entry.exprs[int(rng.integers(len(entry.exprs)))], values, entry.text)
    return LS.evaluate(entry.exprs[0], values, entry.text)


def boundary_values(dtype) -> list:
    """The integer patterns every input mixes in: 0, 1, all ones, the sign bit alone, the largest signed value."""
    bits = np.dtype(dtype).itemsize * 8
    raw = [0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1]
    unsigned = np.dtype(f"u{bits // 8}")
    return [np.array(v, unsigned).view(dtype)[()] for v in raw]


def draw(dtype_name: str, shape, rng, bounds=None, role="in") -> np.ndarray:
    dtype = NUMPY.get(dtype_name)
    if dtype is None:
        raise LaunchError(f"tensor dtype {dtype_name} is not supported by emulate yet; use one of {', '.join(NUMPY)}")
    n = int(np.prod(shape)) if shape else 1
    if role == "out":
        return np.zeros(shape, dtype)
    if dtype_name == "i1":
        return rng.integers(0, 2, shape).astype(np.uint8)
    if bounds is not None:
        return rng.integers(int(bounds[0]), int(bounds[1]) + 1, shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        out = rng.standard_normal(n).astype(dtype)
        special = np.array([0.0, -0.0, 1.0, -1.0], dtype)
    else:
        bits = np.dtype(dtype).itemsize * 8
        unsigned = np.dtype(f"u{bits // 8}")
        out = rng.integers(0, 1 << bits, n, dtype=np.uint64 if bits == 64 else np.int64,
                           endpoint=False).astype(unsigned).view(dtype)
        special = np.array(boundary_values(dtype), dtype)
    pick = rng.random(n) < 0.25
    out[pick] = special[rng.integers(0, len(special), int(pick.sum()))]
    out[:min(n, len(special))] = special[:min(n, len(special))]  # every pattern at least once
    return out.reshape(shape)


def _triple(value, what) -> tuple:
    value = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not value or len(value) > 3 or not all(isinstance(v, int) and v >= 1 for v in value):
        raise LaunchError(f"{what}: want one to three whole numbers >= 1, got {value}")
    return value + (1,) * (3 - len(value))


def make_launch(text: str, params: list, seed: int = 0, block=None) -> Launch:
    """The launch a spec describes for a kernel whose parameters are ``params`` ((ir type, name) in order)."""
    spec = _spec(text)
    rng = np.random.default_rng(seed)
    values = _evaluate_all(spec, rng)
    names, args, roles = [], [], {}
    for i, (ty, name) in enumerate(params):
        name = name if name in values else f"arg{i}"  # an unnamed parameter (%0: Triton's) by position
        if name not in values:
            raise LaunchError(f"the launch spec does not give the kernel's argument "
                              f"{_param_name(params[i], i)!r} (it takes "
                              f"{', '.join(_param_name(p, k) for k, p in enumerate(params))})")
        value = values[name]
        if hasattr(value, "entry"):
            shape, entry, bounds = value, value.entry, value.bounds
            if ty[0] != "p":
                raise LaunchError(f"argument {name!r} is a by-value {_type_name(ty)}, the spec gives a tensor")
            dtype = entry.dtype if entry.dtype in NUMPY else str(values.get(entry.dtype, entry.dtype))  # `T: fp16|..`
            args.append(draw(dtype, list(shape.shape), rng, bounds, entry.role))
            roles[name] = entry.role
        else:
            if ty[0] == "p":
                raise LaunchError(f"argument {name!r} is a pointer: give it a tensor ('{name}: u32[N]')")
            if not isinstance(value, (int, float)) or isinstance(value, bool) and ty != ("i", 1):
                raise LaunchError(f"argument {name!r}: {value!r} is not a number")
            args.append(value)
        names.append(name)
    if "grid" not in values:
        raise LaunchError("the launch spec has no 'grid' entry")
    grid = _triple(values["grid"], "grid")
    given = values.get("block", block if block is not None else 64)
    return Launch(names, args, roles, grid, _triple(given, "block"), seed,
                  {k: v for k, v in values.items() if isinstance(v, (int, float))})


def _param_name(param, position) -> str:
    name = param[1]
    return name if name and not name.isdigit() else f"arg{position}"


def _type_name(ty) -> str:
    return {"i": f"i{ty[1]}", "f": f"{ty[1]}"}.get(ty[0], str(ty))
