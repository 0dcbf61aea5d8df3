"""What the installed Triton and each target accept, decided once per campaign.

Two sources: introspection (option fields, language functions and their keywords, default dot precisions), and
probe kernels compiled through the normal worker pool (dot per dtype, AMD knob values). A probe only removes a
feature when the compiler *rejects* it as a user error; a probe that crashes the compiler keeps the feature, so
probing never hides a bug from the campaign.
"""
from __future__ import annotations

import inspect
import json
import re
from dataclasses import asdict, dataclass, field

from gfxhound.spec import KernelSpec, Launch

from .dtypes import FP8

CAPS_VERSION = 4  # bump when probing or introspection changes: cached capabilities are keyed by it
ATOMIC_SEMS = ["relaxed", "acquire", "release", "acq_rel"]
ATOMIC_SCOPES = ["gpu", "cta", "sys"]
KNOB_CANDIDATES = {
    "waves_per_eu": [0, 1, 2, 4],
    "matrix_instr_nonkdim": [0, 4, 16, 32],
    "kpack": [1, 2],
    "schedule_hint": ["none", "attention"],
    "debug": [False, True],
}
# Environment knobs of the AMD backend worth flipping (read by triton.knobs or straight from os.environ).
ENV_KNOBS = ("AMDGCN_USE_BUFFER_OPS", "AMDGCN_USE_BUFFER_ATOMICS", "AMDGCN_ANALYZE_SMALL_TENSOR_RANGE",
             "TRITON_HIP_USE_ASYNC_COPY", "AMDGCN_SCALARIZE_PACKED_FOPS", "TRITON_HIP_USE_BLOCK_PINGPONG",
             "TRITON_HIP_USE_IN_THREAD_TRANSPOSE", "TRITON_HIP_ASYNC_FAST_SWIZZLE")
ATOMIC_OPS = ("add", "max", "min", "xchg")
ATOMIC_DTYPES = ("fp32", "i32", "fp16", "bf16", "fp64", "i64")
DOT_DTYPES = ["fp32", "fp16", "bf16", "i8", "fp64", *FP8]
MX_PROBE_FORMATS = ("e2m1x2", "fp8e4nv", "fp8e5", "bf16", "fp16")  # operand dtype of each tl.dot_scaled format


@dataclass
class Capabilities:
    triton_version: str
    arch: str
    features: list = field(default_factory=list)
    input_precisions: list = field(default_factory=lambda: ["ieee"])
    atomic_sems: list = field(default_factory=lambda: list(ATOMIC_SEMS))
    atomic_scopes: list = field(default_factory=lambda: list(ATOMIC_SCOPES))
    knobs: dict = field(default_factory=dict)  # option name -> accepted values
    env_knobs: dict = field(default_factory=dict)  # environment knob -> values
    probes: dict = field(default_factory=dict)  # probe name -> verdict seen
    version: int = CAPS_VERSION

    def has(self, key: str) -> bool:
        return key in self._feature_set()

    def allows(self, key: str) -> bool:
        """Present, and not excluded by the execution backend (oracle/limitations.py)."""
        return self.has(key) and not self.has("exclude:" + key)

    def allows_dtype(self, dtype: str) -> bool:
        """False for a dtype an execution backend cannot run faithfully (oracle/limitations.py steers it out)."""
        return f"exclude:dtype:{dtype}" not in self._feature_set()

    def _feature_set(self):
        cached = getattr(self, "_fs", None)
        if cached is None or len(cached) != len(self.features):
            cached = set(self.features)
            object.__setattr__(self, "_fs", cached)
        return cached

    def to_json(self):
        data = asdict(self)
        return data

    @classmethod
    def from_json(cls, data):
        data = dict(data)
        data.pop("_fs", None)
        return cls(**data)

    def dumps(self):
        return json.dumps(self.to_json(), indent=1, sort_keys=True)


def introspect(arch: str) -> Capabilities:
    """Capabilities readable without compiling (runs wherever triton imports)."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    if arch.startswith("cuda:"):  # a device campaign on NVIDIA: the local GPU's own arch
        from triton.backends.nvidia.compiler import CUDABackend as HIPBackend, CUDAOptions as HIPOptions
    else:
        from triton.backends.amd.compiler import HIPBackend, HIPOptions

    from gfxhound.compat import warp_size
    from .ops import REGISTRY
    from .ops_elementwise import MATH_OPS

    features = []
    for op in REGISTRY.values():
        if op.needs.startswith("op:") and hasattr(tl, op.needs[3:]):
            features.append(op.needs)
    if "num_stages" in inspect.signature(tl.range.__init__).parameters:
        features.append("loop:num_stages")
    try:  # tl.cumsum is wrapped by decorators that hide its signature: read the defining source
        if re.search(r"def cumsum\([^)]*reverse", inspect.getsource(inspect.getmodule(tl.standard))):
            features.append("scan:reverse")
    except (OSError, TypeError, AttributeError):
        pass
    if hasattr(tl, "histogram") and "mask" in inspect.signature(tl.histogram).parameters:
        features.append("histogram:mask")  # Triton >= 3.4 (fuzz/ops_index.py)
    to_params = inspect.signature(tl.tensor.to).parameters
    if "fp_downcast_rounding" in to_params:
        features += ["cast:rounding", "cast:fp8-rtz"]
    if hasattr(tl, "dot_scaled"):  # every format and the 16-element scale group: probes drop what is rejected
        from .ops_dot_scaled import MX_FORMATS
        features += [f"dot_scaled:{fmt}" for fmt in MX_FORMATS.values()] + ["dot_scaled:group16"]
    fields = set(getattr(HIPOptions, "__dataclass_fields__", {}))
    knobs = {name: list(values) for name, values in KNOB_CANDIDATES.items() if name in fields}
    precisions = ["ieee"]
    try:
        target = GPUTarget("cuda", int(arch[5:]), 32) if arch.startswith("cuda:") else \
            GPUTarget("hip", arch, warp_size(arch))
        backend = HIPBackend(target)
        options = backend.parse_options({})
        precisions = sorted(set(options.allowed_dot_input_precisions))
        fp8 = [d for d in getattr(options, "supported_fp8_dtypes", ()) if d in FP8]
        features += [f"fp8:{d}" for d in fp8] + (["cast:to-fp8", "fp8:specials"] if fp8 else [])
        features.append("target")
    except Exception:  # noqa: BLE001 - an unknown target is reported by the campaign, not here
        pass
    env_knobs = {} if arch.startswith("cuda:") else {
        name: ["0", "1"] for name in ENV_KNOBS if name in _amd_backend_text()}
    features += [f"atomic:{op}:{dt}" for op in ATOMIC_OPS for dt in ATOMIC_DTYPES]
    features += [f"math:{name}:{dt}" for name in MATH_OPS for dt in ("fp16", "bf16")]
    return Capabilities(triton.__version__, arch, sorted(features) + [f"dot:{d}" for d in DOT_DTYPES],
                        precisions, knobs=knobs, env_knobs=env_knobs)


def _amd_backend_text():
    """The AMD backend's Python and knob sources: an environment knob exists if a release reads its name."""
    import triton
    texts = []
    for module in ("triton.backends.amd.compiler", "triton.knobs"):
        try:
            texts.append(inspect.getsource(__import__(module, fromlist=["x"])))
        except (ImportError, OSError, TypeError):
            pass
    return "\n".join(texts) + getattr(triton, "__version__", "")


def _atomic_probe(op, dtype):
    body = [{"op": "load", "args": [0], "attrs": {"masked": True}},
            {"op": "atomic", "args": [0, 0], "attrs": {"op": op, "sem": "relaxed", "scope": "gpu"}}]
    return KernelSpec(blocks={"M": 64, "N": 16, "K": 16}, sizes={"M": 64, "N": 16, "K": 16}, grid="M",
                      inputs=[{"dtype": dtype, "axes": "M", "order": "row"}], scalars=[],
                      outputs=[{"dtype": dtype, "axes": "M", "mode": "atomic"}], body=body,
                      launch=Launch(env={"AMDGCN_USE_BUFFER_OPS": "0"}))


def _dot_probe(dtype, options=None):
    """A 16x16x16 dot kernel: the smallest kernel that says whether a dtype/knob is accepted for dots."""
    body = [{"op": "load", "args": [1], "attrs": {"masked": True}},
            {"op": "load", "args": [0], "attrs": {"masked": True}},
            {"op": "dot", "args": [1, 0], "attrs": {}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    out = {"i8": "i32", "fp64": "fp64"}.get(dtype, "fp32")
    k = 32 if dtype.startswith("fp8") else 16  # Hopper's fp8 MMA needs K >= 32: 16 would reject a supported dtype
    return KernelSpec(blocks={"M": 16, "N": 16, "K": k}, sizes={"M": 16, "N": 16, "K": k}, grid="MN",
                      inputs=[{"dtype": dtype, "axes": "MK", "order": "row"},
                              {"dtype": dtype, "axes": "KN", "order": "row"}],
                      scalars=[], outputs=[{"dtype": out, "axes": "MN", "mode": "store"}], body=body,
                      launch=Launch(num_warps=4, num_stages=2, options=dict(options or {})))


def _math_probe(name, dtype):
    body = [{"op": "load", "args": [0], "attrs": {"masked": True}},
            {"op": name, "args": [0], "attrs": {}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": 16, "N": 16, "K": 16}, sizes={"M": 16, "N": 16, "K": 16}, grid="M",
                      inputs=[{"dtype": dtype, "axes": "M", "order": "row"}], scalars=[],
                      outputs=[{"dtype": dtype, "axes": "M", "mode": "store"}], body=body, launch=Launch())


def _ptr_loads(n):
    """Statements loading inputs in_0 .. in_{n-1} in order (a load's operand counts pointers from the last)."""
    return [{"op": "load", "args": [n - 1 - i], "attrs": {"masked": True, "other": 0}} for i in range(n)]


def _dot_scaled_probe(dtype, group=32):
    """dot_scaled of one format on both sides, scaled on both sides: is the format (or the group) accepted?"""
    k = "H" if dtype == "e2m1x2" else "K"
    scale = "S" if group == 32 else "T"
    inputs = [{"dtype": dtype, "axes": "M" + k, "order": "row"}, {"dtype": "e8m0", "axes": "M" + scale, "order": "row"},
              {"dtype": dtype, "axes": k + "N", "order": "row"}, {"dtype": "e8m0", "axes": "N" + scale, "order": "row"}]
    body = _ptr_loads(4) + [
        {"op": "full", "args": [], "attrs": {"dtype": "fp32", "axes": "MN", "value": 0}},
        {"op": "dot_scaled", "args": [0, 0, 0, 0, 0], "attrs": {}},
        {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": 32, "N": 32, "K": 64}, sizes={"M": 32, "N": 32, "K": 64}, grid="MN",
                      inputs=inputs, scalars=[], outputs=[{"dtype": "fp32", "axes": "MN", "mode": "store"}],
                      body=body, launch=Launch(num_warps=4, num_stages=2))


def _fp8_cast_probe(dtype, rounding=None):
    """fp32 -> fp8 (with a rounding mode) -> stored: is the conversion accepted?"""
    attrs = {"dtype": dtype, **({"rounding": rounding} if rounding else {})}
    body = _ptr_loads(1) + [{"op": "cast", "args": [0], "attrs": attrs}, {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": 64, "N": 16, "K": 16}, sizes={"M": 64, "N": 16, "K": 16}, grid="M",
                      inputs=[{"dtype": "fp32", "axes": "M", "order": "row"}], scalars=[],
                      outputs=[{"dtype": dtype, "axes": "M", "mode": "store"}], body=body, launch=Launch())


def probe_specs(caps: Capabilities) -> dict:
    """Name -> probe spec; each is compiled for caps.arch and judged by its verdict."""
    from .ops_elementwise import MATH_OPS
    probes = {f"dot:{d}": _dot_probe(d) for d in DOT_DTYPES}
    probes.update({f"math:{n}:{d}": _math_probe(n, d) for n in MATH_OPS for d in ("fp16", "bf16")
                   if caps.has(f"op:{n}")})
    probes.update({f"atomic:{op}:{d}": _atomic_probe(op, d) for op in ATOMIC_OPS for d in ATOMIC_DTYPES})
    from .ops_dot_scaled import MX_FORMATS
    probes.update({f"dot_scaled:{MX_FORMATS[d]}": _dot_scaled_probe(d) for d in MX_PROBE_FORMATS
                   if caps.has(f"dot_scaled:{MX_FORMATS[d]}")})
    if caps.has("dot_scaled:group16"):
        probes["dot_scaled:group16"] = _dot_scaled_probe("e2m1x2", 16)
    fp8 = [d for d in FP8 if caps.has("fp8:" + d)]
    if fp8 and caps.has("cast:fp8-rtz"):
        probes["cast:fp8-rtz"] = _fp8_cast_probe(fp8[0], "rtz")
    for name, values in caps.knobs.items():
        for value in values[1:]:
            probes[f"knob:{name}={value}"] = _dot_probe("fp16", {name: value})
    return probes


def finish(caps: Capabilities, verdicts: dict) -> Capabilities:
    """Drop what probes showed the compiler rejects as a user error; keep anything that crashed it."""
    features = set(caps.features)
    knobs = {name: list(values) for name, values in caps.knobs.items()}
    for name, verdict in verdicts.items():
        if verdict != "user_error":
            continue
        if name.startswith(("dot:", "math:", "atomic:", "dot_scaled:", "cast:")):
            features.discard(name)
        elif name.startswith("knob:"):
            knob, value = name[5:].split("=", 1)
            knobs[knob] = [v for v in knobs.get(knob, []) if str(v) != value]
    return Capabilities(caps.triton_version, caps.arch, sorted(features), caps.input_precisions, caps.atomic_sems,
                        caps.atomic_scopes, knobs, caps.env_knobs, dict(verdicts))


def assume_all(arch: str, triton_version: str = "any") -> Capabilities:
    """Everything on: for rendering specs where no probing happened (tests, replay of stored specs)."""
    from .ops import REGISTRY
    feats = {op.needs for op in REGISTRY.values() if op.needs}
    feats |= {"loop:num_stages", "scan:reverse", "cast:rounding", "target", "histogram:mask"}
    feats |= {f"dot:{d}" for d in DOT_DTYPES}
    from .ops_elementwise import MATH_OPS
    feats |= {f"math:{n}:{d}" for n in MATH_OPS for d in ("fp16", "bf16")}
    feats |= {f"atomic:{op}:{d}" for op in ATOMIC_OPS for d in ATOMIC_DTYPES}
    from .ops_dot_scaled import MX_FORMATS
    feats |= {f"fp8:{d}" for d in FP8} | {"cast:to-fp8", "cast:fp8-rtz", "dot_scaled:group16", "fp8:specials"}
    feats |= {f"dot_scaled:{fmt}" for fmt in MX_FORMATS.values()}
    return Capabilities(triton_version, arch, sorted(feats), ["ieee", "tf32"],
                        knobs={k: list(v) for k, v in KNOB_CANDIDATES.items()},
                        env_knobs={name: ["0", "1"] for name in ENV_KNOBS})
