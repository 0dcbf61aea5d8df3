"""A lint of what upstream sees: the title, the body (hidden comments included: they stay in the issue's source)
and every attachment of a draft, for what belongs to gfxhound and not to the bug.

Why apart from the scrubber (scrub.py): the scrubber knows this machine (its home, temp dir, user, host) and
replaces them; this knows the harness, whose words a scrubber cannot replace with anything meaningful: the
project's own paths, finding ids, its internal file names, its commands, a generated harness attached in place of
a reproducer. A maintainer cannot run `gfxhound bisect 01f5c6fa` or read table.json; such text tells them the
report is machine output nobody reviewed. The rule (docs/upstream-style.md, "What upstream sees"): saying that
gfxhound, a fuzzer, found the bug is allowed and expected; naming its commands, ids or files is not.
"""
from __future__ import annotations

import re

PROJECT_DIRS = ("corpus", "gfxhound", "fuzz", "oracle", "reduce", "bisect", "docs", "tests", "scratch", "bench",
                "ci", "nightly")
RULES = [
    ("project path", re.compile(rf"(?<![\w./~<>-])(?:{'|'.join(PROJECT_DIRS)})/[\w.*/-]*")),
    # a signature: 16 hex digits, letters and digits both, not part of a longer hash or a 0x literal
    ("finding id", re.compile(r"(?<![\w.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{16}(?![\w-])")),
    # a prefix of one, where the text says what it is
    ("finding id", re.compile(r"\b(?:finding|signature|example)s?\b[\s:`'\"#]*(?=[0-9a-f]*\d)[0-9a-f]{8,16}\b",
                              re.I)),
    ("finding id", re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{8,16}\b[\s`'\"]*(?:finding|signature)\b", re.I)),
    ("internal file", re.compile(r"\b(?:table|finding|spec|run|caps|bisect|reduce|triage|verify|probe)\.json\b|"
                                 r"\breduce\.log\b|\bcommand\.txt\b|\bbisect-state-\w+")),
    ("harness command", re.compile(r"\bgfxhound\s+(?:fuzz|reduce|bisect|report|casts|triage|verify|nightly|corpus|"
                                   r"perf|replay)\b|\bpip3? install (?:-e|--editable)\b|\bpython3? -m gfxhound\b|"
                                   r"\b(?:from|import) gfxhound\b|\bGFXHOUND_[A-Z_]+")),
    ("machine path", re.compile(r"(?<![\w.<>~/-])/(?:work|root|tmp|home|scratch|mnt|data|var/tmp)/\S*")),
    # the bisection record's own words, the fuzzer's bookkeeping and a table cut short: what a generator says of
    # itself, which a maintainer reads as machine output nobody reviewed (a cold review of four drafts)
    ("harness jargon", re.compile(r"\b(?:older|newer) end moved\b|\bwhat the releases (?:before|after) that said "
                                  r"instead\b|\bTargets the fuzzer saw it on\b|\bkernel templates?\b|"
                                  r"\(\d+ more [\w -]+ not shown\.?\)")),
]
ATTRIBUTION = "How this was found"  # the one section that names the fuzzer (once: who found it)
# what only the generated repro script (oracle/repro) carries: its header, its protocol note, its stage markers
HARNESS = re.compile(r'^"""gfxhound repro |^# the repro protocol \(gfxhound/protocol\.py\)|##gfxhound-stage|'
                     r"^# ---- gfxhound/[\w/]+\.py \(embedded\)", re.M)
MAX_ATTACHMENT_LINES = 200  # a reduced .ll or a snippet; a generated repro runs to 500-1,000


def is_harness(text: str) -> bool:
    """Whether a file is gfxhound's generated repro script rather than a reproducer a maintainer can read."""
    return bool(HARNESS.search(text))


def lint(title: str, body: str, attachments: dict | None = None) -> list:
    """What of the harness is in a draft, one line each ("what in where: text"); empty when it is clean."""
    attachments = attachments or {}
    found = []
    harness = [name for name, text in attachments.items() if is_harness(text)]
    for where, text in [("title", title), ("body", body), *attachments.items()]:
        for what, pattern in RULES if where not in harness else []:  # a harness is flagged whole, below
            for match in pattern.finditer(text):
                shown = " ".join(match.group(0).split())[:80]
                if what == "finding id":  # one line per id, whichever rule saw it
                    shown = re.search(r"(?=[0-9a-f]*\d)[0-9a-f]{8,16}", shown, re.I).group(0)
                found.append(f"{what} in {where}: {shown}")
        generated = harness or "repro.py" not in attachments  # the repro.py a draft names is the harness
        if where in ("title", "body") and generated and re.search(r"\brepro\.py\b", text):
            found.append(f"internal file in {where}: repro.py (the generated harness)")
    found += _named(title, body, {k: v for k, v in attachments.items() if k not in harness})
    found += _repeated_release(body)
    found += _unseen_counts(body)
    for name, text in attachments.items():
        lines = len(text.splitlines())
        if name in harness:
            found.append(f"attachment {name}: the generated harness ({lines} lines), not a reproducer: attach "
                         "only what the bug needs (a reduced .ll, a snippet)")
        elif lines > MAX_ATTACHMENT_LINES:
            found.append(f"attachment {name}: {lines} lines (over {MAX_ATTACHMENT_LINES})")
    return list(dict.fromkeys(found))


def _named(title: str, body: str, attachments: dict) -> list:
    """gfxhound named anywhere but once in the attribution: the name says who found the bug, not how the report
    was made ("gfxhound's table", "one of gfxhound's kernel templates", "gfxhound's reducer" a second time).
    Hidden comments are left out: the banner says who wrote the draft, for the person who files it."""
    found = [f"harness name in title: {m.group(0)}" for m in NAME.finditer(title)]
    shown = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    section = re.search(rf"^## {re.escape(ATTRIBUTION)}\n(.*?)(?=^## |\Z)", shown, re.S | re.M)
    allowed = next(NAME.finditer(section.group(1)), None) if section else None
    for match in NAME.finditer(shown):
        if allowed and section.start(1) + allowed.start() == match.start():
            continue
        around = " ".join(shown[max(0, match.start() - 30):match.end() + 30].split())
        found.append(f"harness name in body: {around} (name the fuzzer once, in '{ATTRIBUTION}')")
    for name, text in attachments.items():
        found += [f"harness name in {name}: {m.group(0)}" for m in NAME.finditer(text)]
    return found


NAME = re.compile(r"\bgfxhound(?:'s)?\b", re.I)


def _repeated_release(body: str) -> list:
    """"Also fails the same way with triton X" where X is the release the hidden check already names: a line
    that says nothing (a second interpreter with the same Triton)."""
    also = re.search(r"Also fails the same way with (triton [\w.+-]*\w)\.", body)
    checked = re.search(r"<!-- checked before this draft was written: .*? with (triton [\w.+-]*\w)", body, re.S)
    if also and checked and also.group(1) == checked.group(1):
        return [f"repeated release in body: {also.group(0)} (the check above already ran {checked.group(1)})"]
    return []


def _unseen_counts(body: str) -> list:
    """"N of the M ..." in the prose where M is nowhere else in the draft: a count of a list the reader never sees
    (f18e7742's "6 of the 22 wrong values" counted the fuzzer's own table, which the draft does not show). A count
    the reader can check names a number the draft shows elsewhere: in an output block, a table, another sentence."""
    shown = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    prose = re.sub(r"^```\w*\n.*?^```$", "", shown, flags=re.S | re.M)
    found = []
    for match in re.finditer(r"\b(\d[\d,]*) of the (\d[\d,]*)\b([^.\n:;]{0,40})", prose):
        total = match.group(2)
        elsewhere = shown.replace(match.group(0), "", 1)
        if re.search(rf"(?<![\w.,-]){re.escape(total)}(?![\w-]|[.,]\d)", elsewhere):
            continue
        found.append(f"unseen count in body: {' '.join(match.group(0).split())} (the draft shows no {total} of "
                     "them: show what is counted, or say what a reader can check)")
    return found
