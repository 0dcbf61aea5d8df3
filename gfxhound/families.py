"""How findings are listed to a person: default configurations first, then forced ones (fuzz/forced.py), then a
pass's clean refusals (`unsupported`, records.APART_VERDICTS); within each, signatures that differ only in an
element-type or format name together, as one family.

Why here and not in each listing: the campaign summary, `corpus list`, the nightly and the drafts must agree on
what "one bug" looks like, so they all order and group through `groups`.
"""
from __future__ import annotations

from gfxhound.records import APART_VERDICTS
from gfxhound.signature import family_key


def _get(row, name, default=""):
    return row.get(name, default) if isinstance(row, dict) else getattr(row, name, default)


def family_of(row) -> str:
    return family_key(_get(row, "verdict"), _get(row, "stage"), _get(row, "normalised"))


def is_forced(row) -> bool:
    return (_get(row, "configuration") or "default") != "default"


def is_apart(row) -> bool:
    """A pass's clean refusal: reportable, but listed apart from crashes and wrong results."""
    return _get(row, "verdict") in APART_VERDICTS


def groups(rows) -> "list[dict]":
    """[{"family", "forced", "apart", "members"}]: default-configuration groups first, then forced ones, then
    clean refusals (`unsupported`); larger families first, then by the first member's order in `rows`."""
    found = {}
    for i, row in enumerate(rows):
        key = (is_apart(row), is_forced(row), family_of(row))
        found.setdefault(key, {"family": key[2], "forced": key[1], "apart": key[0], "members": [],
                               "first": i})["members"].append(row)
    ordered = sorted(found.values(), key=lambda g: (g["apart"], g["forced"], -len(g["members"]), g["first"]))
    for g in ordered:
        del g["first"]
    return ordered


def headline(rows) -> str:
    """'12 signatures in 9 families; 2 only in forced configurations (listed last); 3 unsupported (listed
    apart)'."""
    gs = groups(rows)
    forced = sum(len(g["members"]) for g in gs if g["forced"] and not g["apart"])
    apart = sum(len(g["members"]) for g in gs if g["apart"])
    text = f"{len(rows)} signature{'s' if len(rows) != 1 else ''} in {len(gs)} famil{'ies' if len(gs) != 1 else 'y'}"
    text += f"; {forced} only in forced configurations (listed last)" if forced else ""
    return text + (f"; {apart} unsupported: a pass refuses what the front end accepted (listed apart)"
                   if apart else "")
