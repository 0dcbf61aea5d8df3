"""Kernel templates (fuzz/templates/, fuzz/shape_templates.py): each loads with its launch spec, compiles for
AMD at every launch a short campaign draws and reaches the TTGIR it exists for, matches its float64 reference
in Triton's interpreter, imports nothing but Triton at module level, and takes its share of a default campaign."""
import ast
import itertools
import json
import subprocess
from collections import Counter

import pytest

from gfxhound.cli import main
from gfxhound.fuzz import shape_templates
from gfxhound.fuzz.capabilities import assume_all
from gfxhound.fuzz.generate import spec_stream
from gfxhound.fuzz.shape_templates import HERE, TEMPLATES, available, template_kernel

# what each template exists for: TTGIR features (oracle/ttgir_features.py) its launches reach for gfx942
REACHES = {
    "moe": ["tt.atomic_rmw:float@blocked", "scf.if"],
    "persistent": ["tt.get_num_programs", "scf.for:tensor_of_ptr"],
    "paged": ["scf.while"],
    "pointers": ["scf.while"],
    # on gfx942/gfx950 descriptors become masked pointer loads before TTGIR; gfx1250 keeps them (its Tensor Data Mover)
    "descriptor": ["tt.make_tensor_descriptor", "amdg.async_tdm_copy_global_to_local"],
}
TARGET = {"descriptor": "gfx1250"}  # where the template's TTGIR shows what it is for (default gfx942)
USABLE = [n for n in sorted(TEMPLATES) if available(n)]
# live Triton 3.9.0 bugs a template's launches hit on gfx942 (docs/findings.md): the test names them, so a fix or a
# new failure shows here
LIVE_ICES = {"pointers": "ifOp types must match in both arms"}  # canonicalize-pointers, a tl.where in one if arm


def run_cli(gfxhound_bin, *args, timeout=900):
    return subprocess.run([gfxhound_bin, *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("name", USABLE)
def test_each_template_compiles_and_reaches_what_it_is_for(gfxhound_bin, tmp_path, name):
    proc = run_cli(gfxhound_bin, "fuzz", "--shape", name, "--target", TARGET.get(name, "gfx942"), "--budget", "8",
                   "--workers", "2",
                   "--corpus", str(tmp_path / "c"), "--json", "--seed", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    verdicts = summary["verdicts"]
    if name in LIVE_ICES:
        assert set(verdicts) <= {"pass", "ice"} and verdicts.get("pass", 0) >= 2, summary["findings"]
        assert all(LIVE_ICES[name] in f["normalised"] + f["first_error_line"] for f in summary["findings"]), \
            summary["findings"]
    else:
        assert verdicts == {"pass": 8}, summary["findings"]
    cov = summary["coverage"]
    assert cov[f"shape:{name}"]["kernels"] == 8
    missing = [f for f in REACHES[name] if f"detail:ttgir:{f}" not in cov]
    assert not missing, (missing, sorted(k for k in cov if k.startswith("detail:ttgir:")))


@pytest.mark.parametrize("name", USABLE)
def test_each_template_matches_its_reference_in_the_interpreter(gfxhound_bin, tmp_path, name):
    proc = run_cli(gfxhound_bin, "fuzz", "--shape", name, "--backend", "interpret", "--budget", "6", "--workers",
                   "2", "--corpus", str(tmp_path / "c"), "--json", "--seed", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["verdicts"] == {"pass": 6}, summary["findings"]  # bf16, which it cannot run, is steered out
    assert summary["execution"]["compared"] > 0 and summary["execution"]["mismatches"] == 0


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_templates_import_only_triton_at_module_level(name):
    """Compile reproducers embed the file and run in release venvs that hold Triton alone."""
    tree = ast.parse((HERE / f"{TEMPLATES[name].stem}.py").read_text())
    imported = {alias.name.split(".")[0] for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module.split(".")[0] for node in tree.body
                                            if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"triton", "__future__"}, imported
    assert ast.get_docstring(tree) and "reference" in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_default_campaigns_draw_every_usable_template_as_a_user_family_spec():
    caps = assume_all("gfx942")
    specs = list(itertools.islice(spec_stream(caps, 11), 300))
    shapes = Counter(s.meta.get("shape") for s in specs if s.family == "user")
    assert set(shapes) == set(USABLE), shapes
    for spec in specs:
        if spec.family == "user":
            assert spec.user["template"] == spec.meta["shape"]
            assert spec.user["file"] == f"gfxhound/fuzz/templates/{TEMPLATES[spec.meta['shape']].stem}.py"
            assert spec.user["source"] == template_kernel(spec.meta["shape"])["source"]


def test_a_template_the_release_lacks_is_a_one_line_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(TEMPLATES, "moe", shape_templates.Template("moe_gemm", "moe_gemm", needs="no_such_api"))
    rc = main(["fuzz", "--shape", "attention,moe", "--budget", "1", "--corpus", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "--shape moe needs tl.no_such_api" in err
    assert not any(n == "moe" for n in (s.meta.get("shape") for s in itertools.islice(
        spec_stream(assume_all("gfx942"), 3), 60)))  # and default campaigns never draw it


@pytest.mark.gpu
@pytest.mark.parametrize("name", USABLE)
def test_each_template_matches_its_reference_on_a_gpu(gfxhound_bin, tmp_path, name):
    proc = run_cli(gfxhound_bin, "fuzz", "--shape", name, "--backend", "device", "--budget", "100", "--workers", "8",
                   "--corpus", str(tmp_path / "c"), "--json", "--seed", "5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["verdicts"] == {"pass": 100}, summary["findings"]
    assert summary["execution"]["mismatches"] == 0 and summary["execution"]["compared"] > 100
