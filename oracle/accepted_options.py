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


def launch_options(rendered) -> dict:
    """What a GPU launch of a rendered kernel passes: num_warps, num_stages and the options the local Triton
    accepts (single-rank kernels, oracle/run_task.py, and users' kernels, oracle/user_task.py)."""
    options = {"num_warps": rendered.options["num_warps"], "num_stages": rendered.options["num_stages"]}
    accepted = accepted_options()
    options.update({k: v for k, v in rendered.options.items() if k in accepted})
    return options
