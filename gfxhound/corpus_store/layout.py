"""Every file and folder name of a corpus, and read-only views of what a finding's folder holds.

Why one place: the corpus outlives any version of gfxhound and is read by every stage (reduce, bisect, report,
nightly). When a stage spells `reduced/llvm-ir/reduced.ll` itself, a layout change silently breaks the stages
nobody remembered; here a change is one edit, and `tests/` checks that no other module spells these names.

    <root>/aliases.json, toolchains/<id>.json, .lock
    <root>/<signature>/finding.json                     the mutable summary (finding.py)
    <root>/<signature>/examples/<spec-hash>/            spec.json caps.json run.json repro.py output.txt ir/
    <root>/<signature>/reduced/<level>/                 spec: spec.json repro.py kernel.py; llvm-ir: reduced.ll;
                                                        ttgir/ttir: reduced.<level>; all: reduce.json reduce.log
    <root>/<signature>/bisect.json, bisect.<n>.json     the newest bisection, and the ones it superseded
    <root>/<signature>/verify.json, minimal.py, draft/  verification history, a hand-made repro, the issue draft
    <root>/<signature>/cause.md                      a person's analysis of the cause, for the draft
    <root>/<signature>/table.json                    a conversion-table finding: its wrong codes, every target;
                                                     its examples hold probe.json run.json repro.py (no spec)
    <root>/<signature>/aliases/<old id>/                what a folded finding held besides its examples
    <root>/<signature>/drafted_with.json             its bug is reported in another finding's draft
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

FINDING_FILE = "finding.json"
EXAMPLES = "examples"
REDUCED = "reduced"
ALIASES_DIR = "aliases"
ALIASES_FILE = "aliases.json"  # {"format": 1, "aliases": {old id: id it was folded into}}
TOOLCHAINS = "toolchains"
BISECT_FILE = "bisect.json"
VERIFY_FILE = "verify.json"
MINIMAL_FILE = "minimal.py"  # a repro a person minimised by hand: preferred over every generated one
CAUSE_FILE = "cause.md"  # a person's reading of the cause (source lines, a fix), which a draft quotes as theirs
TABLE_FILE = "table.json"  # a conversion-table finding: every probe that stored a wrong code, on every target
DRAFT_DIR = "draft"
DRAFT_FILE = "draft.md"  # what gfxhound report writes in DRAFT_DIR (its presence: the finding was drafted)
DRAFTED_WITH_FILE = "drafted_with.json"  # {"format": 1, "draft": id, "why": text}: drafted_with.py
LOCK_FILE = ".lock"

# one example: what a campaign keeps of one kernel
SPEC_FILE, CAPS_FILE, RUN_FILE, REPRO_FILE, OUTPUT_FILE, IR_DIR = (
    "spec.json", "caps.json", "run.json", "repro.py", "output.txt", "ir")
PROBE_FILE = "probe.json"  # a conversion-table example holds its probe instead of a spec (oracle/cast_table.py)
# one reduction
REDUCE_RECORD, REDUCE_LOG, KERNEL_FILE, REDUCED_LL, COMMAND_FILE = (
    "reduce.json", "reduce.log", "kernel.py", "reduced.ll", "command.txt")

NAME = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]*")


def is_temp(name):
    return ".tmp-" in name  # ours are ".tmp-<name>.<pid>"; "finding.json.tmp-1" style strays count too


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def example_files(spec: str, run: str, caps: str, repro: str, output: "bytes | None" = None) -> dict:
    """The files of one example, named as the layout names them (Corpus.record installs them)."""
    files = {SPEC_FILE: spec, RUN_FILE: run, CAPS_FILE: caps, REPRO_FILE: repro}
    if output is not None:
        files[OUTPUT_FILE] = output
    return files


def reduction_files(record: dict, log: str, spec: str | None = None, repro: str | None = None,
                    kernel: str | None = None, **artefacts) -> dict:
    """The files of one reduction: its record and log, the spec level's spec, repro and kernel, and any other
    artefact by name (reduced.ll, reduced.ttgir, command.txt, ...)."""
    files = {REDUCE_RECORD: json.dumps(record, indent=1), REDUCE_LOG: log}
    for name, text in ((SPEC_FILE, spec), (REPRO_FILE, repro), (KERNEL_FILE, kernel)):
        if text is not None:
            files[name] = text
    return {**files, **artefacts}


@dataclass(frozen=True)
class Example:
    """One kept kernel of a finding: its spec, capabilities and run record as stored (JSON dicts; the stages turn
    them into KernelSpec and Capabilities), its repro and the compiler output the campaign kept."""
    dir: Path

    @property
    def name(self) -> str:
        return self.dir.name

    @cached_property
    def spec(self) -> dict:
        return _json(self.dir / SPEC_FILE)

    @cached_property
    def caps(self) -> dict:
        return _json(self.dir / CAPS_FILE)

    @cached_property
    def run(self) -> dict:
        return _json(self.dir / RUN_FILE)

    @property
    def repro(self) -> Path:
        return self.dir / REPRO_FILE

    @property
    def spec_file(self) -> Path:
        return self.dir / SPEC_FILE

    def output(self) -> str:
        path = self.dir / OUTPUT_FILE
        return path.read_text(errors="replace") if path.exists() else ""

    def ir(self, name: str) -> Path:
        """The IR file `name` (kernel.llir, kernel.ttgir, ...) the campaign kept; it may not exist."""
        return self.dir / IR_DIR / name

    def rewrite_run(self, run: dict, write):
        """Replace run.json (a migration re-keyed it) with `write(path, text)`, the store's atomic write."""
        write(self.dir / RUN_FILE, json.dumps(run, indent=1, sort_keys=True))


@dataclass(frozen=True)
class Reduction:
    """What one reduction left under reduced/<level>/ (it may not exist yet)."""
    dir: Path

    @property
    def exists(self) -> bool:
        return (self.dir / REDUCE_RECORD).exists() or self.ll.exists() or self.repro.exists()

    @cached_property
    def record(self) -> dict:
        return _json(self.dir / REDUCE_RECORD)

    @cached_property
    def spec(self) -> dict:
        return _json(self.dir / SPEC_FILE)

    @property
    def repro(self) -> Path:
        return self.dir / REPRO_FILE

    @property
    def kernel(self) -> Path:
        return self.dir / KERNEL_FILE

    @property
    def ll(self) -> Path:
        return self.dir / REDUCED_LL

    def file(self, name: str) -> Path:
        return self.dir / name
