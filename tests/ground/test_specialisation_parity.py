"""Compile-only campaigns specialise arguments exactly as each release's runtime would, with and without torch.

For every supported release (one cached venv each, the cache a user's release bisection fills, bisect/releases.py),
a set of generated kernels is specialised twice by gfxhound (compat.specialise, the module repro scripts embed): in
the release's venv as it is, without torch, and with torch on the path; and once by the release's own runtime, a
real `kernel[grid](...)` launch with CPU torch tensors stopped at its jit_cache_hook (tests/specialisation_probe.py).
Signatures, constexprs and attributes must be equal in all three, for each kernel under the knob it drew and under
AMDGCN_USE_BUFFER_OPS forced on, off and unset (the release's own default). torch is the main venv's CPU build
(torch==2.13.0), lent to each release through a folder of links to it and its dependencies: no torch per release.
"""
import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ["3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0"]
# AMDGCN_USE_BUFFER_OPS's default in each release's triton/knobs.py: off in 3.4 and 3.5, on from 3.6
DEFAULT_ON = {"3.4.0": False, "3.5.1": False}
# 3.4-3.7's HIPBackend.is_within_2gb imports torch before it looks at the argument: there gfxhound runs it with a
# stand-in torch module (gfxhound/compat.py); 3.8 made the import optional
NEEDS_STAND_IN = {"3.4.0", "3.5.1", "3.6.0", "3.7.1"}
KERNELS = 30
HUGE = 1 << 32


def _cache_root():
    return Path(os.environ.get("GFXHOUND_CACHE") or Path.home() / ".cache" / "gfxhound") / "venvs"


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Generated kernels (every 5th with a > 2 GB input), each under four settings of AMDGCN_USE_BUFFER_OPS."""
    from gfxhound.fuzz import dtypes as D
    from gfxhound.fuzz.capabilities import assume_all
    from gfxhound.fuzz.generate import spec_stream
    from gfxhound.fuzz.render import render

    root = tmp_path_factory.mktemp("parity")
    torch_dtype = {"*" + d.signature: d.torch for d in D.DTYPES.values()}
    caps = assume_all("gfx942")
    out = []
    generated = (s for s in spec_stream(caps, seed=23) if s.family == "kernels")  # not the kernel templates
    for i, spec in enumerate(generated):
        if len(out) >= 4 * KERNELS:
            break
        if i % 5 == 0:
            spec.inputs[0]["huge"] = True
        rendered = render(spec, caps, kernel_name=f"kernel_{i}")
        path = root / f"kernel_{i}.py"
        path.write_text(rendered.source)
        args = [dict(a, torch_dtype=torch_dtype[a["type"]]) if a["kind"] == "ptr" else a for a in rendered.args]
        drawn = dict(rendered.env)
        unset = {k: v for k, v in drawn.items() if k != "AMDGCN_USE_BUFFER_OPS"}
        for env in (drawn, dict(unset, AMDGCN_USE_BUFFER_OPS="1"), dict(unset, AMDGCN_USE_BUFFER_OPS="0"), unset):
            out.append({"file": str(path), "kernel": rendered.kernel_name, "args": args, "env": env})
    (root / "cases.json").write_text(json.dumps(out))
    # compat.py as repro scripts embed it (oracle/repro/compile.py): llc_text's names first, then compat without that import
    compat = re.sub(r"^from gfxhound\.llc_text import .*$", "", (ROOT / "gfxhound" / "compat.py").read_text(),
                    flags=re.M)
    (root / "compat_embedded.py").write_text((ROOT / "gfxhound" / "llc_text.py").read_text() + "\n" + compat)
    return root


def _requirements(name):
    for req in metadata.requires(name) or []:
        if "extra ==" not in req:
            yield re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0]


@pytest.fixture(scope="module")
def torch_dir(tmp_path_factory):
    """A folder of links to this venv's torch and what it imports (no triton): a release's venv with it on its
    path has torch, the same build users launch with (CPU here)."""
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("torch-path")
    todo, done = ["torch"], set()
    while todo:
        name = todo.pop()
        if name.lower() in done or name.lower() in ("setuptools", "triton"):
            continue
        done.add(name.lower())
        dist = metadata.distribution(name)
        for top in {f.parts[0] for f in dist.files or [] if f.parts[0] != ".." and f.parts[0] != "__pycache__"}:
            link = folder / top
            if not link.exists():
                link.symlink_to(Path(dist.locate_file(top)))
        todo += list(_requirements(name))
    assert not (folder / "triton").exists()
    return folder


def _probe(python, cases, release, torch=None):
    argv = [str(python), str(ROOT / "tests" / "specialisation_probe.py"), str(cases / "cases.json"),
            str(cases / "compat_embedded.py"), release] + (["--torch", str(torch)] if torch else [])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AMDGCN_", "PYTHON", "TRITON_"))}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("release", RELEASES)
def test_gfxhound_specialises_as_the_release_runtime_with_and_without_torch(release, cases, torch_dir):
    from gfxhound.bisect.releases import ReleaseError, VenvCache
    try:
        python = VenvCache(_cache_root()).ensure(release)
    except ReleaseError as exc:
        pytest.fail(f"no venv for triton {release}: {exc}")
    with_torch = _probe(python, cases, release, torch_dir)
    without = _probe(python, cases, release)
    assert with_torch["triton"] == without["triton"] == release and without["torch"] is None
    assert with_torch["report"]["torch"] and not without["report"]["torch"]
    specs = json.loads((cases / "cases.json").read_text())
    for i, (case, full, bare) in enumerate(zip(specs, with_torch["cases"], without["cases"])):
        truth = full["runtime"]
        where = f"case {i} ({Path(case['file']).name}, env {case['env']})"
        assert full["ours"] == truth, f"{where}, with torch: ours {full['ours']} != runtime {truth}"
        assert bare["ours"] == truth, f"{where}, without torch: ours {bare['ours']} != runtime {truth}"
    # the runtime really decided: pointer_range where the knob (its default when unset) is on and the buffer is
    # under 2 GB, never on a > 2 GB one; and without torch, gfxhound ran the release's own rule
    ranged = {True: 0, False: 0}
    for case, row in zip(specs, with_torch["cases"]):
        knob = case["env"].get("AMDGCN_USE_BUFFER_OPS")
        on = DEFAULT_ON.get(release, True) if knob is None else knob == "1"
        for arg in case["args"]:
            if arg["kind"] == "ptr":
                has = ["tt.pointer_range", 32] in row["runtime"]["attrs"].get(arg["name"], [])
                assert has == (on and arg["value"] < HUGE), f"{release}: {arg['name']} of {case['file']}"
                ranged[has] += 1
    assert ranged[True] > 50 and ranged[False] > 50, ranged
    assert without["report"]["exact"] and without["report"]["pointer_range_on_4kb"] == DEFAULT_ON.get(release, True)
    assert without["report"]["method"] == ("hooks+stand-in" if release in NEEDS_STAND_IN else "hooks")
