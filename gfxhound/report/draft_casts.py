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
from pathlib import Path

from gfxhound.corpus_store.layout import PROBE_FILE, TABLE_FILE
from gfxhound.oracle.cast_fold import stored_code
from gfxhound.oracle.cast_sweep import warp_size
from gfxhound.oracle.cast_table import TL, WIDTH, Probe, bits_of, code_value, describe_code, exact_in, kernel_source, literal, pointer_type
from gfxhound.report.draft_parts import BANNER, TRITON, Draft, bisection, environment, related, run_tool

TORCH_NAME = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp8e5": "float8_e5m2",
              "fp8e4nv": "float8_e4m3fn", "fp8e5b16": "float8_e5m2fnuz", "fp8e4b8": "float8_e4m3fnuz"}
INT_VIEW = {8: "uint8", 16: "int16", 32: "int32"}
MAX_ROWS = 12


def _probe(example_dir: Path) -> "tuple[Probe, dict]":
    data = json.loads((example_dir / PROBE_FILE).read_text())
    fields = {k: data[k] for k in ("kind", "dst", "value", "src", "rounding", "bits")}
    return Probe(**fields), data


def _shown(examples: list, rows: list) -> "tuple[Probe, str]":
    """The probe a person understands fastest, and its target: 1.0 if it is wrong, else a wrong value the format
    holds exactly (the expected code then hangs on no rounding rule), the shortest to write first."""
    base, data = _probe(examples[0].dir)
    exact = [r for r in rows if r["value"] != 0 and exact_in(base.dst, r["value"])]
    if not exact:
        return base, data.get("arch", "")
    def wrongness(r):  # how far the stored value is from the right one, relative: a value lost to 0 is 1.0
        got, want = code_value(base.dst, r["stored"]), code_value(base.dst, r["expected"])
        return 1.0 if not math.isfinite(got) else min(1.0, abs(got - want) / abs(want))

    row = min(exact, key=lambda r: (-wrongness(r), r["value"] < 0, abs(math.log2(abs(r["value"])))))
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


def _table(rows: list, dst: str) -> "tuple[str, list]":
    """A Markdown table of wrong codes, one row per value with the targets it was seen on; and the targets."""
    by_value = {}
    for row in rows:
        key = (row["value"], row["stored"], row["expected"])
        by_value.setdefault(key, set()).add(row["target"])
    keys = sorted(by_value, key=lambda k: (abs(k[0]), k[0]))
    if len(keys) > MAX_ROWS:  # spread over the range, smallest and largest kept
        step = (len(keys) - 1) / (MAX_ROWS - 1)
        keys = [keys[round(i * step)] for i in range(MAX_ROWS)]
    targets = sorted({t for ts in by_value.values() for t in ts})
    lines = ["| value | stored | expected | targets |", "|---|---|---|---|"]
    for value, stored, expected in keys:
        seen = by_value[(value, stored, expected)]
        lines.append(f"| {value!r} | {describe_code(dst, stored)} | {describe_code(dst, expected)} | "
                     f"{'all listed' if set(seen) == set(targets) else ', '.join(sorted(seen))} |")
    return "\n".join(lines), targets


def cast_draft(corpus, finding, python: str = sys.executable, timeout: float = 600, env: "dict | None" = None) -> Draft:
    examples = corpus.examples(finding.signature)
    table_path = corpus.path(finding.signature) / TABLE_FILE
    recorded = json.loads(table_path.read_text()) if table_path.exists() else {}
    rows = recorded.get("rows", [])
    probe, arch = _shown(examples, rows)
    arch = arch or finding.targets[0]
    code = snippet(probe, arch)
    with tempfile.TemporaryDirectory(prefix="gfxhound-draft-") as tmp:
        (Path(tmp) / "snippet.py").write_text(code)
        rc, out, ended = run_tool([python, "snippet.py"], tmp, timeout, env)
    stored_lines = re.search(r"^stored: (.*)$", out, re.M)
    got = stored_code("\n".join(ast.literal_eval(stored_lines.group(1))), WIDTH[probe.dst]) if stored_lines else None
    expected = re.search(r"^expected: (0x[0-9a-f]+)", out, re.M)
    want = int(expected.group(1), 16) if expected else None
    reproduced = None if got is None or want is None else got != want
    version = (env or {}).get("GFXHOUND_CHECKED_WITH", "this machine's Triton")
    check = f"`python snippet.py` with {version} exited {rc}" + (
        f"; stored 0x{got:x}, expected 0x{want:x}" if reproduced is not None else "; no folded store to compare")
    table, targets = _table(rows, probe.dst)
    ttir = re.search(r"^ttir: (.*)$", out, re.M)
    front_end = probe.kind == "constant" and bool(ttir) and _ttir_wrong(ttir.group(1), probe)
    what = (f"`x.to({TL[probe.dst]}, fp_downcast_rounding=\"{probe.rounding}\")` from {TL[probe.src]}"
            if probe.kind == "cast" else f"`tl.full([64], {literal(probe.dst, probe.value)}, {TL[probe.dst]})`")
    shown = (f"{literal(probe.dst, probe.value) if probe.kind == 'constant' else repr(probe.value)} becomes "
             f"{describe_code(probe.dst, got)}, not {describe_code(probe.dst, want)}") if reproduced else "wrong codes"
    tag = "[FRONTEND]" if front_end else "[AMD]"
    title = (f"{tag} {what} stores the wrong value: {shown}" if probe.kind == "cast" else
             f"{tag} {what} stores {describe_code(probe.dst, got)}, not {describe_code(probe.dst, want)}"
             if reproduced else f"{tag} {what} stores the wrong value")
    where = ("The constant is already wrong in the Triton IR the front end emits (`ttir` above), so every backend "
             "gets it." if front_end else
             "The code is computed by the AMD lowering of `tt.fp_to_fp`; LLVM folds it to the literal in the store.")
    judged = recorded.get("judged", {})
    per = {t: (sum(1 for r in rows if r["target"] == t), judged[t]) for t in targets if t in judged}
    counts = (f"{next(iter(per.values()))[0]} of {next(iter(per.values()))[1]} on each target"
              if len(set(per.values())) == 1 else "; ".join(f"{t}: {w} of {n}" for t, (w, n) in per.items()))
    summary = (f"Compiled for AMD targets, {what} stores codes that are not the value's, on "
               f"{', '.join(targets) or arch} (values wrong of values judged: {counts or len(rows)}; table below). "
               f"{where} Nothing here needs a GPU: the snippet compiles for `{arch}` and prints the store the "
               "compiler emitted next to the code PyTorch gives for the same value.")
    body = "\n".join([
        BANNER.format(sig=finding.signature), "",
        "## Summary", summary, "",
        "## Reproducer", f"```python\n{code.rstrip()}\n```", "",
        "## Command", "```sh\npython snippet.py   # the reproducer above, saved as snippet.py\n```",
        f"<!-- checked before this draft was written: {check} -->" if reproduced else
        f"**Did not reproduce when this draft was written ({check}): check by hand.**", "",
        "## Expected vs actual", f"Expected: the store writes {describe_code(probe.dst, want) if want is not None else 'the expected code'}"
        " (what PyTorch's conversion of the same value gives).", "", f"Actual:\n```\n{out.strip()[-1500:]}\n```", "",
        "Wrong codes found (value, code stored, code expected; exact codes of the format, ties to even for "
        "`rtne`, toward zero for `rtz`):", "", table, "",
        *(["## Cause", corpus.cause(finding.signature), ""] if corpus.cause(finding.signature) else []),
        "## Bisection", bisection(corpus.bisections(finding.signature)), "",
        "## Environment", environment(corpus, finding, [
            f"Python {sys.version.split()[0]}, {sys.platform}", "No GPU needed: the reproducer only compiles",
            "Not yet checked on Triton's main branch", *related(corpus, finding)]), "",
        "## How this was found",
        "Found by gfxhound's conversion table (`gfxhound casts`): kernels that store one constant, or one conversion "
        "of one constant, compiled for each AMD target; LLVM folds the software conversion, so the compiled LLVM IR "
        "holds the stored code, which is compared with the format's exact code. The reproducer is that kernel "
        f"as the table compiled it (one constant, one store: nothing to reduce). Signature `{finding.signature}`."])
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
