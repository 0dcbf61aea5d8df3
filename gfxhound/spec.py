"""KernelSpec: the versioned JSON record the fuzz stage hands to every later stage.

The spec JSON, not a Hypothesis database, is the source of truth for a finding. Statements are plain tagged dicts
(they are JSON already and small); the top-level record is a dataclass. Operands are relative references (see
fuzz/program.py), so deleting a statement while shrinking leaves a valid kernel.
"""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import asdict, dataclass, field

FORMAT = 4  # 2: 8-bit float and MX dtypes, K-view axes (H, S, T), input roles, metamorphic pairs; 3: collectives;
# 4: a user's own kernel (`user`: its source and one concrete launch, fuzz/user_kernel.py)
READABLE = (1, 2, 3, 4)  # an older spec is a valid newer spec: it is read as it is and keeps its fields (and hash)
# A spec is written in the lowest format that can hold it: a single-rank kernel stays format 2 (no `collective` key
# at all), so its hash is what it was and an older gfxhound still reads it; a collective is format 3, a user's
# kernel format 4.
COLLECTIVE_FORMAT, USER_FORMAT = 3, 4
SINGLE_RANK_FORMAT = 2
AXES = "MNK"


class SpecError(ValueError):
    """A spec that cannot be loaded: the message says what is wrong and what to do."""


@dataclass
class Launch:
    num_warps: int = 4
    num_stages: int = 2
    options: dict = field(default_factory=dict)  # AMD knobs: waves_per_eu, matrix_instr_nonkdim, kpack, ...
    env: dict = field(default_factory=dict)  # knobs Triton reads from the environment (AMDGCN_USE_BUFFER_OPS)


# Kernel families: single-rank kernels, communication patterns over several ranks (fuzz/collective/), and a user's
# own kernel under drawn launches (fuzz/user_kernel.py: `gfxhound fuzz --kernel`). Each
# stage keeps one table keyed by these names (fuzz/render.py, fuzz/generate.py, oracle/run_task.py,
# oracle/repro/choose.py) instead of asking a spec what it holds.
FAMILIES = ("kernels", "collectives", "user")


def family_of(data: dict) -> str:
    """The family of a spec's JSON form (a stored spec.json, before it is loaded)."""
    if data.get("user"):
        return "user"
    return "collectives" if data.get("collective") else "kernels"


@dataclass
class KernelSpec:
    blocks: dict  # constexpr block size per axis, {"M": 32, "N": 64, "K": 16}
    sizes: dict  # runtime problem size per axis (ragged: need not be a multiple of the block)
    grid: str  # axes the launch grid spans: "M" or "MN"
    inputs: list  # [{"dtype", "axes", "order": "row"|"col"}]
    scalars: list  # [{"dtype": "i32"|"fp32", "value"}]
    outputs: list  # [{"dtype", "axes", "mode": "store"|"atomic"}]
    body: list  # statements (tagged dicts)
    launch: Launch = field(default_factory=Launch)
    ranks: int = 1  # collectives: how many ranks (room from v1, used from v3)
    pair: dict | None = None  # metamorphic pair: the second member (fuzz/pairs.py); room from v1, used from v2
    collective: dict | None = None  # a communication pattern (fuzz/collective/): its parameters; from v3
    user: dict | None = None  # a user's kernel: source, function, one concrete launch (fuzz/user_kernel.py); from v4
    meta: dict = field(default_factory=dict)  # provenance: generator version, seed; not part of the identity
    format: int = SINGLE_RANK_FORMAT  # FORMAT for a collective (fuzz/collective/spec.py)

    def to_json(self) -> dict:
        data = asdict(self)
        for key in ("collective", "user"):  # absent, not null: single-rank specs keep their format-2 identity
            if data.get(key) is None:
                data.pop(key, None)
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=True)

    @property
    def family(self) -> str:
        """The kernel family (FAMILIES): what the generator, renderer, run task and repro writer dispatch on."""
        return family_of(self.to_json())

    def identity(self) -> dict:
        data = self.to_json()
        data.pop("meta", None)
        return data

    def spec_hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def replace(self, **changes) -> "KernelSpec":
        new = copy.deepcopy(self)
        for key, value in changes.items():
            setattr(new, key, value)
        return new

    @classmethod
    def from_json(cls, data: dict) -> "KernelSpec":
        if not isinstance(data, dict):
            raise SpecError("spec is not a JSON object")
        data = migrate(dict(data))
        try:
            launch = Launch(**data.pop("launch", {}))
            spec = cls(**data)
        except TypeError as exc:
            raise SpecError(f"spec has unexpected or missing fields ({exc}); regenerate it with this gfxhound")
        _check_shape(spec)
        return spec.replace(launch=launch)

    @classmethod
    def loads(cls, text: str) -> "KernelSpec":
        try:
            return cls.from_json(json.loads(text))
        except json.JSONDecodeError as exc:
            raise SpecError(f"spec is not valid JSON ({exc.msg} at line {exc.lineno})")


def migrate(data: dict) -> dict:
    """Bring an older spec format up to FORMAT; refuse a newer one."""
    version = data.get("format", 0)
    if not isinstance(version, int) or version < 1:
        raise SpecError(f"spec has no valid 'format' field (got {version!r}); it was not written by gfxhound")
    if version > FORMAT:
        raise SpecError(f"spec format {version} is newer than this gfxhound understands ({FORMAT}); upgrade gfxhound")
    assert version in READABLE, version
    return data


def _check_shape(spec: KernelSpec) -> None:
    for axis in AXES:
        if not isinstance(spec.blocks.get(axis), int) or spec.blocks[axis] < 1:
            raise SpecError(f"spec.blocks[{axis!r}] must be a positive integer")
        if not isinstance(spec.sizes.get(axis), int) or spec.sizes[axis] < 1:
            raise SpecError(f"spec.sizes[{axis!r}] must be a positive integer")
    if spec.grid not in ("M", "MN"):
        raise SpecError(f"spec.grid must be 'M' or 'MN', not {spec.grid!r}")
    if not isinstance(spec.body, list):
        raise SpecError("spec.body must be a list of statements")
