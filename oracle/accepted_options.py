"""The compile options the local Triton's backend accepts: a launch passes only those (a release drops the rest
silently), for single-rank kernels (oracle/run_task.py) and collectives (oracle/collective_task.py,
oracle/distributed.py) alike."""
from __future__ import annotations

_ACCEPTED = None


def accepted_options():
    global _ACCEPTED
    if _ACCEPTED is None:
        from triton.compiler.compiler import make_backend
        from triton.runtime import driver
        backend = make_backend(driver.active.get_current_target())
        _ACCEPTED = set(getattr(type(backend.parse_options({})), "__dataclass_fields__", {}))
    return _ACCEPTED
