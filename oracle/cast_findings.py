"""From a conversion table to corpus findings: one finding per conversion that stored a wrong code (whatever the
targets and values), its examples' standalone repros, and the table of every wrong code beside it.

Why one finding per conversion: a wrong software conversion is wrong for many values and on every target that
takes the same path; a person fixes it once. The signature is (conversion, rounding) only, so reruns, other
targets and other values count into the same finding. Crashes are listed in the summary, not recorded here: the
fuzz campaign records compiler crashes with the signatures every later stage knows.
"""
from __future__ import annotations

import json
from dataclasses import asdict

from gfxhound.atomic import write_atomic
from gfxhound.corpus_store.layout import PROBE_FILE, REPRO_FILE, RUN_FILE, TABLE_FILE
from gfxhound.signature import NORMALISER_VERSION, normalise, signature_hash

from .cast_sweep import DIAGNOSTIC, fold_source, warp_size
from .cast_table import STAGE, WIDTH, describe_code, kernel_source, pointer_type

MAX_TABLE_ROWS = 400  # per finding: enough to see a pattern, small enough to read


def normalised(probe) -> str:
    return f"{probe.what()}: stored code differs from the format's"


def signature(probe) -> str:
    return signature_hash("miscompile", STAGE, normalised(probe), [])


def message(result) -> str:
    p = result.probe
    return (f"{p.what()}: {p.value!r} stored as {describe_code(p.dst, result.code)}, expected "
            f"{describe_code(p.dst, result.expected)} on {result.arch}")


def render_repro(result, toolchain: str) -> str:
    """A standalone script under the repro protocol: exit 1 when the compiled code stores the wrong code, 0 when it
    stores the right one or this Triton refuses the conversion with a diagnostic (no wrong code can come of a
    refusal), 125 when it cannot tell (the conversion does not fold here, or another failure)."""
    p = result.probe
    return f'''#!/usr/bin/env python3
"""gfxhound conversion-table repro ({toolchain}, {result.arch}): {p.what()} of {p.value!r}.

Found: stored {describe_code(p.dst, result.code)}; a correct conversion stores {describe_code(p.dst, result.expected)}.
Exit 1: the wrong code is stored (present); 0: the right one, or the conversion is refused with a diagnostic
(absent); 125: cannot test here. No GPU needed: the stored code is read from the compiled LLVM IR.
"""
import os
import re
import sys
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

{fold_source()}

ARCH, WARP, BITS, EXPECTED = {result.arch!r}, {warp_size(result.arch)}, {WIDTH[p.dst]}, {result.expected:#x}
DIAGNOSTIC = {DIAGNOSTIC!r}


{kernel_source(p)}

def main():
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        try:
            kernel = triton.compile(triton.compiler.ASTSource(probe, signature={{"y_ptr": {pointer_type(p)!r}}}),
                                    target=GPUTarget("hip", ARCH, WARP))
            failure = None
        except Exception as exc:
            failure = f"{{type(exc).__name__}}: {{exc}}"
        finally:
            os.dup2(saved, 2)
        err.seek(0)
        text = (failure or "") + "\\n" + err.read().decode(errors="replace")
    if failure is not None:
        refused = re.search(rf"(?:{{DIAGNOSTIC}})[^\\n]*", text)
        if refused:
            print(f"absent: this Triton refuses the conversion: {{refused[0].strip()}}")
            return 0
        print(f"cannot test: the compile failed: {{failure.strip().splitlines()[-1][:300]}}")
        return 125
    code = stored_code(kernel.asm["llir"], BITS)
    if code is None:
        print("cannot test: the stored value is not a folded constant here (a hardware conversion?)")
        return 125
    print(f"stored 0x{{code:x}}, expected 0x{{EXPECTED:x}}: {{'present' if code != EXPECTED else 'absent'}}")
    return 1 if code != EXPECTED else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def record(corpus, table, toolchain: str) -> list:
    """Record the table's wrong codes; [(finding, is_new)] in the order first seen. The finding's table.json is
    rewritten with every wrong code of this run (a rerun on other targets adds its rows)."""
    wrong = [r for r in table.results if r.status == "wrong"]
    out, rows = {}, {}
    for r in wrong:
        sig = signature(r.probe)
        run = {"signature": sig, "verdict": "miscompile", "stage": STAGE, "spec_hash": r.probe.key(),
               "target": r.arch, "toolchain": toolchain, "message": message(r), "normalised": normalised(r.probe),
               "normaliser": NORMALISER_VERSION, "frames": []}
        files = {RUN_FILE: json.dumps(run, indent=1, sort_keys=True),
                 PROBE_FILE: json.dumps(dict(asdict(r.probe), arch=r.arch, stored=r.code, expected=r.expected),
                                        indent=1, sort_keys=True),
                 REPRO_FILE: render_repro(r, toolchain)}
        finding, is_new = corpus.record(run, files)
        out.setdefault(finding.signature, (finding, is_new))
        rows.setdefault(finding.signature, []).append(
            {"target": r.arch, "value": r.probe.value, "stored": r.code, "expected": r.expected,
             "dst": r.probe.dst, "toolchain": toolchain})
    judged = {}  # conversion -> target -> values judged (pass or wrong)
    for r in table.results:
        if r.status in ("pass", "wrong"):
            per = judged.setdefault(r.probe.what(), {})
            per[r.arch] = per.get(r.arch, 0) + 1
    what_of = {signature(r.probe): r.probe.what() for r in wrong}
    for sig, new_rows in rows.items():
        path = corpus.path(sig) / TABLE_FILE
        before = json.loads(path.read_text()) if path.exists() else {}
        old = before.get("rows", [])
        seen = {(row["target"], row["value"], row["toolchain"]) for row in new_rows}
        merged = [row for row in old if (row["target"], row["value"], row["toolchain"]) not in seen] + new_rows
        counts = dict(before.get("judged", {}), **judged.get(what_of[sig], {}))
        write_atomic(path, json.dumps({"format": 1, "rows": merged[:MAX_TABLE_ROWS], "rows_total": len(merged),
                                       "judged": counts}, indent=1) + "\n")
    return list(out.values())


def summary(table) -> dict:
    """What the run judged, by conversion: the figures a person reads first (and `--json` prints)."""
    by = {}
    for r in table.results:
        row = by.setdefault(r.probe.what(), {"pass": 0, "wrong": 0, "unfolded": 0, "unsupported": 0, "crash": 0,
                                             "targets_wrong": set(), "first_wrong": ""})
        row[r.status] += 1
        if r.status == "wrong":
            row["targets_wrong"].add(r.arch)
            row["first_wrong"] = row["first_wrong"] or message(r)
    for row in by.values():
        row["targets_wrong"] = sorted(row["targets_wrong"])
    crashes = {}
    for r in table.results:
        if r.status == "crash":
            line = next((ln for ln in r.detail.splitlines() if "Assertion" in ln or "error:" in ln),
                        r.detail.strip().splitlines()[0] if r.detail.strip() else "crash")
            crashes.setdefault(normalise(line.strip())[:300], set()).add(r.probe.what())
    return {"toolchain": table.version, "counts": table.count(), "conversions": by,
            "crashes": {k: sorted(v) for k, v in crashes.items()}}
