import json

import pytest

from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.spec import FORMAT, KernelSpec, SpecError


def _one():
    return next(spec_stream(assume_all("gfx942"), seed=5))


def test_round_trip_keeps_identity():
    spec = _one()
    again = KernelSpec.loads(spec.dumps())
    assert again.spec_hash() == spec.spec_hash()
    assert again.to_json() == spec.to_json()


def test_meta_is_not_identity():
    spec = _one()
    assert spec.replace(meta={"seed": 99}).spec_hash() == spec.spec_hash()
    assert spec.replace(grid="M" if spec.grid == "MN" else "MN").spec_hash() != spec.spec_hash()


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d.update(format=FORMAT + 1), "newer"),
    (lambda d: d.pop("format"), "format"),
    (lambda d: d.update(grid="Q"), "grid"),
    (lambda d: d["blocks"].update(M=0), "blocks"),
    (lambda d: d.update(bogus=1), "unexpected"),
])
def test_bad_specs_are_refused_with_a_reason(mutate, words):
    data = _one().to_json()
    mutate(data)
    with pytest.raises(SpecError, match=words):
        KernelSpec.loads(json.dumps(data))


def test_not_json():
    with pytest.raises(SpecError, match="not valid JSON"):
        KernelSpec.loads("{nope")


def test_a_format_1_spec_is_read_as_it_is_and_keeps_its_hash():
    """Format 2 only added values (8-bit and MX dtypes, K-view axes, roles, pairs): a format-1 spec from an older
    corpus loads unchanged, so its spec hash, the name of its corpus example, stays the same."""
    import json
    from pathlib import Path
    stored = next(Path(__file__).resolve().parents[2].glob("corpus/*/examples/*/spec.json"))
    data = json.loads(stored.read_text())
    assert data["format"] == 1
    spec = KernelSpec.from_json(data)
    assert spec.format == 1 and spec.spec_hash() == stored.parent.name
