"""The maintainer's sandbox (gfxhound/report/sandbox.py, docs/sandbox.md): what a draft tells its reader, read from
its text; its blocks run as pasted in a venv holding only that, with no gfxhound, no project files and no network;
and the verdict on every checked-in draft, against a table of today's state.

Real runs install from the wheelhouse under $GFXHOUND_CACHE (filled once by `pip download`, the only step that
uses the network) into venvs cached by requirement set, so a second run of this file pays only the blocks."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gfxhound.report import sandbox, sandbox_draft, sandbox_env

ROOT = Path(__file__).resolve().parents[2]
DRAFTS = sorted(ROOT.glob("corpus/*/draft/draft.md"))
CACHE = Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound")
LLD = "/usr/lib/llvm-22/bin/ld.lld"
GFXHOUND = str(Path(sys.executable).parent / "gfxhound")
RELEASE, OLD = "3.9.0", "3.7.1"  # the project venv's Triton, and the last good release the hand-written drafts name

FENCE = "```"


def draft(snippet: str, quoted: str = "", environment: str = f"- triton-{RELEASE}", bisection: str = "",
          command: str = "python snippet.py   # the reproducer above, saved as snippet.py", extra: str = "") -> str:
    """A hand-written draft in the generator's shape: a reproducer, its command, what it printed."""
    return (f"# a title\n\n## Reproducer\n{FENCE}python\n{snippet.strip()}\n{FENCE}\n\n## Command\n{FENCE}sh\n"
            f"{command}\n{FENCE}\n\n## Expected vs actual\nExpected: nothing.\n\nActual:\n{FENCE}\n{quoted}\n"
            f"{FENCE}\n{extra}\n## Bisection\n{bisection}\n\n## Environment\n{environment}\n")


# ---- what a draft tells its reader (pure, no run) -----------------------------------------------------------------

LLVM_DRAFT = f"""# [AMDGPU] a title

## Test case
{FENCE}llvm
define void @f() {{
  ret void
}}
{FENCE}

## Command
Through Triton's code generator:
{FENCE}sh
pip install triton==3.9.0 numpy
python -c 'import sys
print(open(sys.argv[1]).read())
' reduced.ll
{FENCE}

## Output
{FENCE}asm
f:
{FENCE}

## Expected
{FENCE}asm
s_endpgm
{FENCE}

## With an LLVM release
`llc reduced.ll` does not show it.
{FENCE}asm
g:
{FENCE}
"""


def test_blocks_know_their_section_and_role():
    blocks = sandbox_draft.blocks(LLVM_DRAFT)
    assert [(b.index, b.lang, b.role, b.section) for b in blocks] == [
        (1, "llvm", "source", "Test case"), (2, "sh", "command", "Command"), (3, "asm", "output", "Output"),
        (4, "asm", "expected", "Expected"), (5, "asm", "other", "With an LLVM release")]
    assert blocks[1].lead.strip() == "Through Triton's code generator:"


def test_commands_join_open_quotes_and_continuations_and_drop_comments():
    text = "pip install x \\\n  y\npython -c 'a\nb\n' r.ll\n# only a comment\npython y.py  # note\n"
    assert sandbox_draft.commands_at(text) == [(1, "pip install x   y"), (3, "python -c 'a\nb\n' r.ll"),
                                               (7, "python y.py  # note")]
    assert sandbox_draft.inline_python(sandbox_draft.commands_at(text)[1][1]) == "a\nb\n"


def test_a_pip_line_pins_what_is_installed_and_the_only_llvm_block_is_the_file_it_reads():
    plan = sandbox_draft.plan(LLVM_DRAFT)
    assert plan.requirements == {"triton": "3.9.0", "numpy": ""}
    assert plan.origins["triton"] == "block 2: pip install triton==3.9.0"
    assert list(plan.files) == ["reduced.ll"] and plan.files["reduced.ll"][0].startswith("define void @f()")
    assert any("block 1 saved as reduced.ll: the draft does not name it" in n for n in plan.notes)
    assert plan.quotes == {3: 2} and not plan.reasons


def test_saved_as_names_the_block_above_and_attached_files_come_along():
    text = draft("print(1)", command="python snippet.py   # the reproducer above, saved as snippet.py\n"
                                     "python repro.py", extra="`repro.py` (attached) compiles the whole file.\n")
    plan = sandbox_draft.plan(text, attachments={"repro.py": "print(2)\n", "notes.txt": "x", "snippet.py": "old\n"})
    assert plan.files["snippet.py"][0] == "print(1)\n" and "says to save as snippet.py" in plan.files["snippet.py"][1]
    assert plan.files["repro.py"][0] == "print(2)\n"
    assert "notes.txt" not in plan.files  # beside the draft, never mentioned: the reader does not have it
    assert any("the attachment snippet.py differs" in n for n in plan.notes)


def test_a_file_the_draft_neither_shows_nor_attaches_is_a_reason():
    plan = sandbox_draft.plan(draft("print(1)", command="python snippet.py  # saved as snippet.py\npython other.py"))
    assert plan.reasons == ["block 2 runs other.py, which the draft neither shows nor attaches"]


def test_the_release_comes_from_the_environment_and_torch_only_where_the_prose_names_it():
    plan = sandbox_draft.plan(draft("import triton", environment="- triton-3.9.0 (wheel)\n- Python 3.11, linux"))
    assert plan.requirements == {"triton": "3.9.0"}
    told = sandbox_draft.plan(draft("import torch", environment="- triton-3.9.0\n- Python 3.11; PyTorch for the "
                                                                "expected codes"), torch_pin="2.13.0")
    assert told.requirements == {"triton": "3.9.0", "torch": "2.13.0"}  # never an unpinned torch
    assert any("torch without a version: 2.13.0" in n for n in told.notes) and not told.reasons
    pinned = sandbox_draft.plan(draft("import torch", environment="- triton-3.9.0\n- torch 2.11.0"))
    assert pinned.requirements["torch"] == "2.11.0"


def test_an_import_the_draft_does_not_tell_the_reader_to_install_is_a_finding():
    plan = sandbox_draft.plan(draft("import torch\nimport triton"))
    assert plan.reasons == ["block 1 imports torch, which the draft does not tell the reader to install"]
    guarded = sandbox_draft.plan(draft("try:\n    import torch\nexcept ImportError:\n    torch = None"))
    assert not guarded.reasons and any("(guarded: it runs without it)" in n for n in guarded.notes)
    inside = sandbox_draft.plan(draft("def gpu():\n    import numpy\n"))
    assert not inside.reasons and any("inside a function" in n for n in inside.notes)


def test_importing_gfxhound_is_always_a_reason_guarded_or_not():
    plan = sandbox_draft.plan(draft("try:\n    from gfxhound.oracle import emulate\nexcept ImportError:\n    pass"))
    assert plan.reasons == ["block 1 imports gfxhound: needs gfxhound's executor, which a maintainer does not have"]


def test_no_release_named_is_a_reason():
    plan = sandbox_draft.plan(draft("import triton", environment="- Python 3.11"))
    assert plan.release == "" and any("names no Triton release" in r for r in plan.reasons)


def test_the_last_good_release_comes_from_the_draft_then_from_the_bisection():
    said = sandbox_draft.plan(draft("1", bisection="- first release with the bug: **3.8.0** (last good: 3.7.1)."),
                              bisections=[{"kind": "triton-releases", "last_old": "3.6.0"}])
    assert (said.last_good, said.last_good_origin) == ("3.7.1", "the draft's Bisection section")
    recorded = sandbox_draft.plan(draft("1"), bisections=[{"kind": "triton-releases", "last_old": "3.8.0"}])
    assert (recorded.last_good, recorded.last_good_origin) == ("3.8.0", "the finding's bisect.json")
    throughout = sandbox_draft.plan(draft("1"), bisections=[{"kind": "triton-releases", "last_old": None,
                                                              "verdict": "present-throughout"}])
    assert throughout.last_good == "" and "present-throughout" in throughout.last_good_origin


def test_hidden_comments_are_claims_the_run_can_contradict():
    text = draft("1", extra="<!-- checked before this draft was written: `python snippet.py` with triton 3.9.0 "
                            "exited 0; stored 0x0 -->\n")
    assert sandbox_draft.plan(text).claims == [("python snippet.py", "3.9.0", 0)]


def test_outputs_are_compared_after_the_generators_own_path_rewriting(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    printed = sandbox.normalise(f"{work}/snippet.py:9:1: error: x\n{home}/v/lib/python3.11/site-packages/triton/"
                                "a.py\n", work, home)
    assert printed.splitlines() == ["<tmp>/snippet.py:9:1: error: x", "<site-packages>/triton/a.py"]
    missing, nearest = sandbox._missing("<tmp>/snippet.py:9:1: error: x\n...\n\npython3: boom failed.",
                                        printed + "python: boom failed.\n")
    assert missing == ["python3: boom failed."] and nearest == {"python3: boom failed.": "python: boom failed."}
    asm = sandbox._missing("kernel:\n\ts_endpgm", "kernel:                ; @kernel\n\ts_endpgm ; end\n", "asm")
    assert asm == ([], {})  # an asm listing's comments are not what the draft quotes
    assert sandbox._missing("kernel:", "kernel:  ; @kernel\n")[0] == ["kernel:"]  # elsewhere, exactly


def test_every_checked_in_draft_names_a_release_and_every_file_its_commands_run():
    assert DRAFTS, "no draft checked in under corpus/*/draft/"
    for path in DRAFTS:
        markdown = path.read_text()
        attachments = {p.name: p.read_text() for p in path.parent.iterdir() if p.name != "draft.md"}
        plan = sandbox_draft.plan(markdown, attachments)
        assert plan.release, path
        assert plan.commands, path
        assert not [r for r in plan.reasons if "neither shows nor attaches" in r], (path, plan.reasons)
        for block in plan.blocks:
            assert block.text and not block.text[0].isspace(), f"{path}: block {block.index} starts indented"


def test_the_text_output_is_a_line_per_block_then_the_verdict_and_its_reasons():
    result = sandbox.Result(
        draft="d.md", release="3.9.0", requirements={"triton": "3.9.0"}, origins={}, files={"snippet.py": "block 1"},
        blocks=[{"index": 1, "lang": "python", "role": "source", "section": "Reproducer", "file": "snippet.py"},
                {"index": 2, "lang": "sh", "role": "command", "section": "Command", "rc": 1, "seconds": 0.84,
                 "stopped_at": 1, "output_tail": "", "last_good_rc": 0},
                {"index": 3, "lang": "", "role": "output", "section": "Expected vs actual", "quotes": 2,
                 "missing": ["x"], "nearest": {}},
                {"index": 4, "lang": "cpp", "role": "other", "section": "Cause"}],
        last_good={"release": "3.7.1", "origin": "the draft", "ran": True}, isolation="namespaces",
        network_blocked=True, installed=[], reasons=["block 3: quoted line not printed by block 2: 'x'"],
        notes=["a note"])
    assert sandbox.lines(result) == [
        "sandbox: triton==3.9.0 (namespaces)",
        "block 1 python (Reproducer): saved as snippet.py",
        "block 2 sh (Command): ran at triton 3.9.0: exit 1 (0.8 s); at 3.7.1 (last good): exit 0",
        "block 3 text (Expected vs actual): output of block 2: 1 quoted line(s) not printed",
        "block 4 cpp (Cause): other, not checked",
        "  note: a note",
        "verdict: NOT READY",
        "  - block 3: quoted line not printed by block 2: 'x'"]
    assert not result.ready and result.to_json()["verdict"] == "not ready"


# ---- real runs in the sandbox -------------------------------------------------------------------------------------

def _needed_sets() -> list:
    sets = [{"triton": RELEASE}, {"triton": OLD}, {"triton": "3.4.0"}]
    for path in DRAFTS:
        bisect = path.parents[1] / "bisect.json"
        records = [json.loads(bisect.read_text())] if bisect.exists() else []
        sets += sandbox.requirement_sets(path.read_text(), records)
    unique = []
    for s in sets:
        if s not in unique:
            unique.append(s)
    return unique


@pytest.fixture(scope="session")
def wheelhouse():
    """The wheelhouse under $GFXHOUND_CACHE, filled once (a marker per requirement set: later sessions, and CI
    with the cache restored, do not ask the index again)."""
    house = CACHE / "wheelhouse"
    try:
        for requirements in _needed_sets():
            sandbox_env.fetch(house, requirements)
    except sandbox_env.SandboxError as exc:
        pytest.skip(f"cannot fill the wheelhouse (no package index?): {exc}")
    return house


@pytest.fixture(scope="session")
def settings(wheelhouse):
    return sandbox.Settings(wheelhouse=wheelhouse, cache=CACHE / "sandbox", timeout=300, hide=[ROOT],
                            lld=LLD if Path(LLD).exists() else "")


COMPILES = """
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def kernel(x):
    tl.store(x, 1.0)


triton.compile(ASTSource(kernel, signature={"x": "*fp32"}), target=GPUTarget("hip", "gfx942", 64))
print("compiled with triton", triton.__version__)
"""


def _row(result, index):
    return next(row for row in result.blocks if row["index"] == index)


def test_a_kernel_that_compiles_exits_0_and_is_not_evidence(settings):
    result = sandbox.check(draft(COMPILES, quoted=f"compiled with triton {RELEASE}"), settings)
    assert _row(result, 2)["rc"] == 0, _row(result, 2)["output_tail"]
    assert _row(result, 3)["missing"] == []
    assert result.reasons == [f"no block exits 1 at triton {RELEASE}: nothing shows the bug by its exit code "
                              "(block 2 exits 0)"]
    assert not result.ready and any(line.startswith(f"triton=={RELEASE}") for line in result.installed)
    assert not any(line.startswith(("torch", "gfxhound")) for line in result.installed)


def test_a_snippet_that_raises_exits_1_with_the_line_it_quotes_and_is_ready(settings):
    raises = COMPILES + "raise RuntimeError(f'the bug, with triton {triton.__version__}')\n"
    result = sandbox.check(draft(raises, quoted=f"RuntimeError: the bug, with triton {RELEASE}"), settings)
    assert _row(result, 2)["rc"] == 1 and _row(result, 3)["missing"] == []
    assert result.ready, result.reasons
    assert any("not run at a last good release" in note for note in result.notes)


def test_a_quoted_line_the_block_does_not_print_is_a_reason(settings):
    raises = COMPILES + "raise RuntimeError('the bug')\n"
    result = sandbox.check(draft(raises, quoted="Traceback (most recent call last):\nRuntimeError: the bugs\n"
                                                "a line never printed"), settings)
    assert _row(result, 3)["missing"] == ["RuntimeError: the bugs", "a line never printed"]
    assert result.reasons == ["block 3: quoted line not printed by block 2: 'RuntimeError: the bugs' (printed "
                              "instead: 'RuntimeError: the bug')",
                              "block 3: quoted line not printed by block 2: 'a line never printed'"]


ISOLATION_COMMANDS = [
    ("python -c 'import gfxhound'", "No module named 'gfxhound'"),
    ("python -c 'open(\"pyproject.toml\")'", "No such file or directory: 'pyproject.toml'"),
    ("python -c 'open(\"corpus/README.md\")'", "No such file or directory: 'corpus/README.md'"),
    (f"python -c 'open(\"{ROOT}/pyproject.toml\")'", "No such file or directory"),
    ("python -c 'import socket; socket.create_connection((\"pypi.org\", 443), timeout=10)'",
     ("Temporary failure in name resolution", "Network is unreachable", "Name or service not known")),
    ("python -c 'import sys, pathlib; pathlib.Path(sys.prefix, \"written-by-a-block\").write_text(\"x\")'",
     "Read-only file system"),
]


@pytest.fixture(scope="module")
def isolated(settings):
    """One draft whose command blocks each try what a maintainer's machine would not allow, then print the
    environment a block sees."""
    commands = "".join(f"\n{FENCE}sh\n{command}\n{FENCE}\n" for command, _ in ISOLATION_COMMANDS)
    markdown = draft("import os, sys\nprint(sorted(os.environ))\nprint(os.getcwd(), sorted(os.listdir()))",
                     extra=f"\n## More commands\n{commands}")
    return sandbox.check(markdown, settings)


@pytest.mark.parametrize("number", range(len(ISOLATION_COMMANDS)),
                         ids=["import-gfxhound", "relative-project-file", "relative-corpus-file",
                              "absolute-project-file", "network", "write-the-venv"])
def test_a_block_cannot_reach_what_the_maintainer_does_not_have(isolated, number):
    command, printed = ISOLATION_COMMANDS[number]
    if number >= 3 and not sandbox_env.isolation().network:
        pytest.skip(f"no namespaces here: {sandbox_env.isolation().how}")
    row = _row(isolated, 4 + number)  # blocks 1-3: the draft's own; then one per command
    printed = (printed,) if isinstance(printed, str) else printed
    assert row["rc"] == 1 and any(p in row["output_tail"] for p in printed), (command, row)
    venv = sandbox_env.ensure_venv(CACHE / "sandbox", {"triton": RELEASE}, CACHE / "wheelhouse")
    assert not (venv / "written-by-a-block").exists()


def test_a_block_sees_a_minimal_environment_in_a_directory_of_its_own(isolated):
    row = _row(isolated, 2)
    assert row["rc"] == 0, row
    names, where = row["output_tail"].splitlines()[-2:]
    assert "PYTHONPATH" not in names and "VIRTUAL_ENV" not in names and "'HOME'" in names
    assert where == "<tmp> ['snippet.py']"  # only what the draft says to save
    assert any("imports gfxhound" in r for r in isolated.reasons)


@pytest.mark.slow
def test_the_bug_must_be_absent_at_the_last_good_release(settings):
    """3.4.0 as the last good release: it compiles only with TRITON_HIP_LLD_PATH (its linker is external), which
    the check sets and says so; 3.5.1 and later link in-process and get nothing."""
    version_bug = COMPILES + f"import sys\nsys.exit(triton.__version__ == '{RELEASE}')\n"
    good = sandbox.check(draft(version_bug, quoted=f"compiled with triton {RELEASE}",
                               bisection="- first release with the bug: **3.5.1** (last good: 3.4.0)."), settings)
    assert good.ready, good.reasons
    assert good.last_good == {"release": "3.4.0", "origin": "the draft's Bisection section", "ran": True}
    assert (_row(good, 2)["rc"], _row(good, 2)["last_good_rc"]) == (1, 0)
    assert any(f"TRITON_HIP_LLD_PATH={LLD} set by the check for triton 3.4.0" in n for n in good.notes)
    vacuous = sandbox.check(draft("import sys\nprint('always')\nsys.exit(1)", quoted="always",
                                  bisection=f"(last good: {OLD})"), settings)
    assert vacuous.reasons == [f"block 2 exits 1 at the last good release {OLD} too (0 expected: the check would "
                               "pass without the bug): always"]
    assert not any("TRITON_HIP_LLD_PATH" in n for n in vacuous.notes)


# ---- the command line, and every checked-in draft -----------------------------------------------------------------

def _gfxhound(*argv, env=None, timeout=1800):
    return subprocess.run([GFXHOUND, *map(str, argv)], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})), cwd=ROOT)


def test_check_without_a_draft_says_to_write_one_first():
    undrafted = next(p.name for p in sorted((ROOT / "corpus").iterdir())
                     if len(p.name) == 16 and not (p / "draft" / "draft.md").exists())
    run = _gfxhound("report", undrafted[:8], "--check", "--corpus", ROOT / "corpus")
    assert run.returncode == 2
    assert run.stderr.strip().endswith(f"run `gfxhound report {undrafted[:8]}` first"), run.stderr


def test_a_wheel_missing_from_the_wheelhouse_is_one_line_naming_the_fetch(tmp_path):
    (tmp_path / "empty").mkdir()
    run = _gfxhound("report", "18461bac", "--check", "--corpus", ROOT / "corpus", "--wheelhouse", tmp_path / "empty",
                    env={"GFXHOUND_CACHE": str(tmp_path / "cache")})
    assert run.returncode == 2, run.stderr
    assert f"no wheel for triton=={RELEASE}" in run.stderr and "--fetch-wheels" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1  # asked before a venv is made: no build started
    assert not (tmp_path / "cache" / "sandbox").exists() or not list((tmp_path / "cache" / "sandbox").glob("venv-*"))


# today's verdict on every checked-in draft: "ready", or the kinds of reason it is not (see _kind). Every one is
# ready: a draft that is not says what it waits for, and is listed here with its reasons until it is fixed.
EXPECTED = {key: "ready" for key in ("01f5c6fa", "0df07642", "18461bac", "9f51f568", "b0f7a29c", "caad2c44",
                                     "d090f37a", "f18e7742", "f311e39e")}


def _kind(reason: str) -> str:
    for needle, kind in (("imports gfxhound", "imports gfxhound"), ("no block exits 1", "no block exits 1"),
                         ("hidden comment", "hidden comment contradicted"),
                         ("at the last good release", "fails at the last good release"), ("exits 125", "exits 125"),
                         ("quoted line not printed", "quoted line not printed"),
                         ("which the draft does not tell the reader to install", "uninstalled import")):
        if needle in reason:
            return kind
    return reason


@pytest.mark.slow
@pytest.mark.parametrize("path", DRAFTS, ids=[p.parents[1].name[:8] for p in DRAFTS])
def test_a_checked_in_draft_gets_the_verdict_the_table_records(path, wheelhouse):
    jsonschema = pytest.importorskip("jsonschema")
    key = path.parents[1].name[:8]
    assert key in EXPECTED, f"a new draft {key}: add its verdict to EXPECTED"
    run = _gfxhound("report", key, "--check", "--json", "--corpus", ROOT / "corpus", "--wheelhouse", wheelhouse,
                    "--timeout", 300)
    assert run.returncode in (0, 1), run.stderr[-2000:]
    document = json.loads(run.stdout)
    schema = json.loads((ROOT / "docs" / "schemas" / "report-check.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]
    assert not errors, errors[:5]
    assert document["format"] == sandbox.FORMAT and run.returncode == (0 if document["ready"] else 1)
    kinds = "ready" if document["ready"] else {_kind(r) for r in document["reasons"]}
    assert kinds == EXPECTED[key], document["reasons"]
    if document["ready"]:  # not vacuous: a block exits 1, and 0 at the last good release where one is named
        commands = [b for b in document["blocks"] if b["role"] == "command"]
        assert any(b["rc"] == 1 for b in commands)
        if document["last_good"]["release"]:
            assert document["last_good"]["ran"] and all(b["last_good_rc"] == 0 for b in commands if b["rc"] == 1)
