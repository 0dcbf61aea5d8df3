"""Historical LLVM AMDGPU miscompiles (tests/amdgcn/data/history/, listed in docs/llvm-history.md): `gfxhound
emulate`'s comparison run through the code generator that had each bug (a Debian llc at some -O level, or a
Triton release's own code generator, ``triton_old``) is a disagreement (exit 1) in which the buggy run is
outvoted by the IR executor and a run the bug does not reach; the same module through a code generator that has
the fix (llc-22, or the Triton release ``triton_new``) agrees (exit 0). A case skips when its llc-N is not
installed; Triton releases come from the release venvs `gfxhound bisect` keeps (built once, cached; slow)."""
import json
import os
from pathlib import Path

import pytest

from gfxhound.oracle.crosscheck import compare

HISTORY = Path(__file__).parent / "data" / "history"
CASES = json.loads((HISTORY / "cases.json").read_text())
NEW_LLC, NEW_MCPU = "/usr/bin/llc-22", "gfx942"
# a case that runs a Triton release's code generator needs that release's venv (built once: slow when cold)
PARAMS = [pytest.param(c, id=c["slug"], marks=[pytest.mark.slow] if c.get("triton_old") or c.get("triton_new")
                       else []) for c in CASES]


def _installed(llc: str) -> str:
    if not Path(llc).exists():
        pytest.skip(f"{llc} is not installed (Debian's llvm-{llc.rsplit('-', 1)[-1]})")
    return llc


def _triton(version, ll, mcpu) -> dict:
    """{label: Assembly} of `ll` through Triton `version`'s own code generator ({} without a version)."""
    if not version:
        return {}
    from gfxhound.executors.amdgcn.codegen import from_ll_triton
    from gfxhound.bisect.releases import ReleaseError, VenvCache
    root = Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound") / "venvs"
    try:
        python = VenvCache(root).ensure(version)
    except ReleaseError as exc:
        pytest.fail(f"no venv for triton {version}: {exc}")
    return {f"triton-{version}": from_ll_triton(ll, mcpu, python=str(python))}


def _why(result) -> str:
    return json.dumps({"status": result.verdict["status"], "rows": result.verdict["rows"],
                       "unresolved": result.verdict.get("unresolved")}, default=str)[:2000]


def test_the_cases_are_complete():
    keys = {"slug", "file", "launch", "mcpu_old", "llc_old", "opt", "fix_commit", "llvm_issue", "what", "buggy"}
    assert len({c["slug"] for c in CASES}) == len(CASES)
    for case in CASES:
        assert keys <= case.keys(), case["slug"]
        assert (HISTORY / case["file"]).is_file()
        runs = {f"O{o}" for o in case["opt"]} | ({f"triton-{case['triton_old']}"} if case.get("triton_old") else set())
        assert set(case["buggy"]) <= runs, case["slug"]
        assert len(case["buggy"]) < len(runs)  # the IR and a run the bug does not reach outvote it
        fixed_by = case.get("triton_new") or case.get("llc_new", NEW_LLC)
        assert fixed_by != case.get("triton_old") and (case.get("triton_new") or case.get("triton_old")
                                                       or case["llc_old"] != NEW_LLC), case["slug"]


@pytest.mark.parametrize("case", PARAMS)
def test_the_code_generator_that_had_the_bug_is_outvoted(case):
    ll = HISTORY / case["file"]
    result = compare(ll, case["mcpu_old"], case["opt"], case["launch"], llc=_installed(case["llc_old"]),
                     extra=_triton(case.get("triton_old"), ll, case["mcpu_old"]))
    assert result.exit_code == 1, _why(result)
    rows = [row for row in result.verdict["rows"] if row["verdict"] != "agree"]
    assert rows, _why(result)
    for row in rows:
        assert row["minority"] == case["buggy"], _why(result)
        assert "IR" in row["majority"], _why(result)


@pytest.mark.parametrize("case", PARAMS)
def test_the_fixed_code_generator_agrees(case):
    ll, mcpu = HISTORY / case["file"], case.get("mcpu_new", NEW_MCPU)
    # opt_new: the llc levels that vote with a fixed Triton (llc-22's -O2 may still have the bug Triton fixed)
    result = compare(ll, mcpu, case.get("opt_new", case["opt"]), case["launch"],
                     llc=_installed(case.get("llc_new", NEW_LLC)), extra=_triton(case.get("triton_new"), ll, mcpu))
    assert result.exit_code == 0, _why(result)
