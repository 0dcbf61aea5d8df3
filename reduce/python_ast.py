"""Statement-level reduction of a Python kernel file: delete statements, unwrap `if`s and loops, drop unused
parameters (with what the function's callers pass for them) and keyword arguments, keeping each change after
which the failure stays the same.

Why hand-written, next to C-Vise: C-Vise's passes work on lines and tokens, and Python's indentation and data
flow defeat them. A line deleted from under an `if` leaves a block without a body, a definition deleted leaves a
NameError, so most candidates are not even valid Python; measured on two kernel files whose compile crashed
Triton (docs/shapes.md), C-Vise took 160 -> 38 and 38 -> 30 lines in 7 and 3 minutes and kept every parameter.
Working on the syntax tree, every candidate is valid Python, a compound statement goes whole or gives up its
body, and a parameter goes once nothing uses it (the snippet then drops it from the compile's signature).
Greedy first-improvement in the order of Hypothesis's and C-Reduce's shrinkers: big deletions first, the tree
walked again after each success, until a whole walk changes nothing.
"""
from __future__ import annotations

import ast
import copy
import time
from concurrent.futures import ThreadPoolExecutor


def _bodies(tree):
    """(node, field) of every statement list in the tree, outermost first."""
    out = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                out.append((node, field))
    return out


def _names_used(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _edits(tree):
    """Candidate edits, biggest first: each a function of a fresh copy of the tree that applies one change."""
    edits = []
    bodies = _bodies(tree)
    for b, (node, field) in enumerate(bodies):
        stmts = getattr(node, field)
        for i, stmt in enumerate(stmts):
            edits.append((len(ast.unparse(stmt)), ("delete", b, i)))
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
                edits.append((len(ast.unparse(stmt)) - 1, ("unwrap", b, i)))
                if getattr(stmt, "orelse", None):
                    edits.append((len(ast.unparse(stmt)) - 1, ("else", b, i)))
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for f, fn in enumerate(functions):
        used = _names_used(ast.Module(body=fn.body, type_ignores=[]))
        for a, arg in enumerate(fn.args.args):
            if arg.arg not in used:
                edits.append((len(arg.arg), ("param", f, a)))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for c, call in enumerate(calls):
        for k, _ in enumerate(call.keywords):
            edits.append((1, ("keyword", c, k)))
    edits.sort(key=lambda e: -e[0])
    return [e for _, e in edits]


def _apply(tree, edit):
    tree = copy.deepcopy(tree)
    kind, x, y = edit
    if kind in ("delete", "unwrap", "else"):
        node, field = _bodies(tree)[x]
        stmts = getattr(node, field)
        stmt = stmts[y]
        replacement = [] if kind == "delete" else stmt.body if kind == "unwrap" else stmt.orelse
        stmts[y:y + 1] = replacement
        if not stmts:
            if field == "body" or not isinstance(node, (ast.If, ast.For, ast.While, ast.Try)):
                stmts.append(ast.Pass())
    elif kind == "param":
        fn = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)][x]
        defaults = fn.args.defaults
        first_default = len(fn.args.args) - len(defaults)
        if y >= first_default:
            del defaults[y - first_default]
        elif defaults:
            return None  # a parameter before the defaulted ones cannot go without shifting them
        name = fn.args.args[y].arg
        del fn.args.args[y]
        for call in ast.walk(tree):  # the function's callers pass one argument less (a jit helper's call sites)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == fn.name:
                if len(call.args) > y and not any(isinstance(a, ast.Starred) for a in call.args):
                    del call.args[y]
                call.keywords = [k for k in call.keywords if k.arg != name]
    elif kind == "keyword":
        call = [n for n in ast.walk(tree) if isinstance(n, ast.Call)][x]
        del call.keywords[y]
    return tree


def render(tree) -> str:
    """The module as text, top-level definitions two blank lines apart as PEP 8 writes them."""
    out = []
    for stmt in tree.body:
        text = ast.unparse(ast.fix_missing_locations(stmt))
        if out and (isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) or out[-1][1]):
            out.append(("\n", False))
        out.append((text, isinstance(stmt, (ast.FunctionDef, ast.ClassDef))))
    return "\n".join(t for t, _ in out) + "\n"


def reduce_python(source: str, interesting, jobs: int = 2, log=None, deadline=None) -> str:
    """The smallest source this greedy walk finds for which `interesting(text)` holds (`source` must hold)."""
    tree = ast.parse(source)
    best = render(tree)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        progress = True
        while progress and (deadline is None or time.time() < deadline):
            progress = False
            edits = _edits(tree)
            for start in range(0, len(edits), max(1, jobs)):
                if deadline is not None and time.time() > deadline:
                    break
                batch = [t for t in (_apply(tree, e) for e in edits[start:start + max(1, jobs)]) if t is not None]
                texts = []
                for t in batch:
                    try:
                        text = render(t)
                        if text != best:  # an edit that changes nothing (a lone `pass` replaced by `pass`)
                            texts.append((t, text))
                    except Exception:  # noqa: BLE001 - an edit the unparser cannot render: skipped
                        continue
                results = list(pool.map(lambda tt: interesting(tt[1]), texts))
                kept = next((tt for tt, ok in zip(texts, results) if ok), None)
                if kept is not None:
                    tree, best = kept
                    progress = True
                    if log:
                        log(f"source: {sum(1 for line in best.splitlines() if line.strip())} lines")
                    break
    return best
