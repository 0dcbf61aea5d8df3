"""Build recipes and the build cache of commit bisection.

A recipe is data: argument lists with placeholders, never a shell string (so a path with a space or a quote in it
stays one argument). The cache keeps every commit's build (and every failed build's log) under
`<cache>/<recipe>-<fingerprint>/<commit>/`, so a second bisection over the same range, a resumed one, or a Triton
bisection whose commits share an LLVM pin, builds nothing twice. A failed build is a "skip" for the bisection,
never "bad".

Placeholders: {src} the worktree, {build} a build directory kept across commits (incremental builds), {out} this
commit's output directory, {jobs}, {dep} the pinned dependency's output (Triton's LLVM), {setup_dir} the directory
holding setup.py, {python} the interpreter running gfxhound, and any --define NAME=VALUE (e.g. {mcpu}).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gfxhound import procgroup
from gfxhound.atomic import write_atomic

BUILD_TIMEOUT_S = 6 * 3600


class RecipeError(Exception):
    """A one-line problem with a recipe (unknown name, unreadable file, missing field)."""


@dataclass
class Recipe:
    name: str
    steps: list  # argv templates, run in order with cwd={src}
    outputs: list  # globs under {out}: what the build is (their digest detects a no-op culprit)
    probe: list  # argv template of one test run ({out}, {input})
    env: dict = field(default_factory=dict)  # environment of the build steps (templates too)
    expect: str | None = None  # default --expect for this recipe's probe (None: the repro protocol)
    skip_patterns: list = field(default_factory=list)  # probe output that means "cannot test"
    pins: list = field(default_factory=list)  # files pinning the dependency the build needs (cmake/llvm-hash.txt)
    handoff_pins: list = field(default_factory=list)  # other pins the hand-off follows (cmake/amd-llvm-info.json)
    dependency: str | None = None  # the recipe that builds the pinned dependency
    handoff: str | None = None  # the recipe the hand-off bisects the dependency with (cheaper: llc only)
    timeout: float = BUILD_TIMEOUT_S

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]


def _ccache() -> list:
    return ["-DLLVM_CCACHE_BUILD=ON"] if shutil.which("ccache") else []


def builtin(name: str) -> Recipe:
    """The recipes for a real build host (README: "Bisecting commits"): `llvm` builds llc and opt with the AMDGPU
    target only; `llvm-mlir` the LLVM (with MLIR and lld) that Triton builds against; `triton` Triton at a commit,
    against the `llvm-mlir` build of the llvm-project commit its cmake/llvm-hash.txt (3.8+: llvm-info.json) pins.
    Triton 3.9's AMD code generator has its own pin (cmake/amd-llvm-info.json): the hand-off follows it, but the
    build does not make that library from source (setup.py downloads it; TRITON_AMD_CODEGEN_PATH overrides)."""
    llc_probe = ["{out}/bin/llc", "-mtriple=amdgcn-amd-amdhsa", "-mcpu={mcpu}", "-O{opt}", "{input}",
                 "-o", "/dev/null"]
    from .llvm_releases import CRASH as crash, NOT_THIS_CPU as not_this_cpu  # what an llc probe means
    configure = ["cmake", "-G", "Ninja", "-S", "{src}/llvm", "-B", "{build}", "-DCMAKE_BUILD_TYPE=Release",
                 "-DLLVM_ENABLE_ASSERTIONS=ON", "-DLLVM_INCLUDE_TESTS=OFF", "-DLLVM_INCLUDE_BENCHMARKS=OFF",
                 "-DLLVM_INCLUDE_EXAMPLES=OFF", "-DLLVM_APPEND_VC_REV=OFF"]
    if name == "llvm":
        return Recipe("llvm", [configure + ["-DLLVM_TARGETS_TO_BUILD=AMDGPU", "-DLLVM_ENABLE_PROJECTS="] + _ccache(),
                               ["ninja", "-C", "{build}", "-j", "{jobs}", "llc", "opt"],
                               ["cmake", "-E", "make_directory", "{out}/bin"],
                               ["cmake", "-E", "copy", "{build}/bin/llc", "{build}/bin/opt", "{out}/bin"]],
                      outputs=["bin/llc", "bin/opt"], probe=llc_probe, expect=crash, skip_patterns=not_this_cpu)
    if name == "llvm-mlir":
        return Recipe("llvm-mlir", [configure + ["-DLLVM_TARGETS_TO_BUILD=host;NVPTX;AMDGPU",
                                                 "-DLLVM_ENABLE_PROJECTS=mlir;lld", "-DLLVM_INSTALL_UTILS=ON",
                                                 "-DCMAKE_INSTALL_PREFIX={out}"] + _ccache(),
                                    ["ninja", "-C", "{build}", "-j", "{jobs}", "install"]],
                      outputs=["bin/llc", "lib/libMLIRIR.a"], probe=llc_probe, expect=crash,
                      skip_patterns=not_this_cpu)
    if name == "triton":
        return Recipe("triton", [["{python}", "-m", "venv", "{out}/venv"],
                                 # Triton's build requirements (its pyproject.toml), from the index or pip's cache
                                 ["{out}/venv/bin/python", "-m", "pip", "install", "-q", "setuptools>=70.1", "wheel",
                                  "cmake>=3.20,<4", "ninja>=1.11.1", "pybind11>=2.13.1"],
                                 ["{out}/venv/bin/python", "-m", "pip", "install", "-q", "--no-build-isolation",
                                  "--no-deps", "{setup_dir}"]],
                      env={"LLVM_SYSPATH": "{dep}", "LLVM_INCLUDE_DIRS": "{dep}/include",
                           "LLVM_LIBRARY_DIR": "{dep}/lib", "MAX_JOBS": "{jobs}", "TRITON_BUILD_WITH_CCACHE":
                           "true" if shutil.which("ccache") else "false", "TRITON_OFFLINE_BUILD": "1"},
                      outputs=["venv/lib/python*/site-packages/triton/_C/*.so",
                               "venv/lib/python*/site-packages/triton/**/*.py"],
                      probe=["{out}/venv/bin/python", "{input}"],
                      pins=["cmake/llvm-hash.txt", "cmake/llvm-info.json"],
                      handoff_pins=["cmake/amd-llvm-info.json"], dependency="llvm-mlir",
                      handoff="llvm")
    raise RecipeError(f"no recipe {name!r}: use llvm, llvm-mlir, triton or a recipe file (JSON)")


def load_recipe(spec: str) -> Recipe:
    """A built-in name, or a JSON file with the Recipe fields (steps, outputs and probe at least)."""
    path = Path(spec)
    if not path.suffix == ".json":
        return builtin(spec)
    try:
        data = json.loads(path.read_text())
        return Recipe(**{"name": path.stem, **data})
    except FileNotFoundError:
        raise RecipeError(f"{spec}: no such recipe file") from None
    except (ValueError, TypeError) as exc:
        raise RecipeError(f"{spec}: not a recipe ({exc}); it needs steps, outputs and probe") from None


def expand(template, values: dict):
    """Replace {name} placeholders (known names only: braces in other arguments are left as they are)."""
    if isinstance(template, list):
        return [expand(t, values) for t in template]
    text = str(template)
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def digest(out: Path, globs: list) -> str | None:
    """What the build produced, for comparing a culprit with its parent; None when an output is missing."""
    h = hashlib.sha256()
    for pattern in globs:
        files = sorted(p for p in out.glob(pattern) if p.is_file())
        if not files:
            return None
        for f in files:
            h.update(str(f.relative_to(out)).encode() + b"\0")
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()[:16]


def _defines_key(recipe: Recipe, defines) -> str:
    """A placeholder the build steps use makes other values other builds (one only the probe uses does not)."""
    text = json.dumps([recipe.steps, recipe.env])
    used = sorted((k, str(v)) for k, v in (defines or {}).items() if "{" + k + "}" in text)
    return "-" + hashlib.sha256(json.dumps(used).encode()).hexdigest()[:6] if used else ""


@dataclass
class BuildResult:
    commit: str
    ok: bool
    out: str
    digest: str | None = None
    seconds: float = 0.0
    log_tail: str = ""
    cached: bool = False


class BuildCache:
    def __init__(self, root: Path, recipe: Recipe, jobs: int = os.cpu_count() or 1, defines: dict | None = None):
        self.recipe = recipe
        self.root = Path(root) / f"{recipe.name}-{recipe.fingerprint()}{_defines_key(recipe, defines)}"
        self.jobs = jobs
        self.defines = dict(defines or {})
        self.built = []  # commits built by this process (the rest came from the cache)

    def entry(self, sha: str) -> Path:
        return self.root / sha

    def cached(self, sha: str) -> BuildResult | None:
        try:
            return BuildResult(**dict(json.loads((self.entry(sha) / "build.json").read_text()), cached=True))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def build(self, sha: str, src_for, dep: Path | None = None, log=None) -> BuildResult:
        """`src_for(sha)` checks the commit out (in the worktree) and returns its path; called only on a miss."""
        hit = self.cached(sha)
        if hit:
            return hit
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per recipe: the build dir is shared
            hit = self.cached(sha)
            if hit:
                return hit
            return self._build_locked(sha, src_for, dep, log)

    def _build_locked(self, sha, src_for, dep, log) -> BuildResult:
        entry = self.entry(sha)
        shutil.rmtree(entry, ignore_errors=True)  # a half-written one from an interrupted build
        out = entry / "out"
        out.mkdir(parents=True)
        src = Path(src_for(sha))
        setup_dir = src / "python" if (src / "python" / "setup.py").exists() else src
        values = dict(self.defines, src=src, build=self.root / "build-dir", out=out, jobs=self.jobs,
                      dep=dep or "", setup_dir=setup_dir, python=sys.executable)
        (self.root / "build-dir").mkdir(exist_ok=True)
        env = dict(os.environ, **{k: expand(v, values) for k, v in self.recipe.env.items()})
        if log:
            log(f"building {sha[:12]} ({self.recipe.name} recipe; log: {entry / 'build.log'})")
        start, ok, tail, transient = time.time(), True, "", False
        with open(entry / "build.log", "w") as logfile:
            for step in self.recipe.steps:
                argv = expand(step, values)
                logfile.write("$ " + " ".join(argv) + "\n")
                logfile.flush()
                try:
                    # the build's compilers (make -j, ninja) die with it on a timeout (procgroup)
                    proc = procgroup.run(argv, cwd=src, env=env, stdout=logfile, stderr=subprocess.STDOUT,
                                         timeout=self.recipe.timeout)
                    failed = proc.returncode != 0 and f"`{argv[0]}` exited {proc.returncode}"
                    transient = proc.returncode < 0  # killed (the OOM killer): try again next time
                except subprocess.TimeoutExpired:
                    failed = f"`{argv[0]}` ran over {self.recipe.timeout:.0f} s"
                    transient = True
                except OSError as exc:
                    failed, transient = f"cannot run `{argv[0]}`: {exc.strerror}", False
                if failed:
                    logfile.flush()
                    ok = False
                    lines = (entry / "build.log").read_text(errors="replace").strip().splitlines()
                    tail = failed + ": " + " | ".join(lines[-3:])[-400:]
                    break
        result = BuildResult(sha, ok, str(out), digest(out, self.recipe.outputs) if ok else None,
                             round(time.time() - start, 2), tail)
        if ok and result.digest is None:
            result.ok, result.log_tail = False, f"the build finished without its outputs {self.recipe.outputs}"
        if not result.ok:
            shutil.rmtree(out, ignore_errors=True)
        if log:
            log(f"built {sha[:12]} in {result.seconds:.0f} s" if result.ok else f"{sha[:12]} did not build: "
                f"{result.log_tail[:150]}")
        if not (transient and not result.ok):
            write_atomic(entry / "build.json", json.dumps(asdict(result) | {"cached": False}))
        self.built.append(sha)
        return result
