"""The package's layers as its imports show them (docs/architecture.md, "Layers"): no import
circle, no layer importing one above it, one place that assembles a box.

The graph is read from the source with `ast`, every import statement counted wherever it stands
(a deferred import inside a function is an import all the same)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pi_companion"

# Bottom to top: a module imports modules of its own layer and of the layers below, never above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("core",)),                                       # events, records, arbitration, decoders, Game
    ("games", ("games",)),                                     # the rules: implement core's Game
    ("ui", ("ui",)),                                           # draws a state
    ("adapters", ("hw", "link", "gamelog", "hub", "config", "logs", "systemd")),   # the outside world
    ("box", ("box",)),                                         # the loop: one thread owns the engine
    ("root", ("assemble",)),                                   # the one place that builds a box
    ("drivers", ("daemon", "simulate", "replay", "status", "doctor", "gallery", "webshots", "pictures", "web")),
    ("cli", ("cli", "__main__")),
]
# An adapter adapts one thing: it imports no other adapter, except these.
ADAPTER_ALLOWED = {("config", "hw")}                           # the config names pins of the pin maps


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package.parent): p for p in sorted(package.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that `name` imports (`from . import x` counts x if it is a module)."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:        # `import a.b.c`: the deepest module known
                target = target.rpartition(".")[0]
            if target.startswith("pi_companion") and target != name:
                found.add(target)
    return found


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    mods = modules(package)
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def place(module: str) -> tuple[int, str]:
    """(layer number, top-level part) of a module of the package."""
    parts = module.split(".")
    if len(parts) == 1:
        return 0, ""                                  # the package itself: its version only
    top = parts[1]
    for number, (_, members) in enumerate(LAYERS):
        if top in members:
            return number, top
    raise AssertionError(f"{module}: in no layer; add it to LAYERS (and to docs/architecture.md)")


def violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        layer, top = place(module)
        for target in sorted(targets):
            their_layer, their_top = place(target)
            if their_layer > layer:
                found.append(f"{module} ({LAYERS[layer][0]}) imports {target} ({LAYERS[their_layer][0]})")
            elif (LAYERS[layer][0] == "adapters" and their_layer == layer and top != their_top
                  and (top, their_top) not in ADAPTER_ALLOWED):
                found.append(f"{module} (adapter {top}) imports {target} (adapter {their_top})")
    return found


def test_no_import_circle():
    assert cycles(graph()) == []


def test_no_layer_imports_one_above_it():
    assert violations(graph()) == []


def test_core_imports_nothing_but_core():
    edges = graph()
    assert {t for m, ts in edges.items() if m.startswith("pi_companion.core") for t in ts
            if not t.startswith("pi_companion.core")} == set()


def constructions(path: Path, names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {called}(...)")
    return found


def test_only_the_composition_root_builds_a_box_or_a_hub():
    places = [p for p in sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py"))
              if p != PACKAGE / "assemble.py"]
    assert [c for p in places for c in constructions(p, {"Box", "Hub"})] == []


# ---- the checker itself ----

def write(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "pi_companion"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def test_the_checker_sees_a_circle_through_a_deferred_import(tmp_path):
    package = write(tmp_path, {
        "__init__.py": "", "cli.py": "from .config import X\n",
        "config.py": "def f():\n    from .cli import Y\n"})
    assert cycles(graph(package)) == [["pi_companion.cli", "pi_companion.config"]]


@pytest.mark.parametrize("files, wanted", [
    ({"core/__init__.py": "", "core/engine.py": "def f():\n    from ..games import registry\n",
      "games/__init__.py": "", "games/registry.py": ""},
     "pi_companion.core.engine (core) imports pi_companion.games.registry (games)"),
    ({"box/__init__.py": "from .. import daemon\n", "daemon.py": ""},
     "pi_companion.box (box) imports pi_companion.daemon (drivers)"),
    ({"gamelog/__init__.py": "", "gamelog/writer.py": "import pi_companion.hw.inputs\n",
      "hw/__init__.py": "", "hw/inputs.py": ""},
     "pi_companion.gamelog.writer (adapter gamelog) imports pi_companion.hw.inputs (adapter hw)"),
])
def test_the_checker_sees_a_layer_broken(tmp_path, files, wanted):
    package = write(tmp_path, {"__init__.py": "", **files})
    assert violations(graph(package)) == [wanted]
