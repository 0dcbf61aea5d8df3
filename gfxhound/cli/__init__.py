"""The gfxhound command line: argv and the environment are read here and nowhere else; one module
per command family, each adding its own arguments."""
from __future__ import annotations

import os
import sys

from .common import Parser, UserError


def build_parser():
    from .bisect import add_bisect
    from .casts import add_casts
    from .corpus import add_corpus
    from .fuzz import add_fuzz
    from .reduce import add_reduce
    from .report import add_nightly, add_perf, add_report, add_verify
    from .triage import add_triage
    parser = Parser(prog="gfxhound", description=__doc__)  # its subcommands' parsers are Parsers too
    sub = parser.add_subparsers(dest="command", required=True)
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
    return parser


def main(argv=None):
    from gfxhound.campaign import CampaignError
    from gfxhound.corpus_store import CorpusError
    from gfxhound.spec import SpecError
    args = build_parser().parse_args(argv)
    from gfxhound.stacks import dump_stacks_on_sigusr1
    dump_stacks_on_sigusr1()
    try:
        return args.func(args)
    except (UserError, CampaignError, CorpusError, SpecError) as exc:
        print(f"gfxhound: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gfxhound: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`gfxhound corpus list | head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
