"""Detection of assembly plants (oracle/asm_plants.py) by the cross-check, and the detection rate per plant.

Why its own module: the plants are edits and the observability is an analysis of the original's executed path
(asm_plants_flow.py); this module only runs and counts. ``detection`` runs what ``gfxhound emulate FILE.ll --asm
PLANTED.s`` runs -- the IR executor and llc's code at each level in ``opts``, unplanted, vote with the planted
assembly (crosscheck.vote) -- except that the unplanted runs are made once per kernel and reused for every site.

A site is *flagged* when the planted run is outvoted (the vote's exit 1 with the planted run in the minority), or
the machine reports a fault for it, or reads of a register whose load was not waited for (``Result.hazards``) that
the unplanted run of that level does not have. A planted run that meets something the machine does not model is
*unresolved* (counted apart, never flagged). Where the IR executor cannot judge the launch (a 2-D workgroup) the
vote is between the -O levels and the planted run alone (``judges`` says so); where the unplanted runs do not
agree among themselves, every site of that kernel is unresolved. A ``.s`` given instead of a ``.ll`` has no IR and
no other level: the planted run is compared with the unplanted run of the same text (a weaker judge, said so).
drop-hazard-nop sites are judged by the machine's wait-state rows (executors/amdgcn/machine_hazards.py): observable when
the original run, replayed without the nop, breaks a checked row; flagged when the planted run reports one (the run could
only repeat the original's outputs).

Besides the ISA's observability (asm_plants_flow.observe), each record says whether the edited instruction wrote
a different value at the site on the original's path (``changed``) and whether a miss left every output as the
unplanted run had it (``masked``): a miss that is masked is an edit no output oracle can see on these inputs.
With ``seeds`` > 1 a missed observable site is judged again on later seeds' inputs (asm_plants_seeds.py: one
unplanted baseline per (kernel, seed), shared by every site and plant); the record says which seed flagged it.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from pathlib import Path

from gfxhound.oracle.asm_plants import PLANTS, apply, sites

__all__ = ["PLANTS", "SiteRecord", "detection", "measure", "summarise", "table"]


@dataclass
class SiteRecord:
    plant: str
    source: str           # the .ll or .s
    level: str            # the assembly planted: "O2", or the .s name
    line: int
    before: str
    after: str
    observable: bool | None   # None: cannot be resolved (no hazard model)
    why: str                  # the observability reason (asm_plants_flow.observe)
    flagged: bool = False
    how: str = ""             # "outvoted" | "fault" | "hazard" | "" (not flagged)
    unresolved: str = ""      # the planted (or unplanted) run could not judge: the construct
    judges: str = ""          # the runs the planted one was voted against
    changed: bool | None = None   # the edited instruction, run on the original's state at each execution of the
                                  # site, writes some register differently (None: not a value edit, or unknown)
    masked: bool = False      # not flagged, and the planted outputs equal the unplanted run's of that level: on
                              # these inputs the edit changes no output (no output oracle can see it)
    seed: int | None = None   # the inputs' seed whose run flagged it (None: not flagged)
    seeds_tried: int = 0      # input seeds it was judged on (1: the first only; asm_plants_seeds.search says more)
    seeds_skipped: int = 0    # of those, seeds where the edited instruction wrote what the original wrote at every
                              # execution on the path (the planted run would repeat the original: not made)

    def to_json(self) -> dict:
        return asdict(self)


def _planted_run(label, text, mcpu, kernel, launch, schedule):
    from gfxhound.executors.amdgcn.codegen import Assembly
    from gfxhound.oracle.crosscheck import run_machine
    return run_machine(label, Assembly(text, mcpu, "s", path=label), kernel, launch, schedule)


def detection(source, launch_text: str, mcpu: str = "gfx942", plant: str = "drop-waitcnt", opts=(0, 2),
              seed: int = 0, block=None, llc: str | None = None, kernel: str | None = None,
              schedule: str = "forward", seeds: int = 1, prefilter: bool = True, **options) -> list:
    """Per-site records of `plant` in llc's code of `source` (a .ll: each level of `opts`) or in `source` itself
    (a .s). ``options`` go to the plant's edit. With ``seeds`` > 1 an observable site the inputs of `seed` do not
    flag is judged again on the inputs of seed + 1, ... (at most `seeds` in all) until one flags it
    (asm_plants_seeds.search; ``prefilter``: skip a seed where the edit writes the same values on the path).
    Raises LaunchError / CodegenError for what the user must fix."""
    from gfxhound.oracle.asm_plants_flow import effects, hazard_observable, observe, trace
    from gfxhound.oracle.asm_plants_seeds import planted_instruction, search
    if plant not in PLANTS:
        raise KeyError(f"no plant {plant!r} (have: {', '.join(PLANTS)})")
    source, block = Path(source), (tuple(block) if block is not None else None)
    key = (str(source.resolve()), source.stat().st_mtime_ns, launch_text, mcpu, tuple(opts))
    rest = (block, llc, kernel, schedule)
    targets, base_runs, launch, kernel, _ = _baseline(*key, seed, *rest)
    voters, blocked, judges = _judges(base_runs, launch, source)
    judge = functools.partial(_judge, plant, mcpu, kernel, schedule)
    records, missed = [], []
    for label, text in targets:
        found = sites(text, plant, mcpu, kernel, **options)
        if not found:
            continue
        log = fx = None
        base_run = next(r for r in base_runs if r.label == label)
        if not blocked and not base_run.unresolved:
            from gfxhound.executors.amdgcn.asm import parse_program
            fn = parse_program(text).function(kernel)
            fx = [effects(i) for i in fn.instructions]
            probes = {site.index: [planted_instruction(site), None] for site in found if site.seed == "defs"}
            log = trace(text, kernel, launch, probes)
        for site in found:
            rec = SiteRecord(plant, str(source), label, site.line, site.before, site.after, None, "", judges=judges)
            records.append(rec)
            if blocked or log is None:
                rec.unresolved = blocked or f"{label}: {base_run.unresolved}"
                rec.why = "the unplanted runs cannot judge"
                continue
            if site.seed == "hazard":   # the machine's wait-state rows decide (executors/amdgcn/machine_hazards.py)
                from gfxhound.executors.amdgcn.machine_kernel import Kernel
                rec.observable, rec.why = hazard_observable(log, Kernel(fn).infos, site.index)
            else:
                rec.observable, rec.why = observe(log, fx, site.index, site.seed)
            if site.index in probes and site.seed == "defs":
                value = probes[site.index][1]
                rec.changed = value if isinstance(value, bool) else None
                if isinstance(value, str):
                    rec.why += f"; value unknown: {value}"
            rec.seeds_tried = 1
            judge(rec, site, label, text, base_run, voters, launch, seed)
            if rec.observable and not rec.flagged and not rec.unresolved:
                missed.append((rec, site, label, text))
    if seeds > 1 and missed:
        def at(later):
            runs, launch = _baseline(*key, later, *rest, seed)[1:3]
            return (runs, launch) + _judges(runs, launch, source)[:2]
        search(missed, at, judge, range(seed + 1, seed + seeds), kernel, prefilter)
    return records


def _judges(base_runs, launch, source) -> tuple:
    """(voters, blocked, judges) of the unplanted runs of one kernel on one seed's inputs: the runs that vote,
    why they cannot judge ("" when they can), and who judges, in words."""
    from gfxhound.oracle.crosscheck import IR_LABEL, vote
    ir = next((r for r in base_runs if r.label == IR_LABEL), None)
    voters = [r for r in base_runs if not (r.label == IR_LABEL and r.unresolved)]
    blocked = next((f"{r.label}: {r.unresolved}" for r in voters if r.unresolved), "")
    if not blocked and len(voters) > 1 and vote(voters, launch.roles)["status"] != "agree":
        blocked = "the unplanted runs do not agree among themselves"
    if not blocked and len(voters) < 2 and Path(source).suffix != ".s":
        blocked = "fewer than two unplanted runs can judge"
    judges = ", ".join(r.label for r in voters) + \
        (f" (IR left out: {ir.unresolved})" if ir is not None and ir.unresolved else "")
    return voters, blocked, judges


def _judge(plant, mcpu, kernel, schedule, rec, site, label, text, base_run, voters, launch, seed) -> None:
    """Run the planted text of `site` on `launch`'s inputs and judge it against the unplanted runs of that seed:
    sets rec.flagged / how / seed, or rec.unresolved; rec.masked stays True only while every planted run so far
    left the outputs of the unplanted run of its level as they were."""
    from gfxhound.oracle.crosscheck import vote
    name = f"{label}*{plant}@{site.line}"
    run = _planted_run(name, apply(text, site), mcpu, kernel, launch, schedule)
    if run.unresolved:
        rec.unresolved = run.unresolved
    elif run.fault and not base_run.fault:
        rec.flagged, rec.how = True, "fault"
    elif run.detail and run.detail != base_run.detail:
        rec.flagged, rec.how = True, "hazard"
    else:
        verdict = vote(voters + [run], launch.roles)
        minority = {x for row in verdict["rows"] for x in row.get("minority", ())}
        if verdict["status"] == "disagree" and name in minority:
            rec.flagged, rec.how = True, "outvoted"
        elif verdict["status"] == "unresolved":
            rec.unresolved = "a tie in the vote"
    first = rec.seeds_tried <= 1
    rec.masked = not rec.flagged and not rec.unresolved and (first or rec.masked) and _same_outputs(run, base_run)
    rec.seed = seed if rec.flagged else None


@functools.lru_cache(maxsize=32)
def _baseline(path, mtime, launch_text, mcpu, opts, seed, block, llc, kernel, schedule, compiled_at=None):
    """The unplanted runs of one kernel on one seed's inputs, made once for every plant and every site: (targets
    [(label, text)], runs, Launch, kernel). The key is the kernel and the seed (32 entries: a kernel's seeds of an
    input search stay while its plants run). ``mtime`` is part of the key: an edited file is compiled again.
    ``compiled_at``: the seed whose entry already holds llc's code (a later seed's inputs run that code; llc is
    not run again)."""
    from gfxhound.oracle.crosscheck import compare
    if path.endswith(".s"):
        return _from_s(Path(path), launch_text, mcpu, kernel, seed, block, schedule)
    if compiled_at is not None:
        first = _baseline(path, mtime, launch_text, mcpu, opts, compiled_at, block, llc, kernel, schedule)
        base = compare(path, mcpu, [], launch_text, llc, first[3], seed, block, extra=first[4], schedule=schedule)
    else:
        base = compare(path, mcpu, list(opts), launch_text, llc, kernel, seed, block, schedule=schedule)
    targets = [(r.label, base.assemblies[r.label].text) for r in base.runs if r.label in base.assemblies]
    return targets, base.runs, base.launch, base.kernel, base.assemblies


def _same_outputs(run, other) -> bool:
    from gfxhound.oracle.crosscheck import _same
    return not run.fault and not other.fault and run.outputs.keys() == other.outputs.keys() and \
        all(_same(run.outputs[k], other.outputs[k]) for k in run.outputs)


def _from_s(path, launch_text, mcpu, kernel, seed, block, schedule):
    """A .s alone: its own unplanted run is the one judge."""
    from gfxhound.executors.amdgcn.abi import kernel_abis
    from gfxhound.oracle.crosscheck import LaunchError, run_machine
    from gfxhound.oracle.crosscheck_launch import make_launch
    from gfxhound.executors.amdgcn.codegen import from_s
    asm = from_s(path, mcpu)
    abis = kernel_abis(asm.text)
    if kernel is None:
        if len(abis) != 1:
            raise LaunchError(f"{path}: {len(abis)} kernels; name one")
        kernel = next(iter(abis))
    visible = [a for a in abis[kernel].kernargs if not a.hidden]
    params = [((("p", 1) if a.value_kind == "global_buffer" else ("i", 8 * a.size)), a.name or str(k))
              for k, a in enumerate(visible)]
    launch = make_launch(launch_text, params, seed, block)
    label = path.name
    return [(label, asm.text)], [run_machine(label, asm, kernel, launch, schedule)], launch, kernel, None


# ---- the rate ---------------------------------------------------------------------------------------------------
def summarise(records: list) -> dict:
    """plant -> {sites, executed-observable counts, flagged (of the observable; flagged_later: on a later seed's
    inputs than the first), rate, unresolved, flagged_other}."""
    out = {}
    for rec in records:
        row = out.setdefault(rec.plant, {"sites": 0, "observable": 0, "flagged": 0, "unresolved": 0,
                                         "flagged_unobservable": 0, "masked": 0, "changed": 0,
                                         "flagged_changed": 0, "flagged_later": 0, "missed": []})
        row["sites"] += 1
        if rec.unresolved or rec.observable is None:
            row["unresolved"] += 1
            continue
        if rec.observable:
            row["observable"] += 1
            row["changed"] += rec.changed is True
            row["flagged_changed"] += rec.changed is True and rec.flagged
            if rec.flagged:
                row["flagged"] += 1
                row["flagged_later"] += rec.seeds_tried > 1   # not on the first seed's inputs: a later one's
            else:
                row["masked"] += rec.masked
                tried = f"{rec.seeds_tried} seeds; " if rec.seeds_tried > 1 else ""
                row["missed"].append(f"{Path(rec.source).name} {rec.level} line {rec.line}: {rec.before} -> "
                                     f"{rec.after or '(removed)'} [{tried}" + ("masked: same outputs" if rec.masked
                                                                              else "outputs differ, not flagged") +
                                     {True: "; the site's value changed]", False: "; the site's value is the "
                                      "same on this path]"}.get(rec.changed, "]"))
        elif rec.flagged:
            row["flagged_unobservable"] += 1
    kernels = {}   # per kernel (source, level) with an observable site: was any / every such site flagged
    for rec in records:
        if rec.observable and not rec.unresolved:
            kernels.setdefault(rec.plant, {}).setdefault((rec.source, rec.level), []).append(rec.flagged)
    for plant, row in out.items():
        seen = kernels.get(plant, {}).values()
        row["kernels"] = len(seen)
        row["kernels_any_flagged"] = sum(any(f) for f in seen)
        row["kernels_all_flagged"] = sum(all(f) for f in seen)
    for row in out.values():
        row["rate"] = row["flagged"] / row["observable"] if row["observable"] else None
        unmasked = row["observable"] - row["masked"]
        row["rate_unmasked"] = row["flagged"] / unmasked if unmasked else None
        row["rate_changed"] = row["flagged_changed"] / row["changed"] if row["changed"] else None
    return out


def measure(cases: list, plants=None, mcpu: str = "gfx942", opts=(0, 2), seed: int = 0, seeds: int = 1,
            **options) -> list:
    """Records of every plant (default: all) over `cases`, a list of (.ll or .s path, launch spec text); `seeds`
    as in detection."""
    records = []
    for path, spec in cases:
        for plant in plants or list(PLANTS):
            records += detection(path, spec, mcpu, plant, opts, seed, seeds=seeds, **options)
    return records


def table(summary: dict, plants=None) -> str:
    """One line per plant: sites, observable, flagged, rate, unresolved, changed, masked (and what was flagged
    though not observable), later-seed (flagged only by a later seed's inputs: the input search); per plant the
    kernels (file, -O level) with an observable site and in how many any / every such site was flagged; then the
    missed observable sites."""
    lines = [f"{'plant':<20}{'sites':>6}{'observable':>11}{'flagged':>8}{'rate':>8}{'unresolved':>11}"
             f"{'changed':>8}{'rate-changed':>13}{'masked':>7}{'rate-unmasked':>14}{'flagged-unobs':>14}"
             f"{'later-seed':>11}"]
    for name in plants or list(PLANTS):
        row = summary.get(name, {"sites": 0, "observable": 0, "flagged": 0, "unresolved": 0, "masked": 0,
                                 "changed": 0, "flagged_unobservable": 0, "flagged_later": 0, "rate": None,
                                 "rate_unmasked": None,
                                 "rate_changed": None, "missed": []})
        rate, unmasked, changed = ("n/a" if r is None else f"{100 * r:.0f}%"
                                   for r in (row["rate"], row["rate_unmasked"], row["rate_changed"]))
        lines.append(f"{name:<20}{row['sites']:>6}{row['observable']:>11}{row['flagged']:>8}{rate:>8}"
                     f"{row['unresolved']:>11}{row['changed']:>8}{changed:>13}{row['masked']:>7}{unmasked:>14}"
                     f"{row['flagged_unobservable']:>14}{row['flagged_later']:>11}")
    lines.append(f"{'per kernel (file, level)':<28}{'observable in':>14}{'any flagged':>12}{'all flagged':>12}")
    for name in plants or list(PLANTS):
        row = summary.get(name, {})
        lines.append(f"  {name:<26}{row.get('kernels', 0):>14}{row.get('kernels_any_flagged', 0):>12}"
                     f"{row.get('kernels_all_flagged', 0):>12}")
    for name in plants or list(PLANTS):
        for missed in summary.get(name, {}).get("missed", []):
            lines.append(f"missed {name}: {missed}")
    return "\n".join(lines)
