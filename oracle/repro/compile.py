"""Render a standalone repro script (docs/design.md, Repro protocol).

The script needs only Python and triton. It compiles in a child process it spawns, so a signal never escapes,
classifies the child's ending with an embedded copy of gfxhound/signature.py, and exits 0 (bug absent), 1 (bug
present with the same normalised signature) or 125 (cannot test here: no triton, API drift, a different failure).
Bisection, verification and reduction all run it.
"""
from __future__ import annotations

import pprint
import re

from gfxhound.embedded import SOURCES
from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT

_EXIT_CODES = {"exit_absent": EXIT_ABSENT, "exit_present": EXIT_PRESENT,
               "exit_cannot_test": EXIT_CANNOT_TEST}

TEMPLATE = '''#!/usr/bin/env python3
"""gfxhound repro {spec_hash} for {arch}: {verdict} in stage '{stage}'.

Found with {toolchain}. Expected failure (normalised):
    {normalised}

Run:   python repro.py            exit 0 = bug absent, 1 = same bug present, 125 = cannot test here
       python repro.py --show     also print the child's output
       python repro.py --llc=PATH (bugs in llc) verify with another llc
Needs: triton (any 3.x it can run on); for Triton < 3.9 an ld.lld (TRITON_HIP_LLD_PATH, default {lld}).
"""
import os
import subprocess
import sys
import tempfile

# the repro protocol (gfxhound/protocol.py): what this script's exit says
EXIT_ABSENT, EXIT_PRESENT, EXIT_CANNOT_TEST = {exit_absent}, {exit_present}, {exit_cannot_test}
CHILD_WRONG, CHILD_MEMORY_MODEL = 3, 4  # between this script and the child it spawns
EXPECTED = {expected}
ARCH = {arch!r}
OPTIONS = {options}
ENV_KNOBS = {env}
ARGS = {args}
TIMEOUT_S = {timeout}
DEFAULT_LLD = {lld!r}
LLC = {llc!r}  # set when the bug is in LLVM's llc (stage llc-verify); `--llc=PATH` picks another llc
TTGIR = {ttgir}  # set when the kernel is its TTGIR with mutated layouts: that text is what is compiled
# set when the bug is a static memory-model violation: the checker (gfxhound's oracle/memory_model.py) runs on
# the compiled amdgcn, in its own namespace
MEMORY_MODEL_SRC = {memory_model_src}

# ---- gfxhound/signature.py (embedded) ----------------------------------------------------------------------------
{signature_src}
# ---- gfxhound/llc_text.py (embedded) -----------------------------------------------------------------------------
{llc_text_src}
# ---- gfxhound/compat.py (embedded) -------------------------------------------------------------------------------
{compat_src}
# ---- the kernel --------------------------------------------------------------------------------------------------
if "--child" in sys.argv:
{kernel_src}

def child():
    install_stage_markers()
    if TTGIR is not None:
        with tempfile.TemporaryDirectory() as tmp:
            compiled = compile_ttgir_for_amd(TTGIR, os.path.join(tmp, "kernel.ttgir"), ARCH,
                                             {{k: v for k, v in OPTIONS.items() if k != "num_stages"}}, ENV_KNOBS)
    else:
        compiled = compile_for_amd({kernel_name}, ARGS, ARCH, OPTIONS, ENV_KNOBS)
    print("compiled")
    if MEMORY_MODEL_SRC:
        checker = {{}}
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
            print(f"gfxhound-cannot-test: {{llc}} cannot test this IR ({{status}})", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
        if status != "ok":
            print(text, file=sys.stderr)
            sys.exit(CHILD_WRONG)


def main():
    if "--child" in sys.argv:
        try:
            import triton  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            print(f"gfxhound-cannot-test: triton does not import: {{exc}}", file=sys.stderr)
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
            found = sorted({{line.split(MEMORY_MODEL_MARK, 1)[1].split("|", 1)[0].strip()
                            for line in text.splitlines() if line.startswith(MEMORY_MODEL_MARK)}})
            if EXPECTED["normalised"] in found:  # the defect is among those found; others may be there too
                print(f"bug present: memory-model violation: {{EXPECTED['normalised']}}")
                return EXIT_PRESENT
            print(f"cannot test: other memory-model violations ({{'; '.join(found)[:200]}})")
            return EXIT_CANNOT_TEST
        if code == CHILD_WRONG and f"{{STAGE_MARK}} {{LLC_STAGE}}" in text:
            ended = "timeout" if "llc did not finish" in text else LLC_ENDED
        elif code is not None and code < 0:
            ended = f"signal:{{-code}}"
        elif "Traceback (most recent call last)" in text:
            ended = "exception"
        else:
            ended = f"exit:{{code}}"
    got = summarise(text, ended)
    if got["signature"] == EXPECTED["signature"]:
        print(f"bug present: {{got['verdict']}} in {{got['stage'] or '?'}}: {{got['message'][:200]}}")
        return EXIT_PRESENT
    print(f"cannot test: a different failure ({{got['verdict']}} in {{got['stage'] or '?'}}: {{got['message'][:200]}})")
    return EXIT_CANNOT_TEST


if __name__ == "__main__":
    sys.exit(main())
'''


def render_repro(rendered, arch: str, expected: dict, toolchain: str, spec_hash: str, timeout_s: int = 600,
                 lld: str = "/usr/lib/llvm-22/bin/ld.lld", llc: str | None = None, ttgir: str | None = None,
                 memory_model_src: str | None = None) -> str:
    """The repro script; `ttgir`: the layout-mutated TTGIR a layout pair's finding compiles instead of the source;
    `memory_model_src`: the static checker's source, for a memory-model finding (the oracle stage hands it in)."""
    kernel_body = rendered.source.replace("import triton\nimport triton.language as tl\n", "")
    # a user's file (gfxhound fuzz --kernel) may start with a __future__ import, which cannot stand under the `if`
    # below; Triton reads a string annotation ("tl.constexpr") as it reads an evaluated one
    kernel_body = re.sub(r"^from __future__ import [^\n]*$", "", kernel_body, flags=re.M)
    kernel_src = "    import triton\n    import triton.language as tl\n" + "\n".join(
        ("    " + line) if line.strip() else "" for line in kernel_body.strip("\n").splitlines())
    keep = {k: expected[k] for k in ("signature", "verdict", "stage", "normalised")}
    return TEMPLATE.format(**_EXIT_CODES, 
        spec_hash=spec_hash, arch=arch, verdict=expected["verdict"], stage=expected.get("stage", ""),
        toolchain=toolchain, normalised=expected.get("normalised", "")[:300], lld=lld,
        expected=pprint.pformat(keep), options=repr(rendered.options), env=repr(rendered.env),
        args=pprint.pformat(rendered.args), timeout=int(timeout_s),
        signature_src=SOURCES["signature"], llc_text_src=SOURCES["llc_text"], compat_src=SOURCES["compat"],
        kernel_src=kernel_src,
        kernel_name=rendered.kernel_name, llc=llc or "", ttgir="None" if ttgir is None else repr(ttgir),
        memory_model_src=repr(memory_model_src or ""))
