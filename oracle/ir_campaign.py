"""A campaign of generated LLVM IR kernels (fuzz/ir_kernels.py) judged by `gfxhound emulate`'s comparison
(crosscheck.compare) on each target: how much of the space the two executors can judge, what they cannot (the
`unresolved` table, machine opcodes flagged), every disagreement kept so it re-runs alone, and the machine-code
executor's speed against llc's. `gfxhound emulate-campaign` (gfxhound/cli/emulate_campaign.py) is its command line.

Why worker processes (pebble, as oracle/pool.py): a kernel that runs past its time keeps one worker busy, not the
campaign, and pebble kills it at the task's timeout; a worker that dies is one unresolved kernel.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import tempfile
import time
import warnings
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path

from pebble import ProcessExpired, ProcessPool

from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT

FORMAT = "gfxhound.emulate-campaign/1"
OVER_CAP = "over the time cap"
WORKER_MAX_TASKS = 100  # a worker is replaced after this many kernels (the machine's caches grow)
TIMEOUT_SLACK = 120.0  # seconds a task may take beyond its execution cap (two llc runs, the IR executor) before
#                        pebble kills it


@dataclass
class CampaignConfig:
    count: int
    targets: list
    opts: list
    seed: int = 0
    workers: int = 2
    time_cap: float = 20.0  # seconds of machine-code execution per kernel and target; past it: unresolved
    out: str | None = None
    llc: str | None = None
    progress: object = None  # a callable(done, total) or None
    extra: dict = field(default_factory=dict)


def kernel_seed(seed: int, index: int) -> int:
    """The generator seed of the campaign's `index`-th kernel (one seed names one kernel, whatever the campaign)."""
    return seed * 1_000_000 + index


def judge_one(task: dict) -> dict:
    """In a worker: draw the kernel, write it, compare on one target. Plain data back: exit, reasons, timings."""
    from gfxhound.executors.amdgcn.codegen import CodegenError
    from gfxhound.fuzz.ir_kernels import kernel
    from gfxhound.oracle.crosscheck import LaunchError, compare
    k = kernel(task["kernel_seed"])
    folder = Path(tempfile.mkdtemp(prefix="gfxhound-irk-"))
    path = folder / f"{k.name}.ll"
    path.write_text(k.text)
    out = {"kernel_seed": k.seed, "target": task["target"],
           "input_seed": task["input_seed"], "features": sorted(k.features)}
    try:
        result = compare(path, task["target"], task["opts"], k.launch, task["llc"], seed=task["input_seed"])
    except (LaunchError, CodegenError) as exc:  # llc refusing or crashing on valid IR is the compiler's failure
        out.update(exit=EXIT_CANNOT_TEST, unresolved=[{"run": "llc", "construct": _first_line(exc)}],
                   text=k.text, launch=k.launch)
        return out
    finally:
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
    times = result.timings
    machine, compiled = sum(times["machine"].values()), sum(times["compile"].values())
    out.update(exit=result.exit_code, unresolved=result.verdict["unresolved"],
               timings={"compile": compiled, "machine": machine, "ir": times["ir"]})
    if machine > task["time_cap"]:
        out.update(exit=EXIT_CANNOT_TEST, unresolved=[{"run": "machine", "construct": OVER_CAP}])
    elif result.exit_code == EXIT_ABSENT:
        pass
    elif result.exit_code == EXIT_PRESENT or any(row["verdict"] != "agree" for row in result.verdict["rows"]):
        out.update(text=k.text, launch=k.launch, comparison=result.to_json())
    for row in result.verdict["rows"]:
        if row["verdict"] == "tie":
            out["unresolved"] = out["unresolved"] + [{"run": "vote", "construct": "a tie (no majority)"}]
    return out


def _first_line(exc) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


def _worker_init():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the executors wrap integers on purpose (numpy says so on scalars); the campaign's output is its summary
    warnings.filterwarnings("ignore", category=RuntimeWarning, message="overflow encountered")
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    import gfxhound.executors.amdgcn.run  # noqa: F401 - warm before the first kernel's clock
    import gfxhound.oracle.crosscheck  # noqa: F401


def run_campaign(config: CampaignConfig) -> dict:
    """Every (kernel, target) judged; the summary (`summarise`)."""
    tasks = [{"kernel_seed": kernel_seed(config.seed, i), "input_seed": i, "target": target, "opts": config.opts,
              "llc": config.llc, "time_cap": config.time_cap}
             for i in range(config.count) for target in config.targets]
    # at least two workers: pebble gives up on a pool whose only worker dies while it holds no task (see
    # oracle/pool.py's TargetPools)
    pool = ProcessPool(max_workers=max(2, config.workers), max_tasks=WORKER_MAX_TASKS, initializer=_worker_init,
                       context=multiprocessing.get_context("spawn"))
    started, results = time.time(), []
    try:
        futures = [pool.schedule(judge_one, args=(t,), timeout=config.time_cap + TIMEOUT_SLACK) for t in tasks]
        for task, future in zip(tasks, futures):
            results.append(_outcome(task, future))
            if config.progress:
                config.progress(len(results), len(tasks))
    finally:
        pool.stop()
        pool.join(timeout=10)
    summary = summarise(results, config, time.time() - started)
    if config.out:
        save(summary, results, config)
    return summary


def _outcome(task, future) -> dict:
    base = {"kernel_seed": task["kernel_seed"], "target": task["target"], "input_seed": task["input_seed"]}
    try:
        return future.result()
    except FutureTimeout:
        return {**base, "exit": EXIT_CANNOT_TEST, "unresolved": [{"run": "task", "construct": OVER_CAP}]}
    except ProcessExpired as exc:
        return {**base, "exit": EXIT_CANNOT_TEST,
                "unresolved": [{"run": "task", "construct": f"the worker died (exit {exc.exitcode})"}]}
    except Exception as exc:  # noqa: BLE001 - the harness's own failure on one kernel: named, counted, not fatal
        why = f"harness error: {type(exc).__name__}: {_first_line(exc)}"
        return {**base, "exit": EXIT_CANNOT_TEST, "unresolved": [{"run": "task", "construct": why}]}


# --- the summary ---------------------------------------------------------------------------------------------------
OPCODE = re.compile(r"^(?P<op>[sv]_[a-z0-9_]+)")


def construct_key(construct: str) -> str:
    """A table key for an unresolved reason: numbers, registers and addresses stood in, so one cause is one row."""
    key = re.sub(r"0x[0-9a-fA-F]+", "0x…", construct)
    key = re.sub(r"%[\w.]+", "%…", key)
    key = re.sub(r"\b\d+\b", "N", key)
    return key[:160]


def opcode_class(construct: str) -> str:
    """VALU or SALU where the reason names a v_ or s_ opcode (the machine's model lacks it), else ''."""
    found = OPCODE.match(construct)
    if not found:
        return ""
    return "VALU" if found["op"].startswith("v_") else "SALU"


def percentile(values, q) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def summarise(results: list, config: CampaignConfig, wall: float) -> dict:
    targets = {}
    for target in config.targets:
        mine = [r for r in results if r["target"] == target]
        exits = {str(code): sum(r["exit"] == code for r in mine) for code in (EXIT_ABSENT, EXIT_PRESENT,
                                                                             EXIT_CANNOT_TEST)}
        judged = exits[str(EXIT_ABSENT)] + exits[str(EXIT_PRESENT)]
        targets[target] = {"kernels": len(mine), "exits": exits, "judged": judged,
                           "share_judged": round(judged / len(mine), 4) if mine else None}
    table = {}
    for r in results:
        for item in {(u["run"] if u["run"] in ("IR", "llc", "task", "vote") else "machine",
                      construct_key(u["construct"])) for u in r.get("unresolved", [])}:
            row = table.setdefault(item[1], {"construct": item[1], "executor": item[0], "kernels": 0,
                                             "opcode": opcode_class(item[1]), "example": r["kernel_seed"]})
            row["kernels"] += 1
    timed = [r["timings"] for r in results if "timings" in r]
    ratios = [t["machine"] / t["compile"] for t in timed if t["compile"] > 0]
    timing = {"kernels": len(timed), "time_cap": config.time_cap}
    for what, values in (("compile", [t["compile"] for t in timed]), ("machine", [t["machine"] for t in timed]),
                         ("ir", [t["ir"] for t in timed]), ("machine_over_compile", ratios)):
        timing[what] = {"p50": _round(percentile(values, 50)), "p90": _round(percentile(values, 90))}
    disagreements = [_disagreement(r) for r in results if r["exit"] == EXIT_PRESENT]
    opcodes = sorted(row["construct"] for row in table.values() if row["opcode"])
    return {"format": FORMAT, "kernels": config.count, "seed": config.seed, "targets": targets,
            "opts": list(config.opts), "unresolved": sorted(table.values(), key=lambda row: -row["kernels"]),
            "unresolved_opcodes": opcodes, "disagreements": disagreements, "timing": timing,
            "wall_s": round(wall, 1)}


def _round(x):
    return None if x is None else round(x, 4)


def _disagreement(r) -> dict:
    rows = [row for row in r.get("comparison", {}).get("buffers", []) if row["verdict"] == "disagree"]
    return {"kernel_seed": r["kernel_seed"], "target": r["target"], "input_seed": r["input_seed"],
            "outputs": [{"buffer": row["buffer"], "minority": row["minority"], "majority": row["majority"],
                         "first_difference": row.get("first_difference", {})} for row in rows]}


def save(summary: dict, results: list, config: CampaignConfig):
    """DIR/summary.json, and per disagreement (and per llc failure) DIR/<target>-k<seed>.ll, .launch, .json:
    `gfxhound emulate X.ll --mcpu T --opt O --launch @X.launch --seed S` re-runs it alone."""
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    for r in results:
        if "text" not in r or r["exit"] not in (EXIT_PRESENT, EXIT_CANNOT_TEST):
            continue
        stem = out / f"{r['target']}-k{r['kernel_seed']}"
        stem.with_suffix(".ll").write_text(r["text"])
        stem.with_suffix(".launch").write_text(r["launch"] + "\n")
        rerun = ["gfxhound", "emulate", str(stem.with_suffix(".ll")), "--mcpu", r["target"], "--opt",
                 ",".join(map(str, config.opts)), "--launch", f"@{stem.with_suffix('.launch')}", "--seed",
                 str(r["input_seed"])]
        stem.with_suffix(".json").write_text(json.dumps({"rerun": rerun, **{k: v for k, v in r.items()
                                                                            if k not in ("text", "launch")}},
                                                        indent=1, default=str))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
