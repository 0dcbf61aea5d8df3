"""The parts every issue draft shares: the record of a draft, its banner, running a tool to check it, and the
sections built from records (bisection, environment, related findings).

Why a module of its own: the Triton draft (drafts.py) and the LLVM drafts (draft_llvm.py) both write these, and
each section must say only what the corpus's records back.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from gfxhound import procgroup
from gfxhound.protocol import EXIT_CANNOT_TEST
from gfxhound.report.draft_text import headline

TRITON, LLVM = "triton-lang/triton", "llvm/llvm-project"
# where no release but the one named under Environment could be run: what was done, not what a maintainer asks (a
# cold review read the earlier "a maintainer asks since when first" as template text)
NOT_BISECTED = "Not bisected: the reproducer was run only with the release named under Environment."
# no finding id: a hidden comment stays in the source (upstream_lint.py); the draft's folder names it
BANNER = ("<!-- Draft for a person to review: not filed, and not yet verified on upstream's main branch. Written "
          "by gfxhound, an automated fuzzer; check it reproduces on a current build and edit freely before filing. "
          "(An HTML comment: it does not show once filed.) -->")


@dataclass
class Draft:
    upstream: str
    title: str
    body: str
    reproduced: bool | None  # None: could not be checked on this machine (needs a GPU)
    check: str  # what was run to check it, and what came out
    attachments: dict = field(default_factory=dict)  # file name -> text
    leaks: list = field(default_factory=list)  # what of this machine survived the scrubber (should be none)
    newest: dict | None = None  # the same check with the newest Triton at hand: {python, toolchain, reproduced}

    def markdown(self) -> str:
        return f"<!-- upstream: {self.upstream} -->\n# {self.title}\n\n{self.body}"



def run_tool(argv, cwd, timeout, env=None):
    """(returncode, stdout + stderr, how it ended). Through procgroup.run: a snippet's compile child, or a repro's,
    dies with it on a timeout."""
    run_env = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
    try:
        proc = procgroup.run(argv, timeout, cwd=cwd, capture_output=True, text=True, env=run_env,
                             errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", "timeout"
    except OSError as exc:
        return None, f"cannot run {argv[0]}: {exc.strerror}", "error"
    ended = (f"signal:{-proc.returncode}" if proc.returncode < 0 else "exception"
             if "Traceback (most recent call last)" in proc.stderr else f"exit:{proc.returncode}")
    return proc.returncode, proc.stdout + proc.stderr, ended


def _untested(record) -> str:
    """The releases between the ends that could not say: a different failure of theirs (named) hides the bug."""
    probes = {p.get("candidate"): p.get("detail", "") for p in record.get("probes", [])}
    between = record["untested_between"]
    hidden = [c for c in between if "a different failure" in probes.get(c, "")]
    if hidden and len(hidden) == len(between):
        return f"{_joined(hidden)} fail earlier with another crash on the same kernel, which hides this one"
    return f"untested between: {', '.join(between)}"


def bisection(newest_first: "list[dict]", said: "dict | None" = None) -> str:
    """The Bisection section. `said`: {release: (exit code, the line it printed)} of the reproducer as pasted, run
    at the releases the bisection could not test (said_at): what a reader sees there, quoted in place of the
    bisection's own probe (the fuzzer's kernel, whose failure can differ: b0f7a29c's draft quoted an assertion
    the pasted snippet never prints on 3.4.0). A Triton release the reproducer was not run at is named without a
    quote; an llc release's line is llc's own (the pasted command)."""
    said = said or {}
    records, kinds = [], set()
    for record in newest_first:
        if record.get("kind") not in kinds:  # the newest of each kind; older ones were superseded
            kinds.add(record.get("kind"))
            records.append(record)
    if not records:
        return NOT_BISECTED
    out = []
    for r in records:
        first_can = None
        verb = "first release with the bug" if r.get("mode") == "regression" else "first release without the bug"
        if r.get("kind") == "commits":
            c = r["culprit"]
            out.append(f"- Commits ({r['range']}): first {'bad' if r['mode'] == 'regression' else 'fixed'} commit "
                       f"{c.get('link') or c['hash']} \"{c['title']}\" ({c['date'][:10]}); confidence "
                       f"{r['confidence']:.2f}.")
            for h in r.get("handoff", []):
                if h.get("result"):
                    s = h["result"]["culprit"]
                    out.append(f"  - It moved the LLVM pin ({h['pin_file']}); in llvm-project: "
                               f"{s.get('link') or s['hash']} \"{s['title']}\".")
        else:
            what = {"triton-releases": "Triton releases", "llvm-releases": "LLVM releases (llc)"}.get(r.get("kind"),
                                                                                                  r.get("kind"))
            span = r.get("range") or ", ".join(r["candidates"])
            triton = r.get("kind") == "triton-releases"
            if r.get("first_new") is None:  # the same state at every release that can test it
                out.append(f"- {what} ({span}): **{r['verdict'].split('-')[0]} in every testable release** "
                           + (f"({r['testable'][0]} to {r['testable'][1]})" if r["testable"][0] != r["testable"][1]
                              else f"(only {r['testable'][0]} can test it)")
                           + ".")
                older = [m for m in r.get("ends_moved", []) if m.get("end") == "old"]
                if triton and older and r["verdict"].startswith("present") and r["testable"][0] != r["candidates"][0]:
                    first_can = r["testable"][0]  # said after the releases that cannot show it, below
            else:
                between = r.get("untested_between") or []
                shown = triton and between and all(v in said for v in between)  # said below, release by release
                out.append(f"- {what} ({span}): {verb}: **{r['first_new']}** "
                           f"(last {'good' if r.get('mode') == 'regression' else 'bad'}: {r['last_old']})"
                           + (f"; {_untested(r)}" if between and not shown else "") + ".")
                if shown:
                    out += [f"  - {_capital(_cannot_show(vs, what))}." for what, vs in _grouped(between, said).items()]
            if r.get("reduced_ir"):
                out.append("  - " + reduced_ir_text(r["reduced_ir"]))
            for m in r.get("ends_moved", []):
                releases = list(m["why"]) if isinstance(m["why"], dict) else list(m["why"])
                if triton and all(v in said for v in releases):
                    out += [f"  - {_capital(_cannot_show(vs, what))}." for what, vs in _grouped(releases, said).items()]
                elif triton:  # the bisection's kernel, not the reproducer above: its error is not quoted
                    out.append(f"  - {_joined(releases)} cannot show the bug: the kernel fails there earlier with "
                               "another error.")
                else:
                    out += [f"  - {_joined(vs)} cannot show the bug: {why}."
                            for why, vs in _by_detail(m["why"]).items()]
            if first_can:
                out.append(f"  - So {first_can} is the first release where it can show.")
    return "\n".join(out)


def bisection_section(records: list, runs: "tuple | None", env: "dict | None", timeout: float) -> str:
    """The Bisection section: the finding's bisection records (bisection), else, where there is none, what the
    reproducer as pasted (`runs`: ({name: text}, argv)) says at every Triton release whose venv is at hand
    (measured_at_releases), else NOT_BISECTED. Why the fallback: a draft with no record said "Not bisected ...: a
    maintainer asks since when first" while its Cause named the releases it had been run at (0df07642)."""
    if records:
        return bisection(records, said_at(records, *runs, env, timeout) if runs else {})
    said = measured_at_releases(*runs, env, timeout) if runs else {}
    return measured_text(said) if len(said) > 1 else NOT_BISECTED


def measured_at_releases(files: dict, argv: list, env: "dict | None", timeout: float) -> dict:
    """{release: (exit code, its last line)} of the reproducer as pasted at every Triton release whose venv is at
    hand (oldest first), each run with that release's interpreter in place of argv[0]. Builds no venv."""
    from gfxhound.report.draft_check import run_pasted
    out = {}
    for version, python in cached_releases().items():
        ran = run_pasted(files, [python, *argv[1:]], timeout, env)
        last = ran.verdict or next((x.strip() for x in reversed(ran.stderr.splitlines()) if x.strip()), "")
        out[version] = (ran.rc, last)
    return out


def measured_text(said: dict) -> str:
    """What the reproducer as pasted did at each release (measured_at_releases), in plain words: the releases that
    said the same, in order, one line each, then what follows from them: the first release with the bug after
    one without it ("(last good: V)", which the sandbox runs too), or the first where it can show after releases
    that cannot test it."""
    releases = list(said)
    runs = []  # [(what, [releases])], consecutive releases that said the same
    for release in releases:
        rc, line = said[release]
        what = (rc, _reason(line) if rc == EXIT_CANNOT_TEST else "")
        if runs and runs[-1][0] == what:
            runs[-1][1].append(release)
        else:
            runs.append((what, [release]))
    out = [f"Not bisected by commit. The reproducer above, run with each Triton release from {releases[0]} to "
           f"{releases[-1]}:"]
    for (rc, reason), vs in runs:
        if rc == 1:
            out.append(f"- {_joined(vs)}: present (exit 1).")
        elif rc == 0:
            out.append(f"- {_joined(vs)}: absent (exit 0).")
        elif rc == EXIT_CANNOT_TEST:
            out.append(f"- {_joined(vs)}: it stops at another error first, {_code(reason)} (exit {rc}), so the bug "
                       "cannot show there.")
        else:
            out.append(f"- {_joined(vs)}: " + ("it did not finish." if rc is None else f"exit {rc}."))
    states = [(rc, vs) for (rc, _), vs in runs]
    present = next((i for i, (rc, _) in enumerate(states) if rc == 1), None)
    if present is not None and all(rc == 1 for rc, _ in states[present:]):
        before = [rc for rc, _ in states[:present]]
        if before and before[-1] == 0:
            out.append(f"First release with the bug: **{states[present][1][0]}** (last good: "
                       f"{states[present - 1][1][-1]}).")
        elif before and all(rc == EXIT_CANNOT_TEST for rc in before):
            out.append(f"So {states[present][1][0]} is the first release where it can show.")
        elif not before:
            out.append("Present in every release tried.")
    return "\n".join(out)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _joined(items: list) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _grouped(releases: list, said: dict) -> dict:
    """{(exit code, what it printed): [releases]} in the order given; two "cannot test" lines that name the same
    error are one (their `loc(...)` can differ)."""
    grouped = {}
    for release in releases:
        rc, line = said[release]
        grouped.setdefault((rc, _reason(line) if rc == EXIT_CANNOT_TEST else line), []).append(release)
    return grouped


def _cannot_show(releases: list, what: tuple) -> str:
    """What the reproducer as pasted does at releases the bisection could not test, in a reader's words."""
    rc, line = what
    if rc == EXIT_CANNOT_TEST:
        return f"with {_joined(releases)} the reproducer above stops at another error first, {_code(line)} " \
               f"(exit {rc}), so the bug cannot show there"
    return f"with {_joined(releases)}, the reproducer above exits {rc}" + (f": {_code(line[:300])}" if line else "")


def _code(text: str) -> str:
    """Text as a Markdown code span, also when it holds a backtick (an assertion's condition)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _reason(line: str) -> str:
    """The error in a reproducer's "cannot test" line: from the diagnostic's own words, without the verdict's
    prefix or a `loc(...)`/file position before `error:`."""
    text = re.sub(r"^(?:other failure \(cannot test\):|cannot test:)\s*", "", line.strip())
    text = re.sub(r"^\w+: cannot test:\s*", "", text)  # a per-target line ("gfx942: cannot test: ...")
    found = re.search(r"(?:^|\s|\)):?\s*error: (.*)$", text)
    if found:
        return found.group(1)[:300]
    failed = re.search(r"([\w.+-]+\.(?:cpp|h|hpp|td|inc)):(\d+):.*?(Assertion `.*)$", text)  # file:line, condition
    return (f"{failed.group(1)}:{failed.group(2)}: {failed.group(3)}" if failed else text)[:300]


def _by_detail(why) -> dict:
    """{what a probe said: [the releases that said it]}, the repro's "cannot test: a different failure (...)" read
    as the failure itself (the message in a code span)."""
    grouped = {}
    for release, detail in (why.items() if isinstance(why, dict) else ((w, "") for w in why)):
        found = re.match(r"cannot test: a different failure \((\w+) in ([^:]*): (.*)\)$", detail or "", re.S)
        exited = re.match(r"exit (\d+): (.*)$", detail or "", re.S)  # an llc run's own words: what the command prints
        what = _code(found.group(3)[:300]) if found else \
            f"`llc` exits {exited.group(1)} there with {_code(exited.group(2).strip()[:300])}" if exited else \
            (detail or "?")[:300]
        grouped.setdefault(what, []).append(release)
    return grouped


def environment(corpus, finding, extra: list, targets: str = "") -> str:
    """The Environment section: the toolchain, then `targets` (what the reproducer or the drafting checked; the
    fuzzer's own targets when none is given), then `extra`."""
    rows = []
    for ident in finding.toolchains:
        detail = corpus.toolchain(ident) or {}
        codegen = (detail.get("amd_codegen") or {}).get("revision")
        rows.append(f"- {ident}" + (f" ({detail.get('source')})" if detail.get("source") else "")
                    + (f", commit {detail['commit']}" if detail.get("commit") else "")
                    + (f", AMD code generator {codegen}" if codegen else ""))
    rows.append(f"- {targets or 'Targets checked: ' + ', '.join(finding.targets)}")
    rows += [f"- {line}" for line in extra]
    return "\n".join(rows)


def related(corpus, finding) -> list:
    """Environment lines: a forced configuration, and the other signatures of the finding's family (the same
    failure with another element type, format or cache modifier), so the maintainer sees the bug's reach."""
    from gfxhound.families import family_of
    lines = []
    if finding.configuration != "default":
        knob = finding.configuration.removeprefix("forced: ")
        reduced = corpus.reduction(finding.signature, "spec").spec
        if reduced and not (reduced.get("launch") or {}).get("env"):
            pass  # the reduction found the knob unneeded: the reproducer runs in the default configuration
        else:
            lines.append(f"Configuration: only seen with an environment knob that forces a feature ({knob}); not "
                         "in a default configuration")
    family = family_of(finding)
    for other in corpus.findings():
        if other.signature != finding.signature and family_of(other) == family:
            lines.append(f"Same failure with another type or format: {headline(other.message, 120)} "
                         f"({', '.join(other.targets)})")
    return lines


def reduced_ir_text(found: dict) -> str:
    """What the reduced IR showed through each release's code generator (bisect/codegens.py's record)."""
    rows = "; ".join(f"triton {r['version']}" + (f" (LLVM {r['llvm'][:8]})" if r.get("llvm") else "") + ": "
                     + {True: "**present**", False: "absent"}.get(r.get("present"), "cannot test")
                     for r in found["rows"])
    span = found.get("range")
    if not span:
        return f"The reduced IR through each release's own code generator: {rows}."
    return (f"The reduced IR through each release's own code generator: {rows}. The change is in LLVM between "
            f"{span['good']['llvm']} and {span['bad']['llvm']}: {span['compare']}")


def cause(corpus, finding) -> list:
    """The draft's `## Cause` section (a person's analysis, corpus/<id>/cause.md), or none; a mention there of
    another finding by its id is a pointer for the corpus, not for upstream (upstream_lint.py): it goes."""
    text = corpus.cause(finding.signature)
    if not text:
        return []
    text = re.sub(r"[;,]?\s*(?:gfxhound(?:'s)? )?(?:finding|signature)s?\s*`?[0-9a-f]{8,16}`?", "", text)
    return ["## Cause", text, ""]


def setup(version: str, code: str, saved: str, what: str = "the reproducer above", attached: bool = False) -> str:
    """The Command section's first line: what to install and under which name to save what, so a reader with a
    bare Python runs the command as written (a cold review asked it of every draft). torch is named where the
    script cannot start without it (imported at module level, unguarded); where it imports torch only on a path
    that needs it, one sentence says so, without the word that tells the sandbox to install it
    (report/sandbox_draft.py reads `install` sentences). `attached`: the command runs an attached file (the
    fuzzer's harness, when nothing smaller shows the bug), not the block above."""
    torch = _torch_use(code)
    pip = f"pip install triton{'==' + version if re.match(r'[0-9]', version) else ''}" + \
        (" torch" if torch == "module" else "")
    line = f"Set-up: `{pip}`, and " + (f"`{saved}` (attached) in the working directory." if attached else
                                         f"{what} saved as `{saved}`.")
    if torch == "lazy" and re.search(r"torch\.version\b[^\n]*\bhip\b", code):  # the script asks for a ROCm torch
        line += (" Without an AMD GPU that is all it needs (it only compiles); on one, with a ROCm build of torch, "
                 "it also runs the kernel.")
    elif torch == "lazy":
        line += " torch is optional: the script takes a path that needs only triton without it."
    return line


def _torch_use(code: str) -> str:
    """"module" when the script imports torch at module level outside a try, "lazy" when only inside a function
    or a try, "" when not at all (or when the code does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    def imports_torch(node):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        return any(n.split(".")[0] == "torch" for n in names)
    if any(imports_torch(node) for node in tree.body):
        return "module"
    return "lazy" if any(imports_torch(node) for node in ast.walk(tree)) else ""


def checked_targets(code: str, finding) -> str:
    """The Environment's line of the targets a hand-written reproducer compiles for (named_targets), with the
    fuzzer's own where it found the bug on others: both are targets checked, by different runs. "" when the
    reproducer names none (the fuzzer's targets then stand alone)."""
    named = named_targets(code)
    if not named:
        return ""
    if set(finding.targets) <= set(named):
        return f"Targets checked: {', '.join(named)}"
    return f"Targets checked: {', '.join(named)} (the reproducer); the fuzzer found it on {', '.join(finding.targets)}"


def named_targets(code: str) -> list:
    """The AMD targets a reproducer compiles for, as it names them (string literals such as "gfx942"), in order."""
    return list(dict.fromkeys(re.findall(r"""["'](gfx\d+[0-9a-z]*)["']""", code)))


def release_python(version: str) -> "str | None":
    """The interpreter of a release's venv where the bisection left one ($GFXHOUND_CACHE/venvs, as `gfxhound
    bisect` builds them), or None: a draft runs its reproducer at the releases the bisection could not test, and
    builds no venv for it."""
    from gfxhound.bisect.releases import VenvCache
    cache = VenvCache(Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound") / "venvs")
    return str(cache.python(version)) if cache.ready(version) else None


def cached_releases() -> dict:
    """{release: its venv's interpreter} of every Triton release venv at hand ($GFXHOUND_CACHE/venvs, as `gfxhound
    bisect` builds them), oldest first."""
    from gfxhound.bisect.releases import VenvCache
    cache = VenvCache(Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound") / "venvs")
    return {version: str(cache.python(version)) for version in cache.cached()}


def said_at(records: list, files: dict, argv: list, env: "dict | None", timeout: float) -> dict:
    """{release: (exit code, its last line)} of the reproducer as pasted (`files`, run as `argv` with the release's
    interpreter in place of argv[0]) at each Triton release the newest release bisection could not test, where a
    venv of it is at hand. Why: the draft quotes what a reader sees there, not what the fuzzer's kernel said."""
    from gfxhound.report.draft_check import run_pasted
    record = next((r for r in records if r.get("kind") == "triton-releases"), None)
    if not record:
        return {}
    wanted = list(record.get("untested_between") or [])
    for moved in record.get("ends_moved", []):
        wanted += [v for v in moved["why"] if v not in wanted]
    out = {}
    for version in wanted:
        python = release_python(version)
        if python is None:
            continue
        ran = run_pasted(files, [python, *argv[1:]], timeout, env)
        last = ran.verdict or next((x.strip() for x in reversed(ran.stderr.splitlines()) if x.strip()), "")
        out[version] = (ran.rc, last)
    return out
