"""Coverage features: what one kernel exercises (ops, dtypes, control flow, finer details), as the campaign's
coverage table and floors (fuzz/floors.py) count them.

Why a module of its own: the program walker fills Features while it resolves a kernel, but the collective
renderer, the campaign's records and its statistics read them too; a record type shared that widely should not
live inside the walker.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import dtypes as D
from .axes import K_VIEWS
from .ops_dot_scaled import MX_FORMATS


@dataclass
class Features:
    """What a kernel exercises: the campaign's coverage table counts these."""
    ops: Counter = field(default_factory=Counter)
    dtypes: set = field(default_factory=set)
    control: set = field(default_factory=set)
    details: set = field(default_factory=set)  # finer coverage: dot dtype/precision, scan kind, atomic kind
    dropped: int = 0
    steered: int = 0  # statements dropped because the execution backend excludes their dtype

    def to_json(self):
        return {"ops": dict(self.ops), "dtypes": sorted(self.dtypes), "control": sorted(self.control),
                "details": sorted(self.details), "dropped": self.dropped, "steered": self.steered}

    @classmethod
    def from_json(cls, data):
        return cls(Counter(data["ops"]), set(data["dtypes"]), set(data["control"]), set(data["details"]),
                   data["dropped"], data.get("steered", 0))


def detail_features(op, types, attrs):
    out = {f"fp8:{D.fp8_family(t.dtype)}" for t in types if D.is_fp8(t.dtype)}
    if op.name == "cast" and D.is_fp8(attrs.get("dtype", "")):
        out.add(f"fp8:{D.fp8_family(attrs['dtype'])}")
        out.add(f"cast_to_fp8:{attrs.get('rounding', 'rtne')}")
    return out | _op_details(op, types, attrs)


def _op_details(op, types, attrs):
    if op.name.startswith("dot_scaled"):
        out = {f"dot_scaled:{MX_FORMATS[t.dtype]}" for t in types if t.dtype in MX_FORMATS and len(t.axes) == 2
               and t.axes != "MN"}
        out.add("dot_scaled_scales:" + {"dot_scaled": "both", "dot_scaled_lhs": "lhs", "dot_scaled_rhs": "rhs",
                                        "dot_scaled_none": "none"}[op.name])
        out |= {f"dot_scaled_group:{K_VIEWS[t.axes[1]]}" for t in types if t.dtype == "e8m0"}
        return out
    if op.family == "dot":
        out = {f"dot:{types[0].dtype}"}
        if attrs.get("input_precision"):
            out.add(f"dot_precision:{attrs['input_precision']}")
        return out
    if op.name == "scan":
        return {f"scan:{attrs.get('op', 'cumsum')}"}
    if op.name == "atomic":
        return {f"atomic:{attrs.get('op')}:{types[0].dtype}"}
    if op.name in ("store", "load") and attrs.get("cache"):
        return {f"{op.name}_cache:{attrs['cache']}"}
    return set()
