"""Make reduced LLVM IR read like a hand-written test case, keeping what it shows.

Why: `llvm-reduce` replaces operands with `null` and `0` and keeps the module's datalayout; a maintainer reads an
atomic on a null pointer as an over-reduced test and the datalayout as noise (a cold review of the buffer_inv
draft asked for both to go). Each rewrite here is kept only when the code generator still shows the property on
the result (the caller's `keeps`), so polishing never trades the bug for looks. Hand-written because these are
three line-level rewrites of a few-line module, which llvm-reduce's passes go the other way on.
"""
from __future__ import annotations

import re

DEFINE = re.compile(r"^define\b[^@\n]*@[\w.$]+\(.*$", re.M)
NULL_PTR = re.compile(r"\bptr addrspace\((\d+)\) null\b")
RMW_VALUE = re.compile(r"^(\s*%[\w.]+ = atomicrmw (?:volatile )?\w+ ptr(?: addrspace\(\d+\))? %[\w.]+, )(i\d+|float|"
                       r"double|half|bfloat) (-?[\d.e+-]+|0x[0-9A-Fa-f]+)\b", re.M)


def _params(line: str) -> "tuple[int, int]":
    """Where a define line's parameter list starts and ends (its parentheses balanced: `ptr addrspace(1) %p`)."""
    start = line.index("(", line.index("@")) + 1
    depth = 1
    for at in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[at], 0)
        if depth == 0:
            return start, at
    raise ValueError(f"unbalanced define line: {line}")


def _add_args(text: str, args: list) -> str:
    """`text` with `args` ("ptr addrspace(1) %p0", ...) appended to its (first) kernel's parameters."""
    found = DEFINE.search(text)
    if not found or not args:
        return text
    line = found.group(0)
    start, end = _params(line)
    params = ", ".join(a for a in [line[start:end].strip(), *args] if a)
    return text[:found.start()] + line[:start] + params + line[end:] + text[found.end():]


def without_datalayout(text: str) -> str:
    return re.sub(r"^target datalayout = .*\n", "", text, flags=re.M)


def null_pointers_as_arguments(text: str) -> str:
    """Each `ptr addrspace(N) null` operand in the function bodies becomes a kernel argument of its own."""
    found = DEFINE.search(text)
    if not found:
        return text
    head, body = text[:found.end()], text[found.end():]
    args = []

    def fresh(match):
        args.append(f"ptr addrspace({match.group(1)}) %p{len(args)}")
        return args[-1]
    end = body.find("\n}")
    body = NULL_PTR.sub(fresh, body[:end]) + body[end:] if end >= 0 else body
    return _add_args(head, args) + body


def constant_values_as_arguments(text: str) -> str:
    """An atomicrmw's constant value operand becomes a kernel argument (`or 0` is an idempotent update that code
    generators may fold into a load, which is not the test case's point)."""
    args = []

    def fresh(match):
        args.append(f"{match.group(2)} %v{len(args)}")
        return match.group(1) + args[-1]
    found = DEFINE.search(text)
    if not found:
        return text
    head, body = text[:found.end()], text[found.end():]
    body = RMW_VALUE.sub(fresh, body)
    return _add_args(head, args) + body


STEPS = (("datalayout removed", without_datalayout), ("null pointers made arguments", null_pointers_as_arguments),
         ("constant atomic values made arguments", constant_values_as_arguments))


def polish(text: str, keeps) -> "tuple[str, list]":
    """The text after every step that `keeps(candidate_text)` accepts, and the names of those steps."""
    done = []
    for name, step in STEPS:
        try:
            candidate = step(text)
        except ValueError:  # a define line this rewrite cannot read: leave the text as llvm-reduce left it
            continue
        if candidate != text and keeps(candidate):
            text = candidate
            done.append(name)
    return text, done
