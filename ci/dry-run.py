#!/usr/bin/env python3
"""A local dry run of the GitHub workflows in .github/workflows: every job's `run:` steps run with bash, as the
runner would run them, in a fresh copy of this working tree, night after night; the steps that cannot run here are
named with the reason.

Why: a workflow is otherwise first run by GitHub, at night, and a step that cannot work (a path the next step does
not find, an apt-get without sudo, a history that never comes back) shows up a day later. Here the shell steps run
for real against the gfxhound of this checkout, with short budgets, and the actions' effects that later steps
need are simulated: the cache (restore-keys prefix, newest first; a saved key is never overwritten), artifacts
(upload, then download into <path>/<name>/), the checkouts (a copy of the working tree; `--no-corpus-branch`
makes the corpus branch missing). What cannot run here, and so is only reported:
  - `uses:` actions (GitHub's code, GitHub's services): simulated as above, or only reported;
  - `make setup`: `make -q tools` checks the Debian tools, and the venv of this checkout is reused (no pip);
  - the ROCm runner's own venv (system ROCm torch): the venv of this checkout is reused;
  - the previous Triton's venv (pip install from PyPI, minutes): not made; PREVIOUS_TRITON and PREVIOUS_PYTHON
    are unset, so the night neither bisects nor measures perf against it;
  - `--backend device` (needs an AMD GPU): BACKEND=compile;
  - budgets: BUDGET becomes --budget (20s), REPRODUCTIONS 1, REDUCE_SECONDS 0 (no reduction).
`sudo` is dropped when running as root without sudo (this machine). Every substitution is printed.

    .venv/bin/python ci/dry-run.py                        # both workflows, one night
    .venv/bin/python ci/dry-run.py nightly-matrix --nights 2 --shards 2 --keep /tmp/dry
Exit 0 when every step that ran passed, 1 when one failed, 2 on a usage error. This file reads the arguments; the
package beside it, ci/dryrun/, does the work.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)  # its package, ci/dryrun/, is found from wherever this is run
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from dryrun import ROOT, WORKFLOWS, DryRun, UsageError  # noqa: E402
from dryrun import Expressions, load_yaml  # noqa: E402,F401 -- tests/ground/test_workflows.py reads them here


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workflows", nargs="*", help="workflow names (nightly-matrix, nightly-rocm); default: all")
    p.add_argument("--nights", type=int, default=1, help="nights in a row (the cache carries between them)")
    p.add_argument("--first-night", default="2026-01-01", help="the first night's date (inputs.night)")
    p.add_argument("--shards", type=int, default=1, help="matrix combinations run per job (in turn)")
    p.add_argument("--budget", default="20s", help="BUDGET, each campaign's (90m and 3h in the workflows)")
    p.add_argument("--step-timeout", type=float, default=900, help="seconds a step may run")
    p.add_argument("--empty-corpus", action="store_true",
                   help="check out a corpus without the findings (keeps triage.json): the night's replay of every "
                        "open finding takes minutes")
    p.add_argument("--no-corpus-branch", action="store_true", help="the ROCm workflow's corpus branch is missing")
    p.add_argument("--venv", default=str(ROOT / ".venv"), help="the venv reused for make setup")
    p.add_argument("--keep", help="a directory for the workspaces, cache and artifacts, kept (default: removed)")
    p.add_argument("--json", help="write the per-step report here")
    args = p.parse_args(argv)
    try:
        if not (Path(args.venv) / ".installed").exists():
            raise UsageError(f"{args.venv}: no venv made by `make setup` (run it first)")
        if args.nights < 1 or args.shards < 1:
            raise UsageError("--nights and --shards must be 1 or more")
        names = args.workflows or sorted(w.stem for w in WORKFLOWS.glob("*.yml"))
        paths = []
        for n in names:
            path = WORKFLOWS / (n if n.endswith(".yml") else f"{n}.yml")
            if not path.exists():
                raise UsageError(f"no workflow {path.relative_to(ROOT)}")
            paths.append(path)
        first = dt.date.fromisoformat(args.first_night)
        state = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="gfxhound-dry-run-"))
        if args.keep and state.exists() and any(state.iterdir()):
            raise UsageError(f"--keep {args.keep}: not empty")
        state.mkdir(parents=True, exist_ok=True)
        try:
            run = DryRun(args, state)
            for night in range(1, args.nights + 1):
                date = (first + dt.timedelta(days=night - 1)).isoformat()
                for path in paths:
                    run.night(path, night, date)
            code = run.report.summary()
            if args.json:
                Path(args.json).write_text(json.dumps(run.report.jobs, indent=1) + "\n")
        finally:
            if not args.keep:
                shutil.rmtree(state, ignore_errors=True)
        if args.keep:
            print(f"  workspaces, cache and artifacts: {state}")
        return code
    except UsageError as exc:
        print(f"dry-run: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
