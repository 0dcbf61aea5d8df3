"""A user kernel's data: its argument tensors from a seed, its reference's outputs, and the comparison.

Why a module that imports nothing of gfxhound: the execution repro of a user-kernel finding (oracle/repro/user.py)
embeds this file's text, so the campaign and the repro build the same tensors from the same seed and judge them
by the same rule. The rule is plain `allclose` per element (|got - expected| <= atol + rtol * |expected|, NaN
where the reference has NaN, integers exact): a user's reference is a black box, so the tracked-error model
generated kernels get does not apply, and the tolerance is the user's (`tolerance: rtol, atol`) or the output
dtype's default below.
"""
import numpy as np
import torch

TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "i8": "int8",
                "i32": "int32", "i64": "int64", "i1": "bool", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2",
                "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz", "e2m1x2": "uint8", "e8m0": "uint8"}
DEFAULT_TOLERANCE = {"fp64": (1e-9, 1e-9), "fp32": (1e-3, 1e-3), "fp16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2)}
FP8_TOLERANCE = (0.25, 0.25)
INT_VALUES = {"i1": (0, 1), "e2m1x2": (0, 255), "e8m0": (120, 132)}
SHOW = 5


def torch_dtype(name):
    return getattr(torch, TORCH_DTYPES[name])


def is_float(name):
    return name.startswith(("fp", "bf"))


def make_tensors(user):
    """{name: CPU tensor} for every tensor argument: inputs (and inout) random from the launch's seed, outputs 0.
    Each tensor is a strided view over a buffer whose every element is set, so no lane reads garbage."""
    rng = np.random.default_rng(user["data_seed"])
    tensors = {}
    for arg in user["args"]:
        if arg["kind"] != "tensor":
            continue
        shape, strides, dtype = arg["shape"], arg["strides"], arg["dtype"]
        span = 0 if 0 in shape else 1 + sum((d - 1) * s for d, s in zip(shape, strides))
        if arg["role"] == "out":
            flat = torch.zeros(span, dtype=torch_dtype(dtype))
        elif is_float(dtype):
            lo_hi = arg.get("values")
            values = rng.uniform(lo_hi[0], lo_hi[1], span) if lo_hi else rng.standard_normal(span)
            flat = torch.from_numpy(values.astype(np.float32)).to(torch_dtype(dtype))
        else:
            lo, hi = arg.get("values") or INT_VALUES.get(dtype, (-8, 8))
            flat = torch.from_numpy(rng.integers(lo, hi + 1, span).astype(np.int64)).to(torch_dtype(dtype))
        tensors[arg["name"]] = torch.as_strided(flat, shape, strides) if span else flat.reshape(shape)
    return tensors


def set_device_allocator(device):
    """Global scratch for kernels that make tensor descriptors on the device (`tl.make_tensor_descriptor`: NVIDIA's
    TMA asks the runtime for it through Triton's `set_allocator` hook, which has no default); a no-op on the CPU
    and where the release has no hook."""
    import triton
    if device != "cpu" and hasattr(triton, "set_allocator"):
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))


def outputs_of(user):
    return [a for a in user["args"] if a["kind"] == "tensor" and a["role"] != "in"]


def call_args(user, tensors):
    """Every argument by name, as the reference receives it."""
    return {a["name"]: tensors[a["name"]] if a["kind"] == "tensor" else a["value"] for a in user["args"]}


class UserReferenceError(Exception):
    """The user's reference failed or returned something that is not the outputs: not the compiler's doing."""


def expected_outputs(user, reference):
    """The reference's outputs for this launch: CPU tensors, one per output in order."""
    tensors = {k: v.clone() for k, v in make_tensors(user).items()}
    outs = outputs_of(user)
    try:
        got = reference(**call_args(user, tensors))
    except Exception as exc:  # noqa: BLE001
        raise UserReferenceError(f"the reference raised {type(exc).__name__}: {exc}") from exc
    if got is None:  # it filled the output tensors it was given
        got = [tensors[a["name"]] for a in outs]
    elif isinstance(got, torch.Tensor):
        got = [got]
    got = list(got)
    if len(got) != len(outs):
        raise UserReferenceError(f"the reference returned {len(got)} tensors for {len(outs)} outputs")
    for value, arg in zip(got, outs):
        if not isinstance(value, torch.Tensor) or list(value.shape) != list(arg["shape"]):
            raise UserReferenceError(f"the reference's value for {arg['name']} is not a tensor of shape {arg['shape']}")
        if not is_float(arg["dtype"]) and value.is_floating_point():
            raise UserReferenceError(f"the reference's value for {arg['name']} ({arg['dtype']}) holds floats: "
                                     "return integers for an integer output")
    return [v.detach().cpu() for v in got]


def tolerance(user, dtype):
    if user.get("tolerance"):
        return tuple(user["tolerance"])
    return DEFAULT_TOLERANCE.get(dtype, FP8_TOLERANCE if dtype.startswith("fp8") else (0.0, 0.0))


def compare(user, expected, got):
    """(mismatches, compared, lines): each output element against the reference's."""
    mismatches, compared, lines = 0, 0, []
    for arg, want, have in zip(outputs_of(user), expected, got):
        if is_float(arg["dtype"]):
            w, h = want.to(torch.float64), have.to(torch.float64)
            rtol, atol = tolerance(user, arg["dtype"])
            close = (h - w).abs() <= atol + rtol * w.abs()
            ok = close | (h == w) | (torch.isnan(h) & torch.isnan(w))
        else:
            w, h = want.to(torch.int64), have.to(torch.int64)
            ok = h == w
        compared += ok.numel()
        bad = (~ok).nonzero().tolist()
        mismatches += len(bad)
        if bad:
            lines.append(f"{arg['name']}: {len(bad)} of {ok.numel()} elements wrong")
            for index in bad[:SHOW]:
                lines.append(f"  {arg['name']}{index}: got {h[tuple(index)].item():.9g}, "
                             f"expected {w[tuple(index)].item():.9g}")
    return mismatches, compared, lines
