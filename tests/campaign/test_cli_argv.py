"""Bad command lines never end in a traceback: Hypothesis draws argv for every subcommand (and every action of the
commands that have actions) from the parser itself, with values chosen to be wrong in the ways people get them
wrong (empty, zero, negative, NaN, a file that is not a directory or not a program, an impossible date, a huge
word), and runs the real `main`. Whatever it draws ends in one of: help (exit 0), a usage error or a user error
(exit 2, one line on stderr), or the point where real work would start (compiling, reducing, bisecting: replaced
here by a marker, so the test stays fast and writes nothing outside its temp dir). An internal error (exit 3) or a
traceback fails the test."""
import argparse
import importlib
import pkgutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gfxhound.cli
from gfxhound.cli import build_parser, main

BAD_VALUES = ["", "0", "-5", "nan", "inf", "-1e309", "/nonexistent/x", "/etc/passwd", "/etc", "2026-13-45", "x" * 300,
              "gfx942,", ",", "1/0", "0/0", "3.9.0..3.4.0", "..", "é", "--", "-", "a=b", "[", "(", "10q", "5m5"]


class Reached(BaseException):
    """Real work would start here: validation let the command line through."""


def _stop(*args, **kwargs):
    raise Reached()


# where each command's real work begins (module, attribute): validation happens before these
WORK = [("gfxhound.campaign", "Campaign.run"), ("gfxhound.reduce.workflow", "reduce_finding"),
        ("gfxhound.reduce.source", "reduce_script"), ("gfxhound.reduce.through", "reduce_file"),
        ("gfxhound.bisect.run", "releases"), ("gfxhound.bisect.run", "llc_versions"),
        ("gfxhound.bisect.run", "commits"), ("gfxhound.bisect.releases", "available_versions"),
        ("gfxhound.report.drafts", "build"), ("gfxhound.report.verify", "check"),
        ("gfxhound.oracle.cast_sweep", "run_table"), ("gfxhound.report.perf", "measure"),
        ("gfxhound.report.perf", "make_set"), ("gfxhound.report.nightly", "Night.run"),
        ("gfxhound.cli.fuzz", "_user_kernel"), ("gfxhound.cli.fuzz", "_device_target"),
        ("gfxhound.report.sandbox", "check"), ("gfxhound.report.sandbox_env", "fetch"),
        ("gfxhound.oracle.ir_campaign", "run_campaign"), ("gfxhound.oracle.asm_plants_detect", "detection")]
# checks that start a Python to import Triton (seconds each): reaching them means the arguments were accepted
SLOW_CHECKS = ("need_triton",)


def _commands(parser, path=()):
    """(path, parser) for every command and action: `fuzz`, `corpus list`, `triage add`, ..."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _commands(child, path + (name,))


COMMANDS = list(_commands(build_parser()))


def _words(parser):
    """A strategy for the words after a command: options with bad or chosen values, and positionals."""
    pieces = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        values = st.sampled_from(list(action.choices)) if action.choices else st.sampled_from(BAD_VALUES)
        if not action.option_strings:  # a positional
            pieces.append(values.map(lambda v: [v]))
        elif action.nargs == 0:
            pieces.append(st.just([action.option_strings[-1]]))
        else:
            pieces.append(st.tuples(st.sampled_from(action.option_strings), values).map(list))
    if not pieces:
        return st.just([])
    return st.lists(st.one_of(pieces), max_size=4).map(lambda chunks: [w for c in chunks for w in c])


@pytest.fixture
def stopped_work(monkeypatch, tmp_path):
    for module, attr in WORK:
        mod = importlib.import_module(module)
        owner, _, name = attr.rpartition(".")
        monkeypatch.setattr(getattr(mod, owner) if owner else mod, name, _stop)
    for info in pkgutil.iter_modules(gfxhound.cli.__path__):
        mod = importlib.import_module(f"gfxhound.cli.{info.name}")
        for name in SLOW_CHECKS:
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, _stop)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty-corpus").mkdir()


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_no_command_line_ends_in_a_traceback(stopped_work, capsys, data):
    path, parser = data.draw(st.sampled_from(COMMANDS), label="command")
    argv = list(path) + data.draw(_words(parser), label="words")
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: help (0) or a usage error (2)
        code = exc.code
    except Reached:
        code = None
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, argv
    assert code != 3, f"internal error for {argv}: {err}"
    assert code in (None, 0, 1, 2), (argv, code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gfxhound"), (argv, err)


def test_every_option_says_what_it_does():
    """Help is the first thing a new user reads: no option is listed without a line that says what it is for."""
    missing = [f"{' '.join(path)} {action.option_strings[-1]}" for path, parser in COMMANDS
               for action in parser._actions if action.option_strings and not action.help]
    assert not missing, missing


def test_help_shows_defaults_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as done:
        main(["fuzz", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "(default: 2m)" in text and "--fail-on-new" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "130 after Ctrl-C" in capsys.readouterr().out


def test_version_names_gfxhound_and_triton(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("gfxhound ")


def test_an_internal_error_is_one_line_and_debug_shows_the_traceback(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    import gfxhound.cli.fuzz as fuzz

    def broken(args):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(fuzz, "cmd_fuzz", broken)  # main builds its parser anew, binding the patched command
    assert main(["fuzz"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error: ZeroDivisionError" in err[0] and "--debug" in err[0]
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "fuzz"])
