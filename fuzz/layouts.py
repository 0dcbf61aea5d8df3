"""Layout mutation of dumped TTGIR: rewrite the encoding aliases at the top of a module, recompile the file.

Why: many of the AMD backend's bugs live in layout conversions, and the layouts Triton picks for a kernel are a
small, well-trodden part of the space. A TTGIR module names each distributed encoding once (``#blocked1 =
#ttg.blocked<{...}>``) and refers to it by name everywhere else, slices and dot operands included, so rewriting
one alias definition redistributes every tensor of that encoding consistently; the ``ttg.convert_layout`` ops
between encodings then become conversions the compiler has never been asked for.

A mutation must keep the module valid (a verifier rejection is our mistake, not a finding): every alternative
keeps the products the verifier checks (threads per warp = warp size, warps per CTA = ``ttg.num-warps``), and an
encoding is left alone when an op outside ``LAYOUT_FREE_OPS`` mentions it, because such ops (``tt.trans``,
``tt.reshape``, ``amdg.in_thread_transpose``, direct-to-LDS copies, ...) tie their result encoding to their
operand's, which changing one alias would break. Covered: ``#ttg.blocked`` (sizePerThread, threadsPerWarp,
warpsPerCTA, order), ``#ttg.amd_mfma`` (warpsPerCTA, isTransposed), ``#ttg.amd_wmma`` (the warp bases of
ctaLayout, isTranspose); a blocked alias that ``tt.trans`` derives from another one follows it. Slice and
dot-operand encodings follow their parent by name; shared, padded-shared and linear encodings are never changed.
"""
from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

MAX_ELEMS_PER_THREAD = 16  # sizePerThread products stay small: wide vectors, not register blow-ups

# Ops with tensor operands or results whose encodings are free: results share their operands' encodings by name
# (elementwise, splat, broadcast, slices of a parent, dot operands of their accumulator's parent) or take any
# encoding (loads, stores, convert_layout, shared memory). Prefix entries end with a dot. Not the buffer atomics:
# ConvertToBufferOps makes an f16/bf16 one only where the layout gives two contiguous elements a thread, and its
# lowering asserts that (``vec >= 2``) instead of verifying it.
LAYOUT_FREE_OPS = frozenset({
    "arith.", "math.", "scf.", "cf.", "ub.",
    "tt.func", "tt.return", "tt.call", "tt.make_range", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.addptr",
    "tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.reduce", "tt.scan", "tt.dot", "tt.bitcast",
    "tt.int_to_ptr", "tt.ptr_to_int", "tt.fp_to_fp", "tt.clampf", "tt.precise_sqrt", "tt.precise_divf",
    "tt.mulhiui", "tt.extern_elementwise", "tt.assert", "tt.print",
    "ttg.convert_layout", "ttg.local_alloc", "ttg.local_load", "ttg.local_store", "ttg.local_dealloc",
    "ttg.memdesc_index",
    "amdg.buffer_load", "amdg.buffer_store",
})

# Free ops that may hold values of several encodings without relating them. Any other op that mentions two
# aliases relates them (``tt.broadcast`` of #blocked1 into #blocked2 is valid where the two agree on its shape).
MIXING_OPS = frozenset({"ttg.convert_layout", "scf.", "cf.", "tt.func", "tt.return", "tt.call"})

_ALIAS = re.compile(r"^(#\w+) = #ttg\.(blocked|amd_mfma|amd_wmma)<\{(.*)\}>$", re.M)
_OP = re.compile(r'^(?:%[^=]*= )?"?([a-z_]+(?:\.[a-z_0-9]+)+)')
_TRANS = re.compile(r"order = array<i32: ([\d, ]+)>\} : tensor<[^#]*, (#\w+)> -> tensor<[^#]*, (#\w+)>")
_LIST = r"\[[\d, ]*\]"
_NESTED = r"\[(?:\[[\d, ]*\](?:, )?)*\]"


@dataclass(frozen=True)
class Mutation:
    text: str  # the mutated TTGIR
    changes: tuple  # human-readable, one per changed field; empty: nothing in the module could be mutated
    seed: int


def mutate(ttgir: str, seed: int, warp_size: int, num_warps: int) -> Mutation:
    """Rewrite 1-3 mutable encoding definitions of ``ttgir``, each to a valid alternative; deterministic in
    (ttgir, seed). The module's own ``ttg.threads-per-warp``/``ttg.num-warps`` win over the arguments, which
    must agree with them."""
    warp_size = _module_int(ttgir, "ttg.threads-per-warp", warp_size)
    num_warps = _module_int(ttgir, "ttg.num-warps", num_warps)
    rng = random.Random(seed)
    frozen, derived = _constraints(ttgir)
    aliases = {m.group(1): m for m in _ALIAS.finditer(ttgir)}
    edits = {}
    for name, m in aliases.items():
        if name not in frozen:
            options = _alternatives(m.group(2), m.group(3), warp_size, num_warps)
            if options:
                edits[name] = options
    chosen = rng.sample(sorted(edits), min(len(edits), rng.randint(1, 3)))
    bodies, changes = {}, []
    for name in chosen:
        body = aliases[name].group(3)
        options = edits[name]
        for field in rng.sample(sorted(options), rng.randint(1, min(2, len(options)))):
            old, new = _get(body, field), rng.choice(options[field])
            body = _set(body, field, new)
            changes.append(f"{name}: {field} {old} -> {new}")
        bodies[name] = body
        for target, perm in derived.get(name, ()):
            bodies[target] = _transposed(body, aliases[target].group(3), perm)
            changes.append(f"{target}: follows {name} through tt.trans")
    text = ttgir
    for name in sorted(bodies, key=lambda n: aliases[n].start(), reverse=True):  # back to front: offsets hold
        m = aliases[name]
        text = text[:m.start(3)] + bodies[name] + text[m.end(3):]
    return Mutation(text, tuple(sorted(changes)), seed)


_CRASH = re.compile(r"LLVM ERROR|Assertion .* failed|Segmentation fault|Stack dump|UNREACHABLE|core dumped|"
                    r"Aborted|PLEASE submit a bug report|signal[: ]\d+|PassManager::run failed")


def is_rejection(text: str) -> bool:
    """True when a failed compile of a mutated module stopped in Triton's parser, which also runs the verifier
    (so the mutation was invalid); False for anything that failed later or died (a compiler bug)."""
    return "Parse MLIR file failed" in text and not _CRASH.search(text)


def _constraints(ttgir: str):
    """(frozen, derived): the mutable aliases that an op outside LAYOUT_FREE_OPS mentions or that a non-mixing
    op mentions together; and for a blocked alias that ``tt.trans`` turns into another one nothing else ties,
    {source: [(target, order)]}, so that the target is rewritten as the transpose of the mutated source. A line
    closing a region (``}) : ...``) belongs to the op that opened it, so a stack tracks the openers."""
    names = {m.group(1) for m in _ALIAS.finditer(ttgir)}
    blocked = {m.group(1) for m in _ALIAS.finditer(ttgir) if m.group(2) == "blocked"}
    frozen, openers, links = set(), [], []
    for line in ttgir.splitlines():
        stripped = line.strip()
        if stripped.startswith("}"):
            op = openers[-1] if openers else None
            if not stripped.endswith("{") and openers:
                openers.pop()
        else:
            m = _OP.match(stripped)
            op = m.group(1) if m else None
            if stripped.endswith("{"):
                openers.append(op)
        trans = _TRANS.search(line) if op == "tt.trans" else None
        if trans and {trans.group(2), trans.group(3)} <= blocked and trans.group(2) != trans.group(3):
            links.append((trans.group(2), trans.group(3), tuple(_ints(trans.group(1)))))
        else:
            mentioned = set(re.findall(r"#\w+", line)) & names
            if not _layout_free(op) or (len(mentioned) > 1 and not _matches(op, MIXING_OPS)):
                frozen |= mentioned
    sources = [a for a, _, _ in links]
    targets = [b for _, b, _ in links]
    derived = {}
    for a, b, _ in links:
        if targets.count(b) > 1 or b in sources or a in targets or b in frozen:
            frozen |= {a, b}
    for a, b, perm in links:
        frozen.add(b)
        if a not in frozen:
            derived.setdefault(a, []).append((b, perm))
    return frozen, derived


def _layout_free(op) -> bool:
    return op is None or _matches(op, LAYOUT_FREE_OPS)


def _matches(op, names) -> bool:
    return op is not None and (op in names or op[:op.index(".") + 1] in names)


def _module_int(ttgir, attribute, given):
    m = re.search(rf'"{re.escape(attribute)}" = (\d+) : i32', ttgir)
    if m is None:
        return given
    if int(m.group(1)) != given:
        raise ValueError(f"{attribute} is {m.group(1)} in the module but {given} was passed")
    return given


def _get(body, field):
    if field == "warp":
        return re.search(rf"\bwarp = ({_NESTED})", body).group(1)
    return re.search(rf"\b{field} = ({_LIST}|true|false)", body).group(1)


def _set(body, field, value):
    pattern = rf"\bwarp = {_NESTED}" if field == "warp" else rf"\b{field} = (?:{_LIST}|true|false)"
    return re.sub(pattern, lambda _: f"{field} = {value}", body, count=1)


def _ints(text):
    return [int(x) for x in re.findall(r"\d+", text)]


def _fmt(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def _alternatives(kind, body, warp_size, num_warps) -> dict:
    """{field: [new value text, ...]} of the valid changes to one encoding; fields without any are left out."""
    options = {}
    if kind == "blocked":
        rank = len(_ints(_get(body, "order")))
        options = {"sizePerThread": [_fmt(s) for s in _pow2_tuples(rank, MAX_ELEMS_PER_THREAD, exact=False)],
                   "threadsPerWarp": [_fmt(s) for s in _pow2_tuples(rank, warp_size)],
                   "warpsPerCTA": [_fmt(s) for s in _pow2_tuples(rank, num_warps)],
                   "order": [_fmt(p) for p in itertools.permutations(range(rank))]}
    elif kind == "amd_mfma":
        rank = len(_ints(_get(body, "warpsPerCTA")))
        options = {"warpsPerCTA": [_fmt(s) for s in _pow2_tuples(rank, num_warps)],
                   "isTransposed": ["true", "false"]}
    elif kind == "amd_wmma":  # Triton 3.9 verifies both isTranspose values for every version (1: gfx11)
        options["isTranspose"] = ["true", "false"]
        cta = re.search(r"ctaLayout = \{(.*?)\}(?:, |$)", body)
        # one warp: `ctaLayout = {}` has no warp bases to rearrange
        bases = re.findall(r"\[([\d, ]*)\]", _get(body, "warp")[1:-1]) if cta and "warp =" in cta.group(1) else []
        if bases and re.fullmatch(rf"warp = {_NESTED}", cta.group(1)):  # register bases would have to be avoided
            rank = len(_ints(bases[0]))
            options["warp"] = [_warp_bases(w, order) for w in _pow2_tuples(rank, num_warps)
                               for order in itertools.permutations(range(rank))]
    return {field: sorted(set(values) - {_get(body, field)}) for field, values in options.items()
            if set(values) - {_get(body, field)}}


def _transposed(source, target, perm):
    """``target`` rewritten as the encoding tt.trans infers from the blocked ``source`` with ``perm``: result dim
    i is source dim perm[i], and the order names the same physical dims under their new numbers."""
    inverse = [perm.index(d) for d in range(len(perm))]
    for field in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"):
        values = _ints(_get(source, field))
        target = _set(target, field, _fmt([values[p] for p in perm]))
    return _set(target, "order", _fmt([inverse[d] for d in _ints(_get(source, "order"))]))


def _pow2_tuples(rank, total, exact=True):
    """Tuples of ``rank`` powers of two whose product is ``total`` (exact) or at most ``total``."""
    top = total.bit_length() - 1
    return [tuple(1 << e for e in exps) for exps in itertools.product(range(top + 1), repeat=rank)
            if (sum(exps) == top if exact else sum(exps) <= top)]


def _warp_bases(warps, order):
    """WMMA ctaLayout warp bases (in units of instruction tiles) for ``warps`` per dimension, the dimension
    ``order[0]`` varying fastest: what Triton prints for a plain warpsPerCTA."""
    bases = []
    for dim in order:
        for bit in range(warps[dim].bit_length() - 1):
            bases.append([1 << bit if d == dim else 0 for d in range(len(warps))])
    return "[" + ", ".join(_fmt(b) for b in bases) + "]"
