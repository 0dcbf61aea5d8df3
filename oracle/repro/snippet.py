"""The Triton snippet of a compile failure: a kernel's source followed by the compile the Triton runtime would do
at one launch (its argument specialisation computed by the installed Triton's own hooks), runnable as pasted.

Why in the repro package: the snippet is a standalone reproducer like the repro scripts beside it; the reducer
shrinks a user's or a template's kernel by rebuilding it for every candidate (reduce/user_source.py), and the
drafts paste it (gfxhound/report/drafts.py). Both read a repro script's declared settings with `constants`.
What a draft pastes ends in a check (`with_check`) that speaks the repro protocol of gfxhound/protocol.py: exit 1
only when the described failure shows, 0 when the kernel compiles, 125 for anything else; the reducer's candidates
stay bare (one process each, judged by their summarised output).
"""
from __future__ import annotations

import ast
import pprint
import re


def _pretty(value) -> str:
    """A dict or list over several lines, indented to sit after `    name=` in the snippet."""
    text = pprint.pformat(value, width=100, sort_dicts=False)
    return text.replace("\n", "\n    ")


def constants(repro_text: str) -> dict:
    """The settings a repro script declares (ARCH, OPTIONS, ENV_KNOBS, ARGS, ...), read without running it."""
    out = {}
    for node in ast.parse(repro_text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("ARCH", "OPTIONS", "ENV_KNOBS", "ARGS", "EXPECTED", "GRID", "KERNEL"):
                try:
                    out[name] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return out


def triton_snippet(kernel: str, consts: dict) -> str:
    """A standalone compile of the kernel for its AMD target, as the Triton runtime would (3.3+ API), with the
    argument specialisation the runtime derives (computed by the installed Triton's own hooks)."""
    from gfxhound.compat import environment, specialise, warp_size
    arch, args = consts["ARCH"], consts["ARGS"]
    params = _params(kernel)
    if params is not None:  # a pruned kernel takes fewer arguments
        args = [a for a in args if a["name"] in params]
    with environment(consts.get("ENV_KNOBS") or {}):  # AMDGCN_USE_BUFFER_OPS decides tt.pointer_range, as at launch
        signature, constexprs, attrs = specialise(args)
    names = [a["name"] for a in args]
    index_attrs = {(names.index(n),): v for n, v in attrs.items()}
    env = "".join(f"os.environ[{k!r}] = {v!r}\n" for k, v in sorted((consts.get("ENV_KNOBS") or {}).items()))
    kernel = "\n".join(line for line in kernel.strip().splitlines()
                       if not line.startswith(("import triton", "from triton")))
    return (f"# Compiles for {arch} as the Triton runtime would; no GPU needed.\n"
            + ("import os\n" if env else "") + "import triton\nimport triton.language as tl\n"
            "from triton.backends.compiler import GPUTarget\nfrom triton.compiler import ASTSource\n"
            + (f"\n{env}" if env else "") + f"\n\n{kernel.strip()}\n\n\n"
            f"src = ASTSource(\n    kernel,\n    signature={_pretty(signature)},\n"
            f"    constexprs={_pretty(constexprs)},\n    attrs={_pretty(index_attrs)},\n)\n"
            f"triton.compile(src, target=GPUTarget(\"hip\", {arch!r}, {warp_size(arch)}), "
            f"options={consts.get('OPTIONS') or {}!r})\n")


def _params(kernel: str):
    """The launched function's parameters: the file's only function, or the one `kernel = NAME` binds."""
    body = ast.parse(kernel).body
    functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
    bound = [n.value.id for n in body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
             and [getattr(t, "id", None) for t in n.targets] == ["kernel"]]
    if bound and bound[0] in functions:
        return {a.arg for a in functions[bound[0]].args.args}
    return {a.arg for a in next(iter(functions.values())).args.args} if len(functions) == 1 else None


def user_module(user: dict) -> str:
    """A user's (or a template's) kernel file as the snippet's head: no `from __future__` line (the snippet's own
    imports come first), its `__main__` block disabled, and `kernel` bound to the launched function (looked through
    triton.autotune / triton.heuristics)."""
    source = re.sub(r"^from __future__ import [^\n]*$", "", user["source"], flags=re.M)
    source = re.sub(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", "if False:", source, flags=re.M)
    return source + (f"\n\nkernel = {user['fn']}\nwhile type(kernel).__name__ in ('Autotuner', 'Heuristics'):\n"
                     "    kernel = kernel.fn\n")


CHILD = "--child"
CHECK_TIMEOUT_S = 600


COMPILE = r"\bASTSource\(|\btriton\.compile\("


def with_check(code: str, bug: "list[str] | None", timeout: int = CHECK_TIMEOUT_S, start: str = COMPILE,
               what: str = "the kernel", args: bool = False, alone: bool = False) -> "str | None":
    """The snippet as pasted: `code` (a kernel and its compile) ending in a check that speaks the repro protocol
    (gfxhound/protocol.py): exit 1 only when the compile fails with every part of `bug` in its output, 0 when it
    compiles, 125 for anything else (a different error, a timeout, a Triton that cannot import, any exception
    outside the compile: one line says which). `bug=None` is a hang: the compile not finishing is the bug.
    `alone`: the bug is a pass that fails without a diagnostic of its own, so an `error:` line, an assertion or an
    LLVM error of another kind in the output is another failure (the parts of a bare pipeline failure match any
    failure of that pass: an 'op NYI' diagnostic of an older release read as the bug).

    Why a child process: an LLVM abort ends the process it happens in, and a C++ assertion prints to fd 2, out of
    a Python exception's reach; the parent reads the child's output and exits with what it means. The compile (the
    statements from the first that matches `start`: `ASTSource(` or `triton.compile(`) moves under
    `if "--child" in sys.argv:`; with `args`, the child gets the script's own arguments too. None when the code has
    no such statement (a script of a person's that does something else). Why an excepthook in the parent: Python
    exits 1 on an uncaught exception, which the protocol reads as "bug present"; the hook turns it into 125."""
    from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT
    lines = code.rstrip("\n").splitlines()
    body = ast.parse(code).body
    first = next((n for n in body if not isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
                  and re.search(start, ast.get_source_segment(code, n) or "")), None)
    if first is None:
        return None
    head = _hooked_imports(lines[:first.lineno - 1], body)
    moved = [f"    {line}" if line.strip() else "" for line in lines[first.lineno - 1:]]
    child = f"[sys.executable, __file__, {'*sys.argv[1:], ' if args else ''}{quoted(CHILD)}]"
    late = f"the compile did not finish in {timeout} s"
    out = [*head,
           f"if {quoted(CHILD)} in sys.argv:  # the compile, in a child process: an LLVM abort ends the process "
           "it is in",
           *moved, f"    sys.exit({EXIT_ABSENT})", "", "",
           f"# The check, in the repro protocol: exit {EXIT_PRESENT} when the compile fails with the error this "
           "report is about,",
           f"# {EXIT_ABSENT} when {what} compiles, {EXIT_CANNOT_TEST} on any other failure (this build cannot test "
           "for the bug)."]
    if bug is not None:
        out.append(f"BUG = [{', '.join(quoted(part) for part in bug)}]  # every part is in the failure's output")
    if bug is not None and alone:
        out += ["# the pass fails without saying why: a diagnostic of its own is another failure",
                'OWN = ("error:", "Assertion", "LLVM ERROR")']
    out += ["try:", f"    child = subprocess.run({child},",
            f"                           capture_output=True, text=True, timeout={timeout})",
            "except subprocess.TimeoutExpired:"]
    if bug is None:  # a hang: not finishing is the bug
        out += [f"    print({quoted('reproduced: ' + late)})", f"    sys.exit({EXIT_PRESENT})"]
    else:
        out += [f"    print({quoted('other failure (cannot test): ' + late)})", f"    sys.exit({EXIT_CANNOT_TEST})"]
    out += ["output = child.stdout + child.stderr",
            "sys.stderr.write(output)",
            "if child.returncode == 0:",
            f"    print({quoted(f'not reproduced: {what} compiled')})",
            f"    sys.exit({EXIT_ABSENT})"]
    if bug is not None:
        said = "next((line for line in output.splitlines() if BUG[0] in line), BUG[0]).strip()"
        if alone:
            out += ["own = [line for line in output.splitlines()",
                    "       if BUG[0] not in line and any(word in line for word in OWN)]",
                    "if all(part in output for part in BUG) and not own:",
                    f"    print({quoted(f'reproduced: {bug[-1]} failed without a diagnostic of its own')})"]
        else:
            out += ["if all(part in output for part in BUG):", f'    print("reproduced:", {said})']
        out.append(f"    sys.exit({EXIT_PRESENT})")
    out += ['lines = output.strip().splitlines() or [f"exit {child.returncode}"]',
            'errors = [line for line in lines if "error" in line.lower() or "Assertion" in line]',
            'print("other failure (cannot test):", (errors or lines[-1:])[0].strip())',
            f"sys.exit({EXIT_CANNOT_TEST})"]
    return "\n".join(out) + "\n"


def quoted(text: str) -> str:
    """A Python string literal in double quotes, as a person writes one."""
    import json
    return json.dumps(text, ensure_ascii=False)


def _hooked_imports(lines: list, body: list) -> list:
    """The head with `import os`, `subprocess` and `sys` among its standard-library imports, then the parent's
    excepthook, then its other imports (triton, torch) and the rest: a Python without them, or a kernel this Triton
    cannot define, exits 125 with one line, as any exception outside the compile does."""
    import sys
    from gfxhound.protocol import EXIT_CANNOT_TEST
    imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno <= len(lines)]
    first = imports[0].lineno - 1 if imports else _after_docstring(body)
    block = []  # the first run of import lines, as written
    for n in imports:
        if n.lineno - 1 != first + len(block) or n.end_lineno != n.lineno:
            break
        block.append(n)
    roots = lambda n: [(a.name if isinstance(n, ast.Import) else n.module or "").split(".")[0]  # noqa: E731
                       for a in (n.names if isinstance(n, ast.Import) else [n])]
    std = [lines[n.lineno - 1] for n in block if all(r in sys.stdlib_module_names for r in roots(n))]
    other = [lines[n.lineno - 1] for n in block if lines[n.lineno - 1] not in std]
    have = {r for n in imports if isinstance(n, ast.Import) for r in roots(n)}
    std = sorted(set(std + [f"import {m}" for m in ("os", "subprocess", "sys") if m not in have]),
                 key=lambda line: (line.startswith("from "), line))
    hook = ["", "",
            "def cannot_test(kind, exc, tb):  # an exception outside the compile is not the bug: say what it was",
            '    print("other failure (cannot test):", f"{kind.__name__}: {exc}".strip().splitlines()[0][:300], '
            "flush=True)",
            f"    os._exit({EXIT_CANNOT_TEST})",
            "", "",
            f"if {quoted(CHILD)} not in sys.argv:  # the child's own failure is read from its output, below",
            "    sys.excepthook = cannot_test"]
    return lines[:first] + std + hook + ([""] if other else []) + other + lines[first + len(block):]


def _after_docstring(body: list) -> int:
    """Where imports go in a head that has none: after the module docstring, if there is one."""
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and \
            isinstance(body[0].value.value, str):
        return body[0].end_lineno
    return 0
