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


KNOWN_NONE = "none"


def known_option(parser) -> None:
    """--known: reference corpora whose records count for a finding's status (report/triage.py `Reference`)."""
    default = default_known()
    parser.add_argument("--known", action="append", default=None, metavar="DIR",
                        help="a reference corpus whose triage.json, aliases and drafts count for a finding's status, "
                             "so a bug it tracks upstream or has drafted is not shown as new (repeatable; "
                             f"'--known {KNOWN_NONE}': none; default: the corpus/ of the gfxhound clone this runs "
                             "from, unless it is --corpus itself"
                             + (f", here {default}" if default else ", none here (not run from a clone)") + ")")


def default_known():
    """The checked-in corpus of the clone gfxhound runs from (gfxhound/cli/ -> the clone's root), or None when
    gfxhound is installed from a wheel (no clone, no corpus beside it)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    corpus = root / "corpus"
    return corpus if (root / "pyproject.toml").is_file() and corpus.is_dir() else None


def known_corpora(given, corpus) -> list:
    """The reference corpora `--known` names (None: not given, the default), as absolute paths, leaving out
    `corpus` itself (its records count first anyway) and repeats. One line when a named one is not a directory."""
    from pathlib import Path

    from .common import UserError
    if given and KNOWN_NONE in given:
        if len(given) > 1:
            raise UserError(f"--known {KNOWN_NONE} switches reference corpora off: give it alone, or name the "
                            "directories (./none for a corpus called none)")
        return []
    if given is None:
        dirs = [default_known()] if default_known() else []
    else:
        dirs = [Path(d) for d in given]
        for d in dirs:
            if not d.is_dir():
                raise UserError(f"--known {d}: no such corpus directory (give a corpus a campaign wrote, e.g. the "
                                f"clone's corpus/, or --known {KNOWN_NONE})")
    own = Path(corpus).resolve()
    out = []
    for d in dirs:
        d = d.resolve()
        if d != own and d not in out:
            out.append(d)
    return out
