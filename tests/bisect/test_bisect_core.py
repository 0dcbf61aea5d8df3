"""The one bisection algorithm: the culprit is found in about log2(n) probes, skips are never counted as either
state (a gap gives a range), flaky probes lower the confidence, a fix bisection is the same search, resuming
reuses earlier probes, and a range whose ends do not differ is refused; over releases (move_ends) an end that
cannot test moves inward and ends in the same state are an answer."""
import math

import pytest

from gfxhound.bisect.core import (ABSENT, ABSENT_THROUGHOUT, BOUNDARY, PRESENT, PRESENT_THROUGHOUT, SKIP,
                                  BisectError, Probe, bisect)

RELEASES = [f"r{i}" for i in range(16)]


def regression_at(k, skips=(), flaky=None):
    calls = []

    def probe(name):
        calls.append(name)
        i = RELEASES.index(name)
        if name in skips:
            return SKIP, "cannot test"
        if flaky and name in flaky:
            flaky[name] = not flaky[name]
            return (PRESENT if flaky[name] else ABSENT), "flaky"
        return (PRESENT if i >= k else ABSENT), ""
    return probe, calls


@pytest.mark.parametrize("k", [1, 2, 7, 8, 15])
def test_the_culprit_is_found_in_about_log2_n_probes(k):
    probe, calls = regression_at(k)
    result = bisect(RELEASES, probe)
    assert result.first_new == RELEASES[k] and result.last_old == RELEASES[k - 1]
    assert len(calls) <= math.ceil(math.log2(len(RELEASES))) + 2 and result.confidence == 1.0


def test_skips_are_neither_state_and_a_gap_is_a_range():
    probe, _ = regression_at(8, skips={"r7"})
    result = bisect(RELEASES, probe)
    assert result.first_new == "r8" and result.last_old == "r6" and result.untested_between == ["r7"]
    assert result.confidence < 1.0
    probe, _ = regression_at(8, skips={"r6"})  # a skip elsewhere costs a probe, not the answer
    result = bisect(RELEASES, probe)
    assert result.first_new == "r8" and result.last_old == "r7" and not result.untested_between


def test_a_flaky_probe_lowers_the_confidence():
    probe, _ = regression_at(8, flaky={"r7": True})  # r7 alternates present/absent
    result = bisect(RELEASES, probe, repeat=3)
    assert result.confidence < 1.0
    assert any(len(p.runs) == 3 for p in result.probes)


def test_a_fix_is_the_same_search_reversed():
    def probe(name):
        return (PRESENT if RELEASES.index(name) < 11 else ABSENT), ""
    result = bisect(RELEASES, probe, mode="fix")
    assert result.first_new == "r11" and result.last_old == "r10"


def test_resuming_reuses_earlier_probes():
    probe, calls = regression_at(5)
    first = bisect(RELEASES, probe)
    known = {p.candidate: p for p in first.probes}
    probe2, calls2 = regression_at(5)
    again = bisect(RELEASES, probe2, known=known)
    assert again.first_new == first.first_new and calls2 == []


def test_ends_that_do_not_differ_are_refused():
    probe, _ = regression_at(0)  # present everywhere: the good end is bad
    with pytest.raises(BisectError, match="good end"):
        bisect(RELEASES, probe)
    probe, _ = regression_at(99)  # absent everywhere
    with pytest.raises(BisectError, match="bad end"):
        bisect(RELEASES, probe)
    with pytest.raises(BisectError):
        bisect(["only"], probe)
    assert Probe("x", PRESENT, [PRESENT, ABSENT, PRESENT]).agreement == pytest.approx(2 / 3)


@pytest.mark.parametrize("k", [1, 5, 12])
def test_the_candidates_told_ahead_include_every_next_probe(k):
    """Prefetching (release venvs) is told, before each probe, both candidates the next step may need."""
    probe, calls = regression_at(k)
    told = []
    bisect(RELEASES, probe, ahead=lambda names: told.append(list(names)))
    interior = calls[2:]  # after the two ends
    assert len(told) == len(interior)
    for announced, following in zip(told, interior[1:]):
        assert following in announced and len(announced) <= 2


def test_an_end_that_cannot_test_moves_inward_and_the_result_says_why():
    probe, _ = regression_at(8, skips={"r0", "r1", "r15"})
    with pytest.raises(BisectError, match="move that end"):  # without move_ends: refused, as commits are
        bisect(RELEASES, probe)
    probe, calls = regression_at(8, skips={"r0", "r1", "r15"})
    result = bisect(RELEASES, probe, move_ends=True)
    assert (result.verdict, result.first_new, result.last_old) == (BOUNDARY, "r8", "r7")
    assert result.testable == ["r2", "r14"] and calls[:5] == ["r15", "r14", "r0", "r1", "r2"]
    assert result.ends_moved == [{"end": "new", "from": "r15", "to": "r14", "why": {"r15": "cannot test"}},
                                 {"end": "old", "from": "r0", "to": "r2", "why": {"r0": "cannot test",
                                                                                 "r1": "cannot test"}}]
    assert result.to_json()["ends_moved"] == result.ends_moved and result.confidence == 1.0


def test_ends_in_the_same_state_answer_present_or_absent_in_every_testable_candidate():
    probe, calls = regression_at(0, skips={"r15", "r3"})
    result = bisect(RELEASES, probe, move_ends=True)
    assert (result.verdict, result.first_new, result.last_old) == (PRESENT_THROUGHOUT, None, None)
    assert sorted(calls) == sorted(RELEASES)  # every candidate was asked: "every testable" is checked, not assumed
    assert result.testable == ["r0", "r14"] and [m["end"] for m in result.ends_moved] == ["new"]
    probe, _ = regression_at(99)
    result = bisect(RELEASES, probe, mode="fix", move_ends=True)
    assert result.verdict == ABSENT_THROUGHOUT and result.ends_moved == [] and result.testable == ["r0", "r15"]
    probe, _ = regression_at(0, skips=set(RELEASES) - {"r5"})  # one candidate can test
    result = bisect(RELEASES, probe, move_ends=True)
    assert result.verdict == PRESENT_THROUGHOUT and result.testable == ["r5", "r5"]
    assert [(m["from"], m["to"]) for m in result.ends_moved] == [("r15", "r5"), ("r0", "r5")]


def test_releases_still_refuse_what_has_no_answer():
    def comes_and_goes(name):
        return (ABSENT if 4 <= RELEASES.index(name) <= 10 else PRESENT), ""
    with pytest.raises(BisectError, match="comes and goes between r0 and r15 .*r4: absent"):
        bisect(RELEASES, comes_and_goes, move_ends=True)
    with pytest.raises(BisectError, match="none of r0..r15 can test the bug"):
        bisect(RELEASES, lambda name: (SKIP, "unknown processor"), move_ends=True)
    probe, _ = regression_at(8, skips={"r15"})  # a regression bisected as a fix: the ends are the other way round
    with pytest.raises(BisectError, match="r14 .the fixed end. does not show the bug absent.*moved from r15 to r14"):
        bisect(RELEASES, probe, mode="fix", move_ends=True)
