"""Stages import the shared types and the stages before them, never a later one; only the CLI layer
(gfxhound.campaign, gfxhound.cli) wires them together (DESIGN.md, Pipeline; STYLE.md, 3)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDER = ["gfxhound.fuzz", "gfxhound.oracle", "gfxhound.reduce", "gfxhound.bisect"]
PACKAGE_DIRS = {"gfxhound.fuzz": "fuzz", "gfxhound.oracle": "oracle", "gfxhound.reduce": "reduce",
                "gfxhound.bisect": "bisect"}
SHARED = ["spec", "signature", "compat", "records", "corpus_store"]
WIRING = {"gfxhound.campaign", "gfxhound.cli", "gfxhound.__main__"}  # gfxhound.cli.* too (prefix)


def imported_modules(path: Path, package: str):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the same package
                yield package + ("." + node.module if node.module else "")
            elif node.module:
                yield node.module


def test_no_stage_imports_a_later_stage_or_the_wiring():
    problems = []
    for i, stage in enumerate(ORDER):
        later = ORDER[i + 1:]
        for path in (ROOT / PACKAGE_DIRS[stage]).glob("*.py"):
            for name in imported_modules(path, stage):
                if any(name == l or name.startswith(l + ".") for l in later) or name in WIRING:
                    problems.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not problems, problems


def test_shared_types_import_no_stage():
    problems = []
    for module in SHARED:
        path = ROOT / "gfxhound" / f"{module}.py"
        for name in imported_modules(path, "gfxhound"):
            if any(name.startswith(stage) for stage in ORDER) or name in WIRING:
                problems.append(f"gfxhound/{module}.py imports {name}")
    assert not problems, problems


EMBEDDED = ("signature", "llc_text", "compat")  # pasted, in this order, into every compile repro (fuzz/repro.py)


def test_embedded_modules_need_only_the_standard_library():
    """signature.py, llc_text.py and compat.py are pasted into repro scripts that must run with nothing but
    triton; one may import an earlier one (the renderer drops that import line: the names are already there)."""
    import sys
    for i, module in enumerate(EMBEDDED):
        for name in imported_modules(ROOT / "gfxhound" / f"{module}.py", "gfxhound"):
            top = name.split(".")[0]
            earlier = {f"gfxhound.{m}" for m in EMBEDDED[:i]}
            assert top in sys.stdlib_module_names or top == "triton" or name in earlier, f"{module}.py imports {name}"


def test_a_compile_campaign_never_imports_torch(tmp_path):
    """torch is for the execution backends; compile campaigns run where only triton is installed."""
    import subprocess
    import sys
    code = ("import sys\nfrom gfxhound.campaign import Campaign, CampaignConfig\n"
            f"c = Campaign(CampaignConfig(targets=['gfx942'], corpus={str(tmp_path / 'c')!r}))\n"
            "c._probe_fn()\nimport gfxhound.oracle.compile_task, gfxhound.oracle.judge\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-2000:]
