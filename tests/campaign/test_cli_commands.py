"""The corpus, triage, casts, reduce, report, verify, perf, nightly and bisect commands as a new user meets them:
each mistake is one line and exit 2 (never a traceback, never a draft that blames the bug), `corpus replay` with a
relative --corpus works from anywhere, each action's help lists only its own options and every option says what
it is for, tables in a log keep whole ids and whole first error lines, and the command lines that docs, tests and
the nightly driver use still parse."""
import argparse
import os
import shutil
import subprocess

import pytest
from cli_corpus import LONG_HEADLINE, LONG_ID, ROOT, SHORT_ID, cli, one_line_error, python, tiny_corpus

from gfxhound.cli import build_parser

LLC_FINDING = "28f1b1b801f666bf"  # an llc crash (tests/report): its draft needs no GPU and takes a second


@pytest.fixture
def corpus(tmp_path):
    return tiny_corpus(tmp_path / "c").root


@pytest.fixture
def no_triton(tmp_path, monkeypatch):
    """A Python where `import triton` fails as it does where Triton is not installed (the checks run it in a
    child process, which inherits PYTHONPATH)."""
    shim = tmp_path / "shim" / "triton"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'triton'\")\n")
    monkeypatch.setenv("PYTHONPATH", str(shim.parent))


# --- the failures the issue lists ------------------------------------------------------------------------------

def test_replay_with_a_relative_corpus_runs_from_another_directory(corpus, tmp_path, monkeypatch, capsys):
    """corpus/README.md's `corpus replay ID --corpus corpus`: the repro is found, and runs in its example's folder."""
    monkeypatch.chdir(corpus.parent)
    code, out, err = cli(capsys, "corpus", "replay", LONG_ID[:6], "--corpus", corpus.name, "--python", python())
    assert code == 1, out + err  # the repro says "present"
    example = (corpus / LONG_ID / "examples" / "5pec0001").resolve()
    assert f"ran in {example}" in out and out.strip().endswith("present")
    monkeypatch.chdir(tmp_path / "c" / LONG_ID)  # from deeper down, a path with ..
    code, out, _ = cli(capsys, "corpus", "replay", LONG_ID, "--corpus", os.path.join("..", "..", "c"))
    assert code == 1 and f"ran in {example}" in out


def test_casts_with_a_missing_python_is_one_line(gfxhound_bin, tmp_path):
    proc = subprocess.run([gfxhound_bin, "casts", "--python", "/nonexistent/python", "--corpus", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=120)
    one_line_error(proc.returncode, proc.stderr, "--python /nonexistent/python: no such interpreter")
    assert not (tmp_path / "c").exists()


def test_reduce_without_triton_says_so_before_reducing(corpus, no_triton, capsys):
    code, out, err = cli(capsys, "reduce", LONG_ID[:8], "--corpus", corpus)
    one_line_error(code, err, "no Triton is importable by this Python")
    assert "does not fail the same way" not in err and not (corpus / LONG_ID / "reduced").exists()


def test_reduce_ll_through_triton_checks_the_python_it_names(tmp_path, capsys):
    ll = tmp_path / "k.ll"
    ll.write_text("define void @k() {\n  ret void\n}\n")
    code, _, err = cli(capsys, "reduce", "--ll", ll, "--codegen", "triton", "--python", "/nonexistent/python")
    one_line_error(code, err, "--python /nonexistent/python: no such interpreter")


def test_report_with_a_missing_python_writes_no_draft(tmp_path, capsys):
    shutil.copytree(ROOT / "corpus" / LLC_FINDING, tmp_path / "c" / LLC_FINDING)
    code, out, err = cli(capsys, "report", LLC_FINDING[:8], "--corpus", tmp_path / "c", "--python",
                         "/nonexistent/python", "--force", "--out", tmp_path / "d")
    one_line_error(code, err, "--python /nonexistent/python: no such interpreter")
    assert "DID NOT REPRODUCE" not in out and not (tmp_path / "d").exists()


def test_report_and_casts_without_triton_are_one_line(tmp_path, no_triton, capsys):
    shutil.copytree(ROOT / "corpus" / LLC_FINDING, tmp_path / "c" / LLC_FINDING)
    code, _, err = cli(capsys, "report", LLC_FINDING[:8], "--corpus", tmp_path / "c", "--out", tmp_path / "d")
    one_line_error(code, err, "no Triton is importable by --python")
    assert not (tmp_path / "d").exists()
    pytest.importorskip("torch")
    code, _, err = cli(capsys, "casts", "--corpus", tmp_path / "casts")
    one_line_error(code, err, "no Triton is importable by --python")


@pytest.mark.parametrize("argv", [
    ["corpus", "list"], ["corpus", "show", SHORT_ID], ["corpus", "replay", SHORT_ID], ["corpus", "migrate"],
    ["corpus", "regroup"], ["triage", "list"], ["triage", "add", SHORT_ID, "--issue", "a/b#1"],
    ["reduce", SHORT_ID], ["report", SHORT_ID], ["verify", "--python", python()],
])
def test_a_corpus_that_does_not_exist_is_refused(tmp_path, capsys, argv):
    code, out, err = cli(capsys, *argv, "--corpus", tmp_path / "nonexistent")
    one_line_error(code, err, f"no corpus at {tmp_path / 'nonexistent'}")
    assert out == "" and not (tmp_path / "nonexistent").exists()


def test_a_date_that_is_no_date_is_refused(corpus, capsys):
    for action in (["add", SHORT_ID, "--issue", "a/b#1"], ["searched", SHORT_ID, "--query", "q"]):
        code, _, err = cli(capsys, "triage", *action, "--corpus", corpus, "--checked", "2026-13-45")
        one_line_error(code, err, "--checked '2026-13-45' is not a date")
    assert not (corpus / "triage.json").exists()
    code, _, err = cli(capsys, "nightly", "--date", "2026-02-30", "--corpus", corpus)
    one_line_error(code, err, "--date '2026-02-30': give a date as YYYY-MM-DD")


@pytest.mark.parametrize("argv, flag", [
    (["corpus", "replay", SHORT_ID, "--timeout", "0"], "--timeout"),
    (["casts", "--jobs", "0"], "--jobs"),
    (["casts", "--values", "1"], "--values takes a number of at least 2"),
    (["casts", "--values", "nan"], "--values"),
    (["reduce", SHORT_ID, "-j", "-1"], "-j/--jobs"),
    (["reduce", SHORT_ID, "--timeout", "nan"], "--timeout"),
    (["reduce", SHORT_ID, "--compile-timeout", "-3"], "--compile-timeout"),
    (["report", SHORT_ID, "--timeout", "inf"], "--timeout"),
    (["verify", "--python", "p", "--timeout", "0"], "--timeout"),
    (["bisect", SHORT_ID, "--triton", "3.4.0..3.9.0", "--repeat", "0"], "--repeat"),
    (["bisect", "--ll", "x.ll", "--llc", "14..22", "--timeout", "-1"], "--timeout"),
    (["bisect", "--commits", "a..b", "--repo", ".", "--jobs", "0"], "--jobs"),
    (["perf", "measure", "--repeat", "0"], "--repeat"),
    (["perf", "make-set", "--caps", "c.json", "--count", "0"], "--count"),
    (["nightly", "--shards", "0"], "--shards"),
    (["nightly", "--workers", "-2"], "--workers"),
    (["nightly", "--reproductions", "0"], "--reproductions"),
    (["nightly", "--stage-timeout", "nan"], "--stage-timeout"),
    (["nightly", "--reduce-seconds", "-1"], "--reduce-seconds"),
])
def test_numbers_out_of_range_stop_at_the_parser(capsys, argv, flag):
    code, out, err = cli(capsys, *argv)
    one_line_error(code, err, flag)
    assert out == ""


def test_zero_reduce_seconds_means_no_reduction():
    args = build_parser().parse_args(["nightly", "--reduce-seconds", "0"])
    assert args.reduce_s == 0


# --- help ------------------------------------------------------------------------------------------------------

MINE = ("corpus", "triage", "perf", "casts", "reduce", "bisect", "report", "verify", "nightly")
ACTIONS = {  # each action's own options, and nothing else
    ("corpus", "list"): {"--corpus", "--json", "--markdown", "--known"},
    ("corpus", "show"): {"--corpus", "--json", "--known"},
    ("corpus", "replay"): {"--corpus", "--python", "--timeout"},
    ("corpus", "merge"): {"--corpus"},
    ("corpus", "migrate"): {"--corpus", "--dry-run"},
    ("corpus", "regroup"): {"--corpus"},
    ("triage", "list"): {"--corpus", "--triage"},
    ("triage", "add"): {"--corpus", "--triage", "--issue", "--kind", "--title", "--state", "--fixed-in", "--url",
                        "--match", "--note", "--checked"},
    ("triage", "searched"): {"--corpus", "--triage", "--match", "--query", "--related", "--note", "--checked"},
    ("perf", "measure"): {"--set", "--python", "--target", "--repeat", "--out", "--json"},
    ("perf", "compare"): {"--json"},
    ("perf", "make-set"): {"--caps", "--set", "--count", "--seed", "--python", "--with-python"},
}


def _subparsers(parser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _leaves(parser, path=()):
    """Every parser that parses a command line of mine: (command path, parser)."""
    sub = _subparsers(parser)
    if sub is None:
        yield path, parser
        return
    for name, child in sub.choices.items():
        if path or name in MINE:
            yield from _leaves(child, path + (name,))


def _options(parser):
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}


def test_each_action_has_only_its_own_options():
    leaves = dict(_leaves(build_parser()))
    for path, expected in ACTIONS.items():
        assert _options(leaves[path]) == expected, path


@pytest.mark.parametrize("argv, shown, hidden", [
    (["corpus", "replay"], ["--python PY", "--timeout SECONDS", "(default: 900)", "(default: corpus)"],
     ["--markdown", "--dry-run", "--json"]),
    (["triage", "list"], ["--triage FILE"], ["--issue", "--query"]),
    (["perf", "compare"], ["OLD", "NEW", "--json"], ["--repeat", "--set"]),
])
def test_an_actions_help_shows_its_options_and_defaults(capsys, argv, shown, hidden):
    code, out, _ = cli(capsys, *argv, "--help")
    assert code == 0
    assert all(word in out for word in shown), out
    assert not any(word in out for word in hidden), out


def test_every_option_says_what_it_is_for():
    missing = [f"{' '.join(path)} {action.option_strings or action.dest}" for path, parser in _leaves(build_parser())
               for action in parser._actions if not (action.help or "").strip() or action.help == argparse.SUPPRESS]
    assert not missing, missing


def test_the_command_lines_in_use_still_parse():
    """README and docs, the existing tests, and gfxhound/report/nightly.py's subprocesses."""
    parse = build_parser().parse_args
    cases = [
        (["corpus", "list", "--corpus", "X", "--json"], {"corpus": "X", "json": True}),
        (["corpus", "show", "28f1b1b8"], {"id": "28f1b1b8", "corpus": "corpus"}),
        (["corpus", "replay", "ID", "--corpus", "corpus", "--python", "py"], {"id": "ID", "python": "py"}),
        (["corpus", "merge", "shard"], {"source": "shard"}),
        (["corpus", "migrate", "--dry-run"], {"dry_run": True}),
        (["triage", "add", "28f1b1b8", "--issue", "llvm/llvm-project#1", "--state", "fixed", "--fixed-in",
          "llvm-24.0.0git"], {"id": "28f1b1b8", "fixed_in": "llvm-24.0.0git"}),
        (["triage", "add", "--corpus", "c", "--issue", "u", "--match", "re"], {"id": None, "match": "re"}),
        (["triage", "searched", "ID", "--query", "a", "--query", "b", "--related", "R=why"],
         {"query": ["a", "b"], "related": ["R=why"]}),
        (["triage", "list"], {"corpus": "corpus"}),
        (["perf", "compare", "A.json", "B.json"], {"old": "A.json", "new": "B.json"}),
        (["perf", "measure", "--set", "s", "--python", "py", "--repeat", "1", "--out", "o"], {"repeat": 1}),
        (["perf", "make-set", "--caps", "c", "--count", "2", "--set", "s", "--python", "bin/python"], {"count": 2}),
        (["reduce", "ID", "--corpus", "c", "--timeout", "600.0"], {"timeout": 600.0}),
        (["bisect", "ID", "--corpus", "c", "--triton", "3.8.0..3.9.0", "--json"], {"triton": "3.8.0..3.9.0"}),
        (["report", "ID", "--corpus", "c", "--out", "d", "--json", "--triage", "t"], {"out": "d", "triage": "t"}),
        (["casts", "--values", "all"], {"values": "all"}),
        (["casts", "--values", "3"], {"values": 3}),
    ]
    for argv, expected in cases:
        args = parse(argv)
        assert callable(args.func), argv
        assert {k: getattr(args, k) for k in expected} == expected, argv


# --- tables in a log -------------------------------------------------------------------------------------------

def test_a_listing_in_a_log_keeps_whole_ids_and_whole_first_lines(corpus, capsys):
    code, out, _ = cli(capsys, "corpus", "list", "--corpus", corpus)
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith(LONG_ID + " "))
    assert row.endswith(LONG_HEADLINE), row  # the assertion, whole, not a build path cut at 120 characters
    assert "…" not in out and "/root/.triton" not in out
    assert out.splitlines()[-1] == "2 finding(s): 2 signatures in 2 families"
    code, out, _ = cli(capsys, "corpus", "list", "--corpus", corpus, "--markdown")
    assert f"| `{LONG_ID}` |" in out and f"`{LONG_HEADLINE}` |" in out


def test_show_and_verify_name_whole_ids(corpus, capsys):
    code, out, _ = cli(capsys, "corpus", "show", LONG_ID[:4], "--corpus", corpus)
    assert code == 0 and out.startswith(LONG_ID + ": ice in stage llir") and f"first error line: {LONG_HEADLINE}" \
        in out
    code, out, err = cli(capsys, "verify", "--python", python(), "--corpus", corpus)
    assert code == 0, err
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert set(rows) == {LONG_ID, SHORT_ID} and rows[LONG_ID].endswith(LONG_HEADLINE)
    assert "still failing" in rows[LONG_ID] and "\r" not in err


def test_an_llc_failure_without_its_reduced_ir_is_not_drafted_from_a_kernel(tmp_path, capsys):
    """An llc-verify finding's repro runs llc on IR: there is no Triton kernel in it to paste. Without its reduced
    LLVM IR (a corpus merged from CI shards carries no reduced/), report says what to run, in one line."""
    shutil.copytree(ROOT / "corpus" / "28f1b1b801f666bf", tmp_path / "c" / "28f1b1b801f666bf",
                    ignore=shutil.ignore_patterns("reduced", "draft"))
    code, out, err = cli(capsys, "report", "28f1b1b8", "--corpus", str(tmp_path / "c"))
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        "gfxhound: 28f1b1b801f666bf is an llc failure, drafted from its reduced LLVM IR: run `gfxhound reduce "
        "28f1b1b8 --level llvm-ir` first"]


def test_a_kernel_that_does_not_parse_is_left_as_it_is_by_pruning():
    from gfxhound.report.draft_text import prune_unused
    assert prune_unused("  x = 1\n y = 2\n") == "  x = 1\n y = 2\n"
