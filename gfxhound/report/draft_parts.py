"""The parts every issue draft shares: the record of a draft, its banner, running a tool to check it, and the
sections built from records (bisection, environment, related findings).

Why a module of its own: the Triton draft (drafts.py) and the LLVM drafts (draft_llvm.py) both write these, and
each section must say only what the corpus's records back.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field

from gfxhound import procgroup
from gfxhound.report.draft_text import headline

TRITON, LLVM = "triton-lang/triton", "llvm/llvm-project"
NOT_BISECTED = ("**Not bisected** yet over Triton releases (or LLVM releases, for an llc crash): a maintainer asks "
                "since when first.")
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
    hidden = [c for c in record["untested_between"] if "a different failure" in probes.get(c, "")]
    if hidden and len(hidden) == len(record["untested_between"]):
        return f"{', '.join(hidden)} fail earlier with another crash on the same kernel, which hides this one"
    return f"untested between: {', '.join(record['untested_between'])}"


def bisection(newest_first: "list[dict]") -> str:
    records, kinds = [], set()
    for record in newest_first:
        if record.get("kind") not in kinds:  # the newest of each kind; older ones were superseded
            kinds.add(record.get("kind"))
            records.append(record)
    if not records:
        return NOT_BISECTED
    out = []
    for r in records:
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
            if r.get("first_new") is None:  # the same state at every release that can test it
                out.append(f"- {what} ({span}): **{r['verdict'].split('-')[0]} in every testable release** "
                           + (f"({r['testable'][0]} to {r['testable'][1]})" if r["testable"][0] != r["testable"][1]
                              else f"(only {r['testable'][0]} can test it)")
                           + ".")
            else:
                out.append(f"- {what} ({span}): {verb}: **{r['first_new']}** "
                           f"(last {'good' if r.get('mode') == 'regression' else 'bad'}: {r['last_old']})"
                           + (f"; {_untested(r)}" if r.get("untested_between") else "") + ".")
            if r.get("reduced_ir"):
                out.append("  - " + reduced_ir_text(r["reduced_ir"]))
            for m in r.get("ends_moved", []):
                out.append(f"  - The {'newer' if m['end'] == 'new' else 'older'} end moved from {m['from']} to "
                           f"{m['to']}; what the releases before that said instead:" if m["end"] == "old" else
                           f"  - The newer end moved from {m['from']} to {m['to']}; what the releases after that "
                           "said instead:")
                out += [f"    - {', '.join(releases)}: {what}" for what, releases in _by_detail(m["why"]).items()]
    return "\n".join(out)


def _by_detail(why) -> dict:
    """{what a probe said: [the releases that said it]}, the repro's "cannot test: a different failure (...)" read
    as the failure itself (the message in a code span)."""
    grouped = {}
    for release, detail in (why.items() if isinstance(why, dict) else ((w, "") for w in why)):
        found = re.match(r"cannot test: a different failure \((\w+) in ([^:]*): (.*)\)$", detail or "", re.S)
        what = f"`{found.group(3)[:300]}`" if found else (detail or "?")[:300]
        grouped.setdefault(what, []).append(release)
    return grouped


def environment(corpus, finding, extra: list) -> str:
    rows = []
    for ident in finding.toolchains:
        detail = corpus.toolchain(ident) or {}
        codegen = (detail.get("amd_codegen") or {}).get("revision")
        rows.append(f"- {ident}" + (f" ({detail.get('source')})" if detail.get("source") else "")
                    + (f", commit {detail['commit']}" if detail.get("commit") else "")
                    + (f", AMD code generator {codegen}" if codegen else ""))
    rows.append(f"- Targets the fuzzer saw it on: {', '.join(finding.targets)}")
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
