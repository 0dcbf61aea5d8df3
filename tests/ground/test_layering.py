"""Stages import the shared types and the stages before them, never a later one; only the CLI layer
(gfxhound.campaign, gfxhound.cli) wires them together (docs/design.md, Pipeline)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# import name -> folder; the order of the stages: each may import the ground floor and the stages before it
PACKAGE_DIRS = {"gfxhound": "gfxhound", "gfxhound.fuzz": "fuzz", "gfxhound.oracle": "oracle",
                "gfxhound.reduce": "reduce", "gfxhound.bisect": "bisect", "gfxhound.executors": "executors"}
ORDER = ["gfxhound.fuzz", "gfxhound.oracle", "gfxhound.reduce", "gfxhound.bisect", "gfxhound.report"]
WIRING = ("gfxhound.campaign", "gfxhound.cli", "gfxhound.__main__")  # may import anything


def all_modules():
    """{module name: path} for every module of the distribution."""
    found = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            if package == "gfxhound" and parts and parts[0] in ("fuzz", "oracle", "reduce", "bisect", "executors"):
                continue
            found[name] = path
    return found


def imported_modules(path: Path, module: str):
    """Every module of ours that `module` imports, at the top or inside a function."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rsplit(".", 1)[0]
                base = anchor + ("." + node.module if node.module else "")
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def layer(module: str) -> str:
    """The stage a module belongs to, 'wiring', or 'ground'."""
    if any(module == w or module.startswith(w + ".") for w in WIRING):
        return "wiring"
    for stage in ORDER:
        if module == stage or module.startswith(stage + "."):
            return stage
    return "ground"


def graph():
    modules = all_modules()
    return {m: sorted({i for i in imported_modules(p, m) if i in modules and i != m}) for m, p in modules.items()}


def test_the_layering_test_sees_every_module():
    modules = all_modules()
    files = {p for folder in PACKAGE_DIRS.values() for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts}
    assert set(modules.values()) == files
    assert {"gfxhound.protocol", "gfxhound.report.drafts", "gfxhound.cli.fuzz", "gfxhound.fuzz.collective.render"
            } <= set(modules)


def test_the_ground_floor_imports_no_stage_and_stages_only_earlier_ones():
    problems = []
    for module, imports in graph().items():
        mine = layer(module)
        if mine == "wiring":
            continue
        for other in imports:
            theirs = layer(other)
            if theirs == "wiring":
                problems.append(f"{module} imports the wiring ({other})")
            elif mine == "ground" and theirs != "ground":
                problems.append(f"{module} (ground floor) imports the stage {other}")
            elif mine != "ground" and theirs != "ground" and ORDER.index(theirs) > ORDER.index(mine):
                problems.append(f"{module} imports the later stage {other}")
    assert not problems, problems


def test_no_import_circles():
    g = graph()
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))
    for v in g:
        if v not in index:
            visit(v)
    assert not circles, circles


EMBEDDED = ("signature", "llc_text", "compat")  # pasted, in this order, into every compile repro (oracle/repro/compile.py)


def test_embedded_modules_need_only_the_standard_library():
    """signature.py, llc_text.py and compat.py are pasted into repro scripts that must run with nothing but
    triton; one may import an earlier one (the renderer drops that import line: the names are already there)."""
    import sys
    for i, module in enumerate(EMBEDDED):
        for name in imported_modules(ROOT / "gfxhound" / f"{module}.py", f"gfxhound.{module}"):
            top = name.split(".")[0]
            earlier = {f"gfxhound.{m}" for m in EMBEDDED[:i]}
            assert top in sys.stdlib_module_names or top == "triton" or any(
                name == e or name.startswith(e + ".") for e in earlier), f"{module}.py imports {name}"


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


def test_every_package_is_in_the_wheel():
    """A package pyproject.toml does not list is missing from a wheel install (pip install gfxhound), though an
    editable install finds it: every folder with an __init__.py is listed."""
    import tomllib
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {name for name, path in all_modules().items() if path.name == "__init__.py"}
    assert packages - listed == set()


CORPUS_NAMES = {"finding.json", "examples", "reduced", "bisect.json", "minimal.py", "run.json", "spec.json", "caps.json",
                "repro.py", "output.txt", "reduced.ll", "reduce.json", "reduce.log", "verify.json", "aliases.json",
                "toolchains", "llvm-ir", "draft"}
# a layout of its own, not the corpus's: the perf kernel set (corpus/perfset/README.md)
OWN_LAYOUTS = {"gfxhound.report.perf"}


def test_corpus_file_names_are_spelled_only_by_the_corpus_store():
    """A path built from a corpus name (`folder / "reduced" / "llvm-ir"`, `{"spec.json": ...}`) outside
    gfxhound/corpus_store/ is a second owner of the layout: a layout change would miss it."""
    spelled = []
    for module, path in all_modules().items():
        if module.startswith("gfxhound.corpus_store") or module in OWN_LAYOUTS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                names = [node.right]
            elif isinstance(node, ast.Dict):
                names = [k for k in node.keys if isinstance(k, ast.Constant) and "." in str(k.value)]
            spelled += [f"{module}:{n.lineno} {n.value!r}" for n in names
                        if isinstance(n, ast.Constant) and n.value in CORPUS_NAMES]
    assert spelled == []


def test_repro_exit_codes_are_spelled_only_by_the_protocol():
    """`returncode == 1` or `sys.exit(125)` outside gfxhound/protocol.py reads the repro protocol on its own."""
    spelled = []
    for module, path in all_modules().items():
        if module == "gfxhound.protocol":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(isinstance(c, ast.Constant) and c.value == 125
                                                     for c in node.comparators):
                spelled.append(f"{module}:{node.lineno}")
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "exit" and any(
                    isinstance(a, ast.Constant) and a.value == 125 for a in node.args):
                spelled.append(f"{module}:{node.lineno}")
    assert spelled == []


def test_every_import_of_ours_names_a_module_that_exists():
    """An import inside a function runs only when that path runs: a module moved into a subpackage whose
    relative imports were not rewritten fails there, late. Resolve them all here."""
    modules = all_modules()
    missing = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rsplit(".", 1)[0]
                    base = anchor + ("." + node.module if node.module else "")
                if base.startswith("gfxhound") and base not in modules:
                    missing.append(f"{module}:{node.lineno} {base}")
            elif isinstance(node, ast.Import):
                missing += [f"{module}:{node.lineno} {a.name}" for a in node.names
                            if a.name.startswith("gfxhound") and a.name not in modules]
    assert missing == []


SURFACED = ("gfxhound.fuzz", "gfxhound.oracle", "gfxhound.reduce", "gfxhound.bisect", "gfxhound.report",
            "gfxhound.corpus_store", "gfxhound.executors")


def declared(package: str) -> set:
    """The names a package's __init__ lists in __all__ (list literals only: bisect's stand-in branch is not ours)."""
    tree = ast.parse(all_modules()[package].read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets) \
                and isinstance(node.value, ast.List):
            names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return names


def test_each_stage_is_used_through_the_surface_it_declares():
    """A stage's __all__ names the modules other packages may import: a new dependency on a stage's inside is a
    decision (an edit to __all__), not an accident; and no private name crosses a package."""
    modules, problems = all_modules(), []
    surfaces = {p: declared(p) for p in SURFACED}
    assert all(surfaces.values()), "every stage declares __all__"

    def stage(name):
        return next((p for p in SURFACED if name == p or name.startswith(p + ".")), None)

    for module, imports in graph().items():
        for other in imports:
            theirs = stage(other)
            if theirs is None or theirs == stage(module):
                continue
            first = other[len(theirs) + 1:].split(".")[0]
            if first and first not in surfaces[theirs]:
                problems.append(f"{module} imports {other}, not in {theirs}.__all__")
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("gfxhound") \
                    and stage(node.module) != stage(module):
                problems += [f"{module} imports private {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_")]
    assert problems == []


def test_the_two_executors_import_nothing_of_each_other():
    """The IR executor and the machine-code executor judge each other (issue #36): a semantic function they shared
    would hide a bug they shared, so neither may import the other, directly or through another module of ours."""
    edges = graph()

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    sides = {"gfxhound.executors.llvm_ir": "gfxhound.executors.amdgcn",
             "gfxhound.executors.amdgcn": "gfxhound.executors.llvm_ir"}
    problems = []
    for mine, theirs in sides.items():
        for module in edges:
            if module == mine or module.startswith(mine + "."):
                problems += [f"{module} reaches {m}" for m in reach(module) if m == theirs or m.startswith(theirs + ".")]
    assert [m for m in edges if m.startswith("gfxhound.executors.amdgcn.")] and \
        [m for m in edges if m.startswith("gfxhound.executors.llvm_ir.")]
    assert problems == []


def test_every_package_says_what_it_is_for():
    missing = [name for name, path in all_modules().items()
               if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text()))]
    assert missing == []


def test_files_are_replaced_only_by_the_one_atomic_write():
    """`os.replace` anywhere but gfxhound/atomic.py is a second, unreviewed atomic write (moves inside a
    reducer's own temporary folder are not writes a reader can see half of)."""
    found = []
    for module, path in all_modules().items():
        if module == "gfxhound.atomic":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "replace" and \
                    getattr(node.func.value, "id", "") == "os":
                found.append(f"{module}:{node.lineno}")
    assert found == []
