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

NORMALISER_VERSION = 8
# What each version changed (corpus/migrate.py re-keys findings recorded under an older one):
# 8: an assertion in a generic header (GENERIC_HEADERS) names the pass that hit it and its first non-generic native
#    frame; a pass's clean refusal (UNSUPPORTED_PATTERNS) is `unsupported`, keyed by (pass, message template); an
#    unreduced wrong result is keyed by target, layer and the op behind its first wrong output (oracle/culprit.py).
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

# A pass's clean refusal: the front end accepted what a pass does not implement, and the pass said so in a diagnostic
# written for it (MLIR's emitError or LLVM's report_fatal_error), not by an assertion, a crash or a verifier error.
# Reportable (`unsupported`), but listed apart from crashes; one finding per (pass, message template): the template
# is the diagnostic with type names blanked, so f32->fp8e4 and f32->fp8e5 refusals of one converter are one.
# Collected from Triton 3.6-3.9 AMD campaigns and the AMD backend's emitError calls.
UNSUPPORTED_PATTERNS = [
    r"\bNYI: ",  # 'amdg.upcast_mxfp' op NYI: fpType must be E2M1, E4M3, or E5M2
    r"^Unsupported conversion from ",  # ... 'f32' to 'f8E4M3FNUZ' with rounding mode rtz (ElementwiseOpToLLVM)
    r"^no matching matrix core intrinsic",  # ... due to unsupported element type (WMMA/MFMA selection)
    r"^Unsupported DotScaleOp found when converting",  # LLVM ERROR in ConvertTritonAMDGPUToLLVM (3.6)
    r"^Unsupported architecture for ",  # LLVM ERROR: ... direct to lds loads (async copy forced off CDNA3/4)
    r"^\(M, N\) cases other than .* unimplemented",  # AccelerateMatmul's MFMA tile choice (3.4)
]

# Assertions of LLVM's and MLIR's generic headers: a container's bounds, a cast, a storage verifier. The header
# names no bug; the pass that called it, and the first native frame outside the generic code, do.
GENERIC_HEADERS = ("ArrayRef.h", "SmallVector.h", "Casting.h", "STLExtras.h", "StorageUniquerSupport.h",
                   "DenseMap.h", "Optional.h", "PointerUnion.h", "StringRef.h", "APInt.h", "TypeSwitch.h",
                   "MapVector.h", "SetVector.h", "iterator_range.h", "OperationSupport.h", "TypeRange.h")
# native frames that are the assertion's machinery or a generic helper, not the code that failed
_GENERIC_FRAME = re.compile(
    r"^(?:llvm::sys::|llvm::report_fatal_error|llvm::llvm_unreachable_internal|__assert|__GI_|__libc_|abort\b|"
    r"raise\b|gsignal\b|_start\b|__restore_rt|SignalHandler|PrintStackTrace|std::|mlir::detail::|\w*pthread_|"
    r"llvm::(?:ArrayRef|MutableArrayRef|SmallVector\w*|cast|isa|dyn_cast|cast_or_null|detail|function_ref|"
    r"DenseMap\w*|TypeSwitch)\b)")
_NATIVE_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-fA-F]+ (?:in )?(.+?)(?: (?:\S*/)?([\w.+-]+\.(?:cpp|cc|c|h|hpp|inc)):"
                           r"\d+(?::\d+)?)?\s*$", re.M)

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

_CONTEXT_TAIL = re.compile(r" \[pass [^\[\]]*\]$")
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
    text = text.strip()
    tail = _CONTEXT_TAIL.search(text)  # the pass that names a long assertion survives the cut (version 8)
    if tail and len(text) > 400:
        return text[:400 - len(tail.group(0))].rstrip() + tail.group(0)
    return text[:400]


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
                elif complete and generic_header(found):
                    found = f"{found} {header_identity(text)}".strip()
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


def failing_pass(text):
    """The pass that failed: MLIR's note names it, LLVM's stack dump lists the passes it ran (innermost last)."""
    passes = _MLIR_PASS.findall(text or "") or ["".join(found) for found in _LLVM_PASS.findall(text or "")]
    return normalise(passes[-1]) if passes else ""


def identity(text):
    """``[pass X, op Y]`` from the diagnostics in text, or '' when they name neither."""
    text = text or ""
    parts = [f"pass {failing_pass(text)}"] if failing_pass(text) else []
    op = _OP_ERROR.search(text)
    if op:
        parts.append(f"op {op.group(1)}")
    ptxas = _PTXAS_ERROR.search(text)
    if ptxas:
        parts.append(f"ptxas: {ptxas.group(1).strip()}")
    return f"[{', '.join(parts)}]" if parts else ""


def generic_header(line):
    """The generic header (GENERIC_HEADERS) an assertion line names, or ''."""
    found = _ASSERT_AT.search(line or "")
    return found.group(1) if found and found.group(1) in GENERIC_HEADERS else ""


def first_own_frame(text):
    """The innermost frame of a native stack dump that is neither the assertion's machinery nor a generic header's
    code, as its qualified name without arguments; '' without a symbolised stack dump (a release build prints
    none: then the pass alone names the bug)."""
    for found in _NATIVE_FRAME.finditer(text or ""):
        name, source = re.sub(r" \(\S+\+0x[0-9a-fA-F]+\)$", "", found.group(1).strip()), found.group(2) or ""
        if name.startswith("(") or source in GENERIC_HEADERS:  # unsymbolised, or inlined from a generic header
            continue
        name = name.replace("(anonymous namespace)", "{anon}").split("(", 1)[0].strip()
        name = name.rsplit(" ", 1)[-1].replace("{anon}", "(anonymous namespace)")  # no return type
        if name and not _GENERIC_FRAME.match(name):
            return normalise(name)
    return ""


def header_identity(text):
    """``[pass X, frame F]`` for an assertion in a generic header, or '' when the output names neither."""
    parts = [f"pass {failing_pass(text)}"] if failing_pass(text) else []
    frame = first_own_frame(text)
    if frame:
        parts.append(f"frame {frame}")
    return f"[{', '.join(parts)}]" if parts else ""


_DIAGNOSTIC = re.compile(r"^(?:LLVM ERROR|error): ")
_OP_PREFIX = re.compile(r"^'[\w.]+' op ")


def unsupported_template(line):
    """The message template of a pass's clean refusal (UNSUPPORTED_PATTERNS) on a key line, or '': the diagnostic
    without its `error:` or `LLVM ERROR:` prefix, type names blanked, normalised."""
    if not _DIAGNOSTIC.match(line or ""):
        return ""
    diagnostic = _DIAGNOSTIC.sub("", line).strip()
    bare = _OP_PREFIX.sub("", diagnostic)
    if not any(re.search(pattern, bare) for pattern in UNSUPPORTED_PATTERNS):
        return ""
    return normalise(_DTYPE_NAMES.sub("<type>", diagnostic))


def unsupported_key(template, text):
    """An `unsupported` finding's identity: the message template and the pass that refused (from the output)."""
    where = failing_pass(text)
    return f"{template} [pass {where}]" if where else template


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
    template = unsupported_template(native) if verdict == "ice" else ""
    if template:  # a pass refused cleanly: one finding per (pass, message template), whatever the kernel
        verdict, frames, normalised = "unsupported", [], unsupported_key(template, text)
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


def wrong_result_signature(verdict, target, layer, culprit):
    """An unreduced wrong result's provisional identity: the target, the layer that ran the kernel (device,
    emulate, interpret) and the op behind its first wrong output (oracle/culprit.py), so one bug met through many
    random kernels is one finding before any reduction (docs/identity.md)."""
    assert culprit, "a wrong result's provisional signature needs the op behind it"
    normalised = f"{target} {layer}: wrong {culprit}"
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


_ASSERT_AT = re.compile(r"(?:^|\s)(?:\S+: )?(?:[^\s:]*/)?([\w.+-]+\.(?:cpp|cc|c|h|hpp|inc|td)):(\d+):.*?"
                        r"(Assertion [`'].*?' failed\.?)")
_PATH = re.compile(r"(?<![\w.])(?:/[^\s/:'\"`]+)+/([^\s/:'\"`]+)")


def headline(message: str) -> str:
    """The line a person reads for the cause: the compiler's own diagnostic (after the `RuntimeError: PassManager::run
    failed | ` wrapper), an assertion as `File.cpp:LINE: Assertion `...' failed.` without the build's directory and
    the templated function between them, paths shortened to their file names. Never cut: a summary that shows 120
    characters of a build path hides the assertion."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    native = first.split(" | ", 1)[1] if " | " in first else first
    found = _ASSERT_AT.search(native)
    if found:
        return f"{found.group(1)}:{found.group(2)}: {found.group(3)}"
    return _PATH.sub(r"\1", native).strip()
