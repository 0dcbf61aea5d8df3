"""What a campaign counts while it runs, and the summary it ends with (printed, or JSON with --json)."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from gfxhound.families import headline
from gfxhound.oracle.limitations import excluded_features

from .config import CampaignConfig


@dataclass
class Stats:
    kernels: int = 0
    verdicts: Counter = field(default_factory=Counter)
    new_signatures: int = 0
    findings: dict = field(default_factory=dict)  # signature -> summary row
    user_errors: Counter = field(default_factory=Counter)
    unresolved: Counter = field(default_factory=Counter)
    coverage: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.time)
    interrupted: bool = False
    unfinished: int = 0  # kernels still in flight (or waiting for a second run) when the campaign stopped
    killed_while_stopping: int = 0  # workers the stopping signal reached too (counted in unfinished)
    pool_restarts: int = 0  # times pebble gave up on the worker pool and a fresh one took over (Campaign.restart)
    stopped_by: str = ""  # "" (the budget or the generator ran out), "interrupt" (Ctrl-C) or "terminate" (SIGTERM)
    phases: Counter = field(default_factory=Counter)  # seconds: the main loop's (generate, wait, record), GPUs'
    timeouts: dict = field(default_factory=dict)  # the adaptive timeouts' figures (timeouts.py)
    compile_seconds: float = 0.0
    verdict_of: dict = field(default_factory=dict)  # spec hash -> verdict, for this run
    seconds_of: dict = field(default_factory=dict)  # spec hash -> its compile's seconds (benchmarks pick by it)
    resources: Counter = field(default_factory=Counter)  # static facts of the kernels that compiled
    execution: Counter = field(default_factory=Counter)  # interpret/device: compared and undetermined elements
    planted: Counter = field(default_factory=Counter)  # --plant: runs, flagged, and the verdicts of the rest
    machine_unresolved: Counter = field(default_factory=Counter)  # emulate: what stopped the machine-code runs
    machine_hazards: list = field(default_factory=list)  # emulate: kernels right but with a machine hazard (record.py)
    executor_ratios: list = field(default_factory=list)  # emulate: (compile seconds, IR + machine-code seconds)

    def rate(self):
        return self.kernels / max(1e-9, time.time() - self.started)


def features_of(spec, features, arch):
    feats = {f"op:{name}" for name in features.ops}
    feats |= {f"dtype:{d}" for d in features.dtypes}
    feats |= {f"control:{c}" for c in features.control}
    feats |= {f"detail:{d}" for d in features.details}
    feats |= {f"knob:num_warps={spec.launch.num_warps}", f"knob:num_stages={spec.launch.num_stages}",
              f"target:{arch}", f"grid:{spec.grid}"}
    feats |= {f"knob:{k}={v}" for k, v in spec.launch.options.items()}
    feats |= {f"env:{k}={v}" for k, v in spec.launch.env.items()}
    if spec.pair:
        feats.add(f"pair:{spec.pair.get('kind')}")
    shape = spec.meta.get("shape")
    if shape:  # a kernel shape (fuzz/shapes.py), and whether all of it was placed
        feats.add(f"shape:{shape}" + (":incomplete" if spec.meta.get("shape_incomplete") else ""))
    return feats


# the JSON summary's schema (docs/schemas/fuzz-summary.json); bump on a change a reader must know of. 2: the
# verdict `unsupported`; each finding's `status` (report/triage.py `standing`); `new` only for what is new to the
# corpus and recorded nowhere (no tracker entry, search or draft). A status a reference corpus (--known) supplied
# carries "from", that corpus's directory: a key added, the version kept (gfxhound/cli/jsonout.py's rule). 3: the
# verdict `hazard`
SUMMARY_FORMAT = "gfxhound.fuzz-summary/3"


def summary_json(stats: Stats, config: CampaignConfig, toolchain: str, known=()) -> dict:
    """`known`: the reference corpora whose records count for each finding's status (`with_status`)."""
    duration = time.time() - stats.started
    n = max(1, stats.kernels)
    summary = {
        "format": SUMMARY_FORMAT, "toolchain": toolchain, "targets": config.targets, "backend": config.backend, "seed": config.seed,
        "kernels": stats.kernels, "duration_s": round(duration, 2), "kernels_per_s": round(stats.kernels / max(
            duration, 1e-9), 3), "interrupted": stats.interrupted, "unfinished": stats.unfinished,
        "stopped_by": stats.stopped_by, "pool_restarts": stats.pool_restarts,
        "phases_s": _phases(stats, duration), "timeouts": stats.timeouts,
        "verdicts": dict(stats.verdicts),
        "user_error_share": round(stats.verdicts.get("user_error", 0) / n, 4),
        "new_signatures": stats.new_signatures,
        "findings": with_status(sorted(stats.findings.values(), key=lambda f: f["signature"]), config.corpus,
                                known),
        "findings_headline": headline(list(stats.findings.values())),
        "resources": dict(stats.resources),
        "execution": _execution_summary(stats, n, config.backend) if config.backend != "compile" else {},
        "planted": _planted_summary(stats.planted, config.plant) if config.plant else {},
        "user_errors": dict(stats.user_errors.most_common(20)), "unresolved": dict(stats.unresolved.most_common(20)),
        "coverage": {k: {"kernels": v, "share": round(v / n, 4)} for k, v in sorted(stats.coverage.items())},
    }
    from gfxhound.fuzz.floors import check
    # only the compile backend keeps each kernel's TTGIR (oracle/ttgir_features.py)
    excluded = excluded_features(config.backend) + ["exclude:ttgir"] if config.backend != "compile" else ()
    summary["coverage_floors"] = check(summary["coverage"], stats.kernels, summary["user_error_share"], excluded)
    if config.backend == "compile":  # the reach matrix reads the TTGIR features only that backend records
        from gfxhound.fuzz.reach import MATRIX_CORE, report
        targets = [t for t in config.targets if t in MATRIX_CORE]
        if targets:
            summary["reach"] = report(summary["coverage"], targets)
    return summary


def with_status(rows: list, corpus_root, known=()) -> list:
    """Each finding's status at a glance as the corpus knows it when the campaign ends (its triage file, drafts,
    verifications) and, where it knows nothing settled, as the reference corpora `known` (directories) know it; and
    `new` narrowed to a finding new to the corpus and recorded nowhere: a bug that a fresh corpus meets for the
    first time but whose upstream report is in its triage.json, or the checked-in corpus's, is "known upstream"."""
    from gfxhound.corpus_store import Corpus, CorpusError
    from gfxhound.report.triage import corpus_triage, references, standing_in
    corpus = Corpus(corpus_root)
    triage = corpus_triage(corpus)
    refs = references(known) if rows else []
    out = []
    for row in rows:
        try:
            status = standing_in(corpus, corpus.get(row["id"]), triage, refs)
        except CorpusError:  # the corpus went away under the campaign: nothing is known of it
            status = {"state": "new", "text": "new", "link": None}
        out.append(dict(row, status=status, new=bool(row.get("new")) and status["state"] == "new"))
    return out


def _phases(stats: Stats, duration: float) -> dict:
    """Where the time went. The main loop's own seconds (generate and submit, wait for a result, judge and record)
    add up to its wall time; compile is worker-seconds summed over kernels (with N workers, up to N x wall);
    gpu_busy is GPU-worker seconds in launches. A main loop mostly in `wait` with compile near N x wall is a
    campaign at the machine's speed."""
    phases = {k: round(v, 2) for k, v in stats.phases.items()}
    phases["compile"] = round(stats.compile_seconds, 2)
    phases["wall"] = round(duration, 2)
    return phases


def _planted_summary(planted, name) -> dict:
    """flagged_share counts the runs that ran: a kernel the compiler could not build tests nothing."""
    not_run = sum(v for k, v in planted.items() if k.startswith("not_run:"))
    ran = planted.get("runs", 0) - not_run
    return dict(planted, name=name, ran=ran, flagged_share=round(planted.get("flagged", 0) / max(1, ran), 4))


def _execution_summary(stats: Stats, n: int, backend: str) -> dict:
    ex = dict(stats.execution)
    ex["excluded_features"] = excluded_features(backend)
    ex["steered_share"] = round((ex.get("kernels_steered", 0) + ex.get("kernels_meeting_a_limitation", 0)) / n, 4)
    ex["undetermined_share"] = round(ex.get("undetermined", 0) / max(1, ex.get("compared", 0)
                                                                     + ex.get("undetermined", 0)), 4)
    if backend == "emulate":  # the three-way judgement (oracle/emulate_machine.py): the share all three judged
        ex["machine_code_share"] = round(ex.get("machine_code_judged", 0) / n, 4)
        ex["machine_code_unresolved"] = dict(stats.machine_unresolved.most_common(20))
        ex["machine_code_hazard_kernels"] = list(stats.machine_hazards)   # spec, target, what the machine saw
        ex["speed"] = _speed(stats.executor_ratios)
    return ex


def _speed(pairs: list) -> dict:
    """The emulate backend's cost against the compile's (the issue's speed figure): medians over the kernels both
    executors ran of the compile's seconds, of the two executors' together, and of their ratio a kernel."""
    if not pairs:
        return {}

    def median(xs):
        xs = sorted(xs)
        return round(xs[len(xs) // 2], 4)
    return {"kernels": len(pairs), "compile_s_median": median(c for c, _ in pairs),
            "executors_s_median": median(e for _, e in pairs),
            "ratio_median": median(e / max(1e-6, c) for c, e in pairs)}
