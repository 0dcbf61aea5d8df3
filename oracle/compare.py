"""Compare what a kernel wrote with the reference run: element by element, within each element's own bound."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gfxhound.fuzz import dtypes as D

from .evaluate import Expected
from .execute import fill_value

SHOW = 5  # mismatching elements quoted in the message


@dataclass
class Comparison:
    mismatches: int = 0
    compared: int = 0
    undetermined: int = 0
    lines: list = field(default_factory=list)
    wrong_outputs: list = field(default_factory=list)

    @property
    def ok(self):
        return self.mismatches == 0

    def message(self):
        return "\n".join(self.lines)

    def checks(self):
        return {"compared": self.compared, "undetermined": self.undetermined, "mismatches": self.mismatches}


def _fmt(x):
    return f"{x:.9g}" if isinstance(x, float) else str(x)


def compare(expected: Expected, outputs: dict, problems: list) -> Comparison:
    result = Comparison()
    for problem in problems:
        result.mismatches += 1
        result.lines.append(problem)
    for name, buf in expected.outputs.items():
        actual = outputs[name]
        is_float = D.is_float(buf.dtype)
        got = actual.to(torch.float64) if is_float else actual.to(torch.int64)
        care = ~buf.bad
        result.undetermined += int(buf.bad.sum())
        written = buf.written
        if buf.mode == "store":
            # never written: the pre-fill must survive
            if is_float:
                stray = ~written & ~torch.isnan(got)
            else:
                stray = ~written & (got != fill_value(buf.dtype))
        else:
            stray = ~written & (got != 0)
        if is_float:
            ref, e = buf.v, buf.e
            nan_ref, nan_got = torch.isnan(ref), torch.isnan(got)
            inf_ref = torch.isinf(ref)
            close = (got - ref).abs() <= e * (1 + 1e-12)
            same = torch.where(nan_ref, nan_got, torch.where(inf_ref, got == ref, ~nan_got & close))
        else:
            same = got == buf.v
        wrong = care & written & ~same
        bad_here = wrong | stray
        count = int(bad_here.sum())
        result.compared += int((care & written).sum()) + int((~written).sum())
        if count:
            result.mismatches += count
            result.wrong_outputs.append(name)
            where = torch.nonzero(bad_here).flatten()[:SHOW].tolist()
            shown = []
            for i in where:
                if not bool(written[i]):
                    shown.append(f"[{i}] never written, holds {_fmt(got[i].item())}")
                elif is_float:
                    shown.append(f"[{i}] expected {_fmt(buf.v[i].item())} ± {_fmt(buf.e[i].item())}, "
                                 f"got {_fmt(got[i].item())}")
                else:
                    shown.append(f"[{i}] expected {buf.v[i].item()}, got {got[i].item()}")
            result.lines.append(f"{name} ({buf.dtype}, {buf.mode}): {count} of {buf.numel} elements wrong; "
                                + "; ".join(shown))
    return result


def runs_agree(expected: Expected, first: dict, second: dict) -> bool:
    """Two runs' outputs agree bit for bit on every element a correct kernel must reproduce exactly run to run:
    not the undetermined ones, and not float atomic adds from several programs (their order is free)."""
    for name, buf in expected.outputs.items():
        a, b = first[name], second[name]
        width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        differ = a.view(width) != b.view(width)
        free = buf.bad.clone()
        if buf.mode == "atomic" and D.is_float(buf.dtype):
            free |= buf.count > 1
        if bool((differ & ~free).any()):
            return False
    return True
