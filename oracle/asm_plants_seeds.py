"""Input search for missed plant sites: an observable site the first seed's inputs do not flag is judged again on
the inputs of later seeds until one flags it.

Why: every miss of the one-seed measurement was *masked* -- the planted outputs were byte-identical to the
unplanted run's -- because a dropped carry or a zero- for a sign-extension changes an output only on inputs that
exercise it (a carry that happens, a negative value). Observability stays what asm_plants_flow.observe says on
the FIRST seed's executed path (the search never redefines it); later seeds only give the cross-check more
chances to see an edit that is observable.

Per later seed, in order (seed + 1, seed + 2, ...), for the sites still missed:

- the unplanted runs of that seed are made once per (kernel, seed) and shared by every site and plant
  (asm_plants_detect._baseline, cached by seed; llc's code of the first seed is reused, not compiled again); a
  seed whose unplanted runs cannot judge (they disagree among themselves, one is unresolved) is passed over and
  not counted;
- pre-filter (``prefilter``): for the sites whose edit writes a value (seed "defs"), the original runs once on the
  new inputs with every such site probed (asm_plants_flow.trace's probes: the planted instruction runs on a copy
  of the wave at each execution). Where it wrote exactly what the original wrote at every execution, the planted
  run would repeat the original bit for bit (the machine is deterministic and the state after the site is the
  same), so it is not made: the seed is counted in ``seeds_skipped``. Only a definite "same" skips; an unknown
  value (the machine cannot run the planted instruction, the trace fails) runs the planted text. The pre-filter
  can only save runs: a flag always comes from a planted run judged by the vote, so it never makes a flag;
- the planted run is judged as on the first seed (asm_plants_detect._judge); a flag records the seed. ``changed``
  stays what the first seed's path said (the pre-filter's probes do not rewrite it: a record reads the same with
  or without the pre-filter).
"""
from __future__ import annotations


def search(missed: list, baseline_at, judge, seeds, kernel: str, prefilter: bool = True) -> None:
    """Judge each (record, site, label, text) of `missed` on the inputs of each seed of `seeds` until it is
    flagged; updates the records in place. A seed whose planted run cannot judge is passed over (not counted):
    it must not turn an observable miss into an unresolved site, which would leave the rate's denominator.
    ``baseline_at(seed)`` -> (unplanted runs, Launch, voters, why they cannot judge or ""); ``judge(rec, site,
    label, text, base_run, voters, launch, seed)`` as asm_plants_detect._judge. (Callables, not imports:
    asm_plants_detect imports this module.)"""
    left = list(missed)
    for seed in seeds:
        left = [m for m in left if not m[0].flagged]
        if not left:
            return
        runs, launch, voters, blocked = baseline_at(seed)
        if blocked:
            continue
        for label in dict.fromkeys(m[2] for m in left):
            base_run = next(r for r in runs if r.label == label)
            if base_run.unresolved:
                continue
            here = [m for m in left if m[2] == label]
            same = _unchanged(here, kernel, launch) if prefilter else {}
            for rec, site, _, text in here:
                rec.seeds_tried += 1
                value = same.get(site.index)
                if value is False:
                    rec.seeds_skipped += 1
                    continue
                masked = rec.masked
                judge(rec, site, label, text, base_run, voters, launch, seed)
                if rec.unresolved:   # this seed's planted run cannot judge: passed over, the site stays a miss
                    rec.unresolved, rec.masked = "", masked
                    rec.seeds_tried -= 1


def _unchanged(here: list, kernel: str, launch) -> dict:
    """Instruction index -> whether the planted instruction wrote a different value at some execution (True),
    the same at every one (False), or unknown (a str, None) -- for the "defs" sites of `here`, from one run of
    the original on `launch`'s inputs. {} when the run cannot be traced (nothing is skipped)."""
    from gfxhound.oracle.asm_plants_flow import trace
    probes = {site.index: [planted_instruction(site), None] for _, site, _, _ in here if site.seed == "defs"}
    if not probes:
        return {}
    try:
        trace(here[0][3], kernel, launch, probes)
    except Exception:  # noqa: BLE001 - the pre-filter only saves runs: without it every planted run is made
        return {}
    return {index: slot[1] for index, slot in probes.items()}


def planted_instruction(site):
    """The site's planted statement as an Instruction at the site's index (what the probes run)."""
    import dataclasses

    from gfxhound.executors.amdgcn.asm import parse_statement
    return dataclasses.replace(parse_statement(site.after, site.line, site.index), index=site.index)
