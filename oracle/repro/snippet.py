"""The Triton snippet of a compile failure: a kernel's source followed by the compile the Triton runtime would do
at one launch (its argument specialisation computed by the installed Triton's own hooks), runnable as pasted.

Why in the repro package: the snippet is a standalone reproducer like the repro scripts beside it; the reducer
shrinks a user's or a template's kernel by rebuilding it for every candidate (reduce/user_source.py), and the
drafts paste it (gfxhound/report/drafts.py). Both read a repro script's declared settings with `constants`.
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
