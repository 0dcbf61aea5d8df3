"""The text of an issue draft: a readable title from a compiler's message, the part of a failure's output a
maintainer reads, and the Triton snippet that compiles a kernel as the runtime would.

Why apart from drafts.py: these are pure functions of text, tested on their own; drafts.py decides what a draft
says and checks it by running it.
"""
from __future__ import annotations

import ast
import re
import textwrap

from gfxhound.oracle.repro.snippet import constants, triton_snippet  # noqa: F401  (drafts read them here)

ASSERTION = re.compile(r"Assertion [`'](.+?)' failed")
# lines of an IR dump or a stack trace: what a compiler prints after its message, not what a reader needs first
NOISE = re.compile(r"^(\s|#|%|\^|\}|\{|module |tt\.func|llvm\.|func\.|[0-9]+ +0x|Stack dump|PLEASE submit|"
                   r"external_resources|mlir_reproducer|pipeline:|disable_threading|verify_each|\{-#|#-\})")


def headline(message: str, limit: int = 100) -> str:
    """What a title says of a failure: the assertion that failed (with the source file it sits in, when the
    message names one), else LLVM's own error, else the last diagnostic; cut at a word."""
    found = ASSERTION.search(message)
    if found:
        where = re.search(r"([A-Za-z_]\w*\.(?:cpp|h|hpp|td))\b", message)  # the source file, not a C++ name
        place = f" failed in {where.group(1)}" if where else " failed"
        condition = re.sub(r"\s+", " ", found.group(1)).strip()
        room = limit - len("assertion ``") - len(place)
        if len(condition) > room:  # cut the condition, never the file that names where
            condition = condition[:max(10, room - 4)].rsplit(" ", 1)[0] + " ..."
        return f"assertion `{condition}`{place}"
    if re.search(r"Failures have been detected while processing an MLIR pass pipeline(?: \[pass [^\]]+\])?\s*$",
                 message) and " | " in message and "error:" not in message.split(" | ")[0]:
        return "fails without a diagnostic of its own"  # the pass failed and said nothing (the pass is the title's)
    error = re.search(r"LLVM ERROR: ([^|\n]+)", message)
    # LLVM's own words, prefix included: LLVM titles quote the message (docs/upstream-style.md)
    text = f"LLVM ERROR: {error.group(1).strip()}" if error else message.split(" | ")[-1]
    text = re.sub(r"\s*\[signal:N\]$", "", re.sub(r"\s+", " ", text).strip())
    # a selection DAG node: its type and opcode, not its number, chain or memory operand
    text = re.sub(r"\bt[0-9]+: ", "", text)
    text = re.sub(r"(AMDGPUISD::\w+|ISD::\w+)<\(.*$", r"\1", text).replace(",ch = ", " ")
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def kernel_source(repro_text: str) -> str:
    """The @triton.jit kernel a repro embeds (indented under `if "--child" in sys.argv:`)."""
    block = repro_text.split("# ---- the kernel", 1)[-1]
    lines = block.splitlines()[1:]
    body = []
    for line in lines:
        if line.startswith(("def ", "class ")) or (line and not line.startswith(" ") and body):
            break
        body.append(line)
    text = textwrap.dedent("\n".join(body))
    return "\n".join(line for line in text.splitlines() if not line.startswith(("import triton", "if ")))


def tail(text: str, lines: int = 25) -> str:
    """What a reader needs of a failure's output: from the first LLVM error or assertion (a few lines of its
    dump), else the end of the Python traceback, else the last lines."""
    kept = [line for line in text.strip().splitlines() if not line.startswith("##gfxhound")]
    kept = [line for line in kept if not NOISE.match(line)] or kept  # the IR a pass dumped is not the failure
    first = next((i for i, line in enumerate(kept) if re.search(r"LLVM ERROR|Assertion .* failed|error: ", line)),
                 None)
    if first is not None:
        chosen = kept[first:first + min(lines, 12)]
        traceback_end = [line for line in kept[-3:] if re.match(r"\w+(Error|Exception)\b", line)]
        return "\n".join(chosen + (["..."] + traceback_end if traceback_end and traceback_end[0] not in chosen
                                    else []))
    return "\n".join(kept[-lines:])



PURE = re.compile(r"^tl\.(arange|program_id|num_programs|full|zeros|cdiv|load|where|broadcast_to|reshape|"
                  r"expand_dims|cast|maximum|minimum|abs|exp|sqrt|sum|max|min|dot)$")


def prune_unused(kernel: str) -> str:
    """The kernel without assignments nothing reads (a reduced spec keeps the prologue's offsets and the like):
    only names bound by a pure expression (no atomic, no store, no user call) are dropped, repeatedly. The draft
    checks the pruned kernel still fails the same way and keeps the unpruned one otherwise. Text that does not
    parse is returned as it is (the draft's check then says it does not reproduce)."""
    try:
        tree = ast.parse(kernel)
    except SyntaxError:
        return kernel
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(functions) != 1:
        return kernel

    def pure(node):
        calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
        return all(PURE.match(ast.unparse(c.func)) for c in calls)

    changed = True
    while changed:
        changed = False
        used = {n.id for n in ast.walk(functions[0]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for body in [n.body for n in ast.walk(functions[0]) if hasattr(n, "body") and isinstance(n.body, list)]:
            for stmt in list(body):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                        and stmt.targets[0].id not in used and pure(stmt.value) and len(body) > 1:
                    body.remove(stmt)
                    changed = True
    function = functions[0]
    for body in [n.body for n in ast.walk(function) if hasattr(n, "body") and isinstance(n.body, list)]:
        for stmt in list(body):  # a loop that only binds names nothing after it reads
            if isinstance(stmt, ast.For) and len(body) > 1 and all(
                    isinstance(s, ast.Assign) and pure(s.value) for s in stmt.body):
                bound = {t.id for s in stmt.body for t in s.targets if isinstance(t, ast.Name)}
                rest = [n for n in ast.walk(function) if n not in set(ast.walk(stmt))]
                if not bound & {n.id for n in rest if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}:
                    body.remove(stmt)
    read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    function.args.args = [a for a in function.args.args if a.arg in read]
    lines = kernel.splitlines()
    kept = set()
    for node in ast.walk(functions[0]):
        if isinstance(node, ast.stmt) and node is not functions[0]:
            kept.update(range(node.lineno, node.end_lineno + 1))
    first = function.lineno - len(function.decorator_list)
    header = [ast.unparse(d).join(("@", "")) for d in function.decorator_list]
    header.append(f"def {function.name}({ast.unparse(function.args)}):")
    return "\n".join([line for i, line in enumerate(lines, 1) if i < first] + header
                     + [line for i, line in enumerate(lines, 1) if i in kept]
                     + [line for i, line in enumerate(lines, 1) if i > function.end_lineno]) + "\n"


def code_blocks(markdown: str) -> "list[tuple[str, str]]":
    """(language, text) of every fenced block of a draft, as a reader would copy it."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", markdown, re.S | re.M)]


def kernel_body(asm: str) -> str:
    """The instructions of the kernel in an assembly listing: from its label to `s_endpgm`, without directives,
    comments or blank lines (what a maintainer compares)."""
    out, inside = [], False
    for line in asm.splitlines():
        text = line.split(";")[0].rstrip()
        if not inside:
            inside = bool(re.match(r"^[A-Za-z_][\w.$]*:\s*$", text)) and not text.startswith(".")
            if inside:
                out.append(text)
            continue
        if text.strip() and not text.strip().startswith("."):
            out.append(text)
        elif re.match(r"^\.L\w+:", text):
            out.append(text)
        if text.strip() == "s_endpgm":
            break
    return "\n".join(out)


# what an Actual block leaves out of a command's output, each run of it one `...` line (a reader's run prints it):
# the MLIR reproducer Triton dumps on a pass failure (`#alias = ...`/`module ...` to its `#-}` trailer), the frames
# of LLVM's stack backtrace, and of an output longer than QUOTED_LINES its middle. Everything else is quoted as
# printed: a script's own lines are its evidence (a cold review found 0df07642's Actual block without the IR lines
# that show the unused scale, cut by a filter meant for compiler dumps, and nothing said they were cut).
MLIR_START = re.compile(r"^(?:#[\w.$-]+ = |module\b|\{-#)")
FRAME = re.compile(r"^\s*#?\d+\s+0x[0-9a-fA-F]+\b")
QUOTED_LINES = 60
OMITTED = {"mlir": "of the MLIR reproducer Triton prints", "frames": "of the stack backtrace",
           "middle": "of its output"}


def abridge(text: str, limit: int = QUOTED_LINES) -> "tuple[str, str]":
    """(block, note): the lines an Actual block quotes of a command's whole output (`text`, as the reader's run
    prints it), with a `...` line for each run left out, and the words that say what was left out ("" when
    nothing was): "abridged: 58 lines of the MLIR reproducer Triton prints omitted, at the `...`"."""
    lines = [line.rstrip() for line in text.strip("\n").splitlines() if not line.startswith("##gfxhound")]
    kinds = [None] * len(lines)
    i = 0
    while i < len(lines):
        if MLIR_START.match(lines[i]):
            end = next((k for k in range(i, len(lines)) if lines[k].strip() == "#-}"), None)
            if end is None:  # no reproducer trailer: the dump runs while the lines look like IR
                end = i
                while end + 1 < len(lines) and (not lines[end + 1].strip() or NOISE.match(lines[end + 1])):
                    end += 1
            kinds[i:end + 1] = ["mlir"] * (end + 1 - i)
            i = end + 1
            continue
        if FRAME.match(lines[i]):
            kinds[i] = "frames"
        i += 1
    kept = [k for k, kind in enumerate(kinds) if kind is None and lines[k].strip()]
    if len(kept) > limit:  # the head and the tail of a long output; what lies between them goes, blank lines too
        middle = kept[limit - 10:-10]
        for k in range(middle[0], middle[-1] + 1):
            kinds[k] = "middle"
    out, runs = [], []
    for k, line in enumerate(lines):
        if kinds[k] is None:
            out.append(line)
        elif not line.strip():
            continue  # a blank line inside a run left out: part of it, not counted
        elif out and out[-1] == "..." and runs and runs[-1][0] == kinds[k] and runs[-1][2] == k - 1:
            runs[-1] = (kinds[k], runs[-1][1] + 1, k)
        elif out and out[-1] == "..." and runs and _blank_between(lines, runs[-1][2], k):
            runs[-1] = (runs[-1][0] if runs[-1][0] == kinds[k] else "mixed", runs[-1][1] + 1, k)
        else:
            out.append("...")
            runs.append((kinds[k], 1, k))
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out), _omitted_note(runs, lines, kinds)


def _blank_between(lines: list, a: int, b: int) -> bool:
    return all(not lines[k].strip() for k in range(a + 1, b))


def _omitted_note(runs: list, lines: list, kinds: list) -> str:
    if not runs:
        return ""
    totals = {}
    for kind, count, _ in runs:
        totals[kind] = totals.get(kind, 0) + count
    parts = []
    for kind, count in totals.items():
        if kind == "middle":
            at = [k for k, x in enumerate(kinds) if x == "middle" and lines[k].strip()]
            parts.append(f"lines {at[0] + 1} to {at[-1] + 1} of its output")
        else:
            parts.append(f"{count} line{'s' if count != 1 else ''} {OMITTED.get(kind, 'of its output')}")
    joined = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"abridged: {joined} omitted, {'at the `...`' if len(runs) == 1 else 'each at a `...`'}"


def actual(text: str, command: str = "", lead: str = "Actual", limit: int = QUOTED_LINES) -> str:
    """An output block and the line that leads it: `Actual (`python snippet.py`):`, or, where lines are left out,
    `Actual (`python snippet.py`; abridged: ... omitted, at the `...`):` (the sandbox skips a `...` line, and the
    reader is told what it stands for)."""
    block, note = abridge(text, limit)
    said = "; ".join(x for x in (f"`{command}`" if command else "", note) if x)
    return f"{lead}{f' ({said})' if said else ''}:\n```\n{block}\n```"
