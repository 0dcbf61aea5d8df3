"""Issue drafts from real corpus findings (an AMD internal compiler error of the crash pipeline, an llc crash on a
reduced .ll, a planted wrong result), triage deduplication, the scrubber, and fix verification across two real
Triton releases."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.report.scrub import Scrubber


def triton_version() -> str:
    import triton
    return triton.__version__

ROOT = Path(__file__).resolve().parents[2]
TRITON_SECTIONS = ["## Summary", "## Reproducer", "## Command", "## Expected vs actual", "## Bisection",
                   "## Environment", "## How this was found"]
LLVM_SECTIONS = ["## Test case", "## Command", "## Output", "## Bisection", "## Environment", "## How this was found"]


def _corpus(tmp_path, *signatures):
    corpus = tmp_path / "corpus"
    for sig in signatures:
        shutil.copytree(ROOT / "corpus" / sig, corpus / sig)
    return corpus


def _report(gfxhound_bin, corpus, ident, out, *extra, rc=0):
    proc = subprocess.run([gfxhound_bin, "report", ident, "--corpus", str(corpus), "--out", str(out), "--json",
                           *extra], capture_output=True, text=True, timeout=900)
    assert proc.returncode == rc, proc.stderr[-2000:] + proc.stdout[-2000:]
    return json.loads(proc.stdout), (out / "draft.md").read_text()


def _block(markdown: str, lang: str) -> str:
    return re.search(rf"```{lang}\n(.*?)\n```", markdown, re.S).group(1)


def _sections_in_order(markdown: str, sections: list):
    positions = [markdown.index(s) for s in sections]
    assert positions == sorted(positions)
    assert markdown.index("Draft for a person to review") < positions[0]
    assert "not filed" in markdown and "not yet verified on upstream's main" in markdown
    assert "fuzzer" in markdown[positions[-1]:]


def _no_leaks(text: str, tmp_path: Path):
    assert Scrubber().leaks(text) == []
    for local in (str(tmp_path), str(ROOT), "/root/", "/tmp/", sys.prefix):
        assert local not in text, local


def test_a_triton_draft_of_an_amd_internal_compiler_error(tmp_path, gfxhound_bin):
    corpus = _corpus(tmp_path, "93260d1c0e8fc7a2")
    summary, md = _report(gfxhound_bin, corpus, "93260d1c", tmp_path / "draft")
    assert summary["upstream"] == "triton-lang/triton" and summary["reproduced"] is True
    title = md.splitlines()[1]
    assert title.startswith("# [AMD][gfx") and "internal compiler error in AMDGCN code generation" in title
    assert "Cannot select" in title and "AMDGPUISD::BUFFER_ATOMIC_SWAP" in title
    _sections_in_order(md, TRITON_SECTIONS)
    assert "## No undefined behaviour" not in md  # a crash needs no such argument
    # the inlined reproducer is the command that was checked: run it again from the draft itself
    code = _block(md, "python")
    assert code.strip() == (tmp_path / "draft" / "snippet.py").read_text().strip()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "snippet.py").write_text(code)
    proc = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path / "run", capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode != 0 and "LLVM ERROR: Cannot select" in proc.stderr
    assert "python snippet.py" in _block(md, "sh")
    assert "- triton-3.9.0" in md and "gfx1100" in md
    _no_leaks(md + (tmp_path / "draft" / "snippet.py").read_text(), tmp_path)


@pytest.mark.skipif(triton_version() != "3.9.0", reason="the assertion is Triton 3.9.0's")
def test_a_triton_draft_pastes_a_snippet_whose_exit_is_the_bug(tmp_path, gfxhound_bin):
    """01f5c6fa: the pasted snippet exits 1 only for its own assertion, the draft says what its exits mean and what
    it gave, and nothing of the harness reaches upstream. Without its hand-minimised script, which checks itself and
    is pasted as it is (tests/report/test_drafted_with.py): this is the generated snippet's path."""
    corpus = _corpus(tmp_path, "01f5c6fa9ca3e32d")
    (corpus / "01f5c6fa9ca3e32d" / "minimal.py").unlink()
    summary, md = _report(gfxhound_bin, corpus, "01f5c6fa", tmp_path / "draft")
    assert summary["reproduced"] is True and summary["leaks"] == [] and summary["attachments"] == ["snippet.py"]
    assert "exit 1 = the bug is present, 0 = absent, 125 = cannot test here" in _block(md, "sh")
    assert "<!-- checked before this draft was written: `python snippet.py` with triton 3.9.0 exited 1 (present): " \
           "reproduced: " in md
    code = _block(md, "python")
    assert 'BUG = ["number of elements must be greater than zero"]' in code
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "snippet.py").write_text(code)
    proc = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path / "run", capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1 and proc.stdout.startswith("reproduced: "), proc.stdout + proc.stderr[-2000:]
    assert "41ca2f05" not in md and "01f5c6fa" not in md and "gfxhound reduce" not in md
    _no_leaks(md + code, tmp_path)


@pytest.mark.skipif(triton_version() != "3.9.0", reason="the fault is in the code generator Triton 3.9.0 bundles")
def test_an_llvm_draft_through_tritons_code_generator_shows_only_what_ran(tmp_path, gfxhound_bin):
    """f311e39e: no `llc` line that never ran (LLVM 22 rejects the IR's triple), no global pip install at the top
    of the command; the script that ran, its exit codes and the exit it gave."""
    corpus = _corpus(tmp_path, "f311e39e1081bf24")
    summary, md = _report(gfxhound_bin, corpus, "f311e39e", tmp_path / "draft")
    assert summary["upstream"] == "llvm/llvm-project" and summary["reproduced"] is True and summary["leaks"] == []
    shell = _block(md, "sh")
    assert shell.startswith("python codegen.py reduced.ll   # exit 1 = the fault shows") and "pip" not in shell
    assert "llc -mtriple=amdgpu9.42" not in md and "No `llc` built at that revision was run here" in md
    assert "pip install triton==3.9.0`" in md  # the set-up, in a sentence
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "codegen.py").write_text(_block(md, "python"))
    (tmp_path / "run" / "reduced.ll").write_text(_block(md, "llvm") + "\n")
    proc = subprocess.run([sys.executable, "codegen.py", "reduced.ll"], cwd=tmp_path / "run", capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 1 and "reproduced: no s_waitcnt vmcnt(0) between global_atomic_smax" in proc.stdout
    assert "`python codegen.py reduced.ll` with triton 3.9.0 (pinned AMD code generator" in md and \
        "exited 1 (present)" in md


def test_an_llvm_draft_of_an_llc_crash_on_reduced_ir(tmp_path, gfxhound_bin):
    corpus = _corpus(tmp_path, "28f1b1b801f666bf")
    summary, md = _report(gfxhound_bin, corpus, "28f1b1b8", tmp_path / "draft")
    assert summary["upstream"] == "llvm/llvm-project" and summary["reproduced"] is True
    assert md.splitlines()[1] == ("# [AMDGPU] LLVM ERROR: Do not know how to split this operator's operand! "
                                  "(gfx950)")
    _sections_in_order(md, LLVM_SECTIONS)
    command = _block(md, "sh").split()
    # the name a stock LLVM 22 installs, run as shown (from PATH), not the path this machine happened to use
    assert command[0] in ("llc-22", "llc") and "-mcpu=gfx950" in command and command[-1] == "reduced.ll"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "reduced.ll").write_text(_block(md, "llvm") + "\n")
    proc = subprocess.run(command, cwd=tmp_path / "run", capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "Do not know how to split this operator's operand" in proc.stderr
    assert f"<!-- checked before this draft was written: `{' '.join(command)}` was killed by signal 6" in md
    assert "- llc: LLVM 22." in md and "llvm-reduce" in md and summary["leaks"] == []
    _no_leaks(md, tmp_path)


def test_a_miscompile_draft_of_a_planted_bug(tmp_path, gfxhound_bin):
    from planted import planted_finding
    corpus, finding, _ = planted_finding(tmp_path / "corpus", plant_in_repro=True)
    # exit 1: the only reproducer is the generated harness, which the draft must not carry upstream as it is
    summary, md = _report(gfxhound_bin, corpus.root, finding.signature[:12], tmp_path / "draft", rc=1)
    assert summary["upstream"] == "triton-lang/triton" and summary["reproduced"] is True
    assert any(leak.startswith("attachment repro.py: the generated harness") for leak in summary["leaks"])
    assert finding.signature not in md
    assert md.splitlines()[1].startswith("# [gfx942] wrong result: ")
    _sections_in_order(md, TRITON_SECTIONS)
    assert "## No undefined behaviour" in md and "out-of-bounds" in md
    assert "tl.load(in_0 + 1 + (" in _block(md, "python")  # the planted defect is in the inlined kernel
    command = _block(md, "sh").split("#")[0].split()
    assert command == ["python", "repro.py", "--interpret"]
    proc = subprocess.run([sys.executable, *command[1:]], cwd=tmp_path / "draft", capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    _no_leaks(md, tmp_path)


def test_known_issues_get_no_draft_and_a_broken_triage_file_is_one_line(tmp_path, gfxhound_bin):
    corpus = _corpus(tmp_path, "28f1b1b801f666bf", "93260d1c0e8fc7a2")
    add = subprocess.run([gfxhound_bin, "triage", "add", "--corpus", str(corpus), "--issue",
                          "https://github.com/llvm/llvm-project/issues/12345", "--title", "split operand",
                          "--match", r"Do not know how to split"], capture_output=True, text=True, timeout=120)
    assert add.returncode == 0, add.stderr
    known = subprocess.run([gfxhound_bin, "report", "28f1b1b8", "--corpus", str(corpus), "--out",
                            str(tmp_path / "d")], capture_output=True, text=True, timeout=300)
    assert known.returncode == 0 and "known upstream as https://github.com/llvm/llvm-project/issues/12345" in \
        known.stdout and not (tmp_path / "d").exists()
    listing = subprocess.run([gfxhound_bin, "triage", "list", "--corpus", str(corpus)], capture_output=True,
                             text=True, timeout=120)
    assert "llvm/llvm-project#12345 [reported] split operand -> 28f1b1b8" in listing.stdout
    (corpus / "triage.json").write_text('{"format": 1, "issues": [{"repo": "a/b", "number": 1, "title": "", '
                                        '"state": "closed", "signature": "28f1b1b8"}]}')
    broken = subprocess.run([gfxhound_bin, "report", "93260d1c", "--corpus", str(corpus)], capture_output=True,
                            text=True, timeout=120)
    assert broken.returncode == 2 and "state 'closed' is not one of" in broken.stderr
    assert "Traceback" not in broken.stderr and len(broken.stderr.strip().splitlines()) == 1


def test_the_scrubber_removes_paths_user_host_and_secrets(tmp_path):
    scrub = Scrubber({tmp_path / "corpus": "corpus"}, env={"API_TOKEN": "s3cr3t-value-123",
                                                            "TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld"})
    ident = scrub.ident
    text = (f"{tmp_path}/corpus/abc/repro.py failed; {ident['home']}/.triton/llvm/x.h:3; "
            f"{sys.prefix}/lib/python3.11/site-packages/triton/compiler.py; {ident['tmp']}/tmpab12/kernel.llir; "
            f"token s3cr3t-value-123; lld /usr/lib/llvm-22/bin/ld.lld; host {ident['host']}")
    clean = scrub(text)
    assert "corpus/abc/repro.py" in clean and "~/.triton/llvm/x.h" in clean
    assert "<site-packages>/triton/compiler.py" in clean and "<tmp>/kernel.llir" in clean
    assert "$API_TOKEN" in clean and "/usr/lib/llvm-22/bin/ld.lld" in clean  # a system path is public
    assert scrub.leaks(clean) == [] and scrub.leaks(text) != []


@pytest.mark.slow
def test_verify_marks_a_historical_crash_fixed_in_the_later_release(tmp_path, old_python, gfxhound_bin):
    from fake_releases import fake_cache as _fake_cache
    cache = _fake_cache(tmp_path, {"3.4.0": Path(old_python).parent.parent,
                                   "3.9.0": Path(sys.executable).parent.parent})
    corpus = _corpus(tmp_path, "eaa292644627f3a9", "93260d1c0e8fc7a2")
    proc = subprocess.run([gfxhound_bin, "verify", "--triton", "3.9.0", "--cache", str(cache), "--only-cached",
                           "--corpus", str(corpus), "--json"], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = {r["signature"][:8]: r for r in json.loads(proc.stdout)["results"]}
    assert results["eaa29264"]["outcome"] == "fixed" and results["eaa29264"]["fixed_in"] == "3.9.0"
    assert results["93260d1c"]["outcome"] == "still failing"
    findings = {sig: json.loads((corpus / sig / "finding.json").read_text())["status"]
                for sig in ("eaa292644627f3a9", "93260d1c0e8fc7a2")}
    assert findings == {"eaa292644627f3a9": "fixed", "93260d1c0e8fc7a2": "open"}
    bisection = json.loads((corpus / "eaa292644627f3a9" / "bisect.json").read_text())
    assert (bisection["mode"], bisection["first_new"], bisection["last_old"]) == ("fix", "3.9.0", "3.4.0")
    history = json.loads((corpus / "eaa292644627f3a9" / "verify.json").read_text())["runs"]
    assert history[-1]["toolchain"] == "triton-3.9.0"


def test_an_issue_fixed_upstream_does_not_hide_a_regression_on_a_fixed_toolchain():
    from types import SimpleNamespace

    from gfxhound.report.triage import KnownIssue
    finding = SimpleNamespace(signature="28f1b1b801f666bf", normalised="x", message="x", toolchains=["triton-3.9.0"])
    fixed_before = KnownIssue("llvm/llvm-project", 1, "", "fixed", "28f1b1b8", None, "", "triton-3.8.0")
    fixed_later = KnownIssue("llvm/llvm-project", 1, "", "fixed", "28f1b1b8", None, "", "triton-3.10.0")
    reported = KnownIssue("llvm/llvm-project", 1, "", "reported", "28f1b1b8")
    from gfxhound.report.triage import Triage
    triage = Triage(Path("/nonexistent/triage.json"))
    for issue, covered in ((fixed_before, False), (fixed_later, True), (reported, True)):
        triage.issues = [issue]
        assert (triage.known(finding) is not None) == covered, issue
