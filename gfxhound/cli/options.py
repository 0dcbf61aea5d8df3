"""Options several commands share, defined once so their names, defaults and help read the same everywhere."""
from __future__ import annotations

from .common import positive


def corpus_option(parser, what: str = "the corpus to read (a directory a campaign wrote)") -> None:
    parser.add_argument("--corpus", default="corpus", metavar="DIR", help=what)


def json_option(parser, name: str, what: str = "the result") -> None:
    """`name`: the output's schema, docs/schemas/<name>.json."""
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} as one JSON object on stdout, nothing else (schema: "
                             f"docs/schemas/{name}.json)")


def timeout_option(parser, default: float, what: str) -> None:
    parser.add_argument("--timeout", type=positive(float, name="seconds"), default=default, metavar="SECONDS",
                        help=what)


def triage_option(parser) -> None:
    parser.add_argument("--triage", metavar="FILE", help="the known upstream issues (default: <corpus>/triage.json)")
