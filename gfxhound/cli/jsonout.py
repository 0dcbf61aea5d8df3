"""`--json`: one JSON document on stdout and nothing else, an object whose first key, "format", names its schema
(docs/schemas/<name>.json) and version: `gfxhound.corpus-list/1`. A script reads stdout whole with one
json.loads; people's lines (progress, notes) go to stderr. A list is wrapped in an object so that every output has
a format key and can grow fields without breaking its readers."""
from __future__ import annotations

import json
from pathlib import Path

# the output's own version; bump one when its meaning changes (a renamed or retyped key), not when a key is added
VERSIONS = {"corpus-list": 2, "corpus-show": 2, "casts": 1, "report": 1, "verify": 1, "perf-measure": 1,
            "perf-compare": 1, "nightly": 1, "reduce": 1, "bisect": 1}


def format_of(name: str) -> str:
    return f"gfxhound.{name}/{VERSIONS[name]}"


def _plain(value):
    """What json cannot write by itself: sets (sorted, as the records keep them) and paths."""
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def document(name: str, payload: dict) -> dict:
    """The object --json prints. A payload that is a stored record (night.json, a reduction's record) keeps its
    own version as "record_format": "format" is the output's."""
    body = dict(payload)
    if "format" in body:
        body["record_format"] = body.pop("format")
    return {"format": format_of(name), **body}


def emit(name: str, payload: dict) -> None:
    print(json.dumps(document(name, payload), indent=1, default=_plain))
