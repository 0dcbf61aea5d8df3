"""The launch spec of `gfxhound fuzz --kernel FILE::FN --launch SPEC`: what a user says about their kernel's
arguments, parsed into entries the launch drawer (fuzz/user_kernel.py) draws concrete launches from.

Why a small language of its own rather than a Python or TOML file: a kernel library's CI passes it on one command
line, next to the kernel path, and each entry reads like the argument it describes. One entry per line or `;`:

    x: fp16[M, K]                 a tensor input (random values); dims are expressions of earlier entries
    T: fp16|bf16                  a dtype drawn once ...
    w: T[K, N] col                ... for every tensor that names it; `col`: column-major (a transposed view, as
                                  `w.T` passes); `row|col`: either, drawn
    ids: i32[T] values 0..E-1     an integer tensor's value range (index tensors, expert ids)
    out: fp32[M, N] out           an output (zero-filled; compared with the reference); `inout`: both
    M: 1..300                     an integer drawn from a range (ends included; ends may be expressions)
    BLOCK_M: 16|32|64             one of these (each an expression)
    stride_xm: x.stride(0)        an expression of earlier entries: cdiv, min, max, next_power_of_2, t.stride(i),
                                  t.shape[i], t.numel()
    grid: cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)
    num_warps: 2|4|8              (default 2|4|8)       num_stages: 1..3  (default 1|2|3)
    reference: matmul_ref         a function of the kernel's file: called with every argument by name (tensors on
                                  the CPU), it returns the outputs' expected values (one tensor or a tuple, in the
                                  order the outputs are listed) or fills the output tensors it is given
    tolerance: 1e-2, 1e-3         rtol, atol of the comparison (default by the output's dtype)
    knobs: off                    no AMD compile knobs (waves_per_eu, matrix_instr_nonkdim, kpack, ...) drawn
    matrix_instr_nonkdim: 16|32   a knob named by the spec takes the spec's values (options and environment
                                  knobs alike: `AMDGCN_USE_BUFFER_OPS: 0|1`)

Entries are evaluated in order, so an entry refers only to those before it. A file (`--launch @path`) holds the
same lines, `#` starting a comment.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import dtypes as D

TENSOR = re.compile(r"^(?P<dtype>\w+)\s*\[(?P<rest>.*)$")  # the dims' closing bracket is found by _tensor_parts
NAME = re.compile(r"^[A-Za-z_]\w*$")
ROLES = ("in", "out", "inout")
TENSOR_DTYPES = ("fp32", "fp16", "bf16", "fp64", "i8", "i32", "i64", "i1") + D.FP8


class LaunchSpecError(ValueError):
    """A launch spec that cannot be used: one line saying which entry and what to write instead."""


@dataclass
class Entry:
    name: str
    kind: str  # "tensor" | "range" | "choice" | "expr"
    text: str  # as written (messages quote it)
    exprs: list = field(default_factory=list)  # range: [lo, hi]; choice: each option; expr: [expr]
    dtype: str = ""  # tensor
    dims: list = field(default_factory=list)  # tensor: dimension expressions
    role: str = "in"  # tensor: in | out | inout
    order: str = "row"  # tensor: row | col
    values: list = field(default_factory=list)  # tensor: [lo, hi] expressions of its value range, or []


@dataclass
class LaunchSpec:
    entries: list  # Entry, in the order written (evaluation order)
    text: str  # the whole spec as given (kept with every drawn launch, for the repro's docstring)

    def entry(self, name):
        return next((e for e in self.entries if e.name == name), None)


def read(argument: str) -> LaunchSpec:
    """`--launch` as given: inline entries, or `@path` to a file of them."""
    if argument.startswith("@"):
        path = argument[1:]
        try:
            with open(path) as f:
                text = f.read()
        except OSError as exc:
            raise LaunchSpecError(f"--launch @{path}: cannot read it ({exc.strerror})") from None
    else:
        text = argument
    return parse(text)


def parse(text: str) -> LaunchSpec:
    entries = []
    uncommented = [line.split("#", 1)[0] for line in text.split("\n")]  # a comment runs to its line's end, `;` too
    for raw in ";".join(uncommented).split(";"):
        line = raw.strip()
        if not line:
            continue
        if ":" not in line:
            raise LaunchSpecError(f"launch spec entry {line!r}: write it as 'name: value'")
        name, value = (part.strip() for part in line.split(":", 1))
        if not NAME.match(name):
            raise LaunchSpecError(f"launch spec entry {line!r}: {name!r} is not an argument name")
        if any(e.name == name for e in entries):
            raise LaunchSpecError(f"launch spec: {name!r} is given twice")
        if not value:
            raise LaunchSpecError(f"launch spec entry {line!r}: no value after the ':'")
        entries.append(_entry(name, value, line, {e.name for e in entries}))
    if not entries:
        raise LaunchSpecError("the launch spec is empty: describe the kernel's arguments ('x: fp16[M, K]; M: 1..300; ...')")
    spec = LaunchSpec(entries, text)
    _check_specials(spec)
    return spec


def _entry(name, value, line, earlier):
    if name in ("reference", "knobs", "tolerance"):
        return Entry(name, "expr", line, [value])
    tensor = _tensor_parts(value)
    if tensor and (tensor["dtype"] in D.DTYPES or tensor["dtype"] in earlier):
        return _tensor(name, tensor, line)
    if tensor and tensor["dtype"] not in HELPERS:
        raise LaunchSpecError(f"launch spec entry {line!r}: unknown dtype {tensor['dtype']!r}; choose from "
                              f"{', '.join(TENSOR_DTYPES)} or name an earlier entry ('T: fp16|bf16')")
    if len(_top_level(value, "|")) > 1:
        options = [o.strip() for o in _top_level(value, "|")]
        if not all(options):
            raise LaunchSpecError(f"launch spec entry {line!r}: an empty choice between '|'")
        return Entry(name, "choice", line, [_compiled(o, line) for o in options])
    if ".." in value:
        lo, hi = (part.strip() for part in value.split("..", 1))
        return Entry(name, "range", line, [_compiled(lo, line), _compiled(hi, line)])
    return Entry(name, "expr", line, [_compiled(value, line)])


def _tensor_parts(value):
    """{dtype, dims, flags} of `DTYPE[dims] flags`, the dims' brackets balanced (`fp16[x.shape[0]]`), or None."""
    match = TENSOR.match(value)
    if not match:
        return None
    depth, rest = 1, match["rest"]
    for i, ch in enumerate(rest):
        depth += (ch == "[") - (ch == "]")
        if depth == 0:
            return {"dtype": match["dtype"], "dims": rest[:i], "flags": rest[i + 1:].strip()}
    return {"dtype": match["dtype"], "dims": None, "flags": ""}


def _tensor(name, match, line):
    if match["dims"] is None:
        raise LaunchSpecError(f"launch spec entry {line!r}: the dimensions' '[' is not closed")
    dims = [d.strip() for d in _top_level(match["dims"], ",") if d.strip()]
    if not dims:
        raise LaunchSpecError(f"launch spec entry {line!r}: a tensor needs at least one dimension ('fp16[N]')")
    entry = Entry(name, "tensor", line, dtype=match["dtype"], dims=[_compiled(d, line) for d in dims])
    flags, _, values = match["flags"].partition("values")  # `values LO..HI` comes last (its ends are expressions)
    if _ or values.strip():
        if ".." not in values:
            raise LaunchSpecError(f"launch spec entry {line!r}: write the value range last, as 'values LO..HI'")
        lo, hi = values.split("..", 1)
        entry.values = [_compiled(lo.strip(), line), _compiled(hi.strip(), line)]
    words = flags.split()
    i = 0
    while i < len(words):
        word = words[i]
        if word in ROLES:
            entry.role = word
        elif word in ("row", "col", "row|col", "col|row"):
            if word != "row" and len(dims) != 2:
                raise LaunchSpecError(f"launch spec entry {line!r}: 'col' (column-major) is for 2-D tensors")
            entry.order = word
        else:
            raise LaunchSpecError(f"launch spec entry {line!r}: unknown word {word!r} after the shape; use "
                                  "in|out|inout, row, col or row|col, values LO..HI")
        i += 1
    return entry


def _top_level(text, sep):
    """`text` split at each `sep` outside parentheses and brackets (`cdiv(R, BLOCK_M), N` is two dimensions)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _compiled(expr, line):
    try:
        compile(expr, "<launch spec>", "eval")
    except SyntaxError:
        raise LaunchSpecError(f"launch spec entry {line!r}: {expr!r} is not an expression") from None
    return expr


def _check_specials(spec):
    if spec.entry("grid") is None:
        raise LaunchSpecError("the launch spec has no 'grid' entry (e.g. 'grid: cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)')")
    knobs = spec.entry("knobs")
    if knobs is not None and knobs.exprs[0] not in ("on", "off"):
        raise LaunchSpecError(f"launch spec entry {knobs.text!r}: knobs is 'on' or 'off'")
    tol = spec.entry("tolerance")
    if tol is not None:
        parts = [p.strip() for p in tol.exprs[0].split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 2 or not all(0 <= v < float("inf") for v in values):
            raise LaunchSpecError(f"launch spec entry {tol.text!r}: tolerance is 'rtol, atol', two numbers >= 0")
    if not any(e.kind == "tensor" and e.role != "in" for e in spec.entries) and spec.entry("reference"):
        raise LaunchSpecError("the launch spec names a reference but no output tensor to compare ('out: fp32[M] out')")


# --- evaluation ------------------------------------------------------------------------------------------------
class TensorShape:
    """A tensor entry as later entries see it: `x.stride(0)`, `x.shape[1]`, `x.numel()`."""

    def __init__(self, shape, strides):
        self.shape, self._strides = tuple(shape), tuple(strides)

    def stride(self, dim):
        return self._strides[dim]

    def numel(self):
        return math.prod(self.shape)


def next_power_of_2(n):
    return 1 << max(0, int(n) - 1).bit_length()


HELPERS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max, "next_power_of_2": next_power_of_2,
           "abs": abs, "int": int, "float": float, **{name: name for name in D.DTYPES}}  # `T: fp16|bf16`


def evaluate(expr, names, line):
    """An entry's expression over the entries before it (the user's own text, like the kernel file it comes with)."""
    try:
        return eval(expr, {"__builtins__": {}, **HELPERS}, dict(names))  # noqa: S307 - the user's own spec
    except NameError as exc:
        raise LaunchSpecError(f"launch spec entry {line!r}: {exc.name!r} is not an earlier entry (entries are "
                              "evaluated in order)") from None
    except Exception as exc:  # noqa: BLE001 - any failure of the user's expression is theirs
        raise LaunchSpecError(f"launch spec entry {line!r}: {expr!r} fails ({type(exc).__name__}: {exc})") from None


def strides_of(shape, order):
    if order == "col":
        return [1, shape[0]]
    strides, acc = [], 1
    for dim in reversed(shape):
        strides.insert(0, acc)
        acc *= max(1, dim)
    return strides
