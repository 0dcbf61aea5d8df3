"""gfxhound: fuzz Triton's AMD backend and LLVM's AMDGPU backend with random valid kernels, judge what they
compile to (and, on the CPU or a GPU, what they compute), keep each distinct bug once in a corpus, then reduce,
bisect and draft it for upstream.

Start with `gfxhound fuzz --target gfx942 --budget 2m`, then `gfxhound corpus list`."""
from __future__ import annotations

import os
import sys

from .common import Parser, UserError

EPILOG = """exit codes: 0 done (or a repro: bug absent); 1 a repro's bug is present, or --fail-on-new found a new
finding, or a check failed; 2 a usage error (one line says which); 3 an internal error of gfxhound (--debug shows
its traceback); 125 a repro cannot test here; 130 after Ctrl-C and 143 after SIGTERM (the summary and the corpus
are still written)."""

# the exit of an error in gfxhound itself: never 1 (a bug found) or 2 (the user's mistake)
EXIT_INTERNAL = 3


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        own = version("gfxhound")
    except PackageNotFoundError:
        own = "unknown"
    try:
        triton = f"triton {version('triton')}"
    except PackageNotFoundError:
        triton = "no triton installed"
    return f"gfxhound {own} ({triton}; python {sys.version.split()[0]})"


def build_parser():
    from .bisect import add_bisect
    from .casts import add_casts
    from .corpus import add_corpus
    from .emulate import add_emulate
    from .emulate_campaign import add_emulate_campaign
    from .fuzz import add_fuzz
    from .plants import add_plants
    from .reduce import add_reduce
    from .report import add_nightly, add_perf, add_report, add_verify
    from .triage import add_triage
    parser = Parser(prog="gfxhound", description=__doc__, epilog=EPILOG)  # its subcommands' parsers are Parsers too
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_fuzz(sub)
    add_casts(sub)
    add_corpus(sub)
    add_reduce(sub)
    add_bisect(sub)
    add_report(sub)
    add_triage(sub)
    add_verify(sub)
    add_perf(sub)
    add_nightly(sub)
    add_emulate(sub)
    add_emulate_campaign(sub)
    add_plants(sub)
    return parser


def main(argv=None):
    """Every error a user can cause ends here as one line and exit 2; anything else is gfxhound's own bug: one line
    and exit 3, the traceback with --debug (which may stand anywhere on the line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[:argv.index("--")] if "--" in argv else "--debug" in argv
    if debug:
        argv.remove("--debug")
    try:
        from gfxhound.budget import BudgetError
        from gfxhound.campaign import CampaignError
        from gfxhound.corpus_store import CorpusError
        from gfxhound.spec import SpecError
        parser = build_parser()
    except ImportError as exc:  # an installation without its dependencies (a GPU machine's own Python, say)
        if debug:
            raise
        print(f"gfxhound: a dependency is missing ({exc}); install gfxhound with its dependencies "
              "(pip install -e . in the clone)", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    from gfxhound.stacks import dump_stacks_on_sigusr1
    dump_stacks_on_sigusr1()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("gfxhound: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`gfxhound corpus list | head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place an error becomes one line instead of a traceback
        if debug:
            raise
        code, line = _one_line(exc, (UserError, BudgetError, CampaignError, CorpusError, SpecError))
        print(f"gfxhound: {line}", file=sys.stderr)
        return code


def _one_line(exc, user_errors) -> tuple:
    """(exit code, line): a mistake the user can fix is 2 and its message; a path the system refuses (too long,
    not a directory, no permission) is the user's too; anything else is gfxhound's own bug, 3, with where it
    happened."""
    text = str(exc).strip()
    if isinstance(exc, user_errors):
        return 2, text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None:
        return 2, f"cannot use {exc.filename}: {exc.strerror or exc}"
    where = exc.__traceback__
    while where.tb_next:
        where = where.tb_next
    return EXIT_INTERNAL, (f"internal error: {type(exc).__name__}: {text[:300]} (at "
                           f"{os.path.basename(where.tb_frame.f_code.co_filename)}:{where.tb_lineno}; rerun with "
                           "--debug for the traceback, and please report it)")


if __name__ == "__main__":
    sys.exit(main())
