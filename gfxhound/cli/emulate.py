"""`gfxhound emulate FILE`: run a kernel on both executors and the code generators, on the same inputs, and say
per output which runs agree (oracle/crosscheck.py). FILE.ll: the LLVM IR on the IR executor, and llc's code at each
-O level (and, with --codegen triton / --triton, Triton's own code generator's) on the machine-code executor.
FILE.s or a code object (.o, .co, .hsaco): that machine code as it is (with any --asm), its arguments named by its
kernel metadata; no IR, no llc.

A vote decides who is wrong, never an assumption (not "O0 is right"). Exit codes (the repro protocol): 0 every
run agrees (one run: it ran); 1 a disagreement a strict majority of runs decides; 125 cannot judge (a run met a
construct its executor does not model, or a tie: two runs that differ are a tie); 2 a usage error."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from .common import UserError, cache_dir, check_llc, check_python, positive

LL, ASSEMBLY, OBJECTS = (".ll",), (".s",), (".o", ".co", ".hsaco")
RELEASE = re.compile(r"\d+\.\d+(\.\d+)?((rc|a|b|\.post|\.dev)\d+)?")


def add_emulate(sub):
    p = sub.add_parser("emulate", help="run a kernel (LLVM IR, a .s or a code object) on the IR executor and its "
                                       "code from llc at each -O level (and Triton's) on the machine-code executor, "
                                       "and compare the outputs (no GPU needed)",
                       description=__doc__)
    p.add_argument("file", metavar="FILE",
                   help="the kernel: LLVM IR (.ll, amdgcn-amd-amdhsa), or assembly (.s) or a code object (.o, .co, "
                        ".hsaco) to run as it is")
    p.add_argument("--mcpu", default=None,
                   help="the processor the code generators compile for (default gfx942; a .s/.o: its own target)")
    p.add_argument("--opt", default=None,
                   help="comma-separated llc -O levels, one machine run each (default 0,2; 'none': no llc run, "
                        "with --codegen triton or --triton); .ll only")
    p.add_argument("--codegen", choices=("llc", "triton"), default=None,
                   help="triton: add one run of Triton's own code generator (the Triton this Python imports), "
                        "labelled triton-VERSION; llc (default): the --opt levels only; .ll only")
    p.add_argument("--triton", action="append", default=[], metavar="VERSION|PYTHON",
                   help="add one run of this Triton's code generator: a release whose venv gfxhound bisect cached "
                        "(3.7.1) or a python interpreter that imports Triton; repeatable; .ll only")
    p.add_argument("--launch", required=True, metavar="SPEC",
                   help="the arguments, grid and block, in the grammar of `gfxhound fuzz --kernel`'s --launch (or "
                        "@FILE), e.g. "
                        "'a: u32[N]; b: u32[N]; c: u32[N] out; n: N; N: 300; grid: cdiv(N, 256); block: 256'; a "
                        "kernel's unnamed arguments are arg0, arg1, ...")
    p.add_argument("--kernel", help="the kernel to run (default: the file's only kernel)")
    p.add_argument("--block", default=None, metavar="X[,Y[,Z]]",
                   help="work-items per workgroup when the spec has no 'block:' entry (default 64)")
    p.add_argument("--seed", type=positive(int, least=0), default=0, help="the inputs' seed")
    p.add_argument("--seeds", type=positive(int), default=1, metavar="N",
                   help="try N seeds from --seed on, stopping at the first that does not agree (it is reported)")
    p.add_argument("--llc", default=None, metavar="PATH", help="the llc (default /usr/lib/llvm-22/bin/llc); .ll only")
    p.add_argument("--asm", action="append", default=[], metavar="FILE.s",
                   help="also run this assembly (or code object) as it is (a .s attached to an issue, an edited "
                        "one); it votes with the rest; repeatable")
    p.add_argument("--schedule", choices=("forward", "reverse", "alternate"), default="forward",
                   help="the machine's wave order between barriers")
    p.add_argument("--reduce", metavar="DIR", default=None,
                   help=".ll only: when the runs disagree (exit 1), shrink the module with llvm-reduce to the smallest "
                        "one whose same runs are still outvoted by the IR executor and the others (undefined "
                        "behaviour never counts), into DIR/reduced.ll with the command that shows it")
    p.add_argument("--reduce-seconds", type=positive(float), default=900.0, metavar="S",
                   help="--reduce: stop llvm-reduce after S seconds and keep its best so far (default 900)")
    p.add_argument("--name-layer", action="store_true",
                   help=".ll only: for each llc level whose machine code computes something other than the IR "
                        "executor, name the part of LLVM that makes it wrong (-opt-bisect-limit and -global-isel, "
                        "each run judged on the machine; oracle/llvm_layer.py)")
    p.add_argument("--draft", metavar="DIR", default=None,
                   help=".ll only: when llc's code at some level computes something other than the IR executor (the "
                        "reference, never the vote), write an llvm/llvm-project issue draft, DIR/draft.md and "
                        "DIR/reduced.ll (the module as given), compared on gfx942 and gfx950 and with its LLVM layer "
                        "named; check it with `gfxhound report DIR --check`")
    p.add_argument("--witness", metavar="REGEX", default=None,
                   help="with --draft: a PCRE matched over llc's whole .s (grep -Pzq) that holds while the bug is "
                        "there, e.g. the instruction whose result is stored unmasked; the draft's command block "
                        "ends in `! grep -Pzq REGEX reduced.s`, so it exits 1 with the bug and 0 once fixed")
    p.add_argument("--json", action="store_true",
                   help="one JSON object on stdout (format gfxhound.emulate/1) instead of the table")
    p.set_defaults(func=run_emulate)


def _levels(text: str | None, others=None) -> list:
    """The llc levels; 'none' or an empty list only where `others` (other code generators' runs, a list: emulate's
    call) are given. emulate-campaign's --opt passes none: levels only."""
    if text is None:
        return ["0", "2"]
    if others is not None and text.strip().lower() in ("", "none"):
        if not others:
            raise UserError(f"--opt {text!r} leaves no code generator to compare with: give levels (--opt 0,2) "
                            "or add --codegen triton / --triton VERSION")
        return []
    levels = [t.strip().upper().lstrip("O") for t in text.split(",") if t.strip()]
    if not levels or any(level not in ("0", "1", "2", "3") for level in levels):
        raise UserError(f"--opt {text!r}: give comma-separated levels from 0, 1, 2, 3 (e.g. --opt 0,2)"
                        + (" or none" if others is not None else ""))
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


def _tritons(args) -> list:
    """The interpreters whose Triton generates code: --triton's (a release: its venv in the cache `gfxhound
    bisect` keeps; else a path), or this one for --codegen triton alone. Only the CLI reads the environment."""
    if args.codegen == "llc" and args.triton:
        raise UserError("--codegen llc and --triton contradict each other: drop --codegen llc")
    if not args.triton:
        return [sys.executable] if args.codegen == "triton" else []
    from gfxhound.bisect.releases import VenvCache
    cache, out = VenvCache(Path(cache_dir()) / "venvs"), []
    for item in args.triton:
        if RELEASE.fullmatch(item):
            if not cache.ready(item):
                raise UserError(f"--triton {item}: no venv of Triton {item} in {cache.root} (`gfxhound bisect "
                                f"--triton OLD..NEW` builds one per release it tests); or give an interpreter: "
                                "--triton /path/to/python")
            out.append(str(cache.python(item)))
        else:
            try:
                out.append(check_python(item, "--triton"))
            except UserError:
                raise UserError(f"--triton {item!r}: neither a Triton release (e.g. 3.7.1) nor a python "
                                "interpreter") from None
    return out


def _extra(paths, mcpu, taken=()) -> dict:
    """--asm files: label (the file name; the path where two share one) -> Assembly."""
    from gfxhound.executors.amdgcn.codegen import from_object, from_s
    extra = {}
    for path in paths:
        if not Path(path).is_file():
            raise UserError(f"--asm {path}: no such file")
        label = Path(path).name
        read = from_object if Path(path).suffix.lower() in OBJECTS else from_s
        extra[label if label not in extra and label not in taken else path] = read(path, mcpu)
    return extra


def run_emulate(args) -> int:
    from gfxhound.executors.amdgcn.codegen import CodegenError
    from gfxhound.oracle.crosscheck import LaunchError
    suffix = Path(args.file).suffix.lower()
    if suffix not in LL + ASSEMBLY + OBJECTS:
        raise UserError(f"{args.file}: want LLVM IR (.ll), assembly (.s) or a code object "
                        f"({', '.join(OBJECTS)})")
    if not Path(args.file).is_file():
        raise UserError(f"{args.file}: no such file")
    block, spec = _block(args.block), _spec_text(args.launch)
    _draft_arguments(args, suffix)
    try:
        result = (_run_ll if suffix in LL else _run_machine_code)(args, block, spec)
    except (LaunchError, CodegenError) as exc:
        raise UserError(f"{exc}".splitlines()[0]) from None
    layers = _name_layers(args, result, spec, block) if args.name_layer else {}
    if args.json:
        print(json.dumps(dict(result.to_json(), **({"layers": layers} if args.name_layer else {})), indent=1,
                         default=_plain))
    else:
        _print(result)
        for label, found in layers.items():
            print(f"layer ({label}): {found['layer'] or 'the machine code agrees with the IR'}")
            for step in found["steps"]:
                print(f"  {step}")
    if args.reduce:
        _reduce(args, result, spec, suffix)
    if args.draft:
        _draft(args, result, spec, block)
    return result.exit_code


def _draft_arguments(args, suffix):
    """--draft and --witness, checked before anything compiles."""
    if args.draft is None and args.witness is None:
        return
    if args.draft is None:
        raise UserError("--witness goes with --draft DIR: it is the pattern the draft's command block looks for")
    if args.witness is None:
        raise UserError("--draft needs --witness REGEX: which instructions in llc's assembly are the bug is a "
                        "person's reading, and the draft's command block exits 1 only while they match")
    if suffix not in LL:
        raise UserError("--draft: only an LLVM IR module (.ll) goes through llc, whose code the draft shows")
    if not args.witness.strip():
        raise UserError("--witness: an empty pattern matches any assembly, fixed or not: give the instructions")
    try:
        re.compile(args.witness)
    except re.error as exc:
        raise UserError(f"--witness {args.witness!r}: not a regular expression ({exc})") from None
    if Path(args.draft).exists() and not Path(args.draft).is_dir():
        raise UserError(f"--draft {args.draft}: not a directory")


def _draft(args, result, spec, block):
    """The llvm/llvm-project draft (report/draft_wrongcode.py) into --draft DIR, or one line saying why none."""
    from gfxhound.executors.amdgcn.codegen import find_llc
    from gfxhound.report import draft_wrongcode, drafts
    levels = _levels(args.opt, _tritons(args) + args.asm)
    out = sys.stdout if not args.json else sys.stderr
    try:
        draft = draft_wrongcode.build(Path(args.file), spec, levels, result.mcpu, args.witness, find_llc(args.llc),
                                      result.kernel, result.launch.seed, block, primary=result)
    except draft_wrongcode.NothingToDraft as exc:
        print(f"--draft: no draft: {exc}", file=sys.stderr)
        return
    path = drafts.write(draft, Path(args.draft))
    print(f"draft: {path} ({draft.upstream}: {draft.title})", file=out)
    if draft.reproduced:
        print("draft: its command block exits 1 here (the witness matches llc's code); check it as a maintainer "
              f"would with `gfxhound report {Path(args.draft)} --check`", file=out)
    else:
        print(f"warning: --witness does not match: {draft.check}; the draft is not ready", file=sys.stderr)
    if draft.leaks:
        print(f"warning: the draft still names {', '.join(draft.leaks)}: edit it before filing", file=sys.stderr)


def _reduce(args, result, spec, suffix):
    """llvm-reduce the module while the same runs stay outvoted (reduce/llvm_ir.py miscompile_property)."""
    from gfxhound.executors.amdgcn.codegen import find_llc
    from gfxhound.corpus_store.layout import REDUCED_LL
    from gfxhound.reduce.llvm_ir import ReduceError, miscompile_property, reduce_ir
    if suffix not in LL:
        raise UserError("--reduce: only an LLVM IR module (.ll) is reduced")
    rows = [row for row in result.verdict["rows"] if row["verdict"] != "agree"]
    minorities = {tuple(sorted(row.get("minority", ()))) for row in rows}
    if result.exit_code != 1 or len(minorities) != 1:
        print("--reduce: nothing to reduce (no disagreement that one set of runs loses in every output)",
              file=sys.stderr)
        return
    from .reduce import _default_llvm_reduce
    levels = [int(level) for level in _levels(args.opt, _tritons(args) + args.asm)]
    prop = miscompile_property(spec, result.mcpu, levels, minorities.pop(), find_llc(args.llc), args.kernel,
                               result.launch.seed, _tritons(args))
    try:
        reduced = reduce_ir(Path(args.file), prop, Path(args.reduce), _default_llvm_reduce(),
                            timeout_s=args.reduce_seconds, log=lambda line: print(line, file=sys.stderr))
    except ReduceError as exc:
        raise UserError(f"--reduce: {exc}") from None
    print(f"reduced: {reduced.lines_before} -> {reduced.lines_after} lines in {reduced.seconds} s: "
          f"{Path(args.reduce) / REDUCED_LL}; in that folder: {' '.join(_quoted(reduced.command))}",
          file=sys.stderr)


def _name_layers(args, result, spec, block) -> dict:
    """label -> the llvm-layer record of each llc level whose outputs differ from the IR executor's (judged
    against the IR itself, not the vote: every code generator may share one bug)."""
    from gfxhound.executors.amdgcn.codegen import find_llc
    from gfxhound.oracle.llvm_layer import Judge, name_layer
    if Path(args.file).suffix.lower() not in LL:
        raise UserError("--name-layer: only an LLVM IR module (.ll) goes through llc's passes")
    found = {}
    for label, asm in result.assemblies.items():
        if asm.source != "llc":
            continue
        try:
            judge = Judge(args.file, result.mcpu, asm.opt, spec, find_llc(args.llc), result.kernel,
                          result.launch.seed, block)
        except ValueError as exc:  # the IR itself cannot be run: nothing to judge llc's code against
            found[label] = {"layer": f"cannot tell: {exc}", "steps": []}
            continue
        found[label] = name_layer(judge).to_json()
    return found


def _quoted(command):
    import shlex
    return [shlex.quote(str(part)) for part in command]


def _run_ll(args, block, spec):
    from gfxhound.oracle.crosscheck import compare
    tritons = _tritons(args)
    levels, mcpu = _levels(args.opt, tritons + args.asm), args.mcpu or "gfx942"
    llc = check_llc(args.llc) if args.llc else None
    voters = 1 + len(levels) + len(tritons) + len(args.asm)
    if not levels and voters < 3:
        print(f"warning: {voters} runs vote; two that differ are a tie (exit 125): add --opt levels or another "
              "--triton to let a majority decide", file=sys.stderr)
    return compare(args.file, mcpu, levels, spec, llc, args.kernel, args.seed, block, _extra(args.asm, mcpu),
                   args.schedule, args.seeds, tritons)


def _run_machine_code(args, block, spec):
    """A .s or a code object as it is: no IR, no code generator to choose."""
    from gfxhound.executors.amdgcn.codegen import from_object, from_s
    from gfxhound.oracle.crosscheck import compare_assembly
    given = [flag for flag, value in (("--opt", args.opt), ("--llc", args.llc), ("--codegen", args.codegen),
                                      ("--triton", args.triton)) if value not in (None, [])]
    if given:
        raise UserError(f"{' and '.join(given)}: only for LLVM IR (.ll); {args.file} is machine code, run as it is")
    first = (from_object if Path(args.file).suffix.lower() in OBJECTS else from_s)(args.file, args.mcpu or "")
    label = Path(args.file).name
    assemblies = {label: first, **_extra(args.asm, first.mcpu, (label,))}
    return compare_assembly(assemblies, spec, args.kernel, args.seed, block, args.schedule, args.seeds)


def _size(result, row) -> int:
    index = result.launch.names.index(row["buffer"])
    return int(result.launch.args[index].size)


def _plain(value):
    return value.item() if hasattr(value, "item") else str(value)


def _print(result, out=sys.stdout):
    from gfxhound.oracle.crosscheck import codegen_of, group_values
    launch, verdict = result.launch, result.verdict
    scalars = ", ".join(f"{k}={v}" for k, v in launch.values.items() if k not in ("grid", "block"))
    print(f"emulate @{result.kernel} on {result.mcpu}: grid {'x'.join(map(str, launch.grid))}, block "
          f"{'x'.join(map(str, launch.block))}, seed {launch.seed}" + (f" ({scalars})" if scalars else "") +
          (f"; {result.seeds_run} seeds tried" if result.seeds_run > 1 else ""), file=out)
    for run in result.runs:
        asm = result.assemblies.get(run.label)
        how = "the LLVM IR executor" if asm is None else f"{codegen_of(asm)}" + (
            f" (Triton's own code generator, under {asm.command[0]})" if asm.source == "triton" and asm.command
            else "") + " on the machine-code executor"
        state = f"unresolved: {run.unresolved}" if run.unresolved else run.fault or "ran"
        print(f"  {run.label:<{max(6, *(len(r.label) for r in result.runs))}} {how}: {state}" + (f" (note: {run.detail})" if run.detail else ""), file=out)
    labels = [r.label for r in result.runs]
    width = max(6, *(len(x) + 1 for x in labels))
    print(f"  {'buffer':<12}{'role':<7}" + "".join(f"{x:<{width}}" for x in labels) + "verdict", file=out)
    for row in verdict["rows"]:
        letter = {label: "ABCDEFGH"[k] for k, group in enumerate(row["groups"]) for label in group}
        cells = "".join(f"{letter.get(x, '?'):<{width}}" for x in labels)
        print(f"  {row['buffer']:<12}{row['role']:<7}{cells}{row['verdict']}", file=out)
    print("  (same letter: the same bytes; ?: the run could not judge)", file=out)
    if verdict["rows"]:
        print("  values (the first 8 elements of each letter's bytes):", file=out)
    for row in verdict["rows"]:
        for k, values in enumerate(group_values(row, result.runs)):
            shown = values if isinstance(values, str) else \
                "[" + ", ".join(map(str, values)) + (", ...]" if _size(result, row) > len(values) else "]")
            print(f"    {row['buffer']} {'ABCDEFGH'[k]}: {shown}", file=out)
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
