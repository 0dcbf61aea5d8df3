"""Regroup wrong results by their reduced kernels (docs/design.md, Signatures).

Why: a miscompile has no message, so its provisional signature is the target and the op multiset of the random
kernel that showed it, and one bug found through four kernels is four findings. Once reduced, what is left is what
the bug needs; two findings whose reduced kernels have the same shape are one bug: the later one is folded into
the earlier (gfxhound/corpus_store/fold.py), its id kept as an alias.

The shape: the target, the reduced kernel's op *families* from the registry (``math`` for ``tl.abs`` and
``tl.log`` alike: the reduction keeps one op of the family the bug needs, not always the same one), its control
structure (loops, branches) and what of its launch the reduction could not reset (knobs, warps, stages: a dot that
is wrong only with kpack=2 and one wrong only on one warp are two bugs). Element types stay out: the reduction does
not always narrow them. A scaled dot is the exception: its operand formats (by class: 16-bit, fp8, fp4) and scale
layout (which side is scaled, groups of 32 or 16) are what its lowering branches on, so they are part of its shape
(a bf16 operand whose scale is dropped and an mxfp4 operand with 16-element groups are two bugs, found in one
campaign, whose reduced kernels were both "one dot").
"""
from __future__ import annotations


from gfxhound.fuzz.ops import REGISTRY
from gfxhound.fuzz.render import render

SHAPE_FILE = "reduce.json"
# what a kernel reads and writes, and how its loops are bounded, is the harness's choice, not the bug's
IO_FAMILIES = {"memory", "atomic", "constant", "debug", "pointer"}
STRUCTURE = {"for", "for_carried", "nested_for", "kloop_dot", "kloop_pipelined", "if", "if_in_loop", "if_tensor",
             "if_ptr_select", "early_return", "while"}


def shape_of(spec, caps, target: str) -> str:
    """The target, the families of the ops that compute, and the control structure of a reduced kernel."""
    features = render(spec, caps).features
    families = sorted({REGISTRY[name].family if name in REGISTRY else name for name in features.ops}
                      - IO_FAMILIES)
    if not families:  # nothing but loads, stores and atomics: what they are and on which types is the bug's shape
        families = ["io " + " ".join(sorted(features.ops)), "types " + " ".join(sorted(features.dtypes))]
    control = sorted(c for c in features.control if c in STRUCTURE)
    shape = f"{target}: ops {' '.join(families)}; control {' '.join(control) or '-'}"
    scaled = scaled_dots(spec, caps)
    if scaled:
        shape += f"; scaled dot {' | '.join(scaled)}"
    launch = launch_of(spec)
    return f"{shape}; launch {launch}" if launch else shape


def scaled_dots(spec, caps) -> "list[str]":
    """Each tl.dot_scaled's operand format classes and scale layout ('16-bit+scale x fp8+scale, groups of 32')."""
    from gfxhound.fuzz.program import walk
    from gfxhound.oracle.judge import scaled_dot_layout

    def each(nodes):
        for node in nodes:
            if node.get("k") == "op" and node["op"].startswith("dot_scaled"):
                yield scaled_dot_layout(node["op"], node["types"])
            for key in ("body", "then", "else"):
                yield from each(node.get(key, []))
    return sorted(set(each(walk(spec, caps).nodes)))


def launch_of(spec) -> str:
    """What of the launch the reduction could not reset (it drops every knob and resets warps and stages when the
    bug does not need them, reduce/spec_level.py SimplifyLaunch): a bug that needs kpack=2 and one that needs a
    single warp are two bugs even where their kernels have one shape. Empty for a default launch."""
    launch = spec.launch
    parts = [f"{k}={v}" for k, v in sorted(launch.options.items())]
    parts += [f"{k}={v}" for k, v in sorted(launch.env.items())]
    if launch.num_warps != 4:
        parts.append(f"num_warps={launch.num_warps}")
    if launch.num_stages != 2:
        parts.append(f"num_stages={launch.num_stages}")
    return " ".join(parts)


def reduced_shape(corpus, signature: str) -> "str | None":
    """The shape of a finding's reduced kernel, computed now (a shape definition may change after reduction)."""
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.spec import KernelSpec
    reduced = corpus.reduction(signature, "spec")
    examples = corpus.examples(signature)
    if not reduced.spec or not examples:
        return None
    try:
        return shape_of(KernelSpec.from_json(reduced.spec), Capabilities.from_json(examples[0].caps),
                        examples[0].run["target"])
    except (FileNotFoundError, ValueError, KeyError):
        return None


def regroup(corpus, signature: str, shape: str) -> "tuple[str, list[str]]":
    """Fold every other miscompile whose reduced kernel has `shape` together with `signature`: all into the one
    first seen. Returns (the id that remains, the ids folded into it)."""
    from gfxhound.corpus_store.fold import absorb
    from gfxhound.corpus_store import CorpusError
    found = {f.signature: f for f in corpus.findings()}
    same = [signature] + [s for s, f in found.items() if s != signature and f.verdict == "miscompile"
                          and reduced_shape(corpus, s) == shape]
    if len(same) == 1:
        return signature, []
    keep = min(same, key=lambda s: (found[s].first_seen, s))
    folded = []
    for other in (s for s in same if s != keep):
        try:
            absorb(corpus, other, keep)
            folded.append(other)
        except CorpusError:  # another reduction's regrouping folded it first
            continue
    return keep, folded


def regroup_all(corpus) -> "list[tuple[str, list[str]]]":
    """Regroup every reduced miscompile of a corpus (after a change of the shape definition, or a merge)."""
    done = []
    for finding in corpus.findings():
        if finding.verdict != "miscompile" or not any(f.signature == finding.signature for f in corpus.findings()):
            continue
        shape = reduced_shape(corpus, finding.signature)
        if shape:
            keep, folded = regroup(corpus, finding.signature, shape)
            if folded:
                done.append((keep, folded))
    return done
