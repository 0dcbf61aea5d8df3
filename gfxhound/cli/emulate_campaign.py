"""`gfxhound emulate-campaign --count N --mcpu gfx942,gfx950 --opt 0,2`: N generated LLVM IR kernels
(fuzz/ir_kernels.py), each judged as `gfxhound emulate` judges one (llc's code at each -O level on the
machine-code executor against the IR executor) on every target (oracle/ir_campaign.py). It reports the share
judged per target, the `unresolved` table (machine opcodes flagged VALU/SALU), every disagreement (kept under
--out so it re-runs alone) and the machine's execution time against llc's compile time.

Exit: 0 no disagreement, 1 at least one (the repro protocol's "present"), 2 a usage error."""
from __future__ import annotations

import json
import sys

from .common import KNOWN_ARCHS, UserError, check_llc, positive


def add_emulate_campaign(sub):
    p = sub.add_parser("emulate-campaign", help="generated LLVM IR kernels judged by `gfxhound emulate` at each -O "
                                                "level on each target: the share judged, what is unresolved, "
                                                "every disagreement (no GPU needed)", description=__doc__)
    p.add_argument("--count", type=positive(int), default=100, help="kernels to generate (each runs on every target)")
    p.add_argument("--mcpu", default="gfx942", help="comma-separated processors, e.g. gfx942,gfx950")
    p.add_argument("--opt", default="0,2", help="comma-separated llc -O levels, one machine run each")
    p.add_argument("--seed", type=positive(int, least=0), default=0, help="the campaign's seed (kernel i's "
                                                                          "generator seed is seed * 10^6 + i)")
    p.add_argument("--workers", type=positive(int), default=2, help="worker processes (at least 2 run)")
    p.add_argument("--time-cap", type=positive(float), default=20.0, metavar="SECONDS",
                   help="machine-code execution per kernel and target past which it is unresolved ('over the "
                        "time cap'; default 20)")
    p.add_argument("--llc", default=None, metavar="PATH", help="the llc (default /usr/lib/llvm-22/bin/llc)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="keep summary.json and each disagreement as .ll + .launch + .json here")
    p.add_argument("--json", action="store_true",
                   help="one JSON object on stdout (format gfxhound.emulate-campaign/1) instead of the report")
    p.set_defaults(func=run_emulate_campaign)


def _targets(text: str) -> list:
    targets = list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    unknown = [t for t in targets if t not in KNOWN_ARCHS or not t.startswith("gfx9")]
    if not targets or unknown:
        raise UserError(f"--mcpu {text!r}: give comma-separated gfx9 processors (e.g. gfx942,gfx950); "
                        f"{', '.join(unknown) or 'none given'} is not one")
    return targets


def run_emulate_campaign(args) -> int:
    from gfxhound.oracle.ir_campaign import CampaignConfig, run_campaign
    from gfxhound.protocol import EXIT_ABSENT, EXIT_PRESENT

    from .emulate import _levels
    llc = check_llc(args.llc) if args.llc else None
    targets, levels = _targets(args.mcpu), _levels(args.opt)

    def progress(done, total):
        if not args.json and sys.stderr.isatty():
            print(f"\r{done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)
    summary = run_campaign(CampaignConfig(args.count, targets, levels, args.seed, args.workers, args.time_cap,
                                          args.out, llc, progress))
    if args.json:
        print(json.dumps(summary, indent=1, default=str))
    else:
        print_summary(summary)
    return EXIT_PRESENT if summary["disagreements"] else EXIT_ABSENT


def print_summary(s: dict, out=sys.stdout):
    print(f"emulate-campaign: {s['kernels']} kernels, seed {s['seed']}, -O{',-O'.join(s['opts'])}, "
          f"{s['wall_s']} s", file=out)
    for target, t in s["targets"].items():
        share = f"{100 * t['share_judged']:.1f}%" if t["share_judged"] is not None else "-"
        print(f"  {target}: judged {t['judged']} of {t['kernels']} ({share}): agree {t['exits']['0']}, "
              f"disagree {t['exits']['1']}, unresolved {t['exits']['125']}", file=out)
    if s["unresolved"]:
        print("unresolved (construct: kernels; [VALU]/[SALU]: an opcode the machine does not model):", file=out)
        for row in s["unresolved"][:25]:
            flag = f"[{row['opcode']}] " if row["opcode"] else ""
            print(f"  {row['kernels']:5d}  {flag}{row['construct']} ({row['executor']}; e.g. kernel seed "
                  f"{row['example']})", file=out)
        if len(s["unresolved"]) > 25:
            print(f"  ... {len(s['unresolved']) - 25} more rows (--json has them all)", file=out)
    if s["unresolved_opcodes"]:
        print(f"VALU/SALU opcodes unresolved: {', '.join(s['unresolved_opcodes'])} (no '0 false alarms' claim "
              "while any is left)", file=out)
    for d in s["disagreements"]:
        for o in d["outputs"]:
            diff = o["first_difference"]
            where = f" first at index {diff['index']}: {diff['value']} where the majority has {diff['majority']}" \
                if "index" in diff else f" {diff.get('what', '')}"
            print(f"disagree: kernel seed {d['kernel_seed']} on {d['target']} (inputs seed {d['input_seed']}): "
                  f"{o['buffer']}: {', '.join(o['minority'])} against {', '.join(o['majority'])};{where}", file=out)
    t = s["timing"]
    if t["kernels"]:
        print(f"timing over {t['kernels']} kernel runs (s, per kernel and target, all -O levels): compile p50 "
              f"{t['compile']['p50']} p90 {t['compile']['p90']}; machine-code execution p50 {t['machine']['p50']} "
              f"p90 {t['machine']['p90']}; execution / compile p50 {t['machine_over_compile']['p50']} p90 "
              f"{t['machine_over_compile']['p90']}; IR executor p50 {t['ir']['p50']} p90 {t['ir']['p90']}; "
              f"cap {t['time_cap']} s", file=out)
