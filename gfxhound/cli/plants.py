"""`gfxhound plants FILE.ll... --launch SPEC`: plant small edits in llc's assembly of each kernel (a dropped wait,
swapped operands, a changed SDWA select, a zero- for a sign-extension, a flipped op_sel_hi bit, a changed bitop3
table bit, a dropped carry, a dropped EXEC restore, a dropped hazard nop), run each planted variant through the
cross-check of `gfxhound emulate` (the IR executor and the unplanted -O levels vote against it), and print per
plant: sites, sites observable by the ISA's def-use rule on the executed path, flagged, the rate, unresolved
(oracle/asm_plants*.py; docs/asm-plants.md).

A directory stands for every .ll in it, each with a launch sidecar: X.launch next to X.ll holds X's --launch
spec (a file without one is skipped, and said so). An observable site the first seed's inputs do not flag is judged
again on the inputs of the next seeds, up to --seeds in all (oracle/asm_plants_seeds.py): a dropped carry or sign
extension is seen only on inputs that exercise it. Exit codes: 0 measured (1 with --min-rate when a plant with
observable sites is flagged less often); 2 a usage error."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import UserError, check_llc, positive


def add_plants(sub):
    p = sub.add_parser("plants", help="plant edits in llc's assembly and measure how often the cross-check of "
                                      "`gfxhound emulate` flags them (no GPU needed)", description=__doc__)
    p.add_argument("files", nargs="+", metavar="FILE.ll|DIR",
                   help="LLVM IR modules (or .s files), or directories of .ll files with .launch sidecars")
    p.add_argument("--launch", metavar="SPEC", default=None,
                   help="the launch of the files given by name (as `gfxhound emulate --launch`, or @FILE); a "
                        "file with a .launch sidecar uses its sidecar when this is not given")
    p.add_argument("--mcpu", default="gfx942", help="the processor llc compiles for")
    p.add_argument("--opt", default="0,2", help="comma-separated llc -O levels: each is planted and each votes")
    p.add_argument("--plant", default="", metavar="NAME,...", help="the plants to run (default: all)")
    p.add_argument("--seed", type=int, default=0, help="the inputs' seed")
    p.add_argument("--seeds", type=positive(int), default=8, metavar="N",
                   help="input seeds a missed observable site is judged on at most: --seed, --seed + 1, ... until "
                        "one flags it (1: the first seed only)")
    p.add_argument("--workers", type=positive(int), default=1, metavar="N",
                   help="processes running kernels side by side, one kernel at a time each (default 1: this one)")
    p.add_argument("--relax", action="store_true",
                   help="drop-waitcnt raises each counter of a wait by one instead of removing the wait")
    p.add_argument("--bit", type=int, default=0, metavar="0..7",
                   help="the truth-table bit bitop3-table flips (default 0: all three inputs 0)")
    p.add_argument("--llc", default=None, metavar="PATH", help="the llc (default /usr/lib/llvm-22/bin/llc)")
    p.add_argument("--min-rate", type=float, default=None, metavar="R",
                   help="exit 1 if a plant with observable sites is flagged in fewer than R of them (0..1)")
    p.add_argument("--json", action="store_true", help="the per-site records and the summary as one JSON object")
    p.set_defaults(func=run_plants)


def _cases(files, launch):
    cases, skipped = [], []
    for name in files:
        path = Path(name)
        if path.is_dir():
            for ll in sorted(path.glob("*.ll")):
                side = ll.with_suffix(".launch")
                (cases.append((ll, side.read_text().strip())) if side.is_file() else skipped.append(str(ll)))
            continue
        if not path.is_file():
            raise UserError(f"{name}: no such file or directory")
        side = path.with_suffix(".launch")
        if launch is not None:
            cases.append((path, launch))
        elif side.is_file():
            cases.append((path, side.read_text().strip()))
        else:
            raise UserError(f"{name}: give --launch SPEC (or a {side.name} sidecar)")
    if not cases:
        raise UserError("no kernel to plant in (a directory needs X.launch next to each X.ll)")
    return cases, skipped


def run_plants(args) -> int:
    from gfxhound.oracle.asm_plants_detect import PLANTS, summarise, table
    if not 0 <= args.bit <= 7:
        raise UserError(f"--bit {args.bit}: a bit of the 8-bit truth table, 0 to 7")
    plants = [p.strip() for p in args.plant.split(",") if p.strip()] or list(PLANTS)
    unknown = [p for p in plants if p not in PLANTS]
    if unknown:
        raise UserError(f"--plant {','.join(unknown)}: not a plant (have: {', '.join(PLANTS)})")
    levels = [t.strip().upper().lstrip("O") for t in args.opt.split(",") if t.strip()]
    if not levels or any(level not in ("0", "1", "2", "3") for level in levels):
        raise UserError(f"--opt {args.opt!r}: give comma-separated levels from 0, 1, 2, 3")
    launch = args.launch
    if launch is not None and launch.startswith("@"):
        try:
            launch = Path(launch[1:]).read_text()
        except OSError as exc:
            raise UserError(f"--launch {launch}: cannot read it ({exc.strerror})") from None
    llc = check_llc(args.llc) if args.llc else None
    cases, skipped = _cases(args.files, launch)
    kw = dict(mcpu=args.mcpu, plants=plants, levels=levels, seed=args.seed, seeds=args.seeds, llc=llc,
              relax=args.relax, bit=args.bit)
    records = []
    for got in _each_case(cases, min(args.workers, len(cases)), kw):
        if isinstance(got, str):
            raise UserError(got)
        records += got
    summary = summarise(records)
    if args.json:
        # /2: each site also says the seed that flagged it and the seeds tried (/1 readers may ignore them)
        print(json.dumps({"format": "gfxhound.plants/2", "mcpu": args.mcpu, "seeds": args.seeds, "summary": summary,
                          "sites": [r.to_json() for r in records], "skipped": skipped}, indent=1))
    else:
        print(f"plants on {args.mcpu}, -O{',-O'.join(levels)}, {len(cases)} kernel(s), input seeds {args.seed}.."
              f"{args.seed + args.seeds - 1} (later-seed: flagged only on a later seed's inputs than the first)")
        print(table(summary, plants))
        for name in skipped:
            print(f"skipped {name}: no .launch sidecar", file=sys.stderr)
    if args.min_rate is not None:
        low = [n for n, row in summary.items() if row["rate"] is not None and row["rate"] < args.min_rate]
        return 1 if low else 0
    return 0


def _case(path, spec, kw) -> list | str:
    """Every plant's records of one kernel, or the one-line message of what the user must fix."""
    from gfxhound.executors.amdgcn.codegen import CodegenError
    from gfxhound.oracle import asm_plants_detect
    from gfxhound.oracle.crosscheck import LaunchError
    records = []
    for plant in kw["plants"]:
        try:
            records += asm_plants_detect.detection(path, spec, kw["mcpu"], plant, kw["levels"], kw["seed"],
                                                   llc=kw["llc"], seeds=kw["seeds"], relax=kw["relax"], bit=kw["bit"])
        except (LaunchError, CodegenError) as exc:
            return f"{path}: {str(exc).splitlines()[0]}"
    return records


def _each_case(cases, workers: int, kw):
    """Each case's result in order. With more than one worker, `workers` forked processes take the cases one kernel
    at a time (a kernel's unplanted runs are cached per process, so one kernel stays in one)."""
    if workers <= 1:
        for path, spec in cases:
            yield _case(path, spec, kw)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    try:
        for future in [pool.submit(_case, path, spec, kw) for path, spec in cases]:
            yield future.result()
    finally:   # a user error stops the rest: nothing queued runs on
        pool.shutdown(wait=True, cancel_futures=True)
