# Set-up and entry points. Everything a fresh machine needs is installed here, idempotently.
PY      ?= python3
VENV    ?= .venv
TRITON  ?= 3.9.0
# the CPU build of torch (the interpret backend and the oracle); never let pip pick an unpinned torch here
TORCH   ?= 2.13.0
# an older release the slow tests need (real internal compiler errors live there); its own venv, cached
OLD_TRITON ?= 3.4.0
OLD_VENV   ?= .venv-triton-$(OLD_TRITON)
# OLD_EXECUTE=1: the older venv gets the CPU torch and numpy too (the interpret and emulate backends need them)
OLD_EXECUTE ?=
LLD     := /usr/lib/llvm-22/bin/ld.lld
LLC     := /usr/lib/llvm-22/bin/llc
# C-Vise: TTIR/TTGIR reduction (gfxhound reduce --level ir)
CVISE   := /usr/bin/cvise
# older llc releases: the LLVM release bisection test (gfxhound bisect --llc 14..22)
OLD_LLCS := /usr/lib/llvm-14/bin/llc /usr/lib/llvm-15/bin/llc /usr/lib/llvm-16/bin/llc /usr/lib/llvm-19/bin/llc
# ShellCheck: the workflow test checks every `run:` step of .github/workflows with it
SHELLCHECK := /usr/bin/shellcheck
# root installs with apt-get itself; anyone else (a GitHub runner's user, a developer) through sudo
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUDGET  ?= 2m
TARGETS ?= gfx942
JOBS    ?= 2

.PHONY: setup setup-old tools fuzz-demo test test-fast bench clean

tools: $(LLD) $(LLC) $(CVISE) $(OLD_LLCS) $(SHELLCHECK)
$(LLD) $(LLC) $(CVISE) $(OLD_LLCS) $(SHELLCHECK):
	@command -v apt-get >/dev/null || { echo "need Debian's lld-22, llvm-22, llvm-14/15/16/19, cvise and shellcheck (apt-get install lld-22 llvm-22 llvm-14 llvm-15 llvm-16 llvm-19 cvise shellcheck)"; exit 1; }
	@[ -z "$(SUDO)" ] || command -v sudo >/dev/null || { echo "installing lld-22, llvm-22, llvm-14/15/16/19, cvise and shellcheck needs root or sudo"; exit 1; }
	$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lld-22 llvm-22 llvm-14 llvm-15 llvm-16 llvm-19 cvise shellcheck >/dev/null

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check "triton==$(TRITON)" "torch==$(TORCH)" numpy -e '.[test]'
	touch $@
setup: tools $(VENV)/.installed

$(OLD_VENV)/.installed: pyproject.toml
	$(PY) -m venv $(OLD_VENV)
	$(OLD_VENV)/bin/pip install -q --disable-pip-version-check "triton==$(OLD_TRITON)" -e . \
	  $(if $(OLD_EXECUTE),"torch==$(TORCH)" numpy)
	touch $@
setup-old: tools $(OLD_VENV)/.installed

# README command 1: a real, short fuzz campaign on this (CPU-only) machine
fuzz-demo: setup
	$(VENV)/bin/gfxhound fuzz --target $(TARGETS) --budget $(BUDGET) --workers $(JOBS) --corpus corpus-demo

# README command 2: the test suite (real compiles, real worker crashes, an older Triton release for real bugs)
test: setup setup-old
	GFXHOUND_OLD_PYTHON=$(CURDIR)/$(OLD_VENV)/bin/python $(VENV)/bin/pytest -n $(JOBS) -q --durations=15 tests

test-fast: setup
	$(VENV)/bin/pytest -n $(JOBS) -q -m "not slow" tests

# the GitHub workflows' shell steps, run here for two nights with short budgets (ci/README.md: the dry run)
.PHONY: dry-run-ci
dry-run-ci: setup
	$(VENV)/bin/python ci/dry-run.py --nights 2 --empty-corpus

bench: setup
	$(VENV)/bin/python -P bench/throughput.py

clean:
	rm -rf $(VENV) $(OLD_VENV) corpus-demo
