"""The nightly driver: campaign shards -> merged corpus -> triage of what is new (reproduce k of k, reduce, bisect
against the previous toolchain, draft) -> what the toolchain fixed -> compile-time and resource regressions ->
night.json, JUnit XML, an HTML summary and the drafts.

Why every stage is a `gfxhound` subprocess with a timeout: the stages already exist as commands that read and
write the corpus; the driver only sequences them, bounds them, and records what each one said. A stage that
fails or runs out of time becomes a line in the night's `errors` (and a failing JUnit case), never a lost night.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gfxhound.atomic import write_atomic

NIGHT_FORMAT = 1


@dataclass
class NightConfig:
    out: Path  # nightly/ : <date>/{night.json, junit.xml, summary.html, drafts/, shards/}, history.json
    corpus: Path  # the long-lived corpus the shards merge into
    targets: list
    budget: str = "10m"
    shards: int = 1
    workers: int = os.cpu_count() or 1
    seed: int | None = None  # default: the date, so every night explores new kernels
    backend: str = "compile"
    reproductions: int = 3  # k of k before a finding is reported
    previous_python: str | None = None  # the previous toolchain (bisect range, perf baseline)
    previous_triton: str | None = None
    reduce_s: float = 600
    bisect: bool = True
    perf_set: Path | None = None
    triage: Path | None = None
    known: list = field(default_factory=list)  # reference corpora whose records count for a status (--known)
    stage_timeout: float = 3600
    from_shards: list = field(default_factory=list)  # shard corpora made elsewhere (CI matrix jobs): no campaign
    env: dict = field(default_factory=dict)  # of the repro runs (TRITON_HIP_LLD_PATH: the CLI finds ld.lld)
    date: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d"))


class Night:
    def __init__(self, config: NightConfig, gfxhound: str | None = None, log=print):
        self.c = config
        script = Path(sys.executable).parent / "gfxhound"  # else gfxhound is importable but not installed
        self.gfxhound = [gfxhound] if gfxhound else [str(script)] if script.exists() else [sys.executable, "-m",
                                                                                           "gfxhound"]
        self.dir = Path(config.out) / config.date
        self.log = log
        self.record = {"format": NIGHT_FORMAT, "date": config.date, "started": _now(), "targets": config.targets,
                       "shards": config.shards, "findings": [], "fixed": [], "perf": [], "errors": []}

    # --- stages -----------------------------------------------------------------------------------------------
    def _run(self, argv: list, what: str, timeout: float | None = None):
        """One stage: (returncode, stdout) or None, the failure recorded as a night error."""
        cmd = self.gfxhound + argv
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout or self.c.stage_timeout)
        except subprocess.TimeoutExpired:
            self.record["errors"].append(f"{what}: ran over {timeout or self.c.stage_timeout:.0f} s")
            return None
        if proc.returncode not in (0, 1) or "Traceback (most recent call last)" in proc.stderr:
            last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            self.record["errors"].append(f"{what}: {last[:200]}")
            return None
        return proc.returncode, proc.stdout

    def campaign(self):
        """The shards run in parallel, each into its own corpus (or arrive from CI matrix jobs, each with the
        `gfxhound fuzz --json` summary beside it as summary.json), then merge into the long-lived one."""
        if self.c.from_shards:
            shard_dirs = [Path(d) for d in self.c.from_shards]
            summaries = []
            for d in shard_dirs:
                try:
                    summaries.append(json.loads((d / "summary.json").read_text()))
                except (FileNotFoundError, ValueError):
                    self.record["errors"].append(f"shard {d.name}: no readable summary.json (kernels not counted)")
            return self._merge(shard_dirs, summaries)
        seed = self.c.seed if self.c.seed is not None else int(self.c.date.replace("-", ""))
        workers = max(1, self.c.workers // self.c.shards)
        procs = []
        for i in range(self.c.shards):
            shard = self.dir / "shards" / f"shard-{i}"
            argv = self.gfxhound + ["fuzz", "--target", ",".join(self.c.targets), "--budget", self.c.budget,
                    "--workers", str(workers), "--seed", str(seed), "--shard", f"{i}/{self.c.shards}",
                    "--backend", self.c.backend, "--corpus", str(shard), "--json", "--quiet"]
            procs.append((i, shard, subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                     text=True)))
        summaries, shard_dirs = [], []
        for i, shard, proc in procs:
            try:
                out, err = proc.communicate(timeout=self.c.stage_timeout + _seconds(self.c.budget))
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                self.record["errors"].append(f"shard {i}: did not finish")
            try:
                summary = json.loads(out) if proc.returncode == 0 else None
            except ValueError:
                summary = None
            if summary:
                summaries.append(summary)
                shard_dirs.append(shard)
            else:
                self.record["errors"].append(f"shard {i}: {(err.strip().splitlines() or ['no output'])[-1][:200]}")
        return self._merge(shard_dirs, summaries)

    def _merge(self, shard_dirs: list, summaries: list):
        from gfxhound.corpus_store import Corpus
        corpus = Corpus(self.c.corpus)
        before = {f.signature for f in corpus.findings()}
        tonight = set()
        for shard in shard_dirs:
            tonight |= {f.signature for f in Corpus(shard).findings()}
            corpus.merge_from(Corpus(shard))
        kernels = sum(s["kernels"] for s in summaries)
        verdicts = {}
        for s in summaries:
            for k, v in s["verdicts"].items():
                verdicts[k] = verdicts.get(k, 0) + v
        duration = max([s["duration_s"] for s in summaries] or [0])
        self.record["toolchain"] = summaries[0]["toolchain"] if summaries else None
        self.record["campaign"] = {"kernels": kernels, "verdicts": verdicts,
                                   "kernels_per_s": round(kernels / duration, 3) if duration else 0.0,
                                   "shards_merged": len(shard_dirs)}
        return corpus, tonight, tonight - before

    def reproduce(self, corpus, finding) -> int:
        """How many of k runs of the finding's first repro show the bug (exit 1)."""
        from gfxhound.protocol import PRESENT, run_repro
        examples = corpus.examples(finding.signature)
        if not examples:
            return 0
        env = self.c.env
        extra = ["--interpret"] if self.c.backend == "interpret" else []
        hits = 0
        for _ in range(self.c.reproductions):  # a run that does not end did not show the bug
            hits += run_repro(Path(sys.executable), examples[0].repro, self.c.stage_timeout, None, env,
                              extra)[0] == PRESENT
        return hits

    def triage(self, corpus, tonight: set, new: set):
        from gfxhound.report.scrub import Scrubber
        from gfxhound.report.triage import Triage, TriageError, references, standing_in
        try:
            known_issues = Triage(self.c.triage or Path(self.c.corpus) / "triage.json")
        except TriageError as exc:  # every finding is then judged as if nothing were known
            self.record["errors"].append(f"triage file: {exc}")
            known_issues = Triage(Path("/nonexistent/triage.json"))
        scrub = Scrubber({self.c.corpus: "corpus"})  # the summary is published as a CI artifact
        refs = references(self.c.known)
        from gfxhound.families import family_of, groups
        # oldest first: a new wrong result whose reduction folds it into another is handled after that one
        tonights = sorted((f for f in corpus.findings() if f.signature in tonight), key=lambda f: (f.first_seen,
                                                                                                    f.signature))
        for finding in tonights:
            entry = {"signature": finding.signature, "verdict": finding.verdict, "stage": finding.stage,
                     "message": scrub(finding.message[:500]), "targets": finding.targets, "count": finding.count,
                     "state": "known", "known_issue": None, "reproductions": None, "flaky_rate": None,
                     "draft": None, "bisect": None, "reduced": False, "configuration": finding.configuration,
                     "family": family_of(finding)}  # listings group a family and put forced ones last
            status = standing_in(corpus, finding, known_issues, refs)  # what the corpora know, at a glance
            if status.get("from"):  # a reference corpus's directory: published, so scrubbed like the message
                status = dict(status, text=scrub(status["text"]), **{"from": scrub(status["from"])})
            entry["status"] = status
            issue = known_issues.known(finding)
            if issue:
                entry["known_issue"] = issue.url
            elif status.get("from") and status["state"] in ("fixed", "known upstream"):  # a reference's triage
                entry["known_issue"] = status["link"]
            elif status["state"] == "drafted":  # drafted before (a draft carried with the corpus, or a reference's)
                pass
            elif finding.signature in new:
                hits = self.reproduce(corpus, finding)
                k = self.c.reproductions
                entry["reproductions"] = f"{hits}/{k}"
                if hits == k:
                    entry["state"] = "new"
                    self.triage_new(finding, entry)
                else:
                    entry.update(state="flaky", flaky_rate=round(hits / k, 3))
            self.record["findings"].append(entry)
        listed = {f.signature: i for i, f in enumerate(f for g in groups(tonights) for f in g["members"])}
        self.record["findings"].sort(key=lambda e: listed.get(e["signature"], len(listed)))  # families, forced last

    def triage_new(self, finding, entry):
        sig, corpus = finding.signature, str(self.c.corpus)
        reducible = ("ice", "timeout") + (("miscompile",) if self.c.backend != "compile" else ())
        if finding.verdict in reducible and self.c.reduce_s > 0:  # a wrong result is regrouped by its reduction
            done = self._run(["reduce", sig, "--corpus", corpus, "--timeout", str(self.c.reduce_s)],
                             f"reduce {sig[:8]}", timeout=self.c.reduce_s * 2 + 300)
            entry["reduced"] = bool(done and done[0] == 0)
            from gfxhound.corpus_store import Corpus
            home = Corpus(corpus).get(sig).signature  # a reduced wrong result may be a bug the corpus has
            if home != sig:
                entry.update(state="known", folded_into=home)
                return
        if self.c.bisect and self.c.previous_triton and self.record.get("toolchain"):
            current = self.record["toolchain"].removeprefix("triton-")
            if re.fullmatch(r"\d+\.\d+\.\d+", current):
                done = self._run(["bisect", sig, "--corpus", corpus, "--triton",
                                  f"{self.c.previous_triton}..{current}", "--json"], f"bisect {sig[:8]}")
                if done and done[0] == 0:
                    r = json.loads(done[1])
                    entry["bisect"] = (f"first bad: triton {r['first_new']} (last good {r['last_old']})"
                                       if r["first_new"] else f"{r['verdict'].split('-')[0]} in every testable "
                                       f"release (triton {r['testable'][0]} to {r['testable'][1]})")
        drafts = self.dir / "drafts" / sig
        done = self._run(["report", sig, "--corpus", corpus, "--out", str(drafts), "--json"]
                         + (["--triage", str(self.c.triage)] if self.c.triage else []), f"report {sig[:8]}")
        if done and (drafts / "draft.md").exists():
            entry["draft"] = str((drafts / "draft.md").relative_to(self.dir))

    def fixed(self, corpus, tonight: set):
        """Open findings not seen tonight whose repro no longer shows the bug on this toolchain."""
        from gfxhound.report import verify
        from gfxhound.report.scrub import Scrubber
        scrub = Scrubber({self.c.corpus: "corpus"})
        env = self.c.env
        for finding in verify.open_findings(corpus):
            if finding.signature in tonight or finding.verdict == "miscompile":
                continue  # wrong results need the backend that found them
            result = verify.check(corpus, finding, Path(sys.executable), self.record.get("toolchain") or "",
                                  self.c.stage_timeout, env)
            if result.outcome == verify.FIXED:
                corpus.write_verify(finding.signature, result.entry(), "fixed")
                self.record["fixed"].append({"signature": finding.signature,
                                             "message": scrub(finding.message[:300]),
                                             "fixed_in": self.record.get("toolchain")})

    def perf(self):
        if not (self.c.perf_set and self.c.previous_python):
            return
        figures = {}
        for name, python in (("old", self.c.previous_python), ("new", sys.executable)):
            out = self.dir / f"perf-{name}.json"
            done = self._run(["perf", "measure", "--set", str(self.c.perf_set), "--python", python, "--out",
                              str(out)], f"perf measure ({name})")
            if not done or not out.exists():
                return
            figures[name] = json.loads(out.read_text())
        from gfxhound.report.perf import compare
        self.record["perf"] = compare(figures["old"], figures["new"])
        self.record["previous_toolchain"] = figures["old"]["toolchain"]

    # --- the night ---------------------------------------------------------------------------------------------
    def run(self) -> dict:
        from gfxhound.report import nightly_report
        start = time.time()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log(f"campaign: {self.c.shards} shard(s), {self.c.budget}, targets {', '.join(self.c.targets)}")
        corpus, tonight, new = self.campaign()
        self.log(f"triage: {len(tonight)} signature(s) tonight, {len(new)} new")
        self.triage(corpus, tonight, new)
        self.log("fixed: replaying open findings not seen tonight")
        self.fixed(corpus, tonight)
        self.log("perf: compile time and resources against the previous toolchain")
        self.perf()
        self.record.setdefault("previous_toolchain", f"triton-{self.c.previous_triton}" if self.c.previous_triton
                               else None)
        self.record["duration_s"] = round(time.time() - start, 1)
        write_atomic(self.dir / "night.json", json.dumps(self.record, indent=1) + "\n")
        history = nightly_report.append_history(Path(self.c.out) / "history.json", self.record)
        nightly_report.write_junit(self.record, self.dir / "junit.xml")
        nightly_report.write_html(self.record, history, self.dir / "summary.html")
        return self.record


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _seconds(budget: str) -> float:
    """A duration budget in seconds; a kernel count (no unit) is bounded by the stage timeout alone."""
    from gfxhound.budget import parse_budget
    return parse_budget(budget)[0] or 0.0
