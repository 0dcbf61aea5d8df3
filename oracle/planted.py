"""Planted bugs: mutation testing of our own oracle.

Each planted bug is a deliberately wrong compilation of a kernel family where the defect is visible by
construction: a dropped store mask (ragged sizes, so lanes past the end are written), a load offset off by one,
`fadd` turned into `fsub` (a source edit under the interpreter; on a GPU an edit of the LLVM IR through Triton's
own override mechanism, so it runs the real code generator), a K-loop accumulator rounded to fp16 every
iteration (a wrong accumulation dtype), and two number-format decoding bugs of block-scaled products (an E8M0
bias off by one, FP4 nibbles swapped). The oracle always judges the *unmutated* spec; a planted run that is not
flagged (miscompile, nondeterministic or runtime fault) is a hole in the oracle.

Runs go through the normal campaign path (`gfxhound fuzz --plant NAME`): the family's specs replace the
generator, and the worker applies the mutation after rendering.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from gfxhound.spec import KernelSpec, Launch

FLAGGED = ("miscompile", "nondeterministic", "runtime_fault")


@dataclass(frozen=True)
class Plant:
    name: str
    family: str  # "elementwise" | "matmul"
    what: str
    pattern: str  # regex on the rendered source (what the source edit replaces)
    replacement: str
    ir_edit: tuple = ()  # device backend: (stage suffix, regex, replacement) applied to the dumped IR instead
    ir_count: int = 1  # how many matches the IR edit replaces (0: all)
    flagged: tuple = ()  # the verdicts that count as seen (default: FLAGGED, a wrong result)
    max_spin: int | None = None  # collectives: polls before a wait gives up (None: the launcher's bound)


PLANTS = {p.name: p for p in (
    Plant("drop-mask", "elementwise", "a store loses its mask (lanes past the ragged edge are written)",
          r"(tl\.store\([^\n]*?), mask=[^\n]*\)\n", r"\1)\n"),
    Plant("off-by-one", "elementwise", "a load's offset is one element too far",
          r"tl\.load\(in_0 \+ \(", "tl.load(in_0 + 1 + ("),
    Plant("fadd-fsub", "elementwise", "the float add becomes a subtract",
          r"(\n\s+v_\d+ = v_\d+) \+ (v_\d+\n)", r"\1 - \2", ir_edit=("llir", r"\bfadd\b", "fsub")),
    Plant("wrong-acc-dtype", "matmul", "the K-loop accumulator is rounded to fp16 every iteration",
          r"(\n\s+v_\d+ = tl\.dot\([^\n]*\))\n", r"\1.to(tl.float16).to(tl.float32)\n"),
    Plant("missing-barrier", "reduction", "the barrier between a cross-warp reduction's shared-memory write and "
          "read is deleted from the LLVM IR (a GPU only: the interpreter runs a program as one thread)",
          "", "", ir_edit=("llir", r"\n[ \t]*(?:tail )?call void @llvm\.(?:amdgcn\.s\.barrier|nvvm\.barrier[\w.]*)"
                                   r"\([^)\n]*\)[^\n]*", ""), ir_count=0),
    Plant("wrong-e8m0-bias", "mx", "the lhs E8M0 scales are decoded with bias 126 instead of 127 (every lhs scale "
          "doubles)", r"tl\.dot_scaled\((\w+), (\w+), ", r"tl.dot_scaled(\1, (\2 + 1).to(tl.uint8), "),
    Plant("missing-collective-barrier", "collective", "an all-pairs barrier's waits do nothing (a GPU only: the "
          "interpreter cannot run the pattern's waits)",
          r"(def _wait_value\(flag, target, max_spin, err\):\n)(?:    [^\n]*\n)+", r"\1    pass\n"),
    Plant("lost-signal", "collective", "every signal is dropped: each wait polls until its bound and gives up "
          "(expected: a timeout verdict from the error counter)",
          r"(def _signal\(flag, epoch\):\n)    [^\n]*\n", r"\1    pass\n", flagged=("timeout",)),
    Plant("lost-signal-hang", "collective", "every signal is dropped and the waits are unbounded: a spin that never "
          "ends (expected: the launch times out, the worker is replaced, the GPU runs a known-good kernel)",
          r"(def _signal\(flag, epoch\):\n)    [^\n]*\n", r"\1    pass\n", flagged=("timeout",),
          max_spin=2 ** 31 - 1),
    Plant("swapped-fp4-nibbles", "mx", "the lhs packed FP4 bytes are unpacked high nibble first",
          r"tl\.dot_scaled\((\w+), ", r"tl.dot_scaled(((\1 >> 4) | (\1 << 4)).to(tl.uint8), "),
)}


def mutate_source(name: str, source: str) -> str:
    """The source with the planted defect; raises ValueError when the family's kernel does not fit the pattern."""
    plant = PLANTS[name]
    if not plant.pattern:
        raise ValueError(f"planted bug {name} has no source form: it needs --backend device")
    new, count = re.subn(plant.pattern, plant.replacement, source, count=1)
    if count != 1:
        raise ValueError(f"planted bug {name}: pattern not found in the kernel")
    return new


def mutate_ir(name: str, text: str) -> str:
    plant = PLANTS[name]
    _, pattern, replacement = plant.ir_edit
    new, count = re.subn(pattern, replacement, text, count=plant.ir_count)
    if count < 1:
        raise ValueError(f"planted bug {name}: IR pattern not found")
    return new


def _ragged(rng, block):
    size = rng.randint(1, 4) * block + rng.randint(1, block - 1)
    return size


def elementwise_spec(rng: random.Random) -> KernelSpec:
    bm, bn = rng.choice([16, 32, 64]), rng.choice([16, 32, 64])
    sizes = {"M": _ragged(rng, bm), "N": _ragged(rng, bn), "K": 16}
    body = [{"op": "load", "args": [1], "attrs": {"masked": True, "other": 0}},
            {"op": "load", "args": [0], "attrs": {"masked": True, "other": 0}},
            {"op": "add", "args": [1, 0], "attrs": {}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": bm, "N": bn, "K": 16}, sizes=sizes, grid="MN",
                      inputs=[{"dtype": "fp32", "axes": "MN", "order": "row", "values": "real"},
                              {"dtype": "fp32", "axes": "MN", "order": "row", "values": "real"}],
                      scalars=[], outputs=[{"dtype": "fp32", "axes": "MN", "mode": "store"}], body=body,
                      launch=Launch(num_warps=rng.choice([1, 2, 4, 8]), num_stages=2),
                      meta={"planted_family": "elementwise"})


def matmul_spec(rng: random.Random) -> KernelSpec:
    bm, bn, bk = rng.choice([16, 32, 64]), rng.choice([16, 32, 64]), rng.choice([16, 32])
    sizes = {"M": rng.randint(1, 3) * bm, "N": rng.randint(1, 3) * bn, "K": rng.randint(2, 8) * bk}
    loop = {"trip": ["cdiv", "K"], "stages": None, "carry": [0], "yield": [0], "body": [
        {"op": "load", "args": [1], "attrs": {"masked": True, "other": 0}},
        {"op": "load", "args": [0], "attrs": {"masked": True, "other": 0}},
        {"op": "dot_acc", "args": [1, 0, 0], "attrs": {}},
    ]}
    body = [{"op": "full", "args": [], "attrs": {"dtype": "fp32", "axes": "MN", "value": 0}},
            {"for": loop},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": bm, "N": bn, "K": bk}, sizes=sizes, grid="MN",
                      inputs=[{"dtype": "fp16", "axes": "MK", "order": "row", "values": "real"},
                              {"dtype": "fp16", "axes": "KN", "order": "row", "values": "real"}],
                      scalars=[], outputs=[{"dtype": "fp32", "axes": "MN", "mode": "store"}], body=body,
                      launch=Launch(num_warps=rng.choice([2, 4, 8]), num_stages=rng.choice([1, 2, 3])),
                      meta={"planted_family": "matmul"})


def reduction_spec(rng: random.Random) -> KernelSpec:
    """Row sum, max and min over a wide block: with several warps along N, each reduction's partial results meet
    in shared memory, and the three reuse the same scratch, so a missing barrier lets one reduction read what the
    next one wrote (one reduction alone left the race unseen in 6 of 40 H100 runs). Whether a race shows is up to
    the schedule: with 1 to 4 programs, 5 of 40 kernels passed in some campaigns and none in others (35, 38, 39
    and 40 of 40 flagged with the same code on one H100); 16 to 64 programs give each kernel many schedules."""
    bn = rng.choice([256, 512])
    sizes = {"M": rng.randint(16, 64) * 16, "N": bn - rng.choice([0, 3]), "K": 16}
    body = [{"op": "load", "args": [0], "attrs": {"masked": True, "other": 0}},
            {"op": "sum", "args": [0], "attrs": {"axis": 1, "promote": False}},
            {"op": "max", "args": [1], "attrs": {"axis": 1}},
            {"op": "min", "args": [2], "attrs": {"axis": 1}},
            {"op": "add", "args": [2, 1], "attrs": {}},
            {"op": "add", "args": [0, 1], "attrs": {}},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    return KernelSpec(blocks={"M": 16, "N": bn, "K": 16}, sizes=sizes, grid="M",
                      inputs=[{"dtype": "fp32", "axes": "MN", "order": "row", "values": "integers"}],
                      scalars=[], outputs=[{"dtype": "fp32", "axes": "M", "mode": "store"}], body=body,
                      launch=Launch(num_warps=rng.choice([4, 8, 16]), num_stages=1),
                      meta={"planted_family": "reduction"})


def mx_spec(rng: random.Random) -> KernelSpec:
    """A K-loop of tl.dot_scaled on packed FP4 (E2M1) with E8M0 scales on both sides, ragged M and N."""
    bm, bn, bk = rng.choice([16, 32, 64]), rng.choice([16, 32, 64]), rng.choice([32, 64, 128])
    sizes = {"M": _ragged(rng, bm), "N": _ragged(rng, bn), "K": rng.randint(1, 4) * bk}
    loads = [{"op": "load", "args": [3 - i], "attrs": {"masked": True, "other": 0}} for i in range(4)]
    loop = {"trip": ["cdiv", "K"], "stages": None, "carry": [0], "yield": [0],
            "body": loads + [{"op": "dot_scaled", "args": [0, 0, 0, 0, 0], "attrs": {}}]}
    body = [{"op": "full", "args": [], "attrs": {"dtype": "fp32", "axes": "MN", "value": 0}},
            {"for": loop},
            {"op": "store", "args": [0, 0], "attrs": {}}]
    inputs = [{"dtype": "e2m1x2", "axes": "MH", "order": "row"}, {"dtype": "e8m0", "axes": "MS", "order": "row"},
              {"dtype": "e2m1x2", "axes": "HN", "order": "row"}, {"dtype": "e8m0", "axes": "NS", "order": "row"}]
    return KernelSpec(blocks={"M": bm, "N": bn, "K": bk}, sizes=sizes, grid="MN", inputs=inputs, scalars=[],
                      outputs=[{"dtype": "fp32", "axes": "MN", "mode": "store"}], body=body,
                      launch=Launch(num_warps=rng.choice([2, 4, 8]), num_stages=rng.choice([1, 2, 3])),
                      meta={"planted_family": "mx"})


def collective_spec(rng: random.Random) -> KernelSpec:
    """A put-signal or an all-pairs barrier (epoch flags, so the wait helper is `_wait_value`) on 8 virtual ranks
    with enough data that a missing wait is seen: the reader of a block runs right after the writer started."""
    from gfxhound.fuzz.collective.spec import FORMAT, SKEW
    pattern = rng.choice(["put_signal", "barrier_allpairs"])
    block = rng.choice([256, 512, 1024])
    c = {"pattern": pattern, "dtype": rng.choice(["fp32", "fp16", "i32"]), "n": block * rng.randint(16, 64) + 7,
         "block": block, "programs": rng.choice([1, 2, 4]), "sem": ["release", "acquire"],
         "scope": rng.choice(["gpu", "sys"]), "poll": rng.choice(["cas", "add", "volatile"]), "flags": "epoch",
         "signal": rng.choice(["xchg", "add"]), "load_cache": "", "store_cache": "", "pointers": "table",
         "barrier": False, "control": None, "extra": {}, "order": "down", "skew": SKEW}
    return KernelSpec(blocks={"M": block, "N": 1, "K": 1}, sizes={"M": c["n"], "N": 1, "K": 1}, grid="M", inputs=[],
                      scalars=[], outputs=[], body=[], launch=Launch(num_warps=rng.choice([4, 8]), num_stages=1),
                      ranks=8, collective=c, meta={"planted_family": "collective"}, format=FORMAT)


FAMILIES = {"elementwise": elementwise_spec, "matmul": matmul_spec, "reduction": reduction_spec, "mx": mx_spec, "collective": collective_spec}


def spec_stream(name: str, seed: int):
    """Specs of the planted bug's family, forever; the same seed gives the same specs."""
    rng = random.Random(f"{name}:{seed}")
    family = FAMILIES[PLANTS[name].family]
    while True:
        yield family(rng)
