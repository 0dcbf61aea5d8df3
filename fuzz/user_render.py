"""A user-kernel spec (fuzz/user_kernel.py) -> the `Rendered` record every worker and repro writer reads.

Why it is this short: the source is the user's file as it was when the campaign started; what rendering adds is
the argument list one launch passes (sizes of the buffers, so that the compile specialises pointers and integers
as the runtime would: divisibility by 16, `tt.pointer_range`, an integer of 1 becoming a constant) and a name for
the jit function under any autotune or heuristics wrapper.
"""
from __future__ import annotations

import re
from collections import Counter

from . import dtypes as D
from .features import Features
from .rendered import Rendered, launch_options

KERNEL_NAME = "gfxhound_kernel"
# the file's own `if __name__ == "__main__":` block (a benchmark, a self-test) must not run where a repro script
# holds the file in its own namespace
MAIN_BLOCK = re.compile(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", re.M)
UNWRAP = f'''

# gfxhound: the jit function itself, under any triton.autotune / triton.heuristics wrapper
{KERNEL_NAME} = {{fn}}
while type({KERNEL_NAME}).__name__ in ("Autotuner", "Heuristics"):
    {KERNEL_NAME} = {KERNEL_NAME}.fn
'''


_INT_ANNOTATIONS = {"i64": "i64", "int64": "i64", "tl.int64": "i64", "i32": "i32", "int32": "i32", "u32": "u32",
                    "u64": "u64"}


def allocation_bytes(arg) -> int:
    """Bytes from a tensor's first element to one past its last (strides included)."""
    if any(d == 0 for d in arg["shape"]):
        return 0
    last = sum((d - 1) * s for d, s in zip(arg["shape"], arg["strides"]))
    return (last + 1) * D.nbytes(arg["dtype"])


def launch_args(user) -> list:
    """The argument list in compat.specialise's form."""
    args = []
    for arg in user["args"]:
        name, kind = arg["name"], arg["kind"]
        if kind == "tensor":
            args.append({"name": name, "kind": "ptr", "type": "*" + D.signature(arg["dtype"]),
                         "value": allocation_bytes(arg)})
        elif kind == "constexpr":
            args.append({"name": name, "kind": "constexpr", "type": "constexpr", "value": arg["value"]})
        elif kind == "float":
            args.append({"name": name, "kind": "float", "type": "fp32", "value": arg["value"]})
        elif kind == "bool":  # the runtime's 'u1', with no specialisation
            args.append({"name": name, "kind": "bool", "type": "u1", "value": arg["value"]})
        else:
            wide = not -2 ** 31 <= arg["value"] < 2 ** 31
            declared = _INT_ANNOTATIONS.get(str(arg.get("annotation") or ""))
            args.append({"name": name, "kind": "int", "type": declared or ("i64" if wide else "i32"),
                         "value": arg["value"]})
            if declared:  # an annotated integer is never a constant of 1 (the runtime does the same)
                args[-1]["nospec"] = arg["value"] == 1 or arg.get("nospec", False)
        if arg.get("nospec"):
            args[-1]["nospec"] = True
    return args


def features(spec) -> Features:
    """Coverage of a user kernel's launch: one op (the kernel), its tensors' dtypes, and the launch's shape."""
    user = spec.user
    details = {f"user:num_warps={spec.launch.num_warps}", f"user:num_stages={spec.launch.num_stages}"}
    details |= {f"knob:{k}" for k in spec.launch.options} | {f"env:{k}" for k in spec.launch.env}
    for arg in user["args"]:
        if arg["kind"] == "constexpr":
            details.add(f"user:{arg['name']}={arg['value']}")
        elif arg["kind"] == "tensor" and any(d % 16 for d in arg["shape"][-1:]):
            details.add("user:ragged")
    dtypes = {a["dtype"] for a in user["args"] if a["kind"] == "tensor"}
    # the kernel's file and name: a wrong result's signature is the target and this (one kernel, one finding)
    name = f"user:{user['file'].replace(chr(92), '/').rsplit('/', 1)[-1]}::{user['fn']}"
    return Features(Counter({name: 1}), dtypes, set(), details)


def render_user(spec, caps=None, kernel_name=KERNEL_NAME) -> Rendered:
    user = spec.user
    source = MAIN_BLOCK.sub("if False:  # gfxhound: the file's __main__ block", user["source"]).rstrip("\n")
    source += UNWRAP.format(fn=user["fn"])
    return Rendered(source, KERNEL_NAME, launch_args(user), launch_options(spec), dict(spec.launch.env),
                    tuple(user["grid"]), features(spec), len(user["source"].splitlines()))
