#!/usr/bin/env python3
"""gfxhound repro ca1bd131f0e5b9c9 for gfx942: ice in stage 'ttgir'.

Found with triton-3.9.0. Expected failure (normalised):
    RuntimeError: PassManager::run failed | PROG: <path>/CanonicalizePointers.cpp:N: virtual LogicalResult mlir::(anonymous namespace)::ConvertSCFIfOp::matchAndRewrite_(scf::IfOp, OneToNOpAdaptor, ConversionPatternRewriter &) const: Assertion `ifOp.thenYield().getOperandTypes() == ifOp.elseYield().getOp

Run:   python repro.py            exit 0 = bug absent, 1 = same bug present, 125 = cannot test here
       python repro.py --show     also print the child's output
       python repro.py --llc=PATH (bugs in llc) verify with another llc
Needs: triton (any 3.x it can run on); for Triton < 3.9 an ld.lld (TRITON_HIP_LLD_PATH, default /usr/lib/llvm-22/bin/ld.lld).
"""
import os
import subprocess
import sys
import tempfile

# the repro protocol (gfxhound/protocol.py): what this script's exit says
EXIT_ABSENT, EXIT_PRESENT, EXIT_CANNOT_TEST = 0, 1, 125
CHILD_WRONG, CHILD_MEMORY_MODEL = 3, 4  # between this script and the child it spawns
EXPECTED = {'normalised': 'RuntimeError: PassManager::run failed | PROG: '
               '<path>/CanonicalizePointers.cpp:N: virtual LogicalResult '
               'mlir::(anonymous '
               'namespace)::ConvertSCFIfOp::matchAndRewrite_(scf::IfOp, '
               'OneToNOpAdaptor, ConversionPatternRewriter &) const: Assertion '
               '`ifOp.thenYield().getOperandTypes() == '
               'ifOp.elseYield().getOperandTypes() && "ifOp types must match '
               'in both arms"\' failed.',
 'signature': 'caad2c44369ac53f',
 'stage': 'ttgir',
 'verdict': 'ice'}
ARCH = 'gfx942'
OPTIONS = {'num_warps': 4, 'num_stages': 2, 'schedule_hint': 'none', 'waves_per_eu': 0}
ENV_KNOBS = {'TRITON_HIP_USE_IN_THREAD_TRANSPOSE': '0'}
ARGS = [{'kind': 'ptr', 'name': 'a_ptr', 'type': '*fp32', 'value': 10336},
 {'kind': 'ptr', 'name': 'b_ptr', 'type': '*fp32', 'value': 10336},
 {'kind': 'ptr', 'name': 'modes_ptr', 'type': '*i32', 'value': 32},
 {'kind': 'ptr', 'name': 'counts_ptr', 'type': '*i32', 'value': 8},
 {'kind': 'ptr', 'name': 'out_ptr', 'type': '*fp32', 'value': 10336},
 {'kind': 'ptr', 'name': 'stats_ptr', 'type': '*fp32', 'value': 152},
 {'kind': 'ptr', 'name': 'hits_ptr', 'type': '*i32', 'value': 32},
 {'kind': 'int', 'name': 'M', 'type': 'i32', 'value': 19},
 {'kind': 'int', 'name': 'N', 'type': 'i32', 'value': 136},
 {'kind': 'int', 'name': 'stride_am', 'type': 'i32', 'value': 136},
 {'kind': 'int', 'name': 'stride_an', 'type': 'i32', 'value': 1},
 {'kind': 'int', 'name': 'stride_bm', 'type': 'i32', 'value': 136},
 {'kind': 'int', 'name': 'stride_bn', 'type': 'i32', 'value': 1},
 {'kind': 'int', 'name': 'stride_om', 'type': 'i32', 'value': 136},
 {'kind': 'int', 'name': 'stride_on', 'type': 'i32', 'value': 1},
 {'kind': 'constexpr', 'name': 'BLOCK_M', 'type': 'constexpr', 'value': 16},
 {'kind': 'constexpr', 'name': 'BLOCK_N', 'type': 'constexpr', 'value': 64},
 {'kind': 'constexpr',
  'name': 'OFFSET_I64',
  'type': 'constexpr',
  'value': False},
 {'kind': 'constexpr',
  'name': 'SELECT_FORM',
  'type': 'constexpr',
  'value': 'where'},
 {'kind': 'constexpr',
  'name': 'WRAP_FORM',
  'type': 'constexpr',
  'value': 'select'},
 {'kind': 'constexpr', 'name': 'USE_WHILE', 'type': 'constexpr', 'value': True},
 {'kind': 'constexpr',
  'name': 'EARLY_RETURN',
  'type': 'constexpr',
  'value': True},
 {'kind': 'constexpr', 'name': 'BLEND', 'type': 'constexpr', 'value': True},
 {'kind': 'constexpr', 'name': 'LOOP_STAGES', 'type': 'constexpr', 'value': 1}]
TIMEOUT_S = 120
DEFAULT_LLD = '/usr/lib/llvm-22/bin/ld.lld'
LLC = ''  # set when the bug is in LLVM's llc (stage llc-verify); `--llc=PATH` picks another llc
TTGIR = None  # set when the kernel is its TTGIR with mutated layouts: that text is what is compiled
# set when the bug is a static memory-model violation: the checker (gfxhound's oracle/memory_model.py) runs on
# the compiled amdgcn, in its own namespace
MEMORY_MODEL_SRC = ''

# ---- gfxhound/signature.py (embedded) ----------------------------------------------------------------------------
"""Failure summaries and bug signatures.

Why this module is self-contained (standard library only, no gfxhound imports): every repro script embeds a copy
of it, so that "the bug is present" in a repro means exactly what it means in a campaign: the same verdict, stage,
normalised message and frames, hashed the same way (docs/design.md, Signatures and Repro protocol).

Input is what any compile attempt leaves behind: the text it printed (a Python traceback and/or the native
diagnostics on fd 2, with ``##gfxhound-stage <name>`` markers written before each compiler stage) and how it ended.
"""
import hashlib
import json
import re

NORMALISER_VERSION = 7
# What each version changed (corpus/migrate.py re-keys findings recorded under an older one):
# 7: a traceback's frames are Triton's when they lie in an installed `triton` package or a Triton source tree's
#    python/triton, wherever that is (before: any path with "triton" and without "gfxhound", which dropped every
#    frame of a Triton installed under a folder named gfxhound, such as the bisection cache ~/.cache/gfxhound).
# 6: memory-model findings keyed by (table, defect, counter); a generic pipeline failure, stack dump or bare signal
#    names the pass (and op) its diagnostics name; a miscompile's provisional signature is never empty.

# Legitimate rejections: the kernel or its options are not acceptable to this Triton/target. Classified by message,
# not exception type (some are AssertionErrors). Each entry: (regex, short reason).
USER_ERROR_PATTERNS = [
    (r"kpack must be 1 for gfx950|only accepts kpack == 1|kpack must be", "kpack not supported on target"),
    (r"matrix_instr_nonkdim.*(not supported|must be|invalid)|unsupported matrix_instr_nonkdim", "unsupported nonkdim"),
    (r"input_precision must be one of|input_precision .* is not supported|allowed_dot_input_precisions", "input precision"),
    (r"Unsupported dtype|unsupported dtype|not supported in this architecture|is not supported on this architecture",
     "dtype not supported"),
    (r"type fp8e\w+ not supported in this architecture", "fp8 not supported"),
    (r"out of resource: shared memory|OutOfResources|out of resources", "out of resources"),
    (r"has no attribute '(range|join|split|dot_scaled|cumsum|static_range)'", "API not in this release"),
    (r"got an unexpected keyword argument", "API not in this release"),
    (r"unsupported target|Unknown target|not a supported target", "target not supported by this release"),
    (r"num_warps must be a power of 2", "invalid launch option"),
    (r"Input shapes should have M >= \d+, N >= \d+ and K >= \d+", "dot tile below the target's minimum"),
    (r"cannot lower '[\w.]+' to a direct-to-LDS copy", "a forced knob's documented limitation on this target"),
    (r"atomic_\w+ does not support \w+|atomic \w+ is not supported for|Unsupported lhs dtype|Unsupported rhs dtype",
     "dtype not supported by this op"),
    (r"Expected dtype \[.*\] but got", "operand dtype not accepted by this op"),
    (r"(lhs|rhs)_scale must be a tensor of shape", "block-scale shape this release does not accept (e.g. 16-element "
     "groups before Triton 3.9)"),
    (r"Mismatched type for \w+ between then block|Loop-carried variable \w+ has initial type|"
     r"Both operands must be same dtype|incompatible dimensions|Cannot broadcast|"
     r"First input \(\w+\) and second input \(\w+\) must have the same dtype", "frontend type rule"),
]

# The machine, not the compiler: a failure matching these is `unresolved` (never a compiler bug).
ENVIRONMENT_PATTERNS = [
    (r"ROCm linker .* not found|ld\.lld[^\n]* not found|No such file or directory: '[^']*ld\.lld'",
     "no ld.lld to link AMD code objects (Triton < 3.9): install Debian's lld-22 or set TRITON_HIP_LLD_PATH"),
    (r"No module named 'numpy'", "numpy is missing"),
]

_NORMALISERS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0xADDR"),
    (re.compile(r"(?:/[\w.+\-@]+)+/([\w.+\-]+)"), r"<path>/\1"),  # absolute paths: keep the basename only
    (re.compile(r"<path>/(?:spec_[0-9a-f]+|repro\w*|kernel\w*)\.py"), "<kernel>"),
    (re.compile(r"<path>/tmp[\w\-]{6,}"), "<path>/tmpX"),  # tempfile names
    (re.compile(r"(^|\| )[\w.\-]+: (?=<path>/)"), r"\1PROG: "),  # "python3: file.h:292: ... Assertion" prefix
    (re.compile(r"\b(?:spec_[0-9a-f]+|repro\w*|kernel\w*)\.py\b"), "<kernel>"),  # the kernel's file, bare
    (re.compile(r"\bspec_[0-9a-f]{6,}\b"), "spec_H"),
    (re.compile(r"%arg\d+"), "%argN"),
    (re.compile(r"%ir\.\d+"), "%ir.N"),
    (re.compile(r"%\d+"), "%N"),
    (re.compile(r"\^bb\d+"), "^bbN"),
    (re.compile(r"\bt\d+(?=[:\s,)]|$)"), "tN"),  # SelectionDAG node ids
    # a node that cannot be selected is named by its type and opcode; its operands differ from kernel to kernel
    (re.compile(r"(Cannot select: tN: \S+ = [\w:.]+)[^|\[]*"), r"\1 "),
    (re.compile(r"(#\w+?)\d+\b"), r"\1"),  # layout aliases (#blocked3 -> #blocked, #mma1 -> #mma)
    (re.compile(r"\b(tensor|vector|memref|!tt\.memdesc|memdesc)<(?:[\d?]+x)+"), r"\1<Sx"),
    (re.compile(r'loc\([^()]*\)'), "loc(...)"),
    (re.compile(r":\d+:\d+"), ":L:C"),
    (re.compile(r"\bline \d+"), "line N"),
    (re.compile(r"\b[a-z]{1,4}_\d+\b"), "ID"),  # identifiers the generator invents (v_12, in_0, acc_3)
    (re.compile(r"\b\d+\b"), "N"),
    (re.compile(r"[ \t]+"), " "),
]

_STAGE_MARK = re.compile(r"^##gfxhound-stage (\S+)\s*$", re.M)
_KEY_LINE_PATTERNS = [
    re.compile(r"LLVM ERROR: .*"),
    re.compile(r".*Assertion [`'].*' failed.*"),
    re.compile(r"Bad machine code: .*"),
    re.compile(r"error: .*"),
    re.compile(r"UNREACHABLE executed.*|.*unreachable.*", re.I),
    re.compile(r"Segmentation fault.*|Stack dump:.*"),
]
_TRACEBACK_EXC = re.compile(r"^(\w[\w.]*(?:Error|Exception|Interrupt|Exit)|triton\.\w[\w.]*)(?:: ?(.*))?$", re.M)
_SOURCE_POSITION = re.compile(r"^at \d+:\d+:?$")
_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')


def normalise(text):
    """The versioned normaliser: stable across runs, keeps types, intrinsics, pass and arch names."""
    for pattern, repl in _NORMALISERS:
        text = pattern.sub(repl, text)
    return text.strip()[:400]


def last_stage(text):
    """The compiler stage that was running when the attempt ended (the last marker printed), or ''."""
    marks = _STAGE_MARK.findall(text or "")
    return marks[-1] if marks else ""


def key_line(text, complete=True):
    """The one line of native diagnostics that says what went wrong, or ''. A line that names no bug by itself
    (MLIR's generic pipeline failure, a bare stack dump) is completed with what the diagnostics after it name:
    the failing pass, and the op of an ``error: 'op' ...`` line (see ``identity``); ``complete=False`` gives the
    line as printed (what a text search of a tool's output can find)."""
    lines = [line for line in (text or "").splitlines() if not line.startswith("##gfxhound")]
    for pattern in _KEY_LINE_PATTERNS:
        for line in lines:
            m = pattern.search(line)
            if m:
                found = m.group(0).strip()
                if complete and _GENERIC.search(found):
                    found = f"{found} {identity(text)}".strip()
                return found
    return ""


# Diagnostics that say only *that* something failed: alone they would put every failure of a stage under one
# signature. Their identity is the pass that failed (MLIR names it in the note after the error; LLVM's stack dump
# lists the passes it was running, innermost last) and, where an error line names one, the op.
_GENERIC = re.compile(r"Failures have been detected while processing an MLIR pass pipeline|^Stack dump:|"
                      r"^Segmentation fault|PassManager::run failed|Internal Triton PTX codegen error")
_MLIR_PASS = re.compile(r"Pipeline failed while executing \[`([^`]+)`")
_LLVM_PASS = re.compile(r"^\s*\d+\.\s+Running pass (?:'([^']+)'|\"([^\"]+)\")", re.M)  # legacy and new pass manager
_OP_ERROR = re.compile(r"error: '([\w.]+)' op\b")
_PTXAS_ERROR = re.compile(r"^ptxas [^\n;]*; error\s*: (.*)$", re.M)  # NVIDIA: what ptxas itself rejected


def identity(text):
    """``[pass X, op Y]`` from the diagnostics in text, or '' when they name neither."""
    text = text or ""
    parts = []
    passes = _MLIR_PASS.findall(text) or ["".join(found) for found in _LLVM_PASS.findall(text)]
    if passes:
        parts.append(f"pass {normalise(passes[-1])}")
    op = _OP_ERROR.search(text)
    if op:
        parts.append(f"op {op.group(1)}")
    ptxas = _PTXAS_ERROR.search(text)
    if ptxas:
        parts.append(f"ptxas: {ptxas.group(1).strip()}")
    return f"[{', '.join(parts)}]" if parts else ""


def triton_frame(path: str) -> bool:
    """A traceback frame in Triton's own Python code: an installed `triton` package (the path after its last
    site-packages/ or dist-packages/ starts with triton/) or a Triton source tree (python/triton/). The folders
    above it do not count, so a venv under a folder named gfxhound or triton-3.9.0 keeps the same frames, and the
    harness's own code (gfxhound's packages, a repro script) never counts."""
    path = path.replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1].startswith("triton/")
    return "/python/triton/" in path


def python_exception(text):
    """(exception type, message, innermost compiler frames) of the last traceback in text.

    Chained exceptions ("The above exception was the direct cause...") often end in a CompilationError whose own
    text is only a source position and the kernel source; the message is then the nearest earlier one.
    """
    text = text or ""
    start = text.rfind("Traceback (most recent call last)")
    if start < 0:
        return "", "", []
    tail = text[start:]
    frames = [fn for path, fn in _FRAME.findall(tail) if triton_frame(path)]
    headers = list(_TRACEBACK_EXC.finditer(text))
    if not headers:
        return "", "", frames[-2:]
    exc_type = headers[-1].group(1).rsplit(".", 1)[-1]
    for match in reversed(headers):
        message = _message_of(text, match)
        if message and not _SOURCE_POSITION.match(message):
            return exc_type, message, frames[-2:]
    return exc_type, (headers[-1].group(2) or "").strip(), frames[-2:]


def _message_of(text, match):
    message = (match.group(2) or "").strip()
    if message and not _SOURCE_POSITION.match(message):
        return message
    if not message:  # a bare `assert` in the compiler: the asserted source line is the message
        before = [line.strip() for line in text[:match.start()].splitlines()[-4:]
                  if line.startswith("    ") and line.strip() and not line.strip().startswith("^")]
        return before[-1] if before else ""
    # CompilationError: "at 12:4:", the kernel source (indented) with a caret line, then the message
    following = []
    for line in text[match.end():].splitlines():
        if line.startswith(("Traceback", "The above exception", "During handling")):
            break
        if line.strip() and not line.startswith((" ", "\t", "^", "##gfxhound")):
            following.append(line.strip())
    real = [line for line in following if not line.startswith("def ")]
    return real[-1] if real else message


def environment_reason(text):
    for pattern, reason in ENVIRONMENT_PATTERNS:
        if re.search(pattern, text or ""):
            return reason
    return ""


def user_error_reason(text):
    for pattern, reason in USER_ERROR_PATTERNS:
        if re.search(pattern, text or ""):
            return reason
    return ""


def summarise(text, ended):
    """Classify one failed compile attempt.

    ``ended`` is 'exception' (a Python exception, traceback in text), 'signal:<N>' (the process died from signal N),
    'exit:<N>' (it exited with N without a traceback), or 'timeout'. Returns a dict with verdict, stage, message,
    frames and signature.
    """
    stage = last_stage(text)
    exc_type, exc_message, frames = python_exception(text)
    native = key_line(text)
    if ended == "timeout":
        verdict, message, frames = "timeout", "compile did not finish in time", []
    elif ended == "exception":
        message = f"{exc_type}: {exc_message}" if exc_type else (native or "exception")
        if native and exc_type in ("RuntimeError", "") and native not in message:
            # the compiler's own diagnostic says more than "PassManager::run failed" or "LLD failed ... because"
            message = f"{message} | {native}"
        elif _GENERIC.search(message) and identity(text) and identity(text) not in message:
            message = f"{message} {identity(text)}"
        if environment_reason(text):
            verdict = "unresolved"
        else:
            verdict = "user_error" if user_error_reason(message) else "ice"
    else:  # died: signal or unexpected exit
        message = native or f"{ended} {identity(text)}".strip()
        if ended.startswith("signal:"):
            message = f"{message} [{ended}]" if native else message
        verdict = "ice"
        frames = []
    normalised = normalise(message)
    return {
        "verdict": verdict,
        "stage": stage,
        "message": message.strip()[:2000],
        "normalised": normalised,
        "frames": list(frames),
        "signature": signature_hash(verdict, stage, normalised, frames),
    }


def signature_hash(verdict, stage, normalised, frames):
    """The bug's identity. The normaliser version is recorded beside it (run.json), not hashed into it, so a
    normaliser change re-keys only the messages it changes."""
    blob = json.dumps([verdict, stage, normalised, list(frames)])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


MEMORY_MODEL_STAGE = "memory-model"
CAST_TABLE_STAGE = "cast-table"  # a wrong code found by the conversion table (oracle/cast_table.py, gfxhound casts)
MEMORY_MODEL_MARK = "gfxhound-memory-model:"  # how a repro's child reports each violation, one a line
MEMORY_MODEL_MESSAGE = re.compile(r"^[\w-]+:([\w-]+): .*?missing (.*)$")
_MM_COUNTER = re.compile(r"\b(vmcnt|lgkmcnt)\(0\)")


def memory_model_key(message, table):
    """The defect a static memory-model violation (oracle/memory_model.py) shows: the code-sequence table, the
    defect (wait-before-inv, wait-after-wbl2, inv-missing, ...) and the counter a missing wait is for. The scope,
    the atomic's opcode and cache bits, fence or attached form are left out: one missing wait in the compiler
    shows through all of them, and a kernel's other violations are other keys."""
    found = MEMORY_MODEL_MESSAGE.match(message.strip())
    if not found:
        return f"{table}: {normalise(message)}"
    counter = _MM_COUNTER.search(found.group(2))
    return f"{table}: {found.group(1)}" + (f" {counter.group(1)}" if counter else "")


def memory_model_headline(key, own):
    """The first line of a memory-model finding: the same for every kernel that shows the defect (what is missing,
    without the scope's cache bits)."""
    found = MEMORY_MODEL_MESSAGE.match(own[0].strip()) if own else None
    missing = re.sub(r"\s+(?:sc0|sc1|nt)\b|;.*$", "", found.group(2)) if found else "a wait, writeback or invalidate"
    return f"memory model ({key}): missing {missing}"


def memory_model_signatures(messages, table):
    """[(key, signature, the messages of that key)] in key order: a kernel with two defects is two findings."""
    by_key = {}
    for message in messages:
        by_key.setdefault(memory_model_key(message, table), []).append(message)
    return [(key, signature_hash("miscompile", MEMORY_MODEL_STAGE, key, []), by_key[key]) for key in sorted(by_key)]


def miscompile_signature(verdict, target, ops, fallback):
    """A miscompile has no message: its provisional identity is the target and the kernel's op multiset
    (docs/design.md "Signatures"); reduction regroups it by the reduced kernel's shape. Never empty: without ops,
    ``fallback`` (the kernel family and the spec's own hash) stands in, so no two kernels share a catch-all."""
    assert ops or fallback, "a miscompile signature needs the kernel's ops or a fallback"
    normalised = f"{target}: " + (" ".join(sorted(ops)) if ops else f"kernel {fallback}")
    return normalised, signature_hash(verdict, "run", normalised, [])


# Names of element types and formats: two signatures that differ only there are one family (the same lowering
# bug reached with f8E4M3FN and f8E5M2FNUZ); they stay two signatures, since bisection needs the exact one.
_DTYPE_NAMES = re.compile(
    r"\b(?:v\d+)?(?:[fi]\d+|bf\d+|f8E\w+|f6E\w+|f4E\w+|fp8\w*|bf8\w*|fp16|fp32|fp64|bf16|"
    r"float\d*(?:_\w+)?|int\d+|uint\d+|e[2-5]m[1-3]\w*|e8m0\w*|tf32|x\d+f\d+)\b|"
    r"'?\.(?:ca|cg|cs|cv|wb|wt|lu)\b'?")  # cache modifiers: the same lowering reached with another one


def family_key(verdict, stage, normalised):
    """The family a signature belongs to: its identity with element-type and format names blanked."""
    blob = json.dumps([verdict, stage, _DTYPE_NAMES.sub("<type>", normalised or "")])
    return hashlib.sha256(blob.encode()).hexdigest()[:12]

# ---- gfxhound/llc_text.py (embedded) -----------------------------------------------------------------------------
"""What an llc run's exit code and stderr mean, with nothing but `re`: the LLVM IR reducer's interestingness test
imports this (and gfxhound.signature) in a bare interpreter (`python -S -E`) once per failing candidate, where
importing gfxhound.compat's subprocess machinery would double the cost of a test."""

import re

STAGE_MARK = "##gfxhound-stage"
LLC_STAGE = "llc-verify"
LLC_ENDED = "exit:llc"


def classify_llc(returncode, text):
    """(status, text) of one llc run from its exit code (negative: killed by that signal) and its stderr."""
    if "is not a recognized processor" in text or "not a recognized feature" in text:
        return "unsupported", text
    if returncode == 0:
        return "ok", ""
    if returncode == 1 and re.search(r"\.\w+:\d+:\d+: error:", text) and "LLVM ERROR" not in text:
        return "unparsable", text
    if "Broken module found" in text or "input module cannot be verified" in text:
        # The IR verifier of this llc rejects what Triton's own (newer) LLVM verified and compiled: version skew
        # (e.g. an intrinsic's signature changed), not a bug in either.
        return "unparsable", text
    ended = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
    return "failed", f"{STAGE_MARK} {LLC_STAGE}\n{text}\nllc ended: {ended}"

# ---- gfxhound/compat.py (embedded) -------------------------------------------------------------------------------
"""Compile a Triton kernel for an AMD target exactly as the runtime would, on any Triton 3.x.

Why self-contained (standard library + triton only, no gfxhound imports): repro scripts embed a copy, and they are
what bisection runs on releases from 3.0 to today. Three things vary across releases and live only here:
- the ``ASTSource`` calling convention (changed at 3.3),
- argument specialisation (``tt.divisibility``; ``tt.pointer_range`` on HIP since 3.4; ints equal to 1 become
  constexprs), which we take from the backend's own hooks so a compile-only campaign sees the runtime's code paths
  (with the release's own knob defaults: buffer ops default off in 3.4/3.5, on from 3.6; and where a release's
  ``is_within_2gb`` imports torch first, 3.4-3.7, a stand-in module lets it run without torch),
- the backend's stage table, which we wrap to print ``##gfxhound-stage <name>`` on fd 2 before each stage, so a
  process killed by LLVM still says where it died.
"""
import contextlib
import os
import re
import subprocess
import sys
import types


WAVE64_PREFIXES = ("gfx90", "gfx94", "gfx95")


def triton_version():
    import triton
    return triton.__version__


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def warp_size(arch):
    return 64 if arch.startswith(WAVE64_PREFIXES) else 32


def hip_backend_class():
    from triton.backends.amd.compiler import HIPBackend
    return HIPBackend


def backend_class(name="hip"):
    """The compiler backend whose specialisation hooks and stages we use: 'hip' (AMD) or 'cuda'."""
    if name == "cuda":
        from triton.backends.nvidia.compiler import CUDABackend
        return CUDABackend
    return hip_backend_class()


class StubTensor:
    """Stands for a device tensor during specialisation: 256-byte aligned, ``nbytes`` long."""

    def __init__(self, nbytes):
        self.nbytes = nbytes

    def data_ptr(self):
        return 0x7F0000000000

    def ptr_range(self):
        return self.nbytes


MAX_INT_32 = 2**31 - 1
# How pointer specialisation was decided in this process (specialisation_report() tells the toolchain record):
# "hooks" (the backend's own), "hooks+stand-in" (the same with a torch stand-in) or "fallback: <why>".
_HOW = {"method": None}
_ABSENT = object()


def _backend_spec(backend, arg, kind):
    if kind == "ptr" and hasattr(backend, "get_tensor_specialization"):
        return backend.get_tensor_specialization(arg, align=True)
    if kind == "int" and hasattr(backend, "get_int_specialization"):
        return backend.get_int_specialization(arg, align=True)
    if hasattr(backend, "get_arg_specialization"):
        return backend.get_arg_specialization(arg, "tensor" if kind == "ptr" else "int", align=True)
    return None


@contextlib.contextmanager
def torch_stand_in():
    """Put a stand-in ``torch`` module in ``sys.modules`` for the duration (only where torch is not there).

    Triton 3.4-3.7's ``HIPBackend.is_within_2gb`` runs ``import torch`` before it looks at the argument; the
    argument we pass (a StubTensor) answers through ``ptr_range()``, which the release checks first, so the stand-in
    is never used beyond that import and the release's own rule and knob default decide.
    """
    before = sys.modules.get("torch", _ABSENT)
    if before is not _ABSENT and before is not None:  # the real torch (None: an import blocked on purpose)
        yield
        return
    stand_in = types.ModuleType("torch")
    stand_in.Tensor = type("Tensor", (), {})  # nothing is an instance: a StubTensor is judged by ptr_range()
    stand_in.__gfxhound_stand_in__ = True
    sys.modules["torch"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("torch") is stand_in:
            if before is _ABSENT:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = before


def _torch_missing(exc):
    return (getattr(exc, "name", None) or "").split(".")[0] == "torch"


def _spec_string(backend, value, kind):
    """The backend's specialisation letters for one argument ('D' divisible by 16, 'S' within 2 GB, ...)."""
    arg = StubTensor(value) if kind == "ptr" else value
    if _HOW["method"] != "hooks+stand-in":
        try:
            desc = _backend_spec(backend, arg, kind)
            if desc is not None:
                _HOW["method"] = _HOW["method"] or "hooks"
                return desc
            _HOW["method"] = "rule (no backend hooks before 3.2; no tt.pointer_range before 3.4)"
            return "D" if (kind == "int" and value % 16 == 0) or kind == "ptr" else ""
        except ImportError as exc:
            if not _torch_missing(exc):
                raise
    try:
        with torch_stand_in():
            desc = _backend_spec(backend, arg, kind)
        if not (_HOW["method"] or "").startswith("fallback"):  # a fallback once in this process is what to report
            _HOW["method"] = "hooks+stand-in"
        return desc
    except Exception as exc:  # noqa: BLE001 - a release whose rule we cannot run: decide as documented, say so
        _HOW["method"] = f"fallback: {type(exc).__name__}: {str(exc)[:120]}"
        return _fallback_spec(value, kind)


def buffer_ops_knob():
    """The installed release's own ``AMDGCN_USE_BUFFER_OPS`` setting (its default where the variable is unset),
    or None for a Triton without ``triton.knobs`` (before 3.4)."""
    try:
        from triton import knobs
        return bool(knobs.amd.use_buffer_ops)
    except (ImportError, AttributeError):
        return None


def _fallback_spec(value, kind):
    """The 3.4-3.9 rule, written out: only where the release's own hook cannot run at all."""
    if kind == "int":
        return "D" if value % 16 == 0 else ""
    return "D" + ("S" if buffer_ops_knob() and value <= MAX_INT_32 else "")


def specialisation_report(backend_name="hip"):
    """How this process decides argument specialisation, for the toolchain record: the method, whether it is the
    release's own rule (``exact``), whether a 4 KB pointer gets ``tt.pointer_range`` as things stand (the knob's
    default unless AMDGCN_USE_BUFFER_OPS is set), and a one-line notice when it is not exact."""
    import importlib.util
    probe = [{"name": "p", "kind": "ptr", "type": "*fp32", "value": 4096}]
    _signature, _constexprs, attrs = specialise(probe, backend_name)
    method = _HOW["method"] or "hooks"
    report = {"method": method, "exact": not method.startswith("fallback"),
              "torch": importlib.util.find_spec("torch") is not None,
              "buffer_ops_knob": buffer_ops_knob(), "buffer_ops_env": os.environ.get("AMDGCN_USE_BUFFER_OPS"),
              "pointer_range_on_4kb": ["tt.pointer_range", 32] in attrs.get("p", [])}
    if not report["exact"]:
        report["notice"] = (f"triton {triton_version()}'s own pointer specialisation cannot run here "
                            f"({method[len('fallback: '):]}); tt.pointer_range follows its AMDGCN_USE_BUFFER_OPS "
                            f"knob ({report['buffer_ops_knob']}) and may differ from a real launch")
    return report


def specialise(args, backend_name="hip"):
    """Runtime-equivalent (signature, constexprs, attrs) keyed by argument name.

    ``args`` is a list of dicts: {name, kind: ptr|int|float|constexpr, type, value, nospec?}. For ``ptr`` the value
    is the buffer's size in bytes; ``nospec`` marks a parameter the kernel does not specialise on.
    """
    backend = backend_class(backend_name)
    signature, constexprs, attrs = {}, {}, {}
    for arg in args:
        name, kind, value = arg["name"], arg["kind"], arg.get("value")
        if arg.get("nospec"):  # a parameter in the kernel's do_not_specialize list: plain type, no attributes
            signature[name] = arg["type"]
            continue
        if kind == "constexpr" or (kind == "int" and value == 1):
            signature[name] = "constexpr"
            constexprs[name] = value
            continue
        signature[name] = arg["type"]
        if kind in ("ptr", "int"):
            desc = _spec_string(backend, value, kind)
            found = backend.parse_attr(desc) if hasattr(backend, "parse_attr") else []
            if found:
                attrs[name] = [list(a) for a in found]
    return signature, constexprs, attrs


def make_source(fn, signature, constexprs, attrs):
    """An ``ASTSource`` in whichever calling convention the installed Triton speaks."""
    from triton.compiler import ASTSource
    names = list(fn.arg_names)
    if version_tuple(triton_version()) >= (3, 3):
        index_attrs = {(names.index(n),): v for n, v in attrs.items()}
        return ASTSource(fn, signature=dict(signature), constexprs=dict(constexprs), attrs=index_attrs)
    from triton.compiler.compiler import AttrsDescriptor
    sig = {n: t for n, t in signature.items() if t != "constexpr"}
    divisible = [names.index(n) for n, v in attrs.items() if ["tt.divisibility", 16] in v]
    if version_tuple(triton_version()) >= (3, 2):
        desc = AttrsDescriptor.from_dict({"arg_properties": {"tt.divisibility": divisible}, "cls": "AttrsDescriptor"})
    else:
        desc = AttrsDescriptor(divisible_by_16=tuple(divisible), equal_to_1=())
    return ASTSource(fn, signature={names.index(n): t for n, t in sig.items()},
                     constants={names.index(n): v for n, v in constexprs.items()}, attrs=desc)


def install_stage_markers(on_output=None):
    """Wrap every stage the HIP backend registers: print a marker on fd 2 first, hand the output to on_output."""
    backend = hip_backend_class()
    original = backend.add_stages
    if getattr(original, "_gfxhound_marked", False):
        backend.add_stages._gfxhound_on_output[0] = on_output
        return
    holder = [on_output]

    def add_stages(self, stages, options, *rest):
        original(self, stages, options, *rest)
        for name, fn in list(stages.items()):
            stages[name] = _marked(name, fn, holder)

    add_stages._gfxhound_marked = True
    add_stages._gfxhound_on_output = holder
    backend.add_stages = add_stages


def _marked(name, fn, holder):
    def run(src, metadata):
        os.write(2, f"{STAGE_MARK} {name}\n".encode())
        out = fn(src, metadata)
        if holder[0] is not None:
            holder[0](name, out)
        return out
    return run


def compile_for_amd(fn, args, arch, options, env_knobs=None):
    """Compile ``fn`` for ``arch`` with runtime-equivalent specialisation; returns the CompiledKernel."""
    from triton.backends.compiler import GPUTarget
    return compile_for_target(fn, args, GPUTarget("hip", arch, warp_size(arch)), options, env_knobs)


def compile_for_target(fn, args, target, options, env_knobs=None):
    """Compile ``fn`` for a ``GPUTarget`` with runtime-equivalent specialisation (no GPU needed)."""
    import triton
    with environment(env_knobs or {}):
        signature, constexprs, attrs = specialise(args, target.backend)
        src = make_source(fn, signature, constexprs, attrs)
        return triton.compile(src, target=target, options=dict(options))


def compile_ttgir_for_amd(text, path, arch, options, env_knobs=None):
    """Compile TTGIR text (written to ``path``, a ``.ttgir`` file) for ``arch``: the path a layout-mutated kernel
    takes, in campaigns and in its repro."""
    import triton
    from triton.backends.compiler import GPUTarget
    with open(path, "w") as f:
        f.write(text)
    with environment(env_knobs or {}):
        return triton.compile(str(path), target=GPUTarget("hip", arch, warp_size(arch)), options=dict(options))


@contextlib.contextmanager
def environment(values):
    """Set environment variables (knobs Triton reads from the environment) for the duration, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update({k: str(v) for k, v in values.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_RESOURCE_KEYS = ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
                  "private_segment_fixed_size")


def resources(compiled):
    """Static resource figures of an AMD kernel: registers, spills, scratch, LDS, occupancy."""
    text = compiled.asm.get("amdgcn", "") if hasattr(compiled, "asm") else ""
    out = {}
    for key in _RESOURCE_KEYS:
        m = re.search(r"\.%s:\s+(\d+)" % key, text)
        if m:
            out[key] = int(m.group(1))
    m = re.search(r";\s*Occupancy:\s*(\d+)", text)
    if m:
        out["occupancy"] = int(m.group(1))
    out["lds"] = int(getattr(compiled.metadata, "shared", 0) or 0)
    return out


def applied_options(compiled, names):
    """The options the compiler really used (releases silently drop ones they do not know)."""
    meta = compiled.metadata
    return {n: getattr(meta, n) for n in names if hasattr(meta, n)}




def llc_command(llc, arch, llir_path, fp_contract=True):
    """The llc command line Triton's own code generation corresponds to: -O3, fp contraction when fusion is on,
    and the machine verifier."""
    cmd = [str(llc), "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-O3", "-verify-machineinstrs",
           "-filetype=null"]
    if fp_contract:
        cmd.append("-fp-contract=fast")
    cmd.append(str(llir_path))
    return cmd


def llc_verify(llc, arch, llir_path, timeout=120, fp_contract=True):
    """Run LLVM's ``llc`` with the machine verifier on Triton's LLVM IR, with the flags Triton's own code
    generation uses (-O3, fp contraction when fusion is on). Returns (status, text):
    'ok' | 'unparsable' | 'unsupported' (cannot test with this llc) | 'failed' | 'timeout'.
    """
    try:
        proc = subprocess.run(llc_command(llc, arch, llir_path, fp_contract), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"{STAGE_MARK} {LLC_STAGE}\nllc did not finish in {timeout} s"
    except OSError as exc:
        return "unsupported", f"llc cannot run: {exc}"
    return classify_llc(proc.returncode, proc.stderr or "")


# ---- the kernel --------------------------------------------------------------------------------------------------
if "--child" in sys.argv:
    import triton
    import triton.language as tl
    """Pointers as values, and control flow as real kernels write it: a per-row-block "pick a source, reduce it, write
    it centred" kernel, written as a gfxhound `--kernel` template.

    Modelled on: vLLM's prefix-prefill and paged-attention kernels (a pointer chosen per program between the KV cache
    and the fresh K/V, per-lane `tl.where` between cache and new positions, a data-dependent number of blocks per
    sequence), fused MoE (a per-program flag that writes what it must and returns early, `expert == -1`), layer norm's
    two passes over column blocks (a row statistic from the first pass, used by the second), and the i32-vs-i64 offset
    split kernels write once tensors pass 2 GiB (`offs.to(tl.int64)`).

    Why it exists: Triton AMD's pointer canonicalisation (`tritonamdgpu-canonicalize-pointers`) and buffer-op conversion
    (`tritonamdgpu-convert-buffer-ops`) rewrite `ptr = base + offsets` through `scf.if`, `scf.for`, `scf.while` and
    `arith.select`, and AMD passes restructure `if`s around loops; generated kernels rarely carry pointers through
    them. Every condition here is a fresh per-program runtime value (`modes[pid, i]`, one per `if`, 0..3), and every
    branch has a side effect (a store or an atomic) so the `if`s stay `scf.if` rather than folding to selects:
    - `scf.if` yielding a pointer tensor and its step: an if/elif/else chain between `a` (i32 offsets), `b` (i64
      offsets) and a base chosen by a scalar condition (`b_ptr if c else a_ptr`) or by `tl.where` between two pointer
      tensors (SELECT_FORM);
    - `scf.for` (`tl.range(num_stages=LOOP_STAGES)`, runtime trip count) carrying a pointer tensor that walks the
      column blocks cyclically from a per-program start, its step chosen each iteration by a loop-varying condition
      (wrap back at the last block), as an `scf.if` with an atomic or as a select (WRAP_FORM);
    - an early `return` (EARLY_RETURN) between the loops, which leaves the rest of the function in `cf` blocks;
    - `scf.while` (USE_WHILE; else an `scf.for` over the same runtime count) carrying two pointer tensors and an
      accumulator, reading through `tl.where(lane_mask, a_ptrs, src_ptrs)` (BLEND), storing and counting with an atomic.
    Found with it (Triton 3.8.0 and 3.9.0, gfx942/gfx950): SELECT_FORM "where" asserts in canonicalize-pointers'
    ConvertSCFIfOp ("ifOp types must match in both arms") whenever the pointer arguments carry tt.pointer_range=32:
    one arm yields a fat pointer, the other a select between two bases (kin of triton#9859 and triton#10381).
    Outputs: out[M, N] (the centred rows, first counts[p] column blocks), stats[M, 2] (the first pass's statistic, the
    second pass's sum of squares), hits[8] (branch counters, shared by programs: atomics).
    """


    @triton.jit
    def _second_pass_block(src, pa, sq, j, shift, rows, cols, row_ok, split, out_ptr, hits_ptr, N, stride_om, stride_on,
                           step, a_step, BLOCK_N: tl.constexpr, BLEND: tl.constexpr):
        """One column block of the second pass: read (through a per-lane choice of pointer), centre, store, accumulate."""
        c = j * BLOCK_N + cols
        m = row_ok[:, None] & (c[None, :] < N)
        rd = src
        if BLEND:  # columns before `split` come from `a`, the rest from the chosen source (cache prefix + fresh tail)
            rd = tl.where(c[None, :] < split, pa, src)
        x = tl.load(rd, mask=m, other=0.0).to(tl.float32) - shift[:, None]
        x = tl.where(m, x, 0.0)
        tl.store(out_ptr + rows[:, None] * stride_om + c[None, :] * stride_on, x, mask=m)
        tl.atomic_add(hits_ptr + 6, 1)  # iterations run, over all programs
        return src + step, pa + a_step, sq + tl.sum(x * x, axis=1)


    @triton.jit
    def pointer_flow(a_ptr, b_ptr, modes_ptr, counts_ptr, out_ptr, stats_ptr, hits_ptr, M, N,
                     stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, OFFSET_I64: tl.constexpr, SELECT_FORM: tl.constexpr,
                     WRAP_FORM: tl.constexpr, USE_WHILE: tl.constexpr, EARLY_RETURN: tl.constexpr, BLEND: tl.constexpr,
                     LOOP_STAGES: tl.constexpr):
        pid = tl.program_id(0)
        rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, BLOCK_N)
        row_ok = rows < M
        modes = modes_ptr + pid * 4
        STEP: tl.constexpr = tl.int64 if OFFSET_I64 else tl.int32
        # the source of this row block: a pointer tensor and its column-block step, yielded by an if/elif/else
        which = tl.load(modes + 0)
        if which == 0:  # a, 32-bit offsets
            src = a_ptr + (rows[:, None] * stride_am + cols[None, :] * stride_an)
            step = tl.full((), BLOCK_N, STEP) * stride_an
            tl.atomic_add(hits_ptr + 0, 1)
        elif which == 1:  # b, 64-bit offsets
            src = b_ptr + (rows[:, None].to(tl.int64) * stride_bm + cols[None, :] * stride_bn)
            step = tl.full((), BLOCK_N, STEP) * stride_bn
            tl.atomic_add(hits_ptr + 1, 1)
        else:  # 2: a, 3: b, chosen by a scalar condition
            from_b = which == 3
            r = rows[:, None].to(STEP)
            if SELECT_FORM == "scalar":  # a scalar pointer selected, then offset
                base = b_ptr if from_b else a_ptr
                sm = stride_bm if from_b else stride_am
                sn = stride_bn if from_b else stride_an
                src = base + (r * sm + cols[None, :] * sn)
            else:  # a select between two pointer tensors
                src = tl.where(from_b, b_ptr + (r * stride_bm + cols[None, :] * stride_bn),
                               a_ptr + (r * stride_am + cols[None, :] * stride_an))
                sn = tl.where(from_b, stride_bn, stride_an)
            step = tl.full((), BLOCK_N, STEP) * sn
            tl.atomic_add(hits_ptr + which, 1)
        # first pass: row sums, walking the column blocks cyclically from a per-program start
        nb = tl.cdiv(N, BLOCK_N)
        first = pid % nb
        ptrs = src + first * step
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, nb, num_stages=LOOP_STAGES):
            blk = (first + k) % nb
            x = tl.load(ptrs, mask=row_ok[:, None] & (blk * BLOCK_N + cols[None, :] < N), other=0.0)
            acc += x.to(tl.float32)
            if WRAP_FORM == "if":
                if blk == nb - 1:  # back to column block 0
                    ptrs += (1 - nb) * step
                    tl.atomic_add(hits_ptr + 5, 1)
                else:
                    ptrs += step
            else:
                ptrs += tl.where(blk == nb - 1, (1 - nb) * step, step)
        total = tl.sum(acc, axis=1)
        if EARLY_RETURN:
            if tl.load(modes + 2) == 3:  # nothing more to do for this program (fused MoE's expert -1)
                tl.store(stats_ptr + rows * 2, -total, mask=row_ok)
                tl.atomic_add(hits_ptr + 4, 1)
                return
        # the shift, computed in a branch, is used by the loop below
        if tl.load(modes + 1) % 2 == 1:
            shift = total / N
            tl.store(stats_ptr + rows * 2, shift, mask=row_ok)
        else:
            shift = tl.zeros_like(total)
            tl.store(stats_ptr + rows * 2, total, mask=row_ok)
        # second pass over a data-dependent number of column blocks
        n = tl.load(counts_ptr + pid)
        split = tl.load(modes + 3) * N // 3
        pa = a_ptr + (rows[:, None].to(STEP) * stride_am + cols[None, :] * stride_an)
        a_step = BLOCK_N * stride_an
        sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
        if USE_WHILE:
            j = 0
            while j < n:
                src, pa, sq = _second_pass_block(src, pa, sq, j, shift, rows, cols, row_ok, split, out_ptr, hits_ptr, N,
                                                 stride_om, stride_on, step, a_step, BLOCK_N, BLEND)
                j += 1
        else:
            for j in range(0, n):
                src, pa, sq = _second_pass_block(src, pa, sq, j, shift, rows, cols, row_ok, split, out_ptr, hits_ptr, N,
                                                 stride_om, stride_on, step, a_step, BLOCK_N, BLEND)
        tl.store(stats_ptr + rows * 2 + 1, sq, mask=row_ok)


    def reference(a_ptr, b_ptr, modes_ptr, counts_ptr, M, N, BLOCK_M, BLOCK_N, WRAP_FORM, EARLY_RETURN, BLEND, **_):
        """The same per-program walk in float64 (sums in any order), integers exact."""
        import torch
        a, b = a_ptr.double(), b_ptr.double()
        out = torch.zeros(M, N, dtype=torch.float64)
        stats = torch.zeros(M, 2, dtype=torch.float64)
        hits = torch.zeros(8, dtype=torch.int32)
        for p in range(-(-M // BLOCK_M)):
            which, how, skip, mix = (int(v) for v in modes_ptr[p])
            rows = slice(p * BLOCK_M, min(M, (p + 1) * BLOCK_M))
            src = b if which in (1, 3) else a
            hits[which] += 1
            hits[5] += WRAP_FORM == "if"
            total = src[rows].sum(1)
            if EARLY_RETURN and skip == 3:
                stats[rows, 0] = -total
                hits[4] += 1
                continue
            shift = total / N if how % 2 == 1 else torch.zeros_like(total)
            stats[rows, 0] = shift if how % 2 == 1 else total
            n = int(counts_ptr[p])
            width = min(N, n * BLOCK_N)
            x = src[rows, :width].clone()
            if BLEND:
                split = mix * N // 3
                x[:, :split] = a[rows, :min(split, width)]
            x = x - shift[:, None]
            out[rows, :width] = x
            stats[rows, 1] = (x * x).sum(1)
            hits[6] += n
        return out.float(), stats.float(), hits

    # gfxhound: the jit function itself, under any triton.autotune / triton.heuristics wrapper
    gfxhound_kernel = pointer_flow
    while type(gfxhound_kernel).__name__ in ("Autotuner", "Heuristics"):
        gfxhound_kernel = gfxhound_kernel.fn

def child():
    install_stage_markers()
    if TTGIR is not None:
        with tempfile.TemporaryDirectory() as tmp:
            compiled = compile_ttgir_for_amd(TTGIR, os.path.join(tmp, "kernel.ttgir"), ARCH,
                                             {k: v for k, v in OPTIONS.items() if k != "num_stages"}, ENV_KNOBS)
    else:
        compiled = compile_for_amd(gfxhound_kernel, ARGS, ARCH, OPTIONS, ENV_KNOBS)
    print("compiled")
    if MEMORY_MODEL_SRC:
        checker = {}
        exec(MEMORY_MODEL_SRC, checker)
        report = checker["check"](compiled.asm["amdgcn"], ARCH, compiled.asm.get("llir"))
        for violation in report.violations:  # the defect's key, then the full message
            print(MEMORY_MODEL_MARK, memory_model_key(violation.message(), report.table), "|", violation.message())
        if report.violations:
            sys.exit(CHILD_MEMORY_MODEL)
    llc = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--llc=")), LLC)
    if llc:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "kernel.llir")
            with open(path, "w") as f:
                f.write(compiled.asm["llir"])
            status, text = llc_verify(llc, ARCH, path, TIMEOUT_S,
                                      bool(getattr(compiled.metadata, "enable_fp_fusion", True)))
        if status in ("unparsable", "unsupported"):
            print(f"gfxhound-cannot-test: {llc} cannot test this IR ({status})", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
        if status != "ok":
            print(text, file=sys.stderr)
            sys.exit(CHILD_WRONG)


def main():
    if "--child" in sys.argv:
        try:
            import triton  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            print(f"gfxhound-cannot-test: triton does not import: {exc}", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
        child()
        return 0
    env = dict(os.environ)
    env.setdefault("TRITON_HIP_LLD_PATH", DEFAULT_LLD)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["TRITON_ALWAYS_COMPILE"] = "1"
    with tempfile.TemporaryDirectory(prefix="gfxhound-repro-") as cache:
        env["TRITON_CACHE_DIR"] = cache
        try:
            extra = [a for a in sys.argv[1:] if a.startswith("--llc=")]
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *extra], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
            text, code, ended = proc.stdout + proc.stderr, proc.returncode, None
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"") + (exc.stderr or b"")
            text, code, ended = out.decode(errors="replace") if isinstance(out, bytes) else out, None, "timeout"
    if "--show" in sys.argv:
        print(text)
    if ended is None:
        if code == 0:
            print("bug absent: the kernel compiled")
            return EXIT_ABSENT
        if code == EXIT_CANNOT_TEST or "gfxhound-cannot-test" in text:
            print("cannot test: triton is missing or broken here")
            return EXIT_CANNOT_TEST
        if code == CHILD_MEMORY_MODEL and MEMORY_MODEL_SRC:
            found = sorted({line.split(MEMORY_MODEL_MARK, 1)[1].split("|", 1)[0].strip()
                            for line in text.splitlines() if line.startswith(MEMORY_MODEL_MARK)})
            if EXPECTED["normalised"] in found:  # the defect is among those found; others may be there too
                print(f"bug present: memory-model violation: {EXPECTED['normalised']}")
                return EXIT_PRESENT
            print(f"cannot test: other memory-model violations ({'; '.join(found)[:200]})")
            return EXIT_CANNOT_TEST
        if code == CHILD_WRONG and f"{STAGE_MARK} {LLC_STAGE}" in text:
            ended = "timeout" if "llc did not finish" in text else LLC_ENDED
        elif code is not None and code < 0:
            ended = f"signal:{-code}"
        elif "Traceback (most recent call last)" in text:
            ended = "exception"
        else:
            ended = f"exit:{code}"
    got = summarise(text, ended)
    if got["signature"] == EXPECTED["signature"]:
        print(f"bug present: {got['verdict']} in {got['stage'] or '?'}: {got['message'][:200]}")
        return EXIT_PRESENT
    print(f"cannot test: a different failure ({got['verdict']} in {got['stage'] or '?'}: {got['message'][:200]})")
    return EXIT_CANNOT_TEST


if __name__ == "__main__":
    sys.exit(main())
