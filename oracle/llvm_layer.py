"""Which part of LLVM's AMDGPU code generator owns a wrong machine code (issue #37, item 3), found by running it.

Why: a draft for llvm/llvm-project must say where to look, and reading the assembly of a wrong kernel says what is
wrong, not which pass did it. A release build of llc (Debian's, Triton's) has no `-debug-only` and no debug
counters, but it has two switches that change what runs, and the machine-code executor can judge each result:

- ``-opt-bisect-limit=N`` runs only the first N of the passes that may be skipped (llc prints them, numbered,
  with ``-opt-bisect-limit=-1``). When the code is right with none of them and wrong with all, the smallest N that
  makes it wrong names the pass (a binary search: about log2 of the pass count compiles and runs). When it is
  wrong with none of them, the fault is in what opt-bisect cannot skip: instruction selection's own lowering and
  legalization (SelectionDAG runs at every level; skipping ``amdgpu-isel`` only runs it as at -O0), or a pass
  every pipeline requires.
- ``-global-isel`` selects instructions with the other selector. Right through GlobalISel and wrong through
  SelectionDAG puts the fault in SelectionDAG's lowering or combines, not in the machine passes the two share.

The reference is the IR executor's run of the same module on the same inputs: the question is whether llc's code
computes what the IR says, not which code generators agree (all of them can share one bug). Every compile is one
`llc` call with a timeout; a run either executor cannot judge stops the search and says why.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import asdict, dataclass, field

FORMAT = "gfxhound.llvm-layer/1"
BISECT_LINE = re.compile(r"BISECT: running pass \((\d+)\) (.+) on \S.*$", re.M)  # LLVM 16: "CodeGen Prepare"


@dataclass
class Layer:
    """The answer, with each observation that gave it (``steps``: what ran and what it computed)."""
    opt: str
    reproduced: bool
    layer: str = ""
    method: str = ""
    passes: int = 0
    pass_index: int = 0
    pass_name: str = ""
    global_isel: str = ""
    steps: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"format": FORMAT, **asdict(self)}


class Judge:
    """Compile `ll` with extra llc flags and say whether its machine code disagrees with the IR's own run."""

    def __init__(self, ll: str, mcpu: str, opt, launch_text: str, llc: str, kernel: str | None = None,
                 seed: int = 0, block=None):
        from gfxhound.oracle.crosscheck import ir_params, kernel_names, make_launch, run_ir
        from pathlib import Path
        self.ll, self.mcpu, self.opt, self.llc = ll, mcpu, opt, llc
        text = Path(ll).read_text(errors="replace")
        self.kernel = kernel or kernel_names(text)[0]
        self.launch = make_launch(launch_text, ir_params(text, self.kernel), seed, block)
        self.reference = run_ir(text, self.kernel, mcpu, self.launch)
        if self.reference.unresolved or self.reference.fault:
            raise ValueError(f"the IR executor cannot give a reference: "
                             f"{self.reference.unresolved or self.reference.fault}")

    def wrong(self, extra: list):
        """True (the machine code computes something else), False (the same bytes), or a string: why it cannot
        tell (the compile failed, the machine run is unresolved)."""
        from gfxhound.codegen import CodegenError
        from gfxhound.executors.amdgcn.codegen import from_ll
        from gfxhound.oracle.crosscheck import run_machine
        try:
            asm = from_ll(self.ll, self.mcpu, self.opt, self.llc, extra=tuple(extra))
        except CodegenError as exc:
            return f"llc failed: {str(exc).splitlines()[0][:160]}"
        run = run_machine(" ".join(extra) or "llc", asm, self.kernel, self.launch)
        if run.unresolved:
            return f"unresolved: {run.unresolved[:160]}"
        if run.fault:
            return True
        return not _same_outputs(run, self.reference)

    def passes(self, timeout: float = 120) -> list:
        """(index, name) of every pass opt-bisect may skip, in the order llc runs them on this module."""
        command = [self.llc, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={self.mcpu}", f"-O{str(self.opt).lstrip('Oo')}",
                   "-opt-bisect-limit=-1", self.ll, "-o", "/dev/null"]
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):  # no list: name_layer says it cannot tell
            return []
        return [(int(n), name) for n, name in BISECT_LINE.findall(out.stderr)]


def name_layer(judge: Judge) -> Layer:
    """The layer of LLVM that makes `judge`'s module wrong at its -O level (see the module's docstring)."""
    opt = f"O{str(judge.opt).lstrip('Oo')}"
    full = judge.wrong([])
    answer = Layer(opt, full is True, steps=[f"llc -{opt}: {_said(full)}"])
    if full is not True:
        answer.layer = "" if full is False else f"cannot tell: {full}"
        return answer
    gisel = judge.wrong(["-global-isel", "-global-isel-abort=1"])
    answer.global_isel = _said(gisel)
    answer.steps.append(f"llc -{opt} -global-isel: {answer.global_isel}")
    passes = judge.passes()
    answer.passes = len(passes)
    none = judge.wrong(["-opt-bisect-limit=0"])
    answer.steps.append(f"llc -{opt} -opt-bisect-limit=0 (none of {len(passes)} skippable passes): {_said(none)}")
    if none is False and not passes:
        answer.layer = "cannot tell: llc listed no pass that -opt-bisect-limit may skip"
    elif none is False:
        low, high = 0, max(n for n, _ in passes)  # right with passes 1..low, wrong with 1..high
        while high - low > 1:
            middle = (low + high) // 2
            verdict = judge.wrong([f"-opt-bisect-limit={middle}"])
            answer.steps.append(f"llc -{opt} -opt-bisect-limit={middle}: {_said(verdict)}")
            if not isinstance(verdict, bool):
                answer.layer = f"cannot tell: {verdict}"
                return answer
            low, high = (low, middle) if verdict else (middle, high)
        name = dict(passes).get(high, "?")
        answer.pass_index, answer.pass_name = high, name
        answer.method = f"-opt-bisect-limit: right with passes 1..{low}, wrong with 1..{high}"
        answer.layer = (f"instruction selection's optimisations ({name}: right when opt-bisect runs it as at -O0)"
                        if re.search(r"isel|Instruction Selection", name) else
                        f"the pass {name} (skippable pass {high} of {len(passes)}), or a later pass opt-bisect "
                        "cannot skip that mishandles what it makes")
    elif none is True:
        answer.method = "-opt-bisect-limit=0 and -global-isel"
        answer.layer = ("SelectionDAG instruction selection (wrong with every skippable pass skipped, right through "
                        "GlobalISel): its lowering, legalization or combines that run at every level"
                        if gisel is False else
                        "a part opt-bisect cannot skip (wrong with every skippable pass skipped): instruction "
                        "selection's lowering and legalization, or a pass every pipeline requires"
                        + ("; GlobalISel is wrong too" if gisel is True else ""))
    else:
        answer.layer = f"cannot tell: {none}"
    return answer


def _same_outputs(run, reference) -> bool:
    """Every buffer both runs report holds the same bytes (NaNs alike): crosscheck's own comparison."""
    from gfxhound.oracle.crosscheck import _same
    return all(_same(run.outputs[k], reference.outputs[k]) for k in reference.outputs if k in run.outputs)


def _said(verdict) -> str:
    return "wrong" if verdict is True else "right" if verdict is False else str(verdict)
