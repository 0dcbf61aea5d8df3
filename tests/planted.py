"""A real corpus finding of a planted wrong result (mutation testing): a generated kernel made wrong by the
`off-by-one` plant under the interpreter, judged by the oracle and recorded with its execution repro (the plant is
in the repro's kernel, so the repro exits 1)."""
import re
from dataclasses import replace

from gfxhound.corpus_store import Corpus
from gfxhound.fuzz.capabilities import Capabilities, assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.render import render
from gfxhound.oracle.repro.execute import render_exec_repro
from gfxhound.oracle.inputs import make_inputs
from gfxhound.oracle.limitations import INTERPRETER_PRECISIONS, excluded_features
from gfxhound.oracle.planted import PLANTS, mutate_source
from gfxhound.oracle.pool import CompilePool
from gfxhound.oracle.run_task import reference
from gfxhound.reduce.miscompile import ExecutionTest


def interpret_caps():
    data = assume_all("gfx942").to_json()
    data["features"] = sorted(set(data["features"]) | set(excluded_features("interpret")))
    data["input_precisions"] = [p for p in data["input_precisions"] if p in INTERPRETER_PRECISIONS]
    data.update(knobs={}, env_knobs={})
    return Capabilities.from_json(data)


def planted_finding(corpus_dir, seed=21, min_lines=12, plant="off-by-one", plant_in_repro=False):
    """(corpus, finding, rendered kernel) for the first generated kernel the plant makes wrong; with
    plant_in_repro the recorded repro runs the planted kernel (as a campaign's repro runs the miscompiled one)."""
    caps = interpret_caps()
    pool = CompilePool(2, 120, {"TRITON_INTERPRET": "1", "PYTHONWARNINGS": "ignore"})
    test = ExecutionTest(pool, caps.to_json(), "gfx942", "interpret", "test", plant=plant)
    try:
        for spec in spec_stream(caps, seed):
            rendered = render(spec, caps)
            if rendered.body_lines < min_lines or not re.search(PLANTS[plant].pattern, rendered.source):
                continue
            execution = test.judge(spec)
            if execution.verdict == "miscompile":
                break
        else:
            raise AssertionError("no generated kernel became wrong under the plant")
    finally:
        pool.close()
    corpus = Corpus(corpus_dir)
    shown = replace(rendered, source=mutate_source(plant, rendered.source)) if plant_in_repro else rendered
    repro = render_exec_repro(shown, spec, make_inputs(spec), reference(spec, caps, "interpret"),
                              execution.to_json())
    finding, _ = corpus.record(execution.to_json(), {"spec.json": spec.dumps(), "run.json": execution.dumps(),
                                                     "caps.json": caps.dumps(), "repro.py": repro})
    return corpus, finding, rendered
