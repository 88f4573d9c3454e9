"""The simulator's layers: every module lives in a layer package, imports only from its own layer or a layer below it,
and no import circle joins any two modules, counting imports inside functions (which hide a circle from Python but not
from a reader). The rule is read from the syntax tree of every module under sim/, so a new module is checked as it
lands; import-linter's "layers" contract states the same rule for projects that can take a dependency.

Layers, bottom first; the packages of one tier are independent (neither imports the other):
- physics | page: the presets and the cost of an operation, a step, a request's memory | the page's text helpers;
- serving | techniques: many requests on a GPU | what changes the cost of one step;
- kit | questions: the widget kit | each lesson's predict-box questions;
- widgets: one module per widget.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[2] / "sim"
TIERS = (("physics", "page"), ("serving", "techniques"), ("kit", "questions"), ("widgets",))
TIER = {package: level for level, tier in enumerate(TIERS) for package in tier}


def module_names(root: Path) -> dict[str, Path]:
    """Every module under `root` (a package named sim) by dotted name; a package by its own name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = ("sim", *path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The sim modules a module's import statements name, wherever they stand (a function's too): for `from x import
    y`, x.y if that is a module, else x."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {n for n in found if n in known and n != name}


def graph(modules: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the sim modules it imports, from each module's source."""
    known = set(modules)
    return {name: imported(ast.parse(source), name, source_is_package(name, modules), known)
            for name, source in modules.items()}


def source_is_package(name: str, modules: dict[str, str]) -> bool:
    return any(other.startswith(name + ".") for other in modules)


def layer(name: str) -> str | None:
    """The layer package a module belongs to (None: the root package sim itself)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Each import that reaches a layer above its own, or sideways into an independent one of the same tier."""
    wrong = []
    for name, targets in sorted(edges.items()):
        for target in sorted(targets):
            here, there = layer(name), layer(target)
            if here is None or there is None or here == there:
                continue
            if TIER[there] >= TIER[here]:
                wrong.append(f"{name} imports {target}: {there} is {'beside' if TIER[there] == TIER[here] else 'above'} "
                             f"{here}")
    return wrong


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle as the modules along it, first repeated at the end; None if there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges.get(name, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(edges):
        if name not in state and (found := visit(name)):
            return found
    return None


SOURCES = {name: path.read_text(encoding="utf-8") for name, path in module_names(SIM).items()}
EDGES = graph(SOURCES)


def test_every_module_lives_in_a_layer_package():
    loose = sorted(name for name in SOURCES if name != "sim" and layer(name) not in TIER)
    assert not loose, f"modules outside the layer packages {sorted(TIER)}: {loose}"


def test_no_layer_imports_a_layer_above_it_or_beside_it():
    assert upward(EDGES) == []


def test_no_import_circle():
    found = circle(EDGES)
    assert found is None, "import circle: " + " -> ".join(found)


# The checks themselves, on small made-up simulators: each must see what it is there to see.

def made_up(**sources: str) -> dict[str, set[str]]:
    return graph({f"sim.{name}": source for name, source in sources.items()} | {"sim": ""})


def test_the_check_sees_a_circle_hidden_in_a_function():
    edges = made_up(**{"serving": "", "serving.a": "from sim.serving import b\n",
                       "serving.b": "def f():\n    from sim.serving import a\n"})
    assert circle(edges) == ["sim.serving.a", "sim.serving.b", "sim.serving.a"]


def test_the_check_sees_an_upward_and_a_sideways_import():
    edges = made_up(**{"physics": "", "page": "", "serving": "", "physics.cost": "import sim.serving.queue\n",
                       "page.text": "from sim.physics import cost\n", "serving.queue": ""})
    assert upward(edges) == ["sim.page.text imports sim.physics.cost: physics is beside page",
                             "sim.physics.cost imports sim.serving.queue: serving is above physics"]


@pytest.mark.parametrize("source, target", [("from . import b\n", "sim.serving.b"),
                                            ("from .b import thing\n", "sim.serving.b"),
                                            ("from sim.serving.b import thing\n", "sim.serving.b"),
                                            ("import sim.serving.b as b\n", "sim.serving.b")])
def test_every_form_of_import_is_seen(source, target):
    assert made_up(**{"serving": "", "serving.a": source, "serving.b": ""})["sim.serving.a"] == {target}
