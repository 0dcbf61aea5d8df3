"""What a draft asks of its reader, read from its text alone: the blocks to save and the names to save them under,
the commands to type, the outputs it quotes, what it says to install, and the release it says was last good.

Why from the text alone: the maintainer who receives the issue has nothing else. A file the draft never shows or
attaches, a package it never says to install, a name it never gives is what the reader cannot guess, so the
sandbox (report/sandbox.py) gets only what this plan names, and every guess the plan has to make is written down
(a note) or refused (a reason). Pure functions of text, tested without running anything.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gfxhound.report.sandbox_text import (SOURCE, Block, blocks, command_lines, commands_at, imports,  # noqa: F401
                                          inline_python, prose, section, split_words)

FILE_ARG = re.compile(r"^[\w.+-]+\.(py|ll|mlir|ttir|ttgir)$")  # a file a command names (no directory)
PIP = re.compile(r"^\s*(?:sudo\s+)?(?:python3?\s+-m\s+)?pip3?\s+install\s+(.*)$")
REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\[[^\]]*\])?(?:==([\w.+*!-]+))?$")
CLAIM = re.compile(r"<!-- checked before this draft was written: `([^`]+)` with triton (\S+?);? (?:exited (\d+)|"
                   r"ended (\w+))")
TOOLS = {"gfxhound"}  # what a maintainer does not have: the fuzzer itself is not on PyPI


@dataclass
class Plan:
    """What the sandbox needs: files (name -> (text, where the name came from)), requirements (name -> version),
    the command blocks in order, each quoted output with the command block it quotes, and what the reader cannot
    do (reasons) or has to guess (notes)."""
    blocks: list
    files: dict = field(default_factory=dict)
    requirements: dict = field(default_factory=dict)
    origins: dict = field(default_factory=dict)  # requirement name -> where the draft says so
    quotes: dict = field(default_factory=dict)  # output block index -> command block index
    claims: list = field(default_factory=list)  # (command, triton version, exit code) from hidden comments
    last_good: str = ""
    last_good_origin: str = ""
    reasons: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    lld_from_draft: bool = False
    tools_only: bool = False  # its commands run no Python (llc and grep, an LLVM draft): no Triton to install

    @property
    def commands(self) -> list:
        return [b for b in self.blocks if b.role == "command"]

    @property
    def release(self) -> str:
        return self.requirements.get("triton", "")


def _files(plan: Plan, markdown: str, attachments: dict) -> None:
    """The files a reader saves: a block the text says is `saved as NAME`, an attachment the text calls
    attached, and, for a name a command uses that neither gives, the only block of that language (a note says
    the draft left it to the reader)."""
    sources = [b for b in plan.blocks if b.role == "source"]
    for m in re.finditer(r"saved as `?([\w.+-]+\.(\w+))`?", markdown):
        name, ext = m.group(1), "." + m.group(2)
        fits = [b for b in sources if SOURCE[b.lang] == ext]
        before = [b for b in fits if b.end <= m.start()]
        chosen = before[-1] if before else (fits[0] if fits else None)
        if chosen and name not in plan.files:
            plan.files[name] = (chosen.text, f"block {chosen.index}, which the draft says to save as {name}")
    for name, text in sorted(attachments.items()):
        if name not in plan.files and re.search(rf"`?{re.escape(name)}`?\s*\(attached\)|attached[^.\n]*`"
                                                rf"{re.escape(name)}`", prose(markdown)):
            plan.files[name] = (text, f"the attachment {name}, which the draft says is attached")
    for name, (text, _) in list(plan.files.items()):
        if name in attachments and attachments[name] != text:
            plan.notes.append(f"the attachment {name} differs from the block saved under that name (the block is used)")
    named = {text for text, _ in plan.files.values()}
    for block in plan.commands:
        for line in command_lines(block.text):
            for word in split_words(line):
                if not FILE_ARG.match(word) or word in plan.files:
                    continue
                ext = "." + word.rsplit(".", 1)[1]
                fits = [b for b in sources if SOURCE[b.lang] == ext and b.text not in named]
                if len(fits) == 1:
                    plan.files[word] = (fits[0].text, f"block {fits[0].index}, the draft's only unnamed {fits[0].lang} "
                                                      f"block (the draft does not say to save it as {word})")
                    plan.notes.append(f"block {fits[0].index} saved as {word}: the draft does not name it, block "
                                      f"{block.index} runs it")
                    named.add(fits[0].text)
                elif word in attachments:
                    plan.reasons.append(f"block {block.index} runs {word}, an attachment the draft does not mention")
                else:
                    plan.reasons.append(f"block {block.index} runs {word}, which the draft neither shows nor attaches")


def _requirements(plan: Plan, markdown: str, torch_pin: str) -> None:
    """Pip lines in command blocks first, else the release the Environment section names; torch and numpy only
    where the draft's prose says so (its Environment section, or a sentence that says to install them)."""
    for block in plan.commands:
        for line in command_lines(block.text):
            found = PIP.match(line)
            if not found:
                continue
            words = split_words(found.group(1))
            plan.notes.append(f"block {block.index} runs `{line.strip()}`: here it finds the sandbox's venv holding "
                              "it (read-only, no index); a reader installs into whatever Python is first on PATH")
            skip_next = False
            for word in words:
                if skip_next:
                    skip_next = False
                    continue
                if word in ("-e", "--editable", "-r", "--requirement", "-c", "--constraint", "-i", "--index-url",
                            "--extra-index-url", "-f", "--find-links"):
                    plan.reasons.append(f"block {block.index}: `pip install {word} ...` needs a file, a checkout or "
                                        "an index the reader does not have")
                    skip_next = True
                    continue
                if word.startswith("-"):
                    continue
                req = REQUIREMENT.match(word)
                if not req:
                    plan.reasons.append(f"block {block.index}: cannot read the requirement {word!r}")
                    continue
                name = req.group(1).lower().replace("_", "-")
                plan.requirements[name] = req.group(2) or ""
                plan.origins[name] = f"block {block.index}: pip install {word}"
    environment = section(markdown, "Environment")
    release = re.search(r"^\s*-\s*triton[- ]v?(\d+(?:\.\d+)+)\b", environment, re.I | re.M)
    if "triton" not in plan.requirements and release:
        plan.requirements["triton"] = release.group(1)
        plan.origins["triton"] = f"the Environment section: triton-{release.group(1)}"
    elif not plan.requirements.get("triton") and release:
        plan.requirements["triton"] = release.group(1)
        plan.origins["triton"] += f" (the release from the Environment section: {release.group(1)})"
    told = prose(environment) + "\n" + "\n".join(
        s for s in re.split(r"(?<=[.;:])\s", prose(markdown)) if re.search(r"\binstall", s, re.I))
    for name, pattern in (("torch", r"\b(?:PyTorch|torch)\b"), ("numpy", r"\bnumpy\b")):
        said = re.search(pattern + r"(?:[ =-]+v?(\d+\.\d+(?:\.\d+)?)\b)?", told, re.I)
        if name in plan.requirements or not said:
            continue
        plan.requirements[name] = said.group(1) or ""
        plan.origins[name] = f"the draft's prose names {said.group(0).strip()}"
    if "torch" in plan.requirements and not plan.requirements["torch"]:
        plan.requirements["torch"] = torch_pin  # never an unpinned torch: pip would pick a CUDA build
        plan.origins["torch"] += f"; no version given: {torch_pin}, the check's pin"
        plan.notes.append(f"the draft names torch without a version: {torch_pin} used")
    if not plan.requirements and not _runs_python(plan):
        plan.tools_only = True
        plan.notes.append("the draft's commands run no Python: no Triton release to install (a venv holding "
                          "nothing; the tools come from /usr/bin)")
    elif not plan.requirements.get("triton"):
        plan.reasons.append("the draft names no Triton release to install (no `pip install triton==V`, no "
                            "`- triton-V` under Environment)")
        plan.requirements.pop("triton", None)


def _runs_python(plan: Plan) -> bool:
    """Whether a reader needs Python for the draft: a Python block, or a command that runs python or pip."""
    if any(b.lang == "python" for b in plan.blocks):
        return True
    return any(re.match(r"^\s*(?:sudo\s+)?(?:\S*/)?(?:python[\d.]*|pip3?)(?:\s|$)", line)
               for block in plan.commands for line in command_lines(block.text))


def _imports(plan: Plan) -> None:
    """What the blocks to run import that the reader was not told to install: gfxhound always stops the check;
    torch and numpy stop it when imported unguarded at module level (the program cannot start without them),
    else a note says so and the run decides."""
    programs = [(f"block {b.index}", b.text) for b in plan.blocks if b.lang == "python"
                and any(text == b.text for text, _ in plan.files.values())]
    programs += [(name, text) for name, (text, origin) in plan.files.items()
                 if name.endswith(".py") and origin.startswith("the attachment")]
    programs += [(f"block {b.index}", inline_python(line)) for b in plan.commands for line in command_lines(b.text)
                 if inline_python(line)]
    for where, code in programs:
        for module, how in sorted(imports(code).items()):
            if module in TOOLS:
                plan.reasons.append(f"{where} imports {module}: needs gfxhound's executor, which a maintainer "
                                    "does not have")
            elif module in ("torch", "numpy") and module not in plan.requirements:
                text = f"{where} imports {module}, which the draft does not tell the reader to install"
                if how == "module":
                    plan.reasons.append(text)
                else:
                    plan.notes.append(text + (" (guarded: it runs without it)" if how == "guarded" else
                                              " (inside a function: the run shows whether it is reached)"))


def _quotes(plan: Plan) -> None:
    """Each output block quotes the command block before it."""
    command = None
    for block in plan.blocks:
        if block.role == "command":
            command = block
        elif block.role == "output":
            if command is None:
                plan.reasons.append(f"block {block.index} quotes an output, and no command block comes before it")
            else:
                plan.quotes[block.index] = command.index


def _last_good(plan: Plan, markdown: str, bisections: list) -> None:
    """The draft's own "(last good: V)", else the newest Triton-release bisection's last good release."""
    said = re.search(r"\(last good: (\d+(?:\.\d+)+)\)", prose(markdown))
    if said:
        plan.last_good, plan.last_good_origin = said.group(1), "the draft's Bisection section"
        return
    for record in bisections or []:
        if record.get("kind") == "triton-releases" and record.get("mode", "regression") == "regression":
            if record.get("last_old"):
                plan.last_good = record["last_old"]
                plan.last_good_origin = "the finding's bisect.json"
            else:
                plan.last_good_origin = f"the finding's bisect.json: {record.get('verdict', 'no last good release')}"
            return
    plan.last_good_origin = "no bisection: neither the draft nor bisect.json names a last good release"


def plan(markdown: str, attachments: dict | None = None, bisections: list | None = None,
         torch_pin: str = "2.13.0") -> Plan:
    """Everything the sandbox needs from a draft. `attachments`: {file name: text} of the files beside it;
    `bisections`: the finding's bisection records, newest first (Corpus.bisections)."""
    result = Plan(blocks=blocks(markdown))
    attachments = attachments or {}
    _files(result, markdown, attachments)
    _requirements(result, markdown, torch_pin)
    _imports(result)
    _quotes(result)
    _last_good(result, markdown, bisections or [])
    result.claims = [(m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None)
                     for m in CLAIM.finditer(markdown)]
    result.lld_from_draft = "TRITON_HIP_LLD_PATH" in markdown
    if not result.commands:
        result.reasons.append("the draft has no command block (```sh): nothing to run as pasted")
    return result
