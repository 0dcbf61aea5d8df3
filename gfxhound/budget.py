"""A budget as people write it on a command line: a duration (`10m`, `90s`, `2h`, `1.5h`) or a number of kernels
(`5000`). The one parser: the campaign and the nightly driver (which bounds a shard's campaign by it) both read
budgets here, so `--budget` means the same to both."""
from __future__ import annotations

UNITS = {"s": 1, "m": 60, "h": 3600}


class BudgetError(ValueError):
    """A budget that is not one: the CLI prints it as one line (a user's mistake)."""


def parse_budget(text: str):
    """'10m', '90s', '2h' -> (seconds, None); '5000' -> (None, 5000). A budget that is not positive is refused
    where it enters: a zero or negative one would start the workers and judge nothing."""
    raw = text
    text = text.strip().lower()
    try:
        if text and text[-1] in UNITS:
            seconds = float(text[:-1]) * UNITS[text[-1]]
            if not 0 < seconds < float("inf"):
                raise BudgetError(f"--budget {raw!r}: a duration must be positive and finite (10m, 90s, 2h)")
            return seconds, None
        kernels = int(text)
    except ValueError as exc:
        if isinstance(exc, BudgetError):
            raise
        raise BudgetError(f"--budget {raw!r} is neither a duration (10m, 90s, 2h) nor a kernel count (5000)") \
            from None
    if kernels < 1:
        raise BudgetError(f"--budget {raw!r}: a kernel count must be at least 1")
    return None, kernels
