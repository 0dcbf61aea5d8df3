"""The GitHub Actions workflows are where GitHub runs them, valid against GitHub's workflow schema (the schema
check-jsonschema vendors: no network), clean under zizmor (a workflow linter from PyPI, run offline), and would run
on a GitHub runner as written: every action pinned to a commit, least permissions per job, apt-get through sudo,
LLVM 22 from apt.llvm.org where the runner's Ubuntu lacks it, and the corpus and history carried from night to
night. The slow test runs the shell steps of the matrix workflow for two nights (ci/dry-run.py)."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")
# what each action needs of the job's GITHUB_TOKEN beyond `contents: read` (their READMEs)
ACTION_PERMISSIONS = {
    "mikepenz/action-junit-report": {"checks": "write"},
    "peter-evans/create-pull-request": {"contents": "write", "pull-requests": "write"},
}


def _dry_run_module():
    spec = importlib.util.spec_from_file_location("dry_run", ROOT / "ci" / "dry-run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DRY_RUN = _dry_run_module()


def _load(path):
    return DRY_RUN.load_yaml(path)


def _steps():
    """(workflow file, job id, job, step) for every step."""
    for path in WORKFLOWS:
        for job_id, job in _load(path)["jobs"].items():
            for step in job["steps"]:
                yield path, job_id, job, step


def test_workflows_are_where_github_reads_them():
    assert [w.name for w in WORKFLOWS] == ["nightly-matrix.yml", "nightly-rocm.yml"]
    assert not list((ROOT / "ci").rglob("*.yml")), "a workflow outside .github/workflows is never run"


def test_workflows_match_githubs_schema():
    tool = shutil.which("check-jsonschema", path=str(BIN))
    if tool is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[test]')")
    run = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_workflow_linter_finds_nothing():
    """zizmor (PyPI wheel, a static binary) offline: unpinned actions, excessive permissions, credentials left in
    the checkout, template injection, cache poisoning. Exit 0 only with no finding."""
    tool = shutil.which("zizmor", path=str(BIN))
    if tool is None:
        pytest.skip("zizmor is not installed (pip install -e '.[test]')")
    run = subprocess.run([tool, "--offline", "--no-progress", str(ROOT / ".github" / "workflows")],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_linter_would_catch_what_the_issue_reported(tmp_path):
    """The same zizmor run fails on the old faults: an unpinned action and a job without permissions."""
    tool = shutil.which("zizmor", path=str(BIN))
    if tool is None:
        pytest.skip("zizmor is not installed (pip install -e '.[test]')")
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("name: bad\non: {workflow_dispatch: {}}\njobs:\n  j:\n    runs-on: ubuntu-latest\n"
                   "    steps:\n      - uses: actions/checkout@v4\n      - run: echo hi\n")
    run = subprocess.run([tool, "--offline", "--no-progress", str(bad.parent)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert run.returncode != 0
    for audit in ("unpinned-uses", "excessive-permissions", "artipacked"):
        assert audit in run.stdout + run.stderr


def test_what_the_workflows_call_exists():
    makefile = (ROOT / "Makefile").read_text()
    for workflow in WORKFLOWS:
        text = workflow.read_text()
        for script in re.findall(r"\b((?:ci|bench|\.ci)/[\w./-]+\.(?:sh|py))\b", text):
            assert (ROOT / script).exists(), f"{workflow.name} calls {script}, which does not exist"
            assert os.access(ROOT / script, os.X_OK), f"{workflow.name} runs {script}, which is not executable"
        for target in re.findall(r"\bmake ([\w-]+)", text):
            assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"{workflow.name}: no make target {target}"


def test_every_action_is_pinned_to_a_commit_with_its_version():
    versions = {}
    for path, job_id, _, step in _steps():
        if "uses" not in step:
            continue
        assert SHA_PIN.match(step["uses"]), f"{path.name} {job_id}: {step['uses']} is not pinned to a commit"
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if re.match(r"\s*(?:-\s+)?uses:", line):
                found = re.search(r"uses:\s*([\w./-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)$", line)
                assert found, f"{path.name}: {line.strip()!r} lacks `@<40 hex> # vX.Y.Z`"
                repo = "/".join(found[1].split("/")[:2])  # actions/cache/save and /restore: one repository
                assert versions.setdefault(repo, found.group(2, 3)) == found.group(2, 3), \
                    f"{repo} is pinned to two commits"


def test_every_job_has_least_permissions():
    for path in WORKFLOWS:
        wf = _load(path)
        assert wf.get("permissions") == {"contents": "read"}, f"{path.name}: workflow-level permissions"
        for job_id, job in wf["jobs"].items():
            needed = {"contents": "read"}
            for step in job["steps"]:
                for scope, level in ACTION_PERMISSIONS.get(step.get("uses", "").split("@")[0], {}).items():
                    needed[scope] = level
            assert job.get("permissions") == needed, f"{path.name} {job_id}: permissions {job.get('permissions')}"


def test_no_checkout_keeps_the_token():
    for path, job_id, _, step in _steps():
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, f"{path.name} {job_id}"


def test_apt_get_runs_through_sudo():
    for path, job_id, job, step in _steps():
        for line in str(step.get("run", "")).splitlines():
            for m in re.finditer(r"(\S+\s+)?\bapt(?:-get)?\s+(?:install|update)", line):
                assert (m[1] or "").strip() == "sudo", f"{path.name} {job_id}: {line.strip()}"
        if re.search(r"\bci/install-llvm\.sh\b", str(step.get("run", ""))):
            assert re.search(r"\bsudo ci/install-llvm\.sh\b", step["run"]), f"{path.name} {job_id}"


def _make_tools_dry(tmp_path, uid: str) -> str:
    """`make -n -B tools` as a user of this uid: a stand-in `id` first on PATH."""
    fake = tmp_path / f"uid{uid}"
    fake.mkdir()
    (fake / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (fake / "id").chmod(0o755)
    run = subprocess.run(["make", "-n", "-B", "tools"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}"))
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_make_tools_uses_sudo_unless_root(tmp_path):
    as_user = _make_tools_dry(tmp_path, "1001")
    assert "sudo apt-get update" in as_user and "sudo env DEBIAN_FRONTEND=noninteractive apt-get install" in as_user
    as_root = _make_tools_dry(tmp_path, "0")
    assert "apt-get update" in as_root and "sudo apt-get" not in as_root and "sudo env" not in as_root


def test_llvm_comes_from_apt_llvm_org_before_make_setup_on_github_runners():
    """Every GitHub-hosted job that runs `make setup` first makes each LLVM major of the Makefile installable."""
    makefile = (ROOT / "Makefile").read_text()
    majors = set(re.findall(r"/usr/lib/llvm-(\d+)/", makefile))
    assert majors >= {"22", "14"}
    jobs = 0
    for path in WORKFLOWS:
        for job_id, job in _load(path)["jobs"].items():
            runs = [str(s.get("run", "")) for s in job["steps"]]
            setup = [i for i, r in enumerate(runs) if re.search(r"^\s*make setup\s*$", r, re.M)]
            if not setup:
                continue
            assert job["runs-on"] == "ubuntu-latest", f"{path.name} {job_id}"
            llvm = [i for i, r in enumerate(runs) if "ci/install-llvm.sh" in r]
            assert llvm and llvm[0] < setup[0], f"{path.name} {job_id}: install-llvm.sh must come before make setup"
            passed = set(re.search(r"install-llvm\.sh([\d ]+)", runs[llvm[0]])[1].split())
            assert passed >= majors, f"{path.name} {job_id}: install-llvm.sh {passed} misses {majors - passed}"
            jobs += 1
    assert jobs == 2


def _fake_apt(tmp_path, available: str, llvm_org_has: str = "llvm-22 lld-22") -> dict:
    """apt-cache, apt-get and curl stand-ins: apt-cache shows a candidate for the packages in `available`;
    apt-get update adds `llvm_org_has` once a sources file names apt.llvm.org; every call is logged."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    state = tmp_path / "state"
    state.mkdir()
    (state / "available").write_text(available + "\n")
    scripts = {
        "apt-cache": f"""#!/bin/bash
echo "apt-cache $*" >> {state}/log
shift
for p in "$@"; do
  echo "$p:"
  if grep -qw -- "$p" {state}/available; then echo "  Candidate: 1:1.0"; else echo "  Candidate: (none)"; fi
done""",
        "apt-get": f"""#!/bin/bash
echo "apt-get $*" >> {state}/log
if grep -qs apt.llvm.org {tmp_path}/root/etc/apt/sources.list.d/*.list; then
  echo "{llvm_org_has}" >> {state}/available
fi""",
        "curl": f"""#!/bin/bash
echo "curl $*" >> {state}/log
while [ $# -gt 0 ]; do [ "$1" = -o ] && echo KEY > "$2"; shift; done""",
    }
    for name, text in scripts.items():
        (bin_ / name).write_text(text + "\n")
        (bin_ / name).chmod(0o755)
    return dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", APT_ROOT=str(tmp_path / "root"),
                CODENAME="noble")


def _install_llvm(env, *majors):
    return subprocess.run([str(ROOT / "ci" / "install-llvm.sh"), *majors], capture_output=True, text=True,
                          timeout=60, env=env)


def test_install_llvm_does_nothing_where_apt_has_every_major(tmp_path):
    env = _fake_apt(tmp_path, "llvm-22 lld-22 llvm-19 lld-19")
    run = _install_llvm(env, "22", "19")
    assert run.returncode == 0, run.stderr
    log = (tmp_path / "state" / "log").read_text()
    assert "apt-get" not in log and "curl" not in log
    assert not (tmp_path / "root").exists()


def test_install_llvm_adds_apt_llvm_org_for_the_missing_major_only(tmp_path):
    env = _fake_apt(tmp_path, "llvm-19 lld-19 llvm-14 lld-14")  # Ubuntu noble: no 22
    run = _install_llvm(env, "22", "19", "14")
    assert run.returncode == 0, run.stderr
    sources = (tmp_path / "root" / "etc" / "apt" / "sources.list.d" / "apt.llvm.org.list").read_text()
    assert sources.splitlines() == ["deb [signed-by=/etc/apt/keyrings/apt.llvm.org.asc] "
                                    "https://apt.llvm.org/noble/ llvm-toolchain-noble-22 main"]
    assert (tmp_path / "root" / "etc" / "apt" / "keyrings" / "apt.llvm.org.asc").read_text() == "KEY\n"
    log = (tmp_path / "state" / "log").read_text()
    assert log.count("apt-get update") == 2 and "https://apt.llvm.org/llvm-snapshot.gpg.key" in log
    again = _install_llvm(env, "22", "19", "14")  # idempotent: nothing to add, no second line
    assert again.returncode == 0 and "installable" in again.stdout
    assert (tmp_path / "root" / "etc" / "apt" / "sources.list.d" / "apt.llvm.org.list").read_text() == sources


def test_install_llvm_says_so_when_apt_llvm_org_lacks_the_major(tmp_path):
    env = _fake_apt(tmp_path, "llvm-19 lld-19", llvm_org_has="")
    run = _install_llvm(env, "22")
    assert run.returncode == 1
    assert "llvm/lld 22 still not installable" in run.stderr


def test_corpus_and_history_are_carried_to_the_next_night():
    """Each workflow restores the newest cache entry before the night and saves a new one after it, with the
    paths `gfxhound nightly` writes: the --corpus directory and the --out directory's history.json."""
    nightly_sh = (ROOT / "ci" / "nightly.sh").read_text()
    assert '--out "${OUT:-nightly}"' in nightly_sh and '--corpus "${CORPUS:-corpus}"' in nightly_sh
    assert '/ "history.json"' in (ROOT / "gfxhound" / "report" / "nightly.py").read_text()
    for path in WORKFLOWS:
        wf = _load(path)
        env = wf["env"]
        for job_id, job in wf["jobs"].items():
            steps = job["steps"]
            night = [i for i, s in enumerate(steps) if "ci/nightly.sh" in str(s.get("run", ""))]
            if not night:
                continue
            uses = [s.get("uses", "").split("@")[0] for s in steps]
            restore, save = uses.index("actions/cache/restore"), uses.index("actions/cache/save")
            assert restore < night[0] < save, f"{path.name} {job_id}: restore, night, save"
            r, s = steps[restore]["with"], steps[save]["with"]
            assert r["path"] == s["path"] and r["key"] == s["key"]
            paths = {p.replace("${{ env.CORPUS }}", env["CORPUS"]).replace("${{ env.OUT }}", env["OUT"])
                     for p in r["path"].splitlines() if p.strip()}
            assert paths == {f"{env['CORPUS']}/", f"{env['OUT']}/history.json"}
            for step in steps[night[0]:]:
                assert not {"CORPUS", "OUT"} & set(step.get("env") or {}), "the night must write what is saved"
            assert "${{ github.run_id }}" in r["key"] and r["key"].startswith(r["restore-keys"])
            assert "cancelled()" in steps[save]["if"], "a failed night still saves what it merged"
            wins = steps[restore + 1]["run"]
            assert "checkout HEAD -- " in wins and "cache-matched-key" in str(steps[restore + 1]["env"])


def test_shell_steps_pass_shellcheck(tmp_path):
    tool = shutil.which("shellcheck")
    if tool is None:
        pytest.skip("shellcheck is not installed (make tools)")
    scripts = [ROOT / "ci" / "nightly.sh", ROOT / "ci" / "install-llvm.sh"]
    for n, (path, job_id, _, step) in enumerate(_steps()):
        if "run" in step:
            script = tmp_path / f"{path.stem}-{job_id}-{n}.sh"  # an expression becomes a plain word
            script.write_text("#!/bin/bash\nset -eo pipefail\n" + re.sub(r"\$\{\{.*?\}\}", "EXPR", step["run"]))
            scripts.append(script)
    run = subprocess.run([tool, "-s", "bash", *map(str, scripts)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout


def test_dry_run_evaluates_the_expressions_the_workflows_use():
    steps = {"corpus-branch": {"outcome": "failure", "outputs": {}}, "restore": {"outputs": {"k": "v"}}}
    ex = DRY_RUN.Expressions({"steps": steps, "strategy": {"job-total": 4}, "matrix": {"shard": 0},
                              "env": {"OUT": "nightly"}}, status=lambda: True)
    assert ex.condition("${{ steps.corpus-branch.outcome == 'failure' }}")
    assert not ex.condition("success() && steps.corpus-branch.outcome == 'success'")
    assert ex.condition("${{ !cancelled() }}")
    assert ex.interpolate("shard ${{ matrix.shard }} of ${{ strategy.job-total }}: ${{ env.OUT }}/") == \
        "shard 0 of 4: nightly/"
    assert ex.interpolate("[${{ steps.restore.outputs.missing }}]") == "[]"
    failed = DRY_RUN.Expressions({}, status=lambda: False)
    assert not failed.condition(None) and failed.condition("${{ !cancelled() }}")


@pytest.mark.slow
def test_dry_run_of_two_nights_of_the_matrix_workflow(tmp_path):
    """The shard and triage jobs' shell steps run for real (10 s campaigns, a corpus without the checked-in
    findings); what they upload exists, and the second night restores the first night's history."""
    state, report = tmp_path / "dry", tmp_path / "report.json"
    run = subprocess.run([sys.executable, str(ROOT / "ci" / "dry-run.py"), "nightly-matrix", "--nights", "2",
                          "--budget", "10s", "--empty-corpus", "--keep", str(state), "--json", str(report)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    jobs = json.loads(report.read_text())
    assert [(j["night"], j["job"]) for j in jobs] == [(1, "shard (shard=0)"), (1, "triage"),
                                                      (2, "shard (shard=0)"), (2, "triage")]
    for job in jobs:
        kinds = {s["name"]: (s["kind"], s["status"]) for s in job["steps"]}
        assert all(status == "passed" for _, status in kinds.values()), kinds
        ran = [name for name, (kind, _) in kinds.items() if kind in ("ran", "replaced")]
        assert ran, job
    triage = {s["name"]: s for s in jobs[3]["steps"]}
    assert triage["Merge and triage"]["kind"] == "ran"
    assert "restored from gfxhound-nightly-shards-10001-1" in triage["Restore the last night's corpus and history"][
        "detail"]
    assert "nothing for" in {s["name"]: s for s in jobs[1]["steps"]}[
        "Restore the last night's corpus and history"]["detail"]
    artifacts = state / "services" / "artifacts" / "nightly-matrix"  # <workflow>/<run id>/<artifact name>/
    for run_id, date in (("10001", "2026-01-01"), ("10002", "2026-01-02")):
        summary = json.loads((artifacts / run_id / "shard-0" / "summary.json").read_text())
        assert {"kernels", "verdicts", "findings"} <= set(summary)  # gfxhound fuzz --json's, as triage reads it
        night = artifacts / run_id / f"nightly-{run_id}"
        assert (night / date / "junit.xml").exists() and (night / date / "night.json").exists()
    history = json.loads((artifacts / "10002" / "nightly-10002" / "history.json").read_text())
    assert [row["date"] for row in history] == ["2026-01-01", "2026-01-02"]
    assert sorted(p.name for p in (state / "services" / "cache").iterdir()) == [
        "gfxhound-nightly-shards-10001-1", "gfxhound-nightly-shards-10002-1"]
