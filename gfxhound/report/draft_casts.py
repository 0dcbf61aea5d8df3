"""The draft of a conversion-table finding (oracle/cast_table.py): one conversion that stores wrong codes.

Why its own shape: the reproducer is not a generated kernel but the smallest kernel there is (one constant, at
most one conversion, one store), and the evidence is a code table, not a crash. The snippet runs on a CPU, prints
the store the compiler emitted and the code PyTorch gives for the same value, and is run before the draft is
written; every figure comes from the finding's table.json.
"""
from __future__ import annotations

import ast
import json
import math
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from gfxhound.corpus_store.layout import PROBE_FILE, TABLE_FILE
from gfxhound.oracle.cast_fold import stored_code
from gfxhound.oracle.cast_sweep import warp_size
from gfxhound.oracle.cast_table import TL, WIDTH, Probe, bits_of, code_value, describe_code, exact_in, expected_code, \
    kernel_source, literal, pointer_type
from gfxhound.protocol import describe
from gfxhound.oracle.repro.snippet import CHECK_TIMEOUT_S
from gfxhound.report.draft_parts import BANNER, TRITON, Draft, bisection_section, cause, environment, related, \
    run_tool, setup
from gfxhound.report.draft_prose import by_hand as docstring_parts
from gfxhound.report.draft_text import actual

TORCH_NAME = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp8e5": "float8_e5m2",
              "fp8e4nv": "float8_e4m3fn", "fp8e5b16": "float8_e5m2fnuz", "fp8e4b8": "float8_e4m3fnuz"}
INT_VIEW = {8: "uint8", 16: "int16", 32: "int32"}
MAX_ROWS = 6


def _probe(example_dir: Path) -> "tuple[Probe, dict]":
    data = json.loads((example_dir / PROBE_FILE).read_text())
    fields = {k: data[k] for k in ("kind", "dst", "value", "src", "rounding", "bits")}
    return Probe(**fields), data


def _shown(examples: list, rows: list) -> "tuple[Probe, str]":
    """The probe a person understands fastest, and its target: 1.0 if it is wrong, else a wrong value the format
    holds exactly (the expected code then hangs on no rounding rule), the shortest to write first."""
    base, data = _probe(examples[0].dir)
    exact = [r for r in rows if r["value"] != 0 and math.isfinite(r["value"]) and exact_in(base.dst, r["value"])]
    if not exact:
        return base, data.get("arch", "")
    def wrongness(r):  # how far the stored value is from the right one, relative: a value lost to 0 is 1.0
        got, want = code_value(base.dst, r["stored"]), code_value(base.dst, r["expected"])
        return 1.0 if not math.isfinite(got) else min(1.0, abs(got - want) / abs(want))

    row = min(exact, key=lambda r: (-wrongness(r), r["value"] < 0, len(literal(base.dst, r["value"]))
                                    if base.kind == "constant" else 0, abs(math.log2(abs(r["value"])))))
    bits = bits_of(base.src, row["value"]) if base.kind == "cast" else 0
    return Probe(base.kind, base.dst, row["value"], base.src, base.rounding, bits), row["target"]


def snippet(probe: Probe, arch: str) -> str:
    bits = WIDTH[probe.dst]
    ttir = ("print(\"ttir:\", re.findall(r\"arith\\.constant .*?(?= loc|$)\", kernel.asm[\"ttir\"], re.M))\n"
            if probe.kind == "constant" else "")
    mask = f" & 0x{(1 << bits) - 1:x}" if bits == 16 else ""
    shown_value = literal(probe.dst, probe.value) if probe.kind == "constant" else repr(probe.value)
    return f'''{"import re" + chr(10) if ttir else ""}import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


{kernel_source(probe)}

kernel = triton.compile(triton.compiler.ASTSource(probe, signature={{"y_ptr": "{pointer_type(probe)}"}}),
                        target=GPUTarget("hip", "{arch}", {warp_size(arch)}))  # compiles on a CPU, no GPU needed
{ttir}print("stored:", [line.strip() for line in kernel.asm["llir"].splitlines() if "store" in line and "declare" not in line])
expected = torch.tensor([{shown_value}], dtype=torch.float64).to(torch.{TORCH_NAME[probe.dst]})
print("expected:", hex(expected.view(torch.{INT_VIEW[bits]}).item(){mask}), "=", expected.item())
'''


def _pick(rows: list, first: float) -> "tuple[list, dict]":
    """The wrong values a short table shows (the shown value, zeros and NaNs, the extremes, then a spread), as
    (value, stored, expected) keys in order of magnitude, and {key: the targets it was seen on}."""
    by_value = {}
    for row in rows:
        key = (row["value"], row["stored"], row["expected"])
        by_value.setdefault(key, set()).add(row["target"])
    keys = sorted(by_value, key=lambda k: (abs(k[0]) if math.isfinite(k[0]) else math.inf, k[0]))
    special = [k for k in keys if k[0] == first or k[0] == 0 or not math.isfinite(k[0])]
    ends = [k for k in keys if k[0] > 0 and math.isfinite(k[0])]
    room = max(0, MAX_ROWS - len(dict.fromkeys(special + ends[:1] + ends[-1:])))
    step = max(1, len(ends) // (room + 1)) if ends else 1
    picked = list(dict.fromkeys(special + ends[:1] + ends[-1:] + ends[step::step][:room] + keys))[:MAX_ROWS]
    picked.sort(key=keys.index)
    return picked, by_value


def _table(picked: list, by_value: dict, dst: str, constant: bool, lead: str) -> str:
    """A short Markdown table of wrong codes led by a sentence that says where they come from. No count of the
    values not shown: the reader never sees that list (a cold review asked what "6 of the 22" counted), and no
    targets column unless the rows differ in their targets ("every target checked" in each row said nothing)."""
    targets = sorted({t for ts in by_value.values() for t in ts})
    per_row = any(by_value[k] != set(targets) for k in picked)
    lines = [lead, "", "| value | stored | expected |" + (" targets |" if per_row else ""),
             "|---|---|---|" + ("---|" if per_row else "")]
    for value, stored, expected in picked:
        shown = literal(dst, value) if constant else repr(value)
        lines.append(f"| {shown} | {describe_code(dst, stored)} | {describe_code(dst, expected)} |"
                     + (f" {', '.join(sorted(by_value[(value, stored, expected)]))} |" if per_row else ""))
    return "\n".join(lines)


def _values_node(code: str) -> "ast.Assign | None":
    """The reproducer's module-level `VALUES = (...)`: the values it checks, which a reader can change."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    return next((n for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1 and
                 getattr(n.targets[0], "id", "") == "VALUES" and isinstance(n.value, (ast.Tuple, ast.List))), None)


def _number(node) -> float:
    """A number as a reproducer writes it (3e-7, -1.5, 2**-17): arithmetic on literals only."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return -_number(node.operand) if isinstance(node.op, ast.USub) else _number(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.Mult, ast.Div)):
        a, b = _number(node.left), _number(node.right)
        return a ** b if isinstance(node.op, ast.Pow) else a * b if isinstance(node.op, ast.Mult) else a / b
    raise ValueError(f"not a number: {ast.unparse(node)}")


def checked_by_values(code: str, rows: list, probe: Probe, python: str, timeout: float, env) -> "tuple | None":
    """More wrong values, each checked by the reproducer as pasted with its `VALUES` set to them: (the table's
    keys it prints as wrong with the same codes, by_value, the `VALUES = ...` line), or None where the reproducer
    has no VALUES to change or fails to run. A value the reproducer already checks is not repeated; a row whose
    line does not say wrong with both codes is left out (the table says only what the run showed)."""
    node = _values_node(code)
    if node is None or probe.kind != "constant":
        return None
    try:
        own = {expected_code(replace(probe, value=_number(v))) for v in node.value.elts}
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    others = [r for r in rows if r["expected"] not in own]
    if not others:
        return None
    picked, by_value = _pick(others, probe.value)
    literals = [literal(probe.dst, value) for value, _, _ in picked]
    line = f"VALUES = ({', '.join(literals)}{',' if len(literals) == 1 else ''})"
    lines = code.splitlines()
    changed = "\n".join(lines[:node.lineno - 1] + [line] + lines[node.end_lineno:]) + "\n"
    rc, out = _run(changed, python, timeout, env)
    if rc != 1:
        return None
    digits = WIDTH[probe.dst] // 4
    shown = []
    for (value, stored, expected), text in zip(picked, literals):
        said = [x for x in out.splitlines() if re.search(rf"(?<![\w.]){re.escape(text)}(?![\w.])", x)]
        if said and all(re.search(r"\bwrong\b", x, re.I) and f"0x{stored:0{digits}x}" in x.lower() and
                        f"0x{expected:0{digits}x}" in x.lower() for x in said):
            shown.append((value, stored, expected))
    if not shown:
        return None
    if len(shown) < len(picked):  # the line as the table shows it: only the values it checked
        line = f"VALUES = ({', '.join(literal(probe.dst, v) for v, _, _ in shown)}{',' if len(shown) == 1 else ''})"
    return shown, by_value, line


def _run(code: str, python: str, timeout: float, env) -> "tuple[int, str]":
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        (Path(tmp) / "snippet.py").write_text(code)
        rc, out, _ = run_tool([python, "snippet.py"], tmp, timeout, env)
    return rc, out


def cast_draft(corpus, finding, python: str = sys.executable, timeout: float = 600, env: "dict | None" = None) -> Draft:
    """The generated snippet is always run (it gives the title its codes); a person's minimal.py, when there is
    one, is the reproducer shown (its docstring trimmed of what the draft says itself: draft_prose.by_hand), run
    as pasted under the repro protocol (exit 1: the bug is present)."""
    examples = corpus.examples(finding.signature)
    table_path = corpus.path(finding.signature) / TABLE_FILE
    recorded = json.loads(table_path.read_text()) if table_path.exists() else {}
    rows = recorded.get("rows", [])
    probe, arch = _shown(examples, rows)
    arch = arch or finding.targets[0]
    generated = snippet(probe, arch)
    rc, out = _run(generated, python, timeout, env)
    stored_lines = re.search(r"^stored: (.*)$", out, re.M)
    got = stored_code("\n".join(ast.literal_eval(stored_lines.group(1))), WIDTH[probe.dst]) if stored_lines else None
    expected = re.search(r"^expected: (0x[0-9a-f]+)", out, re.M)
    want = int(expected.group(1), 16) if expected else None
    reproduced = None if got is None or want is None else got != want
    version = (env or {}).get("GFXHOUND_CHECKED_WITH", "this machine's Triton")
    compared = f"stored 0x{got:x}, expected 0x{want:x}" if reproduced is not None else "no folded store to compare"
    # the hidden comment states the exit of the script the draft shows, as the reader will see it
    check = f"`python snippet.py` with {version} exited {rc} (it prints the two codes and does not judge: {compared})"
    minimal = corpus.minimal(finding.signature)
    code, shown_out = generated, out
    hand = docstring_parts(minimal.read_text()) if minimal.exists() else None
    if minimal.exists():
        code = hand.code if hand else minimal.read_text()
        mrc, shown_out = _run(code, python, timeout, env)
        reproduced = bool(reproduced) and mrc == 1
        last = [line.strip() for line in shown_out.splitlines() if line.strip()][-1:]
        said = describe(mrc) if mrc is not None else "did not finish"
        check = (f"`python snippet.py` with {version} exited {mrc} ({said})"
                 f"{': ' + last[0][:200] if last else ''}; the generated probe: {compared}")
    ttir = re.search(r"^ttir: (.*)$", out, re.M)
    front_end = probe.kind == "constant" and bool(ttir) and _ttir_wrong(ttir.group(1), probe)
    expected_rule = ("the value rounded to nearest, ties to even" if probe.kind == "constant" else
                     "the format's exact code; ties to even for `rtne`, toward zero for `rtz`; any NaN code for a NaN")
    targets = sorted({r["target"] for r in rows})
    checked_values = checked_by_values(code, rows, probe, python, timeout, env) \
        if minimal.exists() else None
    if checked_values:  # every row is one the reproducer above printed as wrong, with these codes
        picked, by_value, line = checked_values
        table = _table(picked, by_value, probe.dst, probe.kind == "constant", (
            f"Each checked with the reproducer above, its `VALUES` line changed to `{line}`: it prints every one of "
            f"them as wrong, with the codes below, and exits 1 (expected: {expected_rule})."))
    else:  # the fuzzer's own compiles, which the reader cannot rerun as they are: said so
        picked, by_value = _pick(rows, probe.value)
        table = _table(picked, by_value, probe.dst, probe.kind == "constant", (
            f"Other wrong values from the fuzzer's compiles (not rerun with the reproducer above), with the code "
            f"stored and the code expected ({expected_rule}):"))
    value = literal(probe.dst, probe.value) if probe.kind == "constant" else repr(probe.value)
    what = (f"`x.to({TL[probe.dst]}, fp_downcast_rounding=\"{probe.rounding}\")` from {TL[probe.src]}"
            if probe.kind == "cast" else f"`tl.full([64], {value}, {TL[probe.dst]})`")
    codes = f"{describe_code(probe.dst, got)}, not {describe_code(probe.dst, want)}" if reproduced else ""
    if probe.kind == "cast":
        title = f"[AMD] {what} stores the wrong value" + (f": {value} becomes {codes}" if codes else "")
    else:
        title = (f"[FRONTEND] a Python float becomes the wrong {TL[probe.dst]} constant in the Triton IR: {what} is "
                 if front_end else f"[AMD] {what} stores ") + (codes or "the wrong value")
    judged = recorded.get("judged", {})
    per = {t: (sum(1 for r in rows if r["target"] == t), judged[t]) for t in targets if t in judged}
    counts = (f"{next(iter(per.values()))[0]} of {next(iter(per.values()))[1]} values on each of "
              f"{', '.join(targets)}" if len(set(per.values())) == 1 else
              "; ".join(f"{t}: {w} of {n} values" for t, (w, n) in per.items())) or f"{len(rows)} values"
    if front_end:
        summary = (f"{what} is already wrong in the Triton IR the front end emits, before any backend runs; the "
                   f"same constant then reaches the compiled code for every target (the fuzzer's sweep found "
                   f"{counts} wrong; examples below).")
    else:
        summary = (f"{what} compiles, for every AMD target it was tried on, to stores of codes that are not the "
                   f"value's (the fuzzer's sweep found {counts} wrong; examples below). The code comes from the AMD "
                   "lowering of `tt.fp_to_fp`; LLVM folds it to the literal in the store.")
    summary += " Nothing here needs a GPU: the reproducer only compiles."
    expected_text = (f"Expected: {describe_code(probe.dst, want)} for {value}." if want is not None
                     else "Expected: the value's code.")
    if hand:  # the person's words for what the script shows
        title, summary, expected_text = hand.title, hand.summary, hand.expected or expected_text
    version = (env or {}).get("GFXHOUND_CHECKED_WITH", "").removeprefix("triton ")
    records = corpus.bisections(finding.signature)
    checked = ("Targets: target-independent (the constant is wrong in the Triton IR, before any backend); the "
               f"compiled code was checked for {', '.join(targets)}") if front_end else \
        f"Targets checked: {', '.join(targets)}"
    torch = "; PyTorch for the expected codes" if re.search(r"^\s*(?:import|from) torch\b", code, re.M) else ""
    body = "\n".join([
        BANNER.format(sig=finding.signature), "",
        "## Summary", summary, "",
        "## Reproducer", f"```python\n{code.rstrip()}\n```", "",
        "## Command", setup(version, code, "snippet.py"), "```sh\npython snippet.py" + (
            "   # exit 1 = the bug is present, 0 = absent, 125 = cannot test here" if minimal.exists() else "")
        + "\n```",
        f"<!-- checked before this draft was written: {check} -->" if reproduced else
        f"**Did not reproduce when this draft was written ({check}): check by hand.**", "",
        "## Expected vs actual", expected_text, "", actual(shown_out, "python snippet.py"), "",
        "## More values", table, "",
        *cause(corpus, finding),
        "## Bisection", bisection_section(records, ({"snippet.py": code}, [python, "snippet.py"]), env,
                                          CHECK_TIMEOUT_S + 60), "",
        "## Environment", environment(corpus, finding, [
            f"Python {sys.version.split()[0]}, {sys.platform}{torch}; no GPU",
            "Not yet checked on Triton's main branch", *related(corpus, finding)], checked), "",
        "## How this was found",
        "Found by gfxhound, a fuzzer of Triton's AMD backend, in its conversion table: one-store kernels of one "
        "constant or one conversion, the stored code read from the compiled LLVM IR and compared with the format's "
        "exact code" + ("; the reproducer above was then minimised by hand" if minimal.exists() else "") + "."])
    return Draft(TRITON, title, body, reproduced, check, {"snippet.py": code})


def _ttir_wrong(text: str, probe: Probe) -> bool:
    """Whether the Triton IR's constant is already not the probe's value (in the probe's type)."""
    import torch
    found = re.search(r"dense<([^>]+)>|arith\.constant ([-+0-9.e]+|0x[0-9A-Fa-f]+)", text)
    if not found:
        return False
    literal = found.group(1) or found.group(2)
    try:
        value = float(literal)  # a hex literal is a bit pattern: not read here
    except ValueError:
        return False
    dtype = getattr(torch, TORCH_NAME[probe.dst])
    as_type = lambda v: torch.tensor([v], dtype=torch.float64).to(dtype).double().item()  # noqa: E731
    return as_type(value) != as_type(probe.value)
