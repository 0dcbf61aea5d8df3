"""Historical LLVM AMDGPU miscompiles (tests/amdgcn/data/history/, listed in docs/llvm-history.md): `gfxhound
emulate`'s comparison run through the Debian llc that had each bug is a disagreement (exit 1) in which the
buggy -O level is outvoted by the IR executor and a level the bug does not reach; the same module through
llc-22, which has the fix, agrees (exit 0). Each case skips when its llc-N is not installed."""
import json
from pathlib import Path

import pytest

from gfxhound.oracle.crosscheck import compare

HISTORY = Path(__file__).parent / "data" / "history"
CASES = json.loads((HISTORY / "cases.json").read_text())
NEW_LLC, NEW_MCPU = "/usr/bin/llc-22", "gfx942"


def _installed(llc: str) -> str:
    if not Path(llc).exists():
        pytest.skip(f"{llc} is not installed (Debian's llvm-{llc.rsplit('-', 1)[-1]})")
    return llc


def _why(result) -> str:
    return json.dumps({"status": result.verdict["status"], "rows": result.verdict["rows"],
                       "unresolved": result.verdict.get("unresolved")}, default=str)[:2000]


def test_the_cases_are_complete():
    keys = {"slug", "file", "launch", "mcpu_old", "llc_old", "opt", "fix_commit", "llvm_issue", "what", "buggy"}
    assert len({c["slug"] for c in CASES}) == len(CASES)
    for case in CASES:
        assert keys <= case.keys(), case["slug"]
        assert (HISTORY / case["file"]).is_file()
        assert set(case["buggy"]) <= {f"O{o}" for o in case["opt"]}
        assert len(case["buggy"]) < len(case["opt"])  # the IR and an unaffected level outvote it


@pytest.mark.parametrize("case", CASES, ids=[c["slug"] for c in CASES])
def test_the_code_generator_that_had_the_bug_is_outvoted(case):
    result = compare(HISTORY / case["file"], case["mcpu_old"], case["opt"], case["launch"],
                     llc=_installed(case["llc_old"]))
    assert result.exit_code == 1, _why(result)
    rows = [row for row in result.verdict["rows"] if row["verdict"] != "agree"]
    assert rows, _why(result)
    for row in rows:
        assert row["minority"] == case["buggy"], _why(result)
        assert "IR" in row["majority"], _why(result)


@pytest.mark.parametrize("case", CASES, ids=[c["slug"] for c in CASES])
def test_the_fixed_code_generator_agrees(case):
    result = compare(HISTORY / case["file"], case.get("mcpu_new", NEW_MCPU), case["opt"], case["launch"],
                     llc=_installed(case.get("llc_new", NEW_LLC)))
    assert result.exit_code == 0, _why(result)
