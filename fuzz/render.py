"""Spec -> Triton source and the launch description (argument list, options, grid).

The argument list carries what the runtime would see (buffer sizes, integer values), so the compile backend can
specialise exactly as a launch would (gfxhound/compat.py).
"""
from __future__ import annotations

from . import dtypes as D
from .axes import extent, offsets_line, used_k_views
from .program import walk
from .rendered import HEADER, Rendered, launch_options  # noqa: F401 - the names callers import from here

HUGE_BYTES = 1 << 32
def memory_shape(axes, sizes):
    return [4] if not axes else [extent(a, sizes) for a in axes]


def row_major_strides(shape):
    strides, acc = [], 1
    for dim in reversed(shape):
        strides.insert(0, acc)
        acc *= dim
    return strides


def input_strides(arg, sizes):
    shape = memory_shape(arg["axes"], sizes)
    if not arg["axes"]:
        return []
    strides = row_major_strides(shape)
    if arg.get("order") == "col" and len(shape) == 2:
        strides = [1, shape[0]]
    return strides


def cdiv(a, b):
    return -(-a // b)


def grid_of(spec):
    gm = cdiv(spec.sizes["M"], spec.blocks["M"])
    gn = cdiv(spec.sizes["N"], spec.blocks["N"]) if "N" in spec.grid else 1
    return (gm, gn, 1)


def kernel_args(spec):
    args = []
    for i, arg in enumerate(spec.inputs):
        shape = memory_shape(arg["axes"], spec.sizes)
        numel = 1
        for d in shape:
            numel *= d
        # a "huge" input is a view into an allocation over 2 GB: the runtime then omits tt.pointer_range
        nbytes = HUGE_BYTES if arg.get("huge") else numel * D.nbytes(arg["dtype"])
        args.append({"name": f"in_{i}", "kind": "ptr", "type": "*" + D.signature(arg["dtype"]), "value": nbytes})
        for j, stride in enumerate(input_strides(arg, spec.sizes)):
            args.append({"name": f"s_in_{i}_{j}", "kind": "int", "type": "i32", "value": stride})
    for i, arg in enumerate(spec.outputs):
        shape = memory_shape(arg["axes"], spec.sizes)
        numel = 1
        for d in shape:
            numel *= d
        args.append({"name": f"out_{i}", "kind": "ptr", "type": "*" + D.signature(arg["dtype"]),
                     "value": numel * D.nbytes(arg["dtype"])})
        if arg["axes"]:
            for j, stride in enumerate(row_major_strides(shape)):
                args.append({"name": f"s_out_{i}_{j}", "kind": "int", "type": "i32", "value": stride})
    for axis in "MNK":
        args.append({"name": axis, "kind": "int", "type": "i32", "value": spec.sizes[axis]})
    for i, arg in enumerate(spec.scalars):
        kind = "float" if arg["dtype"] == "fp32" else "int"
        args.append({"name": f"sa_{i}", "kind": kind, "type": arg["dtype"], "value": arg["value"]})
    for axis in "MNK":
        args.append({"name": f"BLOCK_{axis}", "kind": "constexpr", "type": "constexpr",
                     "value": spec.blocks[axis]})
    return args


def render(spec, caps, kernel_name="kernel") -> Rendered:
    """The kernel's Triton source and launch record, by the renderer of its family (one record for all)."""
    return _RENDERERS[spec.family](spec, caps, kernel_name)


def render_kernel(spec, caps, kernel_name="kernel") -> Rendered:
    """A single-rank kernel: the prologue, the walked body (fuzz/program.py), the stores."""
    walker = walk(spec, caps)
    args = kernel_args(spec)
    params = ", ".join(a["name"] + (": tl.constexpr" if a["kind"] == "constexpr" else "") for a in args)
    prologue = ["pid_m = tl.program_id(0)"]
    if "N" in spec.grid:
        prologue += ["pid_n = tl.program_id(1)", "offs_N = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)"]
    else:
        prologue += ["offs_N = tl.arange(0, BLOCK_N)"]
    prologue += ["offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)", "offs_K = tl.arange(0, BLOCK_K)",
                 "offs_2 = tl.arange(0, 2)"]
    prologue += [offsets_line(axis, "offs_K", None) for axis in used_k_views(spec.inputs)]
    if caps.has("exclude:raw-scalar-args"):  # the interpreter passes scalars as Python numbers: make them tensors
        for i, arg in enumerate(spec.scalars):
            zero = "0.0" if D.is_float(arg["dtype"]) else "0"
            prologue.append(f"sa_{i} = sa_{i} + tl.full([], {zero}, {D.tl(arg['dtype'])})")
    body = ["    " + line for line in prologue] + walker.lines
    source = HEADER + "@triton.jit\n" + f"def {kernel_name}({params}):\n" + "\n".join(body) + "\n"
    return Rendered(source, kernel_name, args, launch_options(spec), dict(spec.launch.env), grid_of(spec),
                    walker.features,
                    len(walker.lines))


def _render_collective(spec, caps, kernel_name):
    from .collective.render import render_collective  # imported on use: single-rank campaigns never load it
    return render_collective(spec, caps, kernel_name)


def _render_user(spec, caps, kernel_name):
    from .user_render import render_user
    return render_user(spec, caps)


_RENDERERS = {"kernels": render_kernel, "collectives": _render_collective,  # gfxhound.spec.FAMILIES
              "user": _render_user}
