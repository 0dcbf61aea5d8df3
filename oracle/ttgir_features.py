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
_INLINE = re.compile(r"#(?:ttg|triton_gpu)\.(slice|dot_op)<\{([^{}]*)\}>")
_ALIAS_USE = re.compile(r"#(\w+)\b")
_PARENT = re.compile(r"parent\s*=\s*#(\w+)")
_LOC = re.compile(r"\s*loc\(.*$")
_OP = re.compile(r'^\s*(?:%[\w#:, %]+ = )?"?([a-z_]+\.[a-z_.]+)"?')
_REGION_CLOSE = re.compile(r"^\s*\}\)")
# encoding kinds by their TTGIR names (Triton 3.4-3.9): short names for the table
_KINDS = {"blocked": "blocked", "amd_mfma": "mfma", "amd_wmma": "wmma", "nvidia_mma": "mma", "linear": "linear",
          "swizzled_shared": "shared", "padded_shared": "shared", "shared": "shared", "nvmma_shared": "shared",
          "amd_rotating_shared": "shared", "slice": "slice", "dot_op": "dot_op"}
_DIALECT_ONLY = ("arith", "math")  # elementwise dialects: counted by dialect, not op by op


def _kind_of(name: str, body: str, aliases: dict) -> str:
    kind = _KINDS.get(name, name)
    if kind in ("slice", "dot_op"):
        parent = _PARENT.search(body)
        inner = aliases.get(parent.group(1), "?") if parent else "?"
        return f"{kind}({inner})"
    return kind


def encodings(ttgir: str) -> dict:
    """alias -> kind, for the module's `#name = #ttg.kind<...>` definitions (parents resolved)."""
    aliases = {}
    for m in _ALIAS.finditer(ttgir):  # definitions precede their users
        aliases[m.group(1)] = _kind_of(m.group(2), m.group(3), aliases)
    return aliases


def _line_kinds(line: str, aliases: dict) -> set:
    kinds = {_kind_of(m.group(1), m.group(2), aliases) for m in _INLINE.finditer(line)}
    stripped = _INLINE.sub("", line)
    kinds |= {aliases[m.group(1)] for m in _ALIAS_USE.finditer(stripped) if m.group(1) in aliases}
    return kinds


def _op_name(op: str) -> str:
    dialect, _, rest = op.partition(".")
    if dialect == "amdgpu":  # Triton < 3.7 spelled the AMD dialect out
        op, dialect = "amdg." + rest, "amdg"
    return dialect if dialect in _DIALECT_ONLY else op


def features(ttgir: str) -> set:
    """The kernel's TTGIR features: each op alone and with each encoding kind on its line, e.g. {"tt.reduce",
    "tt.reduce@mfma", "tt.reduce@slice(mfma)", "scf.if:ptr"}."""
    aliases = encodings(ttgir)
    out, pending = set(), []  # pending: region ops whose types come on their closing line
    for raw in ttgir.splitlines():
        line = _LOC.sub("", raw)
        if not line.strip() or line.lstrip().startswith(("#", "module", "}", "^")) and not _REGION_CLOSE.match(line):
            continue
        if _REGION_CLOSE.match(line):
            if pending:
                op = pending.pop()
                out |= {op} | {f"{op}@{k}" for k in _line_kinds(line, aliases)}
            continue
        m = _OP.match(line)
        if not m:
            continue
        op = _op_name(m.group(1))
        if line.rstrip().endswith("({"):  # a generic op with a region: tt.reduce, tt.scan, ...
            pending.append(op)
            continue
        out |= {op} | {f"{op}@{k}" for k in _line_kinds(line, aliases)}
        out |= _pointer_features(op, line)
    return out


def _pointer_features(op: str, line: str) -> set:
    """Pointers through control flow: what the AMD pointer canonicalisation and buffer-op conversion must handle."""
    if op not in ("scf.if", "scf.for", "scf.while", "scf.yield", "tt.func", "cf.br", "cf.cond_br"):
        return set()
    out = set()
    if op == "tt.func":
        return {"tt.func:ptr_arg_range"} if "tt.pointer_range" in line else set()
    results = line.split("->", 1)[1] if "->" in line else line
    if re.search(r"tensor<[^<>]*!tt\.ptr", results):
        out.add(f"{op}:tensor_of_ptr")
    if re.search(r"(?<!x)!tt\.ptr<", re.sub(r"tensor<[^<>]*!tt\.ptr<[^<>]*>[^<>]*>", "", results)):
        out.add(f"{op}:ptr")
    return out
