"""What a compiled kernel's TTGIR exercises: each op with the encoding kinds of the tensors it touches
(`tt.reduce@mfma`, `ttg.local_load@dot_op(mfma)`, `arith@slice(mfma)`), and the constructs the AMD passes treat
specially (`scf.if` yielding pointers, loops carrying pointers, buffer ops, async copies, descriptors).

Why a module of its own: the generator's own features (fuzz/features.py) say what the kernel *asked* for; bugs
live in what the compiler *made* of it (a reduction lands on an MFMA layout only when it reduces a dot's result,
a pointer reaches an `scf.if` only when the canonicalisation left it there). The campaign counts these as coverage
(`detail:ttgir:...`), floors guard some (fuzz/floors.py), and the same table computed from real kernels says how
much of their TTGIR a campaign reaches. Parsing is by lines on purpose: the TTGIR printer's custom forms vary
between Triton releases, but one op per line and `#alias = #ttg.kind<...>` definitions hold in all of them.
"""
from __future__ import annotations

import re

_ALIAS = re.compile(r"^#(\w+) = #(?:ttg|triton_gpu|ttng|amdg|amdgpu)\.(\w+)<(.*)>\s*$", re.M)
_PARENT = re.compile(r"parent\s*=\s*(#.*)")  # the rest: a nested encoding is parsed from it
_LOC = re.compile(r"\s*loc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")  # loc(...) with up to two nested levels
_OP = re.compile(r'^\s*(?:%[\w#:, %]+ = )?"?([a-z_][a-z_0-9]*\.[a-z_0-9.]+)"?')
_REGION_CLOSE = re.compile(r"^\s*\}\)")
_FLOAT = re.compile(r"^(?:f\d+|bf16|f8\w*|tf32)$")
# encoding kinds by their TTGIR names (Triton 3.4-3.9): short names for the table
_KINDS = {"blocked": "blocked", "amd_mfma": "mfma", "amd_wmma": "wmma", "nvidia_mma": "mma", "linear": "linear",
          "swizzled_shared": "shared", "padded_shared": "shared", "shared": "shared", "nvmma_shared": "shared",
          "amd_rotating_shared": "shared", "slice": "slice", "dot_op": "dot_op"}
_DIALECT_ONLY = ("arith", "math")  # elementwise dialects: counted by dialect, not op by op
_DIALECTS = {"amdgpu": "amdg", "triton_gpu": "ttg"}  # older releases' spellings (3.4-3.6)
_TARGET = re.compile(r'"?(?:ttg|triton_gpu)\.target"?\s*=\s*"hip:(gfx\w+)"')
_CELL = re.compile(r"^[a-z_][\w.]*@[\w()]+$")  # `op@kind`: a cell of the reach matrix (fuzz/reach_cells.py)


def _kind_of(name: str, body: str, aliases: dict) -> str:
    kind = _KINDS.get(name, name)
    if kind in ("slice", "dot_op"):
        parent = _PARENT.search(body)
        return f"{kind}({_encoding_kind(parent.group(1), aliases) if parent else '?'})"
    return kind


def _encoding_kind(text: str, aliases: dict) -> str:
    """The kind of an encoding as written in a type: an alias (`#mma`) or inline (`#ttg.slice<{..., parent = ...}>`,
    nested slices included)."""
    m = re.match(r"#(?:ttg|triton_gpu|amdg|amdgpu)\.(\w+)<(.*)", text, re.S)
    if m:
        return _kind_of(m.group(1), m.group(2), aliases)
    name = re.match(r"#(\w+)", text)
    return aliases.get(name.group(1), "?") if name else "?"


def encodings(ttgir: str) -> dict:
    """alias -> kind, for the module's `#name = #ttg.kind<...>` definitions (parents resolved)."""
    aliases = {}
    for m in _ALIAS.finditer(ttgir):  # definitions precede their users
        aliases[m.group(1)] = _kind_of(m.group(2), m.group(3), aliases)
    return aliases


def _types(line: str):
    """(element type, encoding text) of every `tensor<...>` and `!ttg.memdesc<...>` on the line, brackets matched."""
    for m in re.finditer(r"(tensor|memdesc)<", line):
        depth, i = 1, m.end()
        while i < len(line) and depth:
            depth += {"<": 1, ">": -1}.get(line[i], 0)
            i += 1
        body = line[m.end():i - 1]
        shape, _, enc = body.partition(", ")
        yield shape.rsplit("x", 1)[-1], enc.split(", #smem")[0]


def _line_kinds(line: str, aliases: dict, floats_only=False) -> set:
    return {_encoding_kind(enc, aliases) for elem, enc in _types(line)
            if enc and (not floats_only or _FLOAT.match(elem))}


def _op_name(op: str) -> str:
    dialect, _, rest = op.partition(".")
    if dialect in _DIALECTS:
        dialect = _DIALECTS[dialect]
        op = f"{dialect}.{rest}"
    return dialect if dialect in _DIALECT_ONLY else op


def _op_features(op: str, line: str, aliases: dict) -> set:
    """The op alone, with each layout kind on its line, and with each kind of its floating-point tensors
    (`tt.expand_dims:float@slice(mfma)`: a value, not the index and mask arithmetic every store has)."""
    out = {op} | {f"{op}@{k}" for k in _line_kinds(line, aliases)}
    out |= {f"{op}:float@{k}" for k in _line_kinds(line, aliases, floats_only=True)}
    if op in ("ttg.convert_layout", "ttg.local_alloc"):  # where a value goes: a dot result into a dot operand
        kinds = [_encoding_kind(enc, aliases) for elem, enc in _types(line) if enc and _FLOAT.match(elem)]
        if op == "ttg.convert_layout" and len(kinds) == 2:
            out.add(f"{op}:{kinds[0]}->{kinds[1]}")
        elif op == "ttg.local_alloc" and kinds:
            out.add(f"{op}:{kinds[0]}->shared")
    return out


def features(ttgir: str) -> set:
    """The kernel's TTGIR features: each op alone and with each encoding kind on its line, e.g. {"tt.reduce",
    "tt.reduce@mfma", "tt.reduce@slice(mfma)", "scf.if:ptr"}; each `op@kind` also with the module's target in front
    (`gfx942:tt.reduce@mfma`), so that a campaign over several targets says which target reached a cell of the reach
    matrix (fuzz/reach.py): a campaign's coverage table counts kernels per feature, never per target and feature."""
    aliases = encodings(ttgir)
    out, pending = set(), []  # pending: region ops whose types come on their closing line
    for raw in ttgir.splitlines():
        line = _LOC.sub("", raw)
        if not line.strip() or line.lstrip().startswith(("#", "module", "}", "^")) and not _REGION_CLOSE.match(line):
            continue
        if _REGION_CLOSE.match(line):
            if pending:
                out |= _op_features(pending.pop(), line, aliases)
            continue
        m = _OP.match(line)
        if not m:
            continue
        op = _op_name(m.group(1))
        if line.rstrip().endswith("({"):  # a generic op with a region: tt.reduce, tt.scan, ...
            pending.append(op)
            continue
        out |= _op_features(op, line, aliases) | _pointer_features(op, line)
    target = _TARGET.search(ttgir)
    if target:
        out |= {f"{target.group(1)}:{f}" for f in out if _CELL.match(f)}
    return out


def _pointer_features(op: str, line: str) -> set:
    """Pointers through control flow: what the AMD pointer canonicalisation and buffer-op conversion must handle."""
    if op not in ("scf.if", "scf.for", "scf.while", "scf.yield", "tt.func", "cf.br", "cf.cond_br"):
        return set()
    out = set()
    if op == "tt.func":
        return {"tt.func:ptr_arg_range"} if "tt.pointer_range" in line else set()
    results = line.split("->", 1)[1] if "->" in line else line
    if re.search(r"tensor<[^<>]*x!tt\.ptr", results):
        out.add(f"{op}:tensor_of_ptr")
    if re.search(r"(?<!x)!tt\.ptr<", results):  # a scalar pointer (a tensor's element type follows an "x")
        out.add(f"{op}:ptr")
    return out
