"""Commit bisection from source over real git repositories built in a temp dir (tests/synthetic_repos.py), with
real builds (CMake + Ninja through the built-in llvm recipe, cc through a recipe file): the culprit is found,
build failures are skips, the user's checkout is untouched, an interrupted bisection resumes, a flaky probe gives
a confidence below 1, a no-op culprit is flagged, and a first bad commit that only moved a pin hands off to the
pinned repository."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.bisect.builds import BuildCache, builtin, load_recipe
from gfxhound.bisect.commits import CommitJob, run
from gfxhound.bisect.core import ABSENT, PRESENT, BisectError
from gfxhound.bisect.git_repo import GitRepo

from synthetic_repos import checkout_state, fake_llvm, fake_triton

HERE = Path(__file__).resolve().parents[1]  # tests/


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    root = tmp_path_factory.mktemp("repos")
    llvm, llvm_hashes = fake_llvm(root)
    triton, triton_hashes, recipe = fake_triton(root, llvm_hashes)
    kernel = root / "kernel.ll"
    kernel.write_text("; a kernel\nshl 3\nshl 40\n")
    return {"llvm": llvm, "L": llvm_hashes, "triton": triton, "T": triton_hashes, "recipe": recipe,
            "input": kernel}


def _job(repos, cache, **kw):
    args = dict(repo=GitRepo(repos["llvm"]), old=repos["L"][0], new=repos["L"][-1], recipe=builtin("llvm"),
                input=repos["input"], cache=cache, defines={"mcpu": "gfx942", "opt": "2"}, jobs=2)
    args.update(kw)
    return CommitJob(**args)


def test_the_culprit_is_found_with_real_builds_and_failed_builds_are_skips(repos, tmp_path):
    user = repos["llvm"]
    (user / "llvm" / "llc.c").write_text((user / "llvm" / "llc.c").read_text() + "/* the user's edit */\n")
    before = checkout_state(user)
    record = run(_job(repos, tmp_path / "cache"), log=lambda line: None)
    L = repos["L"]
    assert record["culprit"]["hash"] == L[6] and record["culprit"]["title"] == "L6 fold shifts early"
    assert record["last_old_commit"]["hash"] == L[5] and record["untested_between"] == []
    assert record["culprit"]["link"] == f"https://github.com/llvm/llvm-project/commit/{L[6]}"
    outcomes = {p["candidate"]: p["outcome"] for p in record["probes"]}
    assert outcomes[L[9]] == PRESENT and outcomes[L[0]] == ABSENT
    assert outcomes.get(L[4]) == "skip" and "build failed" in next(
        p["detail"] for p in record["probes"] if p["candidate"] == L[4])
    assert len(record["probes"]) <= 6 and record["confidence"] == 1.0 and record["warnings"] == []
    assert checkout_state(user) == before  # HEAD, branch, the uncommitted edit and every mtime
    (user / "llvm" / "llc.c").write_text((user / "llvm" / "llc.c").read_text().replace("/* the user's edit */\n", ""))


def test_a_second_bisection_builds_nothing_and_an_interrupted_one_resumes(repos, tmp_path):
    cache = tmp_path / "cache"
    seen = []

    def stop_after_two(p, step, title):
        seen.append(p.candidate)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(_job(repos, cache), log=lambda line: None, on_probe=stop_after_two)
    state = list((cache / "state").glob("commits-*.json"))
    assert len(state) == 1 and len(json.loads(state[0].read_text())["probes"]) == 2
    logged = []
    record = run(_job(repos, cache), log=logged.append)
    assert "resuming: 2 probes" in logged[0]
    assert record["culprit"]["hash"] == repos["L"][6]
    assert not list((cache / "state").glob("commits-*.json"))  # done: the record replaces the state
    again = run(_job(repos, cache, input=_other_input(tmp_path)), log=lambda line: None)
    assert again["builds_built"] == 0 and again["culprit"]["hash"] == repos["L"][6]


def _other_input(tmp_path):
    other = tmp_path / "other.ll"
    other.write_text("shl 64\n")
    return other


def test_a_flaky_probe_gives_a_confidence_below_one(repos, tmp_path):
    """The probe passes every third run at a buggy commit (a counter file makes it deterministic)."""
    flaky = tmp_path / "flaky.json"
    flaky.write_text(json.dumps(dict(json.loads(json.dumps(builtin("llvm").__dict__)), name="flaky",
                                     probe=[sys.executable, str(HERE / "data" / "flaky_probe.py"),
                                            str(tmp_path / "counter"), "{out}/bin/llc", "-mcpu={mcpu}",
                                            "{input}"])))
    record = run(_job(repos, tmp_path / "cache", recipe=load_recipe(str(flaky)), repeat=3), log=lambda line: None)
    assert record["culprit"]["hash"] == repos["L"][6]
    runs = [p["runs"] for p in record["probes"] if p["outcome"] == PRESENT]
    assert any(ABSENT in r for r in runs)
    assert 0 < record["confidence"] < 1


def test_a_culprit_whose_build_equals_its_parents_is_flagged(repos, tmp_path):
    """A fake test environment over real builds (syzkaller's detectNoopChange): the probe blames L2, a comment."""
    L = repos["L"]
    record = run(_job(repos, tmp_path / "cache", new=L[5]), log=lambda line: None,
                 probe_override=lambda sha, build: (PRESENT if L.index(sha) >= 2 else ABSENT, "fake"))
    assert record["culprit"]["hash"] == L[2]
    assert record["warnings"] and "identical to its parent" in record["warnings"][0]
    cache = BuildCache(tmp_path / "cache" / "builds", builtin("llvm"))
    assert cache.cached(L[2]).digest == cache.cached(L[1]).digest != cache.cached(L[0]).digest


def test_bad_ranges_are_refused(repos, tmp_path):
    L = repos["L"]
    with pytest.raises(BisectError, match="not an ancestor"):
        run(_job(repos, tmp_path / "c", old=L[5], new=L[1]), log=lambda line: None)
    with pytest.raises(BisectError, match="no commit"):
        run(_job(repos, tmp_path / "c", old="v9.9"), log=lambda line: None)
    with pytest.raises(BisectError, match="does not show the bug present"):  # L5 is good: no bad end
        run(_job(repos, tmp_path / "c", new=L[5]), log=lambda line: None)


def test_a_pin_bump_hands_off_to_the_pinned_repository_through_the_cli(repos, tmp_path, gfxhound_bin):
    triton_before = checkout_state(repos["triton"])
    llvm_before = checkout_state(repos["llvm"])
    proc = subprocess.run([gfxhound_bin, "bisect", "--commits", f"{repos['T'][0]}..main", "--repo",
                           str(repos["triton"]), "--recipe", str(repos["recipe"]), "--dep-repo", str(repos["llvm"]),
                           "--input", str(repos["input"]), "--ll", str(repos["input"]), "--cache",
                           str(tmp_path / "cache"), "--jobs", "2"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    T, L = repos["T"], repos["L"]
    assert f"first bad commit: {T[4][:12]} T4 bump LLVM" in proc.stdout
    assert f"it moved cmake/llvm-hash.txt: in llvm-project, first bad commit: {L[6][:12]} L6 fold shifts early" \
        in proc.stdout
    assert "step 1 (of about 5)" in proc.stderr  # progress: step k of about log2(n) + 2
    as_json = subprocess.run([gfxhound_bin, "bisect", "--commits", f"{T[0]}..{T[-1]}", "--repo",
                              str(repos["triton"]), "--recipe", str(repos["recipe"]), "--dep-repo",
                              str(repos["llvm"]), "--input", str(repos["input"]), "--ll", str(repos["input"]),
                              "--cache", str(tmp_path / "cache"), "--json"], capture_output=True, text=True,
                             timeout=600)
    record = json.loads(as_json.stdout)
    [handoff] = record["handoff"]
    assert (handoff["old"], handoff["new"], handoff["pin_only"]) == (L[2], L[9], True)
    assert handoff["result"]["culprit"]["hash"] == L[6]
    assert record["builds_built"] == 0 and handoff["result"]["builds_built"] == 0  # all from the cache
    assert checkout_state(repos["triton"]) == triton_before and checkout_state(repos["llvm"]) == llvm_before


def test_user_errors_are_one_line(repos, tmp_path, gfxhound_bin):
    base = [gfxhound_bin, "bisect", "--commits", "main~1..main", "--cache", str(tmp_path / "c")]
    cases = [(base + ["--repo", str(tmp_path), "--recipe", "llvm", "--input", str(repos["input"])],
              "not a git repository"),
             (base + ["--repo", str(repos["llvm"]), "--recipe", "gcc", "--input", str(repos["input"])],
              "no recipe 'gcc'"),
             (base + ["--repo", str(repos["triton"]), "--recipe", "triton", "--input", str(repos["input"])],
              "--dep-repo"),
             ([gfxhound_bin, "bisect", "--commits", "a..b", "--triton", "3.4.0..3.9.0"], "once")]
    for argv, message in cases:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_pins_are_read_from_text_and_json_files_and_triton_follows_its_amd_code_generator(tmp_path):
    import git as gitpython

    from gfxhound.bisect.commits import _pin_groups, read_pin
    path = tmp_path / "t"
    (path / "cmake").mkdir(parents=True)
    repo = gitpython.Repo.init(path)
    (path / "cmake" / "llvm-info.json").write_text(json.dumps({"llvm_hash": "a" * 40, "build_number": 3}))
    (path / "cmake" / "amd-llvm-info.json").write_text(json.dumps({"llvm_hash": "b" * 40}))
    repo.git.add("-A")
    repo.git.commit("-qm", "pins", "--no-gpg-sign", env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                                          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})
    sha, triton = repo.head.commit.hexsha, builtin("triton")
    groups = _pin_groups(triton)
    assert [read_pin(GitRepo(path), sha, g) for g in groups] == [("cmake/llvm-info.json", "a" * 40),
                                                                  ("cmake/amd-llvm-info.json", "b" * 40)]
    assert read_pin(GitRepo(path), sha, ["cmake/llvm-hash.txt"]) == (None, None)


@pytest.mark.slow
def test_the_triton_recipe_builds_against_its_pinned_llvm_and_hands_off(repos, tmp_path, gfxhound_bin):
    """The built-in `triton` and `llvm-mlir` recipes as a real build host runs them (a venv, `pip install
    --no-build-isolation` of python/ with LLVM_SYSPATH at the pinned llvm-project commit's install), on a
    repository shaped like Triton; the culprit moved the pin, and the hand-off names L6 with the `llvm` recipe."""
    from synthetic_repos import fake_python_triton
    path, hashes, repro = fake_python_triton(tmp_path, repos["L"])
    kernel = tmp_path / "kernel.ll"
    kernel.write_text("shl 40\n")
    proc = subprocess.run([gfxhound_bin, "bisect", "--commits", f"{hashes[0]}..{hashes[-1]}", "--repo", str(path),
                           "--recipe", "triton", "--dep-repo", str(repos["llvm"]), "--input", str(repro), "--ll",
                           str(kernel), "--cache", str(tmp_path / "cache"), "--jobs", "2", "--json"],
                          capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert record["culprit"]["title"] == "P4 bump LLVM" and record["recipe"] == "triton"
    [handoff] = record["handoff"]
    assert handoff["pin_file"] == "cmake/llvm-hash.txt" and handoff["pin_only"]
    assert handoff["result"]["culprit"]["hash"] == repos["L"][6] and handoff["result"]["recipe"] == "llvm"
    assert record["warnings"] == []  # the culprit's build differs from its parent's: it links another LLVM
