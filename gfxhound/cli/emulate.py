"""`gfxhound emulate FILE.ll`: run an LLVM IR kernel on the IR executor and llc's code for it at each -O level on
the machine-code executor, on the same inputs, and say per output which runs agree (oracle/crosscheck.py).

Exit codes (the repro protocol): 0 every run agrees; 1 a disagreement a strict majority of runs decides; 125 cannot
judge (a run met a construct its executor does not model, or a tie); 2 a usage error."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import UserError, check_llc, positive


def add_emulate(sub):
    p = sub.add_parser("emulate", help="run an LLVM IR kernel on the IR executor and its llc code at each -O level "
                                       "on the machine-code executor, and compare the outputs (no GPU needed)",
                       description=__doc__)
    p.add_argument("file", metavar="FILE.ll", help="the LLVM IR module (amdgcn-amd-amdhsa)")
    p.add_argument("--mcpu", default="gfx942", help="the processor llc compiles for")
    p.add_argument("--opt", default="0,2", help="comma-separated llc -O levels, one machine run each")
    p.add_argument("--launch", required=True, metavar="SPEC",
                   help="the arguments, grid and block, in the grammar of `gfxhound fuzz --kernel`'s --launch (or "
                        "@FILE), e.g. "
                        "'a: u32[N]; b: u32[N]; c: u32[N] out; n: N; N: 300; grid: cdiv(N, 256); block: 256'")
    p.add_argument("--kernel", help="the kernel to run (default: the module's only amdgpu_kernel)")
    p.add_argument("--block", default=None, metavar="X[,Y[,Z]]",
                   help="work-items per workgroup when the spec has no 'block:' entry (default 64)")
    p.add_argument("--seed", type=positive(int, least=0), default=0, help="the inputs' seed")
    p.add_argument("--seeds", type=positive(int), default=1, metavar="N",
                   help="try N seeds from --seed on, stopping at the first that does not agree (it is reported)")
    p.add_argument("--llc", default=None, metavar="PATH", help="the llc (default /usr/lib/llvm-22/bin/llc)")
    p.add_argument("--asm", action="append", default=[], metavar="FILE.s",
                   help="also run this assembly as it is (a .s attached to an issue, an edited one); repeatable")
    p.add_argument("--schedule", choices=("forward", "reverse", "alternate"), default="forward",
                   help="the machine's wave order between barriers")
    p.add_argument("--json", action="store_true",
                   help="one JSON object on stdout (format gfxhound.emulate/1) instead of the table")
    p.set_defaults(func=run_emulate)


def _levels(text: str) -> list:
    levels = [t.strip().upper().lstrip("O") for t in text.split(",") if t.strip()]
    if not levels or any(level not in ("0", "1", "2", "3") for level in levels):
        raise UserError(f"--opt {text!r}: give comma-separated levels from 0, 1, 2, 3 (e.g. --opt 0,2)")
    return list(dict.fromkeys(levels))


def _block(text):
    if text is None:
        return None
    try:
        dims = tuple(int(t) for t in text.split(","))
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UserError(f"--block {text!r}: give one to three whole numbers >= 1 (e.g. --block 256 or 16,16)")
    return dims


def _spec_text(argument: str) -> str:
    if not argument.startswith("@"):
        return argument
    try:
        return Path(argument[1:]).read_text()
    except OSError as exc:
        raise UserError(f"--launch {argument}: cannot read it ({exc.strerror})") from None


def run_emulate(args) -> int:
    from gfxhound.amdgcn.codegen import CodegenError, from_s
    from gfxhound.oracle.crosscheck import LaunchError, compare
    if not Path(args.file).is_file():
        raise UserError(f"{args.file}: no such file; give an LLVM IR module (.ll)")
    levels, block = _levels(args.opt), _block(args.block)
    llc = check_llc(args.llc) if args.llc else None
    extra = {}
    for path in args.asm:
        if not Path(path).is_file():
            raise UserError(f"--asm {path}: no such file")
        label = Path(path).name
        extra[label if label not in extra else path] = from_s(path, args.mcpu)
    try:
        result = compare(args.file, args.mcpu, levels, _spec_text(args.launch), llc, args.kernel, args.seed,
                         block, extra, args.schedule, args.seeds)
    except (LaunchError, CodegenError) as exc:
        raise UserError(f"{exc}".splitlines()[0]) from None
    if args.json:
        print(json.dumps(result.to_json(), indent=1, default=_plain))
    else:
        _print(result)
    return result.exit_code


def _plain(value):
    return value.item() if hasattr(value, "item") else str(value)


def _print(result, out=sys.stdout):
    launch, verdict = result.launch, result.verdict
    scalars = ", ".join(f"{k}={v}" for k, v in launch.values.items() if k not in ("grid", "block"))
    print(f"emulate @{result.kernel} on {result.mcpu}: grid {'x'.join(map(str, launch.grid))}, block "
          f"{'x'.join(map(str, launch.block))}, seed {launch.seed}" + (f" ({scalars})" if scalars else "") +
          (f"; {result.seeds_run} seeds tried" if result.seeds_run > 1 else ""), file=out)
    for run in result.runs:
        asm = result.assemblies.get(run.label)
        how = "the LLVM IR executor" if asm is None else \
            f"{'llc -' + asm.opt if asm.source == 'llc' else asm.path} on the machine-code executor"
        state = f"unresolved: {run.unresolved}" if run.unresolved else run.fault or "ran"
        print(f"  {run.label:<6} {how}: {state}" + (f" (note: {run.detail})" if run.detail else ""), file=out)
    labels = [r.label for r in result.runs]
    width = max(6, *(len(x) + 1 for x in labels))
    print(f"  {'buffer':<12}{'role':<7}" + "".join(f"{x:<{width}}" for x in labels) + "verdict", file=out)
    for row in verdict["rows"]:
        letter = {label: "ABCDEFGH"[k] for k, group in enumerate(row["groups"]) for label in group}
        cells = "".join(f"{letter.get(x, '?'):<{width}}" for x in labels)
        print(f"  {row['buffer']:<12}{row['role']:<7}{cells}{row['verdict']}", file=out)
    print("  (same letter: the same bytes; ?: the run could not judge)", file=out)
    for row in verdict["rows"]:
        if row["verdict"] == "disagree":
            diff = row.get("first_difference", {})
            where = f"; first at index {diff['index']}: {diff['value']} where the majority has {diff['majority']} " \
                    f"({diff['count']} elements differ)" if "index" in diff else \
                f"; {diff.get('what', '')}" if diff else ""
            print(f"disagree: {row['buffer']}: {', '.join(row['minority'])} against {', '.join(row['majority'])}"
                  f"{where}", file=out)
        elif row["verdict"] == "tie":
            print(f"unresolved: {row['buffer']}: a tie between " +
                  " | ".join(", ".join(g) for g in row["groups"]) + " (no majority to judge by)", file=out)
    ran = [r for r in result.runs if not r.unresolved]
    if ran and all(r.fault for r in ran):
        print("note: every run that could judge faulted (does the launch reach outside its buffers?)", file=out)
    for item in verdict["unresolved"]:
        print(f"unresolved: {item['construct']} ({item['run']})", file=out)
    print(f"verdict: {verdict['status']} (exit {result.exit_code})", file=out)
