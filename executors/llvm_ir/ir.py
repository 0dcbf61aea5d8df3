"""A reader for the subset of LLVM IR text that Triton's AMD backend emits (the `.llir` of a compile).

Why our own reader: the LLVM IR Python bindings that exist (llvmlite) parse with their own, older LLVM, and
Triton's IR comes from a newer one (`getelementptr nuw`, `icmp samesign`, `f0x` float literals, `splat (...)`);
a version skew would turn every kernel into a parse error. What this reader meets and does not know, it names
(`NotModelled`), so the kernel is `unresolved`, never misread.

Types are tuples: ('i', bits), ('f', 'half'|'bfloat'|'float'|'double'), ('p', addrspace), ('v', n, elem),
('a', n, elem), ('s', (field, ...)), ('void',), ('label',). Operands are tuples: ('%', name) a local value,
('c', type, value) a constant (value: int, float bits as int, list for vectors, None for undef/poison/zero),
('g', name) a global's address, ('ce', type, op, operands) a constant expression.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import NotModelled
from .ir_tokens import BINARY, CASTS, FLOAT_BITS, NAMED_TYPES, _Line



@dataclass(slots=True)
class Ins:
    op: str
    res: str | None
    ty: tuple
    ops: list
    extra: dict = field(default_factory=dict)
    line: int = 0


@dataclass
class Block:
    name: str
    phis: list
    body: list          # the instructions after the phis, the terminator last


@dataclass
class Function:
    name: str
    params: list        # (type, name)
    blocks: dict        # name -> Block, in text order
    entry: str


@dataclass
class Module:
    functions: dict
    globals: dict       # name -> (type, addrspace, initializer bytes or None)


def sizeof(ty) -> int:
    kind = ty[0]
    if kind == "i":
        return max(1, (ty[1] + 7) // 8)
    if kind == "f":
        return FLOAT_BITS[ty[1]] // 8
    if kind == "p":
        return {3: 4, 5: 4, 8: 16, 7: 32}.get(ty[1], 8)
    if kind == "v":
        return ty[1] * sizeof(ty[2]) if ty[2][0] != "i" or ty[2][1] >= 8 else (ty[1] * ty[2][1] + 7) // 8
    if kind == "a":
        return ty[1] * sizeof(ty[2])
    if kind == "s":
        return sum(sizeof(t) for t in ty[1])
    raise NotModelled(f"size of type {ty}")


def parse(text: str) -> Module:
    functions, globals_ = {}, {}
    lines = text.splitlines()
    NAMED_TYPES.clear()
    for number, line in enumerate(lines):
        named = re.match(r"^(%[-\w.$]+) = type (.*)$", line)
        if named:
            NAMED_TYPES[named.group(1)] = _Line(named.group(2), number + 1).type()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("@"):
            name, rest = line.split("=", 1)
            space = re.search(r"addrspace\((\d+)\)", rest)
            init = re.search(r'c"((?:[^"])*)"', rest)
            globals_[name.strip()[1:]] = (int(space.group(1)) if space else 0,
                                          _cstring(init.group(1)) if init else None)
        elif line.startswith("define"):
            end = i + 1
            while not lines[end].startswith("}"):
                end += 1
            fn = _function(lines, i, end)
            functions[fn.name] = fn
            i = end
        i += 1
    return Module(functions, globals_)


def _cstring(body):
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), body).encode("latin-1")


def _function(lines, start, end) -> Function:
    head = lines[start]
    name = re.search(r"@([-\w.$]+)\(", head).group(1)
    params = []
    inside = head[head.index("(", head.index("@")) + 1:head.rindex(")")]
    for part in _split_params(inside):
        cursor = _Line(part, start + 1)
        ty = cursor.type()
        pname = [t for t in cursor.toks if t.startswith("%")]
        params.append((ty, pname[-1][1:] if pname else None))
    blocks, current, order = {}, None, []
    first_label = str(len(params))  # an unnamed entry block takes the number after the parameters' %0..%n-1
    pending = ""
    for number in range(start + 1, end):
        raw = lines[number]
        text = raw.split(";", 1)[0].rstrip() if ";" in raw and '"' not in raw else raw.rstrip()
        if pending or text.lstrip().startswith("switch"):  # a switch spans lines up to its closing ']'
            pending += " " + text
            if "]" not in text:
                continue
            text, pending = pending, ""
        if not text.strip():
            continue
        label = re.match(r"^([-\w.$]+):", text)
        if label:
            current = Block(label.group(1), [], [])
            blocks[current.name] = current
            order.append(current.name)
            continue
        if current is None:
            current = Block(first_label, [], [])
            blocks[current.name] = current
            order.append(current.name)
        ins = _instruction(text, number + 1)
        (current.phis if ins.op == "phi" else current.body).append(ins)
    return Function(name, params, blocks, order[0])


def _split_params(text):
    depth, part, parts = 0, "", []
    for ch in text:
        depth += ch in "(<[{"
        depth -= ch in ")>]}"
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    if part.strip():
        parts.append(part)
    return parts


def _instruction(text, number) -> Ins:
    line = _Line(text, number)
    res = None
    if line.peek().startswith("%") and line.peek(1) == "=":
        res = line.next()[1:]
        line.next()
    line.skip_flags()
    op = line.next()
    ins = _PARSERS.get(op)
    if ins is None:
        raise NotModelled(f"instruction {op!r}")
    out = ins(line, op, res)
    out.line = number
    return out


def _binary(line, op, res):
    flags = line.skip_flags()
    ty = line.type()
    a = line.value(ty)
    line.expect(",")
    return Ins(op, res, ty, [a, line.value(ty)], {"flags": flags} if flags else {})


def _fneg(line, op, res):
    line.skip_flags()
    ty = line.type()
    return Ins(op, res, ty, [line.value(ty)])


def _cmp(line, op, res):
    flags = line.skip_flags()
    pred = line.next()
    ty = line.type()
    a = line.value(ty)
    line.expect(",")
    rty = ("v", ty[1], ("i", 1)) if ty[0] == "v" else ("i", 1)
    return Ins(op, res, rty, [a, line.value(ty)], {"pred": pred, "opty": ty, "flags": flags})


def _select(line, op, res):
    line.skip_flags()
    cty, c = line.typed_value()
    line.expect(",")
    ty, a = line.typed_value()
    line.expect(",")
    _, b = line.typed_value()
    return Ins(op, res, ty, [c, a, b])


def _cast(line, op, res):
    flags = line.skip_flags()
    fty, v = line.typed_value()
    line.expect("to")
    return Ins(op, res, line.type(), [v], {"from": fty, "flags": flags})


def _phi(line, op, res):
    line.skip_flags()
    ty = line.type()
    incoming = []
    while line.eat("["):
        v = line.value(ty)
        line.expect(",")
        incoming.append((line.next()[1:], v))
        line.expect("]")
        line.eat(",")
    return Ins(op, res, ty, [v for _, v in incoming], {"from": [b for b, _ in incoming]})


def _br(line, op, res):
    if line.eat("label"):
        return Ins(op, res, ("void",), [], {"targets": [line.next()[1:]]})
    cty, c = line.typed_value()
    line.expect(",")
    line.expect("label")
    t = line.next()[1:]
    line.expect(",")
    line.expect("label")
    return Ins(op, res, ("void",), [c], {"targets": [t, line.next()[1:]]})


def _switch(line, op, res):
    ty, value = line.typed_value()
    line.expect(",")
    line.expect("label")
    default = line.next()[1:]
    line.expect("[")
    cases = []
    while not line.eat("]"):
        cty = line.type()
        constant = line.value(cty)
        line.expect(",")
        line.expect("label")
        cases.append((constant[2], line.next()[1:]))
    return Ins(op, res, ("void",), [value], {"targets": [default] + [t for _, t in cases],
                                            "cases": [c for c, _ in cases], "bits": ty[1]})


def _ret(line, op, res):
    return Ins(op, res, ("void",), [])


def _unreachable(line, op, res):
    return Ins(op, res, ("void",), [])


def _ordering(line):
    extra = {}
    if line.eat("syncscope"):
        line.expect("(")
        extra["scope"] = line.next().strip('"')
        line.expect(")")
    while line.peek() in ("unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst"):
        extra.setdefault("order", []).append(line.next())
    return extra


def _load(line, op, res):
    atomic = line.eat("atomic")
    line.skip_flags()
    ty = line.type()
    line.expect(",")
    pty, p = line.typed_value()
    extra = {"space": pty[1], "atomic": atomic, **_ordering(line)}
    return Ins(op, res, ty, [p], extra)


def _store(line, op, res):
    atomic = line.eat("atomic")
    line.skip_flags()
    ty, v = line.typed_value()
    line.expect(",")
    pty, p = line.typed_value()
    return Ins(op, res, ("void",), [v, p], {"space": pty[1], "vty": ty, "atomic": atomic, **_ordering(line)})


def _gep(line, op, res):
    flags = line.skip_flags()
    src = line.type()
    line.expect(",")
    pty, base = line.typed_value()
    indices = []
    while line.eat(","):
        if line.peek() == "align":
            break
        line.skip_flags()
        ity, idx = line.typed_value()
        indices.append((ity, idx))
    return Ins(op, res, pty, [base] + [v for _, v in indices], {"src": src, "itys": [t for t, _ in indices],
                                                                "flags": flags})


def _extractelement(line, op, res):
    vty, v = line.typed_value()
    line.expect(",")
    ity, idx = line.typed_value()
    return Ins(op, res, vty[2], [v, idx], {"n": vty[1]})


def _insertelement(line, op, res):
    vty, v = line.typed_value()
    line.expect(",")
    _, e = line.typed_value()
    line.expect(",")
    _, idx = line.typed_value()
    return Ins(op, res, vty, [v, e, idx])


def _shufflevector(line, op, res):
    vty, a = line.typed_value()
    line.expect(",")
    _, b = line.typed_value()
    line.expect(",")
    mty, mask = line.typed_value()
    n = mty[1]
    items = mask[2] if mask[2] is not None else [0] * n
    return Ins(op, res, ("v", n, vty[2]), [a, b], {"mask": [(-1 if m is None else m) for m in items], "n": vty[1]})


def _extractvalue(line, op, res):
    aty, v = line.typed_value()
    idx = []
    while line.eat(","):
        idx.append(int(line.next()))
    ty = aty
    for k in idx:
        ty = ty[1][k] if ty[0] == "s" else ty[2]
    return Ins(op, res, ty, [v], {"idx": idx, "aty": aty})


def _insertvalue(line, op, res):
    aty, v = line.typed_value()
    line.expect(",")
    _, e = line.typed_value()
    idx = []
    while line.eat(","):
        idx.append(int(line.next()))
    return Ins(op, res, aty, [v, e], {"idx": idx})


def _call(line, op, res):
    line.skip_flags()
    while line.peek() in ("fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"):
        line.next()
    line.skip_attrs()
    ty = line.type()
    callee = line.next()
    if callee == "asm":  # inline assembly: its text is the callee (the executor knows a few, e.g. s_trap)
        while line.peek() in ("sideeffect", "alignstack", "inteldialect", "unwind"):
            line.next()
        callee = "asm:" + line.next().strip('"')
        line.expect(",")
        line.next()  # the constraint string
    elif not callee.startswith("@"):
        raise NotModelled(f"indirect call at IR line {line.number}")
    line.expect("(")
    args, tys, noundef = [], [], []
    while not line.eat(")"):
        aty = line.type()
        noundef.append(line.skip_attrs())
        v = line.value(aty)
        args.append(v)
        tys.append(aty)
        line.eat(",")
    return Ins(op, res, ty, args, {"callee": callee if callee.startswith("asm:") else callee[1:], "tys": tys,
                                   "noundef": noundef})


def _atomicrmw(line, op, res):
    line.skip_flags()
    kind = line.next()
    pty, p = line.typed_value()
    line.expect(",")
    ty, v = line.typed_value()
    return Ins(op, res, ty, [p, v], {"kind": kind, "space": pty[1], **_ordering(line)})


def _cmpxchg(line, op, res):
    line.skip_flags()
    pty, p = line.typed_value()
    line.expect(",")
    ty, cmp = line.typed_value()
    line.expect(",")
    _, new = line.typed_value()
    return Ins(op, res, ("s", (ty, ("i", 1))), [p, cmp, new], {"space": pty[1], "vty": ty, **_ordering(line)})


def _fence(line, op, res):
    return Ins(op, res, ("void",), [], _ordering(line))


def _freeze(line, op, res):
    ty, v = line.typed_value()
    return Ins(op, res, ty, [v])


_PARSERS = {**{op: _binary for op in BINARY}, **{op: _cast for op in CASTS},
            "fneg": _fneg, "icmp": _cmp, "fcmp": _cmp, "select": _select, "phi": _phi, "br": _br, "switch": _switch, "ret": _ret,
            "unreachable": _unreachable, "load": _load, "store": _store, "getelementptr": _gep,
            "extractelement": _extractelement, "insertelement": _insertelement, "shufflevector": _shufflevector,
            "extractvalue": _extractvalue, "insertvalue": _insertvalue, "call": _call, "atomicrmw": _atomicrmw,
            "cmpxchg": _cmpxchg, "fence": _fence, "freeze": _freeze}
