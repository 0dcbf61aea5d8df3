"""Real git repositories, built in a temp dir, that the commit-bisection tests bisect with real builds.

`fake_llvm`: an llvm-project in miniature. `llvm/CMakeLists.txt` builds `llc` and `opt` with CMake and Ninja, so
the built-in `llvm` recipe (the one a real build host runs) builds it unchanged. Its `llc` is compiler-like: it
reads an IR-ish file and "selects" instructions; from commit L6 on, a shift by 32 or more aborts with
"LLVM ERROR: Cannot select". L3 and L4 do not compile; L2 changes a comment only (its binary equals L1's).

`fake_triton`: a compiler that pins the fake llvm-project in `cmake/llvm-hash.txt` and runs its llc. T4 only moves
the pin (from L2, good, to L9, bad): the cross-repo hand-off must continue in fake_llvm and find L6. T6 does not
compile.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git

CMAKE = """cmake_minimum_required(VERSION 3.13)
project(FakeLLVM C)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llc llc.c)
add_executable(opt opt.c)
add_library(MLIRIR STATIC opt.c)
install(TARGETS llc opt DESTINATION bin)
install(TARGETS MLIRIR DESTINATION lib)
"""

LLC = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* a compiler in miniature: "shl N" lines are selected into machine instructions */
static const char *cpus[] = {CPUS, 0};
static int select_shift(long amount) {
  BUG
  return amount % 32;
}
int main(int argc, char **argv) {
  const char *cpu = "generic", *path = 0;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "-mcpu=", 6)) cpu = argv[i] + 6;
    else if (argv[i][0] != '-' && strcmp(argv[i - 1], "-o")) path = argv[i];
  }
  int known = 0;
  for (int i = 0; cpus[i]; i++) known |= !strcmp(cpus[i], cpu);
  if (!known) fprintf(stderr, "'%s' is not a recognized processor for this target (ignoring processor)\n", cpu);
  FILE *f = path ? fopen(path, "r") : 0;
  if (!f) { fprintf(stderr, "llc: error: cannot open %s\n", path ? path : "(no input)"); return 1; }
  char line[256];
  long n, emitted = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, " shl %ld", &n) == 1) emitted += select_shift(n) >= 0;
  printf("EXTRA%ld instructions for %s\n", emitted, cpu);
  return 0;
}
"""

BUG = 'if (amount >= 32) { fprintf(stderr, "LLVM ERROR: Cannot select: shl i32 by %ld\\n", amount); abort(); }'

# (message, cpus, bug, extra output, builds)
LLVM_HISTORY = [
    ("L0 initial llc", '"gfx90a", "gfx942"', "", "", True),
    ("L1 add gfx950", '"gfx90a", "gfx942", "gfx950"', "", "", True),
    ("L2 comment only", '"gfx90a", "gfx942", "gfx950"', "/* selection */", "", True),
    ("L3 refactor (does not compile)", '"gfx90a", "gfx942", "gfx950"', "int x = ;", "", False),
    ("L4 more refactor (still broken)", '"gfx90a", "gfx942", "gfx950"', "int y = ;", "", False),
    ("L5 fix the build", '"gfx90a", "gfx942", "gfx950"', "", "", True),
    ("L6 fold shifts early", '"gfx90a", "gfx942", "gfx950"', BUG, "", True),
    ("L7 verbose output", '"gfx90a", "gfx942", "gfx950"', BUG, "llc: ", True),
    ("L8 add gfx1200", '"gfx90a", "gfx942", "gfx950", "gfx1200"', BUG, "llc: ", True),
    ("L9 add gfx1250", '"gfx90a", "gfx942", "gfx950", "gfx1200", "gfx1250"', BUG, "llc: ", True),
]

TRITONC = r"""#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* the frontend: compiles a kernel file by running the pinned llc that sits next to it */
int main(int argc, char **argv) {
  char llc[4096];
  snprintf(llc, sizeof llc, "%s", argv[0]);
  char *slash = strrchr(llc, '/');
  strcpy(slash ? slash + 1 : llc, "llc");
  FLAGS
  execl(llc, llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", argv[1], "-o", "/dev/null", (char *)0);
  perror("execl");
  return 2;
}
"""

# (message, pinned llvm commit index, frontend flags line)
TRITON_HISTORY = [
    ("T0 initial", 0, ""),
    ("T1 frontend: a banner", 0, 'fputs("", stderr);'),
    ("T2 bump LLVM", 2, 'fputs("", stderr);'),
    ("T3 frontend: flush", 2, 'fflush(stderr);'),
    ("T4 bump LLVM", 9, 'fflush(stderr);'),
    ("T5 frontend: comment", 9, 'fflush(stderr); /* kept */'),
    ("T6 frontend: broken", 9, 'fflush(stderr) /* missing semicolon */'),
    ("T7 frontend: fixed", 9, 'fflush(stderr);'),
]

TRITON_RECIPE = {
    "steps": [["cmake", "-E", "make_directory", "{out}/bin"],
              ["cc", "-O1", "-o", "{out}/bin/tritonc", "{src}/tritonc.c"],
              ["cmake", "-E", "copy", "{dep}/bin/llc", "{out}/bin/llc"]],
    "outputs": ["bin/tritonc", "bin/llc"],
    "probe": ["{out}/bin/tritonc", "{input}"],
    "expect": "LLVM ERROR: Cannot select",
    "pins": ["cmake/llvm-hash.txt"],
    "dependency": "llvm",
    "handoff": "llvm",
}


def _commit(repo: git.Repo, message: str, day: int) -> str:
    repo.git.add("-A")
    date = f"2026-01-{day + 1:02d}T12:00:00"
    repo.git.commit("-q", "-m", message, env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return repo.head.commit.hexsha


def _init(path: Path) -> git.Repo:
    path.mkdir(parents=True)
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
        cfg.set_value("commit", "gpgsign", "false")
    return repo


def fake_llvm(root: Path) -> tuple:
    """(path, [commit hashes L0..L9])."""
    path = root / "llvm-project"
    repo = _init(path)
    (path / "llvm").mkdir()
    (path / "llvm" / "CMakeLists.txt").write_text(CMAKE)
    (path / "llvm" / "opt.c").write_text("int main(void) { return 0; }\n")
    repo.create_remote("origin", "https://github.com/llvm/llvm-project.git")
    hashes = []
    for day, (message, cpus, bug, extra, _) in enumerate(LLVM_HISTORY):
        (path / "llvm" / "llc.c").write_text(LLC.replace("CPUS", cpus).replace("BUG", bug).replace("EXTRA", extra))
        hashes.append(_commit(repo, message, day))
    return path, hashes


def fake_triton(root: Path, llvm_hashes: list) -> tuple:
    """(path, [commit hashes T0..T7], recipe file)."""
    path = root / "triton"
    repo = _init(path)
    (path / "cmake").mkdir()
    hashes = []
    for day, (message, pin, flags) in enumerate(TRITON_HISTORY):
        (path / "cmake" / "llvm-hash.txt").write_text(llvm_hashes[pin] + "\n")
        (path / "tritonc.c").write_text(TRITONC.replace("FLAGS", flags))
        hashes.append(_commit(repo, message, day))
    recipe = root / "fake-triton.json"
    recipe.write_text(json.dumps(TRITON_RECIPE))
    return path, hashes, recipe


def checkout_state(path: Path) -> tuple:
    """What "the user's checkout is untouched" means: HEAD, branch, status, and every file's content and mtime."""
    repo = git.Repo(path)
    files = sorted((str(p.relative_to(path)), p.read_bytes(), p.stat().st_mtime_ns)
                   for p in path.rglob("*") if p.is_file() and ".git" not in p.relative_to(path).parts)
    return (repo.head.commit.hexsha, repo.active_branch.name, repo.git.status("--porcelain"), files)


SETUP_PY = r"""# a Triton in miniature: built against the LLVM that LLVM_SYSPATH points at (the recipe's pinned build)
import os
from setuptools import setup

syspath = os.environ["LLVM_SYSPATH"]
os.makedirs("triton/_C", exist_ok=True)
with open(os.path.join(syspath, "bin", "llc"), "rb") as llc, open("triton/_C/libtriton.so", "w") as lib:
    lib.write("linked against " + llc.read().hex()[:4096])  # differs with the LLVM, as a real build does
with open("triton/_llvm.py", "w") as f:
    f.write(f"LLC = {os.path.join(syspath, 'bin', 'llc')!r}\n")
setup(name="triton", version="0.0.1", packages=["triton", "triton._C"], package_data={"triton._C": ["*.so"]})
"""

TRITON_INIT = r"""import subprocess

from triton._llvm import LLC

MCPU = "gfx942"


def compile(path):
    return subprocess.run([LLC, f"-mcpu={MCPU}", path, "-o", "/dev/null"], capture_output=True, text=True)
"""

# (message, pinned llvm commit index, the frontend's target)
PYTHON_TRITON_HISTORY = [("P0 initial", 0, "gfx942"), ("P1 frontend", 0, "gfx90a"), ("P2 bump LLVM", 2, "gfx90a"),
                         ("P3 frontend", 2, "gfx942"), ("P4 bump LLVM", 8, "gfx942"), ("P5 frontend", 8, "gfx950")]

REPRO = r"""import sys

import triton

result = triton.compile(sys.argv[1] if len(sys.argv) > 1 else "kernel.ll")
print(result.stdout + result.stderr)
sys.exit(1 if "LLVM ERROR" in result.stderr else 0 if result.returncode == 0 else 125)
"""


def fake_python_triton(root: Path, llvm_hashes: list) -> tuple:
    """A repository shaped like Triton for the built-in `triton` recipe: python/setup.py, cmake/llvm-hash.txt;
    P4 moves the pin from L2 (good) to L8 (bad). Returns (path, hashes, repro script)."""
    path = root / "triton-py"
    repo = _init(path)
    (path / "cmake").mkdir()
    (path / "python" / "triton").mkdir(parents=True)
    (path / "python" / "setup.py").write_text(SETUP_PY)
    (path / ".gitignore").write_text("*.egg-info/\nbuild/\n_C/\n_llvm.py\n")
    hashes = []
    for day, (message, pin, mcpu) in enumerate(PYTHON_TRITON_HISTORY):
        (path / "cmake" / "llvm-hash.txt").write_text(llvm_hashes[pin] + "\n")
        (path / "python" / "triton" / "__init__.py").write_text(TRITON_INIT.replace('"gfx942"', repr(mcpu)))
        hashes.append(_commit(repo, message, day))
    repro = root / "repro.py"
    repro.write_text(REPRO)
    return path, hashes, repro


def build_works() -> bool:
    return all(subprocess.run(["which", tool], capture_output=True).returncode == 0 for tool in ("cc", "cmake",
                                                                                                  "ninja"))
