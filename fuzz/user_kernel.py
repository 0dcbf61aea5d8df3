"""A user's own `@triton.jit` kernel as a kernel family: `gfxhound fuzz --kernel FILE::FN --launch SPEC` draws
concrete launches of it (sizes with ragged edges, constexprs, num_warps, num_stages, AMD knobs) from the launch
spec (fuzz/launch_spec.py), one KernelSpec each.

Why a family and not a separate tool: a spec of this family carries the kernel's source and one launch, so the
compile and run workers, the verdicts, the corpus, the repro scripts and release bisection handle it like a
generated kernel; only the renderer (fuzz/user_render.py), the run task (oracle/user_task.py) and the execution
repro (oracle/repro/user.py) know what it holds. The kernel's file is kept whole in the spec: a finding replays
without the user's checkout, and a later edit of the file makes a new spec, never a changed old one.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from dataclasses import asdict, dataclass

from hypothesis import assume
from hypothesis import strategies as st

from gfxhound.spec import USER_FORMAT, KernelSpec, Launch

from . import dtypes as D
from .frame import draw_knobs
from .launch_spec import LaunchSpecError, TensorShape, evaluate, parse, read, strides_of

USER_VERSION = 1
DEFAULT_WARPS, DEFAULT_STAGES = (2, 4, 8), (1, 2, 3)
WRAPPERS = ("Autotuner", "Heuristics")  # triton.autotune / triton.heuristics around the jit function


class UserKernelError(ValueError):
    """A kernel path, launch spec or kernel that cannot be used: one line, what to do."""


@dataclass
class UserKernel:
    """What the CLI checked once and every drawn launch starts from."""
    file: str  # as the user gave it (provenance in repros and findings)
    fn: str
    source: str  # the whole file
    params: list  # [{"name", "constexpr", "nospec", "default"?}] in the kernel's order
    launch: str  # the launch spec's text

    def to_json(self) -> dict:
        return asdict(self)


def import_file(path: str, tag: str):
    """Import a kernel file as a module of its own (Triton's jit reads the function's source from the file)."""
    name = f"gfxhound_user_{tag}_{os.getpid()}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module


def unwrap(obj):
    """The jit function under triton.autotune / triton.heuristics."""
    while type(obj).__name__ in WRAPPERS:
        obj = obj.fn
    return obj


def load(target: str, launch_arg: str) -> UserKernel:
    """`FILE::FN` and the `--launch` argument, checked against the kernel's parameters."""
    if "::" not in target:
        raise UserKernelError(f"--kernel {target}: write it as path/to/file.py::kernel_name")
    path, fn = target.rsplit("::", 1)
    if not os.path.isfile(path):
        raise UserKernelError(f"--kernel {target}: no such file {path}")
    try:
        launch = read(launch_arg)
    except LaunchSpecError as exc:
        raise UserKernelError(str(exc)) from None
    with open(path) as f:
        source = f.read()
    try:
        module = import_file(path, "check")
    except Exception as exc:  # noqa: BLE001 - whatever the user's file raises on import
        raise UserKernelError(f"--kernel {target}: the file does not import on its own ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''}); it must need only installed "
                              "packages") from None
    kernel = unwrap(getattr(module, fn, None))
    if kernel is None or not hasattr(kernel, "params"):
        raise UserKernelError(f"--kernel {target}: {path} has no @triton.jit function {fn!r}")
    params = []
    for p in kernel.params:
        entry = {"name": p.name, "constexpr": bool(p.is_constexpr), "nospec": bool(p.do_not_specialize),
                 "annotation": getattr(p, "annotation_type", None) or None,  # `n: tl.int64` keeps n 64-bit
                 "nospec_align": bool(getattr(p, "do_not_specialize_on_alignment", False))}
        if p.default is not inspect.Parameter.empty:
            default = getattr(p.default, "value", p.default)  # a tl.constexpr(...) default
            if not isinstance(default, (int, float, str, bool, type(None))):
                raise UserKernelError(f"--kernel {target}: parameter {p.name}'s default {default!r} cannot be "
                                      "recorded; give it an entry in the launch spec")
            entry["default"] = default
        params.append(entry)
    user = UserKernel(path, fn, source, params, launch.text)
    _check(user, launch)
    return user


def _check(user, launch):
    names = {p["name"] for p in user.params}
    for e in launch.entries:
        if e.kind == "tensor" and e.name not in names:
            raise UserKernelError(f"launch spec: tensor {e.name!r} is not a parameter of {user.fn} "
                                  f"({', '.join(sorted(names))})")
        if e.kind == "tensor" and next(p for p in user.params if p["name"] == e.name)["constexpr"]:
            raise UserKernelError(f"launch spec: {e.name!r} is a tl.constexpr parameter of {user.fn}, not a tensor")
    missing = [p["name"] for p in user.params if "default" not in p and launch.entry(p["name"]) is None]
    if missing:
        raise UserKernelError(f"launch spec: no entry for {', '.join(missing)} (every parameter of {user.fn} "
                              "without a default needs one)")
    reference = launch.entry("reference")
    if reference is not None:
        if reference.exprs[0] not in _functions(user.source):
            raise UserKernelError(f"launch spec: reference {reference.exprs[0]!r} is not a function of {user.file}")


def _functions(source):
    import ast
    return {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}


# --- drawing launches ---------------------------------------------------------------------------------------------
def draw_values(draw, launch, pick_default=False, allows_dtype=None):
    """Each entry's value, in order; `pick_default`: the first choice and the low end of each range.
    `allows_dtype`: a choice among dtype names (`T: fp16|bf16`) draws only those the backend can run faithfully
    (the interpreter's bf16), as generated kernels are steered, while one of them is left."""
    names, tensors = {}, {}
    for e in launch.entries:
        if e.name in ("reference", "tolerance", "knobs"):
            continue
        if e.kind == "range":
            lo, hi = (evaluate(x, names, e.text) for x in e.exprs)
            if not (isinstance(lo, int) and isinstance(hi, int)) or lo > hi:
                raise LaunchSpecError(f"launch spec entry {e.text!r}: a range needs integer ends, low <= high "
                                      f"(got {lo!r}..{hi!r})")
            value = lo if pick_default else draw(st.integers(lo, hi))
        elif e.kind == "choice":
            choices = e.exprs
            if allows_dtype and all(c in D.DTYPES for c in choices):
                choices = [c for c in choices if allows_dtype(c)] or choices
            value = evaluate(choices[0] if pick_default else draw(st.sampled_from(choices)), names, e.text)
        elif e.kind == "expr":
            value = evaluate(e.exprs[0], names, e.text)
        else:
            shape = [evaluate(d, names, e.text) for d in e.dims]
            if not all(isinstance(d, int) and d >= 0 for d in shape):
                raise LaunchSpecError(f"launch spec entry {e.text!r}: dimensions must be integers >= 0 (got {shape})")
            dtype = e.dtype if e.dtype in D.DTYPES else names.get(e.dtype)
            if dtype not in D.DTYPES:
                raise LaunchSpecError(f"launch spec entry {e.text!r}: {e.dtype} is {dtype!r}, not a dtype")
            order = e.order
            if "|" in order:
                order = "row" if pick_default else draw(st.sampled_from(["row", "col"]))
            value = TensorShape(shape, strides_of(shape, order))
            values = [evaluate(x, names, e.text) for x in e.values] if e.values else None
            if values is not None and (not all(isinstance(v, (int, float)) for v in values) or values[0] > values[1]
                                       or (not D.is_float(dtype) and not all(isinstance(v, int) for v in values))):
                raise LaunchSpecError(f"launch spec entry {e.text!r}: values needs LO <= HI (integers for an "
                                      f"integer tensor), got {values}")
            tensors[e.name] = {"dtype": dtype, "shape": shape, "strides": list(value._strides), "role": e.role,
                               "values": values}
        names[e.name] = value
    return names, tensors


def grid_of(value, text="grid"):
    grid = list(value) if isinstance(value, (tuple, list)) else [value]
    if not 1 <= len(grid) <= 3 or not all(isinstance(g, int) and g >= 1 for g in grid):
        raise LaunchSpecError(f"launch spec: grid must be 1-3 positive integers (got {value!r}; {text})")
    return grid + [1] * (3 - len(grid))


def concrete(user: dict, names: dict, tensors: dict) -> dict:
    """The kernel's arguments in parameter order, as one launch passes them."""
    args = []
    for p in user["params"]:
        name = p["name"]
        if name in tensors:
            args.append({"name": name, "kind": "tensor", **tensors[name]})
            continue
        value = names[name] if name in names else p["default"]
        if p["constexpr"] or value is None:  # None (an optional pointer left out) is a constant for Triton too
            kind = "constexpr"
        elif isinstance(value, bool):
            kind = "bool"
        elif isinstance(value, int):
            kind = "int"
        elif isinstance(value, float):
            kind = "float"
        else:
            raise LaunchSpecError(f"launch spec: {name} = {value!r} is neither a tensor nor a number; only "
                                  "tl.constexpr parameters take other values")
        arg = {"name": name, "kind": kind, "value": value, "nospec": p["nospec"]}
        if p.get("annotation") and kind == "int":
            arg["annotation"] = p["annotation"]
        args.append(arg)
    return args


def _tolerance(launch):
    tol = launch.entry("tolerance")
    return [float(x) for x in tol.exprs[0].split(",")] if tol else None


def user_launch(draw, caps, user: dict, pick_default=False) -> KernelSpec:
    launch_spec = parse(user["launch"])
    names, tensors = draw_values(draw, launch_spec, pick_default, getattr(caps, "allows_dtype", None))
    grid = grid_of(names.get("grid"), launch_spec.entry("grid").text)
    warps = names.get("num_warps", DEFAULT_WARPS[1] if pick_default else draw(st.sampled_from(DEFAULT_WARPS)))
    stages = names.get("num_stages", DEFAULT_STAGES[0] if pick_default else draw(st.sampled_from(DEFAULT_STAGES)))
    if not all(isinstance(v, int) and v >= 1 for v in (warps, stages)):
        raise LaunchSpecError(f"launch spec: num_warps and num_stages are positive integers (got {warps!r}, "
                              f"{stages!r})")
    launch = Launch(num_warps=warps, num_stages=stages)
    knobs = launch_spec.entry("knobs")
    if not pick_default and (knobs is None or knobs.exprs[0] == "on"):
        draw_knobs(draw, caps, launch)
    # a knob the spec names is the spec's (`matrix_instr_nonkdim: 16|32`), drawn or not
    launch.options.update({k: names[k] for k in caps.knobs if k in names})
    launch.env.update({k: str(names[k]) for k in caps.env_knobs if k in names})
    reference = launch_spec.entry("reference")
    record = {"file": user["file"], "fn": user["fn"], "source": user["source"], "launch": user["launch"],
              "args": concrete(user, names, tensors), "grid": grid,
              "reference": reference.exprs[0] if reference else None, "tolerance": _tolerance(launch_spec),
              "data_seed": 0 if pick_default else draw(st.integers(0, 2 ** 31 - 1))}
    if user.get("template"):  # one of gfxhound's own kernel templates (fuzz/shape_templates.py), not a user's
        record["template"] = user["template"]
    return KernelSpec(blocks={"M": 1, "N": 1, "K": 1}, sizes={"M": 1, "N": 1, "K": 1}, grid="M", inputs=[],
                      scalars=[], outputs=[], body=[], launch=launch, user=record,
                      meta={"generator": f"user-{USER_VERSION}"}, format=USER_FORMAT)


@st.composite
def user_specs(draw, caps, user: dict):
    """Launches of the user's kernel; a draw the spec cannot evaluate (a grid of 0 at some size) is skipped (the
    CLI checked beforehand that most draws evaluate)."""
    try:
        return user_launch(draw, caps, user)
    except LaunchSpecError:
        assume(False)


def default_launch(caps, user: dict) -> KernelSpec:
    """The launch at the spec's defaults (first choices, low ends of ranges, no knobs): what the CLI compiles once
    before a campaign, so a kernel that cannot compile at all is the user's error, said in one line."""
    return user_launch(None, caps, user, pick_default=True)


def check_draws(caps, user: dict, tries=30):
    """Draw `tries` launches; the first evaluation error of the spec, if every draw fails, as a one-line error."""
    import random

    from hypothesis import HealthCheck, given, settings
    errors, good = [], []

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck), max_examples=1)
    @given(st.data())
    def one(data):
        try:
            good.append(user_launch(data.draw, caps, user))
        except LaunchSpecError as exc:
            errors.append(str(exc))

    rng = random.Random(0)
    for _ in range(tries):
        one.hypothesis.fuzz_one_input(rng.randbytes(4096))
    if errors and not good:
        raise UserKernelError(errors[0])
    return len(good), errors[:1]

