"""A wrong result's repro agrees with its finding (issue 16, item 7): the expected values and undetermined mask it
embeds are exactly those the worker judged with, so every element the message quotes as `[i] expected X` is
determined in the repro's data and equal to X, and the repro shows the bug.

The case that broke it: a launch pair's second member (fuzz/pairs.py) ran on the first member's inputs and was
judged against the first member's reference, but was recorded as a spec of its own, whose inputs were drawn from
its own spec hash: the repro embedded other data (on a GPU: `[20] expected 12464` quoted, NaN undetermined
embedded). Launch pairs only run on a GPU; here the second member runs under the interpreter through the same
worker function, with a planted bug standing for the compiler's (the first member stays correct).
"""
import ast
import base64
import io
import json
import os
import re
import subprocess
import sys
import zlib
from dataclasses import asdict, replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

from planted import interpret_caps  # noqa: E402

from gfxhound.campaign import Campaign, CampaignConfig  # noqa: E402
from gfxhound.corpus_store import Corpus  # noqa: E402
from gfxhound.fuzz.capabilities import assume_all  # noqa: E402
from gfxhound.fuzz.pairs import variant  # noqa: E402
from gfxhound.fuzz.render import render  # noqa: E402
from gfxhound.oracle.repro.execute import disagreements  # noqa: E402
from gfxhound.oracle.inputs import make_inputs  # noqa: E402
from gfxhound.oracle.planted import mutate_source, spec_stream  # noqa: E402
from gfxhound.oracle.run_task import reference  # noqa: E402
from gfxhound.spec import KernelSpec  # noqa: E402

PLANT = "off-by-one"


def _with_pair(spec, kind):
    second = asdict(spec.launch)
    if kind == "warps":
        second["num_warps"] = 8 if spec.launch.num_warps != 8 else 4
    elif kind == "stages":
        second["num_stages"] = 3 if spec.launch.num_stages != 3 else 2
    else:
        second["options"] = dict(second["options"], waves_per_eu=2 if spec.launch.options.get("waves_per_eu") != 2
                                 else 1)
    return spec.replace(pair={"kind": kind, "launch": second})


def second_member_planted(task):
    """The campaign worker for the test (runs in a spawned worker with TRITON_INTERPRET=1): the real
    `run_interpret` for the first member (correct), then the launch pair's second member as a device worker runs
    it (oracle/run_task.py `_execute`: the first member's inputs and reference), its kernel planted."""
    from pathlib import Path

    from gfxhound.oracle import run_task
    from gfxhound.oracle.compile_task import load_kernel
    result = run_task.run_interpret(task)
    if result.get("status") != "ok" or result["checks"]["mismatches"]:
        return result
    spec, caps, rendered = run_task._setup(task)
    planted = replace(rendered, source=mutate_source(PLANT, rendered.source))
    kernel = load_kernel(planted.source, Path(task["task_dir"]) / "kernel_planted.py", planted.kernel_name)
    expected = run_task.reference(spec, caps, "interpret")
    result["pair"] = run_task._run_pair(spec, planted, kernel, make_inputs(spec), expected, None, task, "cpu")
    return result


def _embedded(repro_text):
    literal = re.search(r"^DATA = (.*)$", repro_text, re.M).group(1)
    blob = zlib.decompress(base64.b64decode(ast.literal_eval(literal)))
    return torch.load(io.BytesIO(blob), weights_only=True)


def _quoted(message):
    """(output, index, value as printed) for every `[i] expected X` of the message (oracle/compare.py)."""
    out = []
    for line in message.splitlines():
        name = line.split(" ", 1)[0]
        out += [(name, int(i), x) for i, x in re.findall(r"\[(\d+)\] expected ([^\s,;]+)", line)]
    return out


def _printed(value):
    return f"{value:.9g}" if isinstance(value, float) else str(value)


def test_a_pair_members_wrong_result_repro_embeds_what_it_was_judged_with(tmp_path, worker_env):
    caps = interpret_caps()
    spec = _with_pair(next(spec_stream(PLANT, 8)), "warps")
    config = CampaignConfig(targets=["gfx942"], corpus=str(tmp_path / "corpus"), backend="interpret", kernels=1,
                            workers=1, seed=1, timeout=120, worker_env=worker_env)
    stats = Campaign(config, task_fn=second_member_planted, specs=[spec], caps={"gfx942": caps}).run()
    assert stats.verdicts["miscompile"] == 1, (stats.verdicts, dict(stats.unresolved))
    assert stats.coverage["pair:warps=mismatch"] == 1, dict(stats.coverage)

    corpus = Corpus(config.corpus)
    finding = corpus.findings()[0]
    example = corpus.example_dirs(finding.signature)[0]
    recorded = KernelSpec.from_json(json.loads((example / "spec.json").read_text()))
    assert recorded == variant(spec, "gfx942")[0] and recorded.pair is None  # the second member, alone
    message = json.loads((example / "run.json").read_text())["message"]
    repro = (example / "repro.py").read_text()
    data = _embedded(repro)

    quoted = _quoted(message)
    assert quoted, message
    for name, i, shown in quoted:
        exp = data["expected"][name]
        assert not bool(exp["bad"][i]) and bool(exp["written"][i]), (name, i, shown, message)
        assert _printed(exp["v"][i].item()) == shown, (name, i, shown, exp["v"][i].item(), message)
    assert disagreements(message, data["expected"]) == [] and "WARNING" not in repro

    # the bug (here the plant, standing for the compiler's) is in the repro's kernel: the repro shows it
    planted = mutate_source(PLANT, render(recorded, caps).source)
    path = tmp_path / "repro.py"
    path.write_text(re.sub(r"^KERNEL = .*$", lambda m: "KERNEL = " + repr(planted), repro, count=1, flags=re.M))
    proc = subprocess.run([sys.executable, str(path), "--interpret"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    assert "bug present: out_0: " in proc.stdout, proc.stdout


@pytest.mark.parametrize("kind", ["warps", "stages", "knobs"])
def test_both_members_of_a_launch_pair_have_the_same_data_and_reference(kind):
    """What the worker judges a second member with (the first member's inputs and reference) is what the main
    process regenerates for the recorded second member, bit for bit, on a GPU's tolerance table too."""
    caps = assume_all("gfx942")
    spec = _with_pair(next(spec_stream(PLANT, 8)), kind)
    second, _ = variant(spec, "gfx942")
    assert second.spec_hash() != spec.spec_hash()
    first_inputs, second_inputs = make_inputs(spec), make_inputs(second)
    assert first_inputs.keys() == second_inputs.keys()
    for name, tensor in first_inputs.items():
        assert torch.equal(tensor.view(torch.uint8), second_inputs[name].view(torch.uint8)), name
    for backend, device_kind in (("interpret", ""), ("device", "cuda"), ("device", "hip")):
        a, b = reference(spec, caps, backend, device_kind), reference(second, caps, backend, device_kind)
        for name, buf in a.outputs.items():
            other = b.outputs[name]
            for field in ("v", "e"):
                x, y = getattr(buf, field), getattr(other, field)
                assert torch.equal(x.view(torch.int64), y.view(torch.int64)), (backend, name, field)
            assert torch.equal(buf.bad, other.bad) and torch.equal(buf.written, other.written), (backend, name)


def test_a_repro_says_when_its_data_disagree_with_the_message():
    """The repro renderer checks the quoted values against what it embeds and says so in the repro when they
    differ (a harness bug must not pass as a finding's evidence)."""
    from gfxhound.oracle.repro.execute import render_exec_repro
    caps = assume_all("gfx942")
    spec = next(spec_stream(PLANT, 8))
    expected = reference(spec, caps, "interpret")
    v = expected.outputs["out_0"].v
    execution = {"spec_hash": spec.spec_hash(), "verdict": "miscompile", "backend": "interpret", "target": "gfx942",
                 "toolchain": "test"}
    right = f"out_0 (fp32, store): 1 of {v.numel()} elements wrong; [3] expected {_printed(v[3].item())} ± 0, got 0"
    wrong = f"out_0 (fp32, store): 1 of {v.numel()} elements wrong; [3] expected 12464 ± 0, got 0"
    text = render_exec_repro(render(spec, caps), spec, make_inputs(spec), expected, dict(execution, message=right))
    assert "WARNING" not in text
    text = render_exec_repro(render(spec, caps), spec, make_inputs(spec), expected, dict(execution, message=wrong))
    assert "WARNING: the embedded expected values disagree with this message: out_0[3] expected 12464" in text
