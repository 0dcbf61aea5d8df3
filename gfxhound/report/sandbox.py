"""A maintainer's sandbox for a draft: every block run exactly as pasted, where only what the draft tells its reader
to install is installed, and a verdict: ready to file, or what it is waiting for.

Why: a draft is read cold by someone who has Triton at the named release, maybe torch, and the issue's text; not
gfxhound, not the corpus, not this machine's venvs. The generator's own check runs the reproducer in the fuzzer's
venv, where gfxhound's executor imports, torch is there whether or not the draft says so, and a path into the
project resolves. Nine drafts passed that check while two showed their bug only through gfxhound and one quoted an
`llc` run that never happened. Here (docs/sandbox.md):

- the plan comes from the draft's text alone (report/sandbox_draft.py);
- the venv holds the plan's requirements, from a local wheelhouse, read-only (report/sandbox_env.py);
- each command block runs under `bash -e` in an empty directory holding only the files the draft names, with a
  minimal environment, no network and the project's directories hidden (where namespaces are available);
- every quoted output line must be printed; a block must exit 1 (the bug shows), and exit 0 at the last good
  release where the draft or its bisection names one, so that the check is not vacuous.

Only the verdict's inputs are taken as arguments (the CLI reads the environment, the corpus and argv).
"""
from __future__ import annotations

import difflib
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT
from gfxhound.report import sandbox_draft, sandbox_env
from gfxhound.report.sandbox_env import SandboxError, WheelMissing  # noqa: F401 - the CLI catches them here

FORMAT = "gfxhound.report-check/1"
TORCH_PIN = "2.13.0"  # the Makefile's CPU torch: what a draft that names torch without a version gets
EXTERNAL_LLD_BEFORE = (3, 5)  # Triton 3.4 and older link AMD code objects with an external ld.lld (docs/sandbox.md)


@dataclass
class Settings:
    """Where the sandbox comes from and how long a block may run."""
    wheelhouse: Path
    cache: Path
    python: str = sys.executable
    timeout: float = 600
    hide: list = field(default_factory=list)  # directories a block must not see (the checkout, the corpus)
    lld: str = ""  # this machine's ld.lld, for a run at a release before 3.9
    torch_pin: str = TORCH_PIN
    log: object = None


@dataclass
class Result:
    """The check of one draft: a row per block, the verdict and why."""
    draft: str
    release: str
    requirements: dict
    origins: dict
    files: dict
    blocks: list
    last_good: dict
    isolation: str
    network_blocked: bool
    installed: list
    reasons: list
    notes: list

    @property
    def ready(self) -> bool:
        return not self.reasons

    def to_json(self) -> dict:
        return {"draft": self.draft, "ready": self.ready, "verdict": "ready" if self.ready else "not ready",
                "reasons": self.reasons, "notes": self.notes, "release": self.release or None,
                "requirements": self.requirements, "requirement_origins": self.origins, "files": self.files,
                "installed": self.installed, "isolation": self.isolation, "network_blocked": self.network_blocked,
                "last_good": self.last_good, "blocks": self.blocks}


def _at(release: str) -> str:
    """Where the blocks ran, in the verdict's words: at a Triton release, or with the tools alone."""
    return f"at triton {release}" if release else "with no Python package (the tools from /usr/bin)"


def _version(text: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def normalise(text: str, work: Path, home: Path) -> str:
    """What the draft generator writes for this machine's paths (report/scrub.py): the run's directory as
    `<tmp>`, a venv's site-packages as `<site-packages>/`, the home as `~`."""
    for path in {str(work), str(work.resolve())}:
        text = text.replace(path + "/", "<tmp>/").replace(path, "<tmp>")
    text = re.sub(r"(?:/[^\s'\"():]+)?/(?:site|dist)-packages/", "<site-packages>/", text)
    return text.replace(str(home), "~")


def _missing(quoted: str, printed: str, lang: str = "") -> "tuple[list, dict]":
    """Quoted lines (not blank, not an elision `...`) that no printed line equals, and the nearest printed line
    for each where one is close. In an `asm` block a line is compared without its `;` comment (the draft shows
    instructions, the assembler's listing comments them)."""
    def plain(line):
        return re.sub(r"\s*;.*$", "", line).rstrip() if lang == "asm" else line.rstrip()
    lines = {plain(line) for line in printed.splitlines()}
    missing = [q.rstrip() for q in quoted.splitlines() if q.strip() and q.strip() != "..." and plain(q) not in lines]
    nearest = {}
    for line in missing:
        close = difflib.get_close_matches(plain(line), sorted(lines), n=1, cutoff=0.75)
        if close:
            nearest[line] = close[0]
    return missing, nearest


def _last_line(ran) -> str:
    lines = [x for x in (ran.stdout.strip().splitlines() or ran.stderr.strip().splitlines()) if x.strip()]
    return lines[-1].strip()[:200] if lines else "no output"


class _Session:
    """One run of a draft's command blocks at one release: a fresh directory with the draft's files, a fresh
    home, the venv for the requirement set."""

    def __init__(self, plan, requirements: dict, settings: Settings, notes: list, rewrite: tuple = ()):
        self.plan, self.requirements, self.settings, self.notes, self.rewrite = plan, requirements, settings, notes, \
            rewrite
        self.venv = sandbox_env.ensure_venv(settings.cache, requirements, settings.wheelhouse, settings.python,
                                            settings.log)

    def run(self) -> dict:
        """{block index: (Ran, normalised output)} for every command block, in order."""
        release = self.requirements.get("triton", "")
        extra = {}
        if release and _version(release) < EXTERNAL_LLD_BEFORE and self.settings.lld:
            extra["TRITON_HIP_LLD_PATH"] = self.settings.lld
            said = "as the draft says" if self.plan.lld_from_draft else "the draft does not say to"
            self.notes.append(f"TRITON_HIP_LLD_PATH={self.settings.lld} set by the check for triton {release}: "
                              f"Triton before 3.5 links AMD code with an external ld.lld ({said})")
        fence = sandbox_env.isolation()
        out = {}
        with tempfile.TemporaryDirectory(prefix="gfxhound-sandbox-") as root:
            work, home, scripts = (Path(root) / name for name in ("work", "home", "scripts"))
            for folder in (work, home, scripts):
                folder.mkdir()
            for name, (text, _) in self.plan.files.items():
                (work / name).write_text(text)
            for block in self.plan.commands:
                text = block.text
                for old, new in self.rewrite:
                    text = text.replace(old, new)
                ran = sandbox_env.run_block(text, work, home, scripts, f"block-{block.index}", self.venv, fence,
                                            self.settings.hide, self.settings.timeout, extra)
                printed = normalise(ran.stdout + "\n" + ran.stderr, work, home)
                out[block.index] = (ran, printed)
        return out


def _blocks(plan, runs: dict, base: dict, timeout: float) -> "tuple[list, list]":
    """A row per block and the reasons the runs give (exit codes, quoted lines not printed)."""
    rows, reasons = [], []
    files = {text: name for name, (text, _) in plan.files.items()}
    for block in plan.blocks:
        row = {"index": block.index, "lang": block.lang, "role": block.role, "section": block.section}
        if block.role == "source":
            row["file"] = files.get(block.text)
        if block.index in runs:
            ran, printed = runs[block.index]
            row.update(rc=ran.rc, seconds=ran.seconds, stopped_at=ran.stopped_at,
                       output_tail="\n".join(printed.strip().splitlines()[-12:]))
            if ran.rc is None:
                reasons.append(f"block {block.index} did not finish in {timeout:g} s")
            elif ran.rc not in (EXIT_ABSENT, EXIT_PRESENT):
                why = ""
                if ran.rc == EXIT_CANNOT_TEST:
                    why = " (cannot test here" + ("; needs gfxhound's executor" if "gfxhound" in printed else
                                                  "; needs an AMD GPU" if "GPU" in printed else "") + ")"
                reasons.append(f"block {block.index} exits {ran.rc}{why}: {_last_line(ran)}")
            later = [c for start, c in sandbox_draft.commands_at(block.text)
                     if ran.stopped_at and start > ran.stopped_at]
            if later:
                stopped = dict(sandbox_draft.commands_at(block.text)).get(ran.stopped_at, "")
                plan.notes.append(f"block {block.index} stopped at `{_bare(stopped)}` (exit {ran.rc}; bash -e): "
                                  + ", ".join(f"`{_bare(c)}`" for c in later) + " did not run")
        if block.index in base:
            row["last_good_rc"] = base[block.index][0].rc
        if block.role == "output" and block.index in plan.quotes and plan.quotes[block.index] in runs:
            missing, nearest = _missing(block.text, runs[plan.quotes[block.index]][1], block.lang)
            row.update(quotes=plan.quotes[block.index], missing=missing, nearest=nearest)
            for line in missing:
                instead = f" (printed instead: {nearest[line].strip()[:160]!r})" if line in nearest else ""
                reasons.append(f"block {block.index}: quoted line not printed by block {plan.quotes[block.index]}: "
                               f"{line.strip()[:160]!r}{instead}")
        rows.append(row)
    return rows, reasons


def _bare(command: str) -> str:
    """A command as a note quotes it: its first line, without a trailing comment."""
    first = command.strip().splitlines()[0] if command.strip() else ""
    return re.sub(r"\s+#.*$", "", first) + (" ..." if "\n" in command.strip() else "")


def _claims(plan, runs: dict, release: str) -> list:
    """A hidden comment's `CMD with triton V exited N` that this run contradicts: the block whose line it names
    exits otherwise at that release."""
    reasons = []
    for command, version, rc in plan.claims:
        if rc is None or version != release:
            continue
        for block in plan.commands:
            starts = sandbox_draft.commands_at(block.text)
            for i, (start, line) in enumerate(starts):
                same = sandbox_draft.split_words(line) == sandbox_draft.split_words(command)
                if not same or block.index not in runs:
                    continue
                ran = runs[block.index][0]
                last = ran.stopped_at is None and i == len(starts) - 1
                if (ran.stopped_at == start or last) and ran.rc is not None and ran.rc != rc:
                    reasons.append(f"a hidden comment says `{command}` exited {rc} with triton {version}; block "
                                   f"{block.index} runs it and exits {ran.rc}")
    return reasons


def check(markdown: str, settings: Settings, attachments: dict | None = None, bisections: list | None = None,
          draft: str = "") -> Result:
    """Run the draft in the sandbox and judge it. Raises WheelMissing when the wheelhouse lacks a wheel the
    draft's requirements (or the last good release's) need, SandboxError when a venv cannot be made."""
    plan = sandbox_draft.plan(markdown, attachments, bisections, settings.torch_pin)
    reasons, notes = list(plan.reasons), plan.notes
    fence = sandbox_env.isolation()
    runs, base, installed = {}, {}, []
    last_good = {"release": plan.last_good or None, "origin": plan.last_good_origin, "ran": False}
    if (plan.release or plan.tools_only) and plan.commands:
        session = _Session(plan, plan.requirements, settings, notes)
        installed = sandbox_env.installed(session.venv)
        runs = session.run()
        evidence = [i for i, (ran, _) in runs.items() if ran.rc == EXIT_PRESENT]
        if not evidence:
            reasons.append(f"no block exits 1 {_at(plan.release)}: nothing shows the bug by its exit code ("
                           + ", ".join(f"block {i} exits {r.rc}" for i, (r, _) in runs.items()) + ")")
        reasons += _claims(plan, runs, plan.release)
        if evidence and plan.last_good and plan.last_good != plan.release:
            rewrite = ((f"triton=={plan.release}", f"triton=={plan.last_good}"),)
            if any(old in b.text for old, _ in rewrite for b in plan.commands):
                notes.append(f"at the last good release the blocks' `triton=={plan.release}` reads "
                             f"`triton=={plan.last_good}`")
            base = _Session(plan, dict(plan.requirements, triton=plan.last_good), settings, notes, rewrite).run()
            last_good["ran"] = True
            for i in evidence:
                ran = base[i][0]
                if ran.rc is None:
                    reasons.append(f"block {i} did not finish in {settings.timeout:g} s at the last good release "
                                   f"{plan.last_good}")
                elif ran.rc != 0:
                    reasons.append(f"block {i} exits {ran.rc} at the last good release {plan.last_good} too (0 "
                                   f"expected: the check would pass without the bug): {_last_line(ran)}")
        elif evidence and not plan.last_good:
            notes.append(f"not run at a last good release: {plan.last_good_origin}")
    rows, found = _blocks(plan, runs, base, settings.timeout)
    if not fence.network:
        notes.append(f"isolation: {fence.how}")
    return Result(draft=draft, release=plan.release, requirements=plan.requirements, origins=plan.origins,
                  files={name: origin for name, (_, origin) in plan.files.items()}, blocks=rows, last_good=last_good,
                  isolation=fence.how, network_blocked=fence.network, installed=installed,
                  reasons=reasons + found, notes=notes)


def requirement_sets(markdown: str, bisections: list | None = None, torch_pin: str = TORCH_PIN) -> list:
    """The requirement sets a check of this draft installs: the named release's, and the last good one's."""
    plan = sandbox_draft.plan(markdown, None, bisections, torch_pin)
    if not plan.release:
        return []
    sets = [dict(plan.requirements)]
    if plan.last_good and plan.last_good != plan.release:
        sets.append(dict(plan.requirements, triton=plan.last_good))
    return sets


def lines(result: Result) -> "list[str]":
    """What `gfxhound report ID --check` prints: a line per block, then the verdict and its reasons."""
    out = [f"sandbox: {', '.join(f'{k}=={v}' for k, v in sorted(result.requirements.items())) or 'nothing'} "
           f"({result.isolation})"]
    for row in result.blocks:
        head = f"block {row['index']} {row['lang'] or 'text'} ({row['section'] or '-'})"
        if row["role"] == "source":
            out.append(f"{head}: saved as {row['file']}" if row.get("file") else f"{head}: not saved (no command "
                                                                                 "uses it)")
        elif row["role"] == "command" and "rc" in row:
            at = "did not finish" if row["rc"] is None else f"exit {row['rc']}"
            tail = f"; at {result.last_good['release']} (last good): exit {row['last_good_rc']}" \
                if "last_good_rc" in row else ""
            out.append(f"{head}: ran {_at(result.release)}: {at} ({row['seconds']:.1f} s){tail}")
        elif row["role"] == "command":
            out.append(f"{head}: not run")
        elif row["role"] == "output" and "missing" in row:
            out.append(f"{head}: output of block {row['quotes']}: " + (
                "every quoted line printed" if not row["missing"] else
                f"{len(row['missing'])} quoted line(s) not printed"))
        else:
            out.append(f"{head}: {row['role']}, not checked")
    for note in result.notes:
        out.append(f"  note: {note}")
    out.append("verdict: ready" if result.ready else "verdict: NOT READY")
    out += [f"  - {reason}" for reason in result.reasons]
    return out
