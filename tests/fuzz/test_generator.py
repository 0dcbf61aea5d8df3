"""The generator: deterministic, every registry op reachable, valid after statement deletion."""
import itertools
from collections import Counter

from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.ops import REGISTRY
from gfxhound.fuzz.render import render

CAPS = assume_all("gfx942")


def specs(n, seed=11):
    return list(itertools.islice(spec_stream(CAPS, seed), n))


def test_same_seed_same_kernels():
    a = [s.spec_hash() for s in specs(20, seed=3)]
    b = [s.spec_hash() for s in specs(20, seed=3)]
    c = [s.spec_hash() for s in specs(20, seed=4)]
    assert a == b and a != c
    assert len(set(a)) == 20


def test_every_op_is_reached_and_nothing_is_dropped():
    ops, dropped, control = Counter(), 0, Counter()
    for spec in specs(300):
        r = render(spec, CAPS)
        ops.update(r.features.ops)
        control.update(r.features.control)
        dropped += r.features.dropped
        compile(r.source, "kernel.py", "exec")  # valid Python
    assert dropped == 0
    missing = set(REGISTRY) - set(ops)
    assert not missing, f"never generated: {sorted(missing)}"
    for form in ("for", "if", "kloop_dot", "nested_for", "if_ptr_select", "for_static", "early_return",
                 "if_elif_chain", "load_scalar", "load_other", "load_unmasked"):
        assert control[form] > 0, form


def _statements(body):
    for i, stmt in enumerate(body):
        yield body, i
        for key in ("for", "if"):
            if key in stmt:
                for sub in ("body", "then", "else"):
                    if sub in stmt[key]:
                        yield from _statements(stmt[key][sub])


def test_deleting_any_statement_keeps_a_renderable_kernel():
    for spec in specs(15, seed=21):
        count = sum(1 for _ in _statements(spec.body))
        for k in range(count):
            mutant = spec.replace()
            body, i = list(_statements(mutant.body))[k]
            del body[i]
            r = render(mutant, CAPS)
            compile(r.source, "kernel.py", "exec")


def test_every_probe_renders_the_feature_it_probes():
    """A probe whose op was dropped would compile trivially and 'prove' support that does not exist."""
    from gfxhound.fuzz.capabilities import probe_specs
    for name, spec in probe_specs(CAPS).items():
        r = render(spec, CAPS)
        assert r.features.dropped == 0, name
        kind = name.split(":")[0]
        wanted = {"dot": "dot", "math": name.split(":")[1], "atomic": "atomic", "knob": "dot",
                  "dot_scaled": "dot_scaled", "cast": "cast"}[kind]
        assert r.features.ops[wanted] == 1, (name, dict(r.features.ops))
        if kind == "knob":
            option, value = name[5:].split("=")
            assert str(r.options[option]) == value
