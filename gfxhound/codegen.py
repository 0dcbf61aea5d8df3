"""Compile LLVM IR text through a *named* code generator, in a child process, and say exactly what ran.

Why: Debian's `llc` often does not reproduce what Triton's pinned AMD code generator does (Triton 3.9 generates
AMD code with a separately pinned LLVM, `libtriton_amd_codegen.so`, whose revision differs from any release;
older releases with their own bundled LLVM). A reduction, a bisection or an issue draft must run the code
generator that has the bug and name it (tool, version or revision, the exact command) so a maintainer can run the
same thing. Two kinds:

- `llc`: a binary with the flags given (the IR file last), e.g. Triton's `-O3 -fp-contract=fast` for gfx942.
- `triton`: a Triton release's own code generator, reached through that release's Python interpreter, with the
  call its `HIPBackend.make_amdgcn` makes (read from each release's `backends/amd/compiler.py`):
  3.9+: `triton.backends.amd.compiler.compile_amdgpu(src, triple, arch, "", flags=get_llvm_flags(arch), ...)`
  (the triple from `get_amd_codegen_target_triple`, e.g. `amdgpu9.42-amd-amdhsa`); 3.4-3.8:
  `triton._C.libtriton.llvm.translate_to_asm(src, amd.TARGET_TRIPLE, arch, features, flags, fp_fusion, False)`
  (3.8: one more `False`) after `llvm.init_targets()` (which `make_llir` runs first in a compile), with features
  `-real-true16` on gfx11 from 3.5 (3.8: `disable_real_true16_feature(arch)`), the flag
  `sink-insts-to-avoid-spills` for `schedule_hint="attention"` up to 3.5, and 3.8's
  `amdgpu-expert-scheduling-mode` where `is_expert_scheduling_enabled(arch)` (gfx1250). Where the release has the
  helper its make_amdgcn calls, the probe asks it; the version rules cover the releases without one.
  tests/reduce/test_reduce_codegen.py checks the call against each installed release's own `make_amdgcn`.

Every run is a child process with a timeout: LLVM aborts (SIGABRT) on an instruction it cannot select. The text a
run leaves is shaped like a campaign's (a `##gfxhound-stage` marker first, how it ended), so
`gfxhound.signature.summarise` gives the same first crash line as the finding's.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gfxhound.llc_text import LLC_ENDED, LLC_STAGE, STAGE_MARK, classify_llc

TRITON_STAGE = "amdgcn"  # the stage Triton's code generator runs in (the campaign's marker)

# run once under the release's interpreter: what it is and what its make_amdgcn would pass
PROBE = """
import json, sys
import triton
import triton.backends.amd.compiler as c
from triton._C.libtriton import amd
arch = sys.argv[1]
out = {"version": triton.__version__, "compile_amdgpu": hasattr(c, "compile_amdgpu")}
if out["compile_amdgpu"]:
    out["revision"] = c.get_amd_codegen_revision()
    out["triple"] = c.get_amd_codegen_target_triple(arch) if hasattr(c, "get_amd_codegen_target_triple") \\
        else amd.get_target_triple(arch)
    out["flags"] = list(c.get_llvm_flags(arch)) if hasattr(c, "get_llvm_flags") else []
else:
    from triton._C.libtriton import llvm
    out["triple"] = amd.TARGET_TRIPLE
    out["asm_args"] = (llvm.translate_to_asm.__doc__ or "").split("->")[0].count(":")  # 7; 8 from 3.8
    if hasattr(c, "disable_real_true16_feature"):
        out["features"] = c.disable_real_true16_feature(arch)
    if hasattr(c, "is_expert_scheduling_enabled"):
        out["flags"] = ["amdgpu-expert-scheduling-mode"] if c.is_expert_scheduling_enabled(arch) else []
print(json.dumps(out))
"""


class CodegenError(Exception):
    """A code generator that cannot be used (not found, not a Triton with an AMD backend): one line."""


@dataclass(frozen=True)
class Compiled:
    """One run: status ok | failed | timeout | cannot (cannot test: unparsable IR, unknown processor, no tool);
    the assembly (ok), and the text and end that `gfxhound.signature.summarise(text, ended)` judges."""
    status: str
    asm: str = ""
    text: str = ""
    ended: str = ""


@dataclass(frozen=True)
class Codegen:
    kind: str  # "llc" | "triton"
    program: str  # the llc binary, or the Python interpreter whose Triton generates code
    arch: str
    args: tuple = ()  # llc: its flags (the IR file is appended); triton: ()
    code: str = ""  # triton: the `python -c` program (the call make_amdgcn makes), the IR file its argv[1]
    version: str = ""  # llc: "LLVM version 22.1.8"; triton: "3.9.0"
    revision: str = ""  # triton 3.9+: the pinned AMD code generator's revision
    call: str = ""  # triton: the call in words, for a draft
    verifier: bool = False  # llc: the campaign's -verify-machineinstrs run (stage llc-verify)
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        if self.kind == "llc":
            return f"llc ({self.version or 'unknown version'})"
        where = f"pinned AMD code generator {self.revision}" if self.revision else "bundled LLVM"
        return f"triton {self.version} ({where})"

    @property
    def layer(self) -> str:
        """The layer (reduce/localise.py's LAYERS) a failure of this code generator is in."""
        if self.kind == "llc":
            return "external-llc"
        return "amd-codegen" if self.revision else "llvm-codegen"

    def command(self, ll: str) -> list:
        """The exact command that compiles `ll` (run in the folder that holds it)."""
        if self.kind == "llc":
            return [self.program, *self.args, ll]
        return [self.program, "-c", self.code, ll]

    def shell(self, ll: str) -> str:
        return shlex.join(self.command(ll))

    def to_json(self) -> dict:
        out = asdict(self)
        out["args"] = list(self.args)
        out["name"] = self.name
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Codegen":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["args"] = tuple(known.get("args", ()))
        return cls(**known)

    def run(self, ll: Path, timeout: float, cwd=None) -> Compiled:
        """Compile `ll` once in a child process (in `cwd`, else the folder that holds it)."""
        ll = Path(ll).resolve()
        try:
            proc = subprocess.run(self.command(str(ll)), capture_output=True, text=True, timeout=timeout,
                                  cwd=cwd or ll.parent, errors="replace", env=child_env())
        except subprocess.TimeoutExpired:
            return self.timed_out(timeout)
        except OSError as exc:
            return Compiled("cannot", text=f"cannot run {self.program}: {exc.strerror}")
        return self.judge_exit(proc.returncode, proc.stdout, proc.stderr)

    @property
    def stage(self) -> str:
        return LLC_STAGE if self.kind == "llc" else TRITON_STAGE

    def timed_out(self, timeout: float) -> Compiled:
        return Compiled("timeout", text=f"{STAGE_MARK} {self.stage}\ndid not finish in {timeout:.0f} s",
                        ended="timeout")

    def judge_exit(self, returncode: int, stdout: str, stderr: str) -> Compiled:
        """What one run's exit (negative: killed by that signal), output and diagnostics mean."""
        if self.kind == "llc":
            status, text = classify_llc(returncode, stderr)
            if status in ("unparsable", "unsupported"):
                return Compiled("cannot", text=text)
            if status == "ok":
                return Compiled("ok", asm=stdout)
            return Compiled("failed", text=text, ended=LLC_ENDED)
        if returncode == 0:
            return Compiled("ok", asm=stdout)
        if re.search(r"No module named 'triton|ImportError|cannot import name", stderr):
            return Compiled("cannot", text=stderr)
        ended = f"signal:{-returncode}" if returncode < 0 else \
            "exception" if "Traceback (most recent call last)" in stderr else f"exit:{returncode}"
        return Compiled("failed", text=f"{STAGE_MARK} {TRITON_STAGE}\n{stderr}", ended=ended)


def child_env() -> dict:
    """A code generator's environment: this one, with LLVM's crash symbolizer off (it costs ~0.2 s a crash and
    changes no first crash line; the pass names in the stack dump are printed either way)."""
    return dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1", PYTHONWARNINGS="ignore")


def llc_codegen(llc: str, args: list, arch: str = "", verifier: bool = False) -> Codegen:
    """An llc with these flags (as typed: `-mtriple=amdgcn-amd-amdhsa` is added when no triple or -march is given,
    since the IR Triton writes names a triple Debian's llc may not know, or none). `-o -` is added where no
    output is named, so the assembly comes back and nothing is written beside the input."""
    args = list(args)
    if not any(a.startswith(("-mtriple", "--mtriple", "-march", "--march")) for a in args):
        args.insert(0, "-mtriple=amdgcn-amd-amdhsa")
    if not any(a == "-o" or a.startswith("-o=") for a in args) and "-filetype=null" not in args:
        args += ["-o", "-"]
    if not arch:
        arch = next((a.split("=", 1)[1] for a in args if a.startswith(("-mcpu=", "--mcpu="))), "")
    return Codegen("llc", str(llc), arch, tuple(args), version=llc_version(str(llc)), verifier=verifier)


def llc_version(llc: str) -> str:
    try:
        out = subprocess.run([llc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CodegenError(f"{llc}: cannot run it ({exc})") from None
    found = re.search(r"LLVM version (\S+)", out)
    if not found:
        raise CodegenError(f"{llc}: not an llc (no 'LLVM version' in its --version)")
    return f"LLVM version {found.group(1)}" + (" (assertions)" if "with assertions" in out else "")


def version_tuple(text: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def triton_call(info: dict, arch: str, fp_fusion: bool = True, schedule_hint: str = "none") -> str:
    """The program `python -c PROGRAM FILE.ll` that makes the call this release's make_amdgcn makes."""
    q = json.dumps  # strings and lists of strings in double quotes: the command line quotes the program once
    if info["compile_amdgpu"]:
        return ("import sys\nfrom triton.backends.amd.compiler import compile_amdgpu\n"
                f"sys.stdout.write(compile_amdgpu(open(sys.argv[1]).read(), {q(info['triple'])}, {q(arch)}, \"\", "
                f"flags={q(list(info.get('flags', [])))}, enable_fp_fusion={bool(fp_fusion)}, "
                "disable_optimization=False, canonicalize_gep=False, disabled_passes=\"\", dump_ir=False, "
                "enable_timing=False))\n")
    version = version_tuple(info["version"])
    features = info.get("features", "-real-true16" if "gfx11" in arch and version >= (3, 5) else "")
    flags = info.get("flags", ["sink-insts-to-avoid-spills"] if schedule_hint == "attention" and version < (3, 6)
                     else [])
    trailing = ", False" * max(1, info.get("asm_args", 7) - 6)  # is_object (and 3.8's last flag): False
    return ("import sys\nfrom triton._C.libtriton import llvm\nllvm.init_targets()\n"
            f"sys.stdout.write(llvm.translate_to_asm(open(sys.argv[1]).read(), {q(info['triple'])}, {q(arch)}, "
            f"{q(features)}, {q(flags)}, {bool(fp_fusion)}{trailing}))\n")


def triton_codegen(python: str, arch: str, fp_fusion: bool = True, schedule_hint: str = "none",
                   timeout: float = 120) -> Codegen:
    """The code generator of the Triton that `python` imports, for `arch`, as its make_amdgcn calls it."""
    try:
        proc = subprocess.run([python, "-c", PROBE, arch], capture_output=True, text=True, timeout=timeout,
                              env=child_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CodegenError(f"{python}: cannot run it ({exc})") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise CodegenError(f"{python} has no Triton with an AMD backend to generate code with ({last[:200]})")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    code = triton_call(info, arch, fp_fusion, schedule_hint)
    call = code.strip().splitlines()[-1].replace("sys.stdout.write(", "", 1)[:-1].replace(
        "open(sys.argv[1]).read()", "<the .ll text>")
    return Codegen("triton", python, arch, code=code, version=info["version"], revision=info.get("revision", ""),
                   call=call, extra={"triple": info["triple"], "fp_fusion": bool(fp_fusion),
                                     "schedule_hint": schedule_hint})


BUNDLED = """
import mmap, re, sys
from triton._C import libtriton
with open(libtriton.__file__, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
    at = m.find(b"llvm/llvm-")
    found = re.match(rb"llvm/llvm-([0-9a-f]{8})-", m[at:at + 32]) if at >= 0 else None
print(found.group(1).decode() if found else "")
"""


def bundled_llvm(python: str, timeout: float = 120) -> str:
    """The LLVM revision (8 hex digits) a Triton release was built with, as its library's own file names spell
    it (the build tree `.../llvm/llvm-<hash>-<os>/...` in its assertion messages); '' when it does not say."""
    try:
        proc = subprocess.run([python, "-c", BUNDLED], capture_output=True, text=True, timeout=timeout,
                              env=child_env())
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""
