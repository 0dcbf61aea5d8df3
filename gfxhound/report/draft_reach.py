"""How far a Triton crash reaches, measured while drafting: the reproducer compiled for each AMD target and with
each other fp8 format, and the reproducer without the specialisation and options it does not need.

Why measured: a maintainer fixes the bug, not the one kernel a fuzzer happened to draw; the targets and formats it
reaches (and the sibling failures nearby) say where the fault is. Each variant is one compile of a small script.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from gfxhound.compat import warp_size
from gfxhound.report.draft_parts import run_tool
from gfxhound.report.draft_text import headline
from gfxhound.signature import summarise


def _outcome(text, python, timeout, env):
    """summarise() of one run of a snippet, or None when it compiled."""
    with tempfile.TemporaryDirectory(prefix="gfxhound-reach-") as tmp:
        (Path(tmp) / "snippet.py").write_text(text)
        rc, output, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
    return summarise(output, ended) if ended != "exit:0" else None


def simpler(code, python, timeout, env, normalised) -> str:
    """The snippet without its argument specialisation (`attrs=`), launch options and environment knobs, each
    dropped only when the same failure stays."""
    def keep(candidate):
        got = _outcome(candidate, python, timeout, env) if candidate != code else None
        return bool(got and got["normalised"] == normalised)

    candidate = re.sub(r"\n    attrs=\{.*?\},\n(?=\))", "\n", code, count=1, flags=re.S)  # printed over lines
    if keep(candidate):
        code = candidate
    options = re.search(r", options=(\{.*?\})\)\s*$", code, re.S)
    if options:
        import ast
        kept = ast.literal_eval(options.group(1))
        for name in list(kept):  # each option alone: the ones the failure needs stay
            trial = {k: v for k, v in kept.items() if k != name}
            candidate = code[:options.start()] + (f", options={trial!r})" if trial else ")") + code[options.end():]
            if keep(candidate):
                code, kept = candidate, trial
                options = re.search(r", options=(\{.*?\})\)\s*$", code, re.S)
                if not options:
                    break
    for line in re.findall(r"^os\.environ\[.*\n", code, flags=re.M):  # each knob alone, as for the options
        candidate = code.replace(line, "", 1)
        if "os.environ[" not in candidate:
            candidate = candidate.replace("import os\n", "", 1)
        if keep(candidate):
            code = candidate
    return re.sub(r"\n{4,}", "\n\n\n", code).rstrip("\n") + "\n"


REACH_TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250")


def reach(code, arch, python, timeout, env, normalised) -> dict:
    """The reproducer compiled for each AMD target: {"same": [...], "compiles": [...], "other": {target: line}}.
    Measured, so the draft names every target the bug reaches, not only the one the fuzzer happened to use."""
    out = {"same": [], "compiles": [], "other": {}}
    for target in REACH_TARGETS:
        text = code.replace(f"GPUTarget(\"hip\", {arch!r}, {warp_size(arch)})",
                            f"GPUTarget(\"hip\", {target!r}, {warp_size(target)})")
        got = _outcome(text, python, timeout, env)
        if got is None:
            out["compiles"].append(target)
        elif got["normalised"] == normalised:
            out["same"].append(target)
        else:
            out["other"][target] = got["message"].splitlines()[0][:200] if got["message"] else got["verdict"]
    return out


FP8 = ("tl.float8e5", "tl.float8e4nv", "tl.float8e5b16", "tl.float8e4b8", "tl.float8e4b15")


def formats(code, python, timeout, env, normalised) -> dict:
    """The reproducer with each other fp8 format in place of the one it uses (when it uses one): the formats the
    same failure reaches, those that compile, and what the others do (a sibling failure is named, not hidden)."""
    used = [f for f in FP8 if re.search(re.escape(f) + r"\b", code)]
    if len(used) != 1:
        return {}
    out = {"used": used[0], "same": [], "compiles": [], "other": {}}
    for other in FP8:
        if other == used[0]:
            continue
        text = re.sub(re.escape(used[0]) + r"\b", other, code)
        got = _outcome(text, python, timeout, env)
        if got is None:
            out["compiles"].append(other)
        elif got["normalised"] == normalised:
            out["same"].append(other)
        else:
            out["other"][other] = headline(got["message"] or got["verdict"], 160).rstrip(".")
    return out


def reach_text(reach, formats=None) -> str:
    lines = [f"Fails the same way for: {', '.join(reach['same'])}."]
    if reach["compiles"]:
        lines.append(f"Compiles for: {', '.join(reach['compiles'])}.")
    lines += [f"For {t}: `{line}`." for t, line in reach["other"].items()]
    if formats:
        lines.append(f"\n\nWith another fp8 format in place of `{formats['used']}`:")
        if formats["same"]:
            lines.append(f"the same failure with {', '.join(f'`{f}`' for f in formats['same'])};")
        lines += [f"with `{f}`: {line};" for f, line in formats["other"].items()]
        if formats["compiles"]:
            lines.append(f"it compiles with {', '.join(f'`{f}`' for f in formats['compiles'])}.")
    return " ".join(lines).replace(" \n\n", "\n\n").rstrip(";") + ("" if lines[-1].endswith(".") else ".")
