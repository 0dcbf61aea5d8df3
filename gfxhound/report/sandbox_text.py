"""The text of a draft as its reader sees it: fenced blocks with the section each sits in and the prose before it,
a shell block's commands as bash reads them, the prose without blocks and hidden comments, and what a Python
program imports. Pure functions, used by the sandbox's plan (report/sandbox_draft.py).

Why apart from draft_text.py: that module is the generator's; this one reads drafts back the way a maintainer would,
and must not share the generator's assumptions (a mistake made in both would hide itself).
"""
from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass

SHELL = ("sh", "bash", "shell", "console")
SOURCE = {"python": ".py", "llvm": ".ll", "mlir": ".mlir"}  # a block a reader may save, and its file's extension
OUTPUT_LEAD = re.compile(r"^(Actual|Output)\b", re.I)
GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@dataclass(frozen=True)
class Block:
    """One fenced block: its number in the draft (1-based), language, text, the `## ` section it sits in, and the
    prose between the block before it (or its heading) and itself."""
    index: int
    lang: str
    text: str
    section: str
    lead: str
    start: int  # character offsets of the fence in the draft
    end: int

    @property
    def role(self) -> str:
        if self.lang in SHELL:
            return "command"
        if self.lang in SOURCE:
            return "source"
        if self.section.lower().startswith("expected") and not OUTPUT_LEAD.match(_last_line(self.lead)):
            return "expected"
        if self.section.lower() == "output" or OUTPUT_LEAD.match(_last_line(self.lead)):
            return "output"
        return "other"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def blocks(markdown: str) -> "list[Block]":
    """Every fenced block, as `draft_text.code_blocks` reads them, with its section and leading prose."""
    headings = [(m.start(), m.group(1).strip()) for m in re.finditer(r"^## (.+)$", markdown, re.M)]
    out, previous = [], 0
    for i, m in enumerate(re.finditer(r"^```(\w*)\n(.*?)^```$", markdown, re.S | re.M), 1):
        section = ""
        heading_end = 0
        for start, name in headings:
            if start < m.start():
                section, heading_end = name, start
        lead = markdown[max(previous, heading_end):m.start()]
        lead = re.sub(r"^## .*\n", "", lead)
        out.append(Block(i, m.group(1), m.group(2), section, lead, m.start(), m.end()))
        previous = m.end()
    return out


def section(markdown: str, name: str) -> str:
    found = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    return found.group(1) if found else ""


def prose(markdown: str) -> str:
    """The draft without its fenced blocks and hidden comments: what the reader reads as instructions."""
    text = re.sub(r"^```\w*\n.*?^```$", "", markdown, flags=re.S | re.M)
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def commands_at(text: str) -> "list[tuple[int, str]]":
    """A shell block's commands with the line each starts on (1-based): continuation lines joined, comments and
    blank lines left out. A line that shlex cannot split (an open quote runs on) is joined with the next, as bash
    reads it."""
    out, pending, first, continued = [], "", 0, False
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            first = number
        pending = pending + line if continued else f"{pending}\n{line}" if pending else line
        continued = pending.endswith("\\")  # bash drops a backslash-newline
        if continued:
            pending = pending[:-1]
            continue
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        if words:
            out.append((first, pending))
        pending = ""
    return out + ([(first, pending)] if pending.strip() else [])


def command_lines(text: str) -> "list[str]":
    return [command for _, command in commands_at(text)]


def split_words(line: str) -> "list[str]":
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


def inline_python(command: str) -> str:
    """The program of `python -c '...'`, or ''."""
    words = split_words(command)
    for i, word in enumerate(words[:-1]):
        if re.fullmatch(r"python[\d.]*", word) and words[i + 1] == "-c" and i + 2 < len(words):
            return words[i + 2]
    return ""


def imports(code: str) -> "dict[str, str]":
    """{top-level module: how} for every import in `code`: "guarded" when one of its imports sits in a `try`
    whose handler catches ImportError (the program asks whether it is there), "module" when it is imported
    unguarded at module level (the program cannot start without it), else "function" (imported where it is used,
    which may never run). {} when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    found = {}
    rank = {"function": 0, "module": 1, "guarded": 2}

    def visit(node, guarded, top):
        if isinstance(node, ast.Try):
            catches = any(h.type is None or any(n.id in GUARDS for n in ast.walk(h.type) if isinstance(n, ast.Name))
                          for h in node.handlers)
            for child in node.body:
                visit(child, guarded or catches, top)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, guarded, top)
            return
        names = []
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module.split(".")[0]]
        how = "guarded" if guarded else "module" if top else "function"
        for name in names:
            if rank[how] > rank[found.get(name, "function")] or name not in found:
                found[name] = how
        inner = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, guarded, inner)

    visit(tree, False, True)
    return found
