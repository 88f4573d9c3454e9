"""The simulator imports the standard library at module level only: then importing every widget module, as the
build's trace does (builder/stdlib.py), meets every standard-library module the simulator can ask for, whatever
state a widget is later given."""

import ast
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[2] / "sim"


def late_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of each import inside a function or class that is not the simulator's own."""
    top = set(map(id, tree.body))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or "."]
            found += [(node.lineno, n) for n in names if n != "sim" and not n.startswith(("sim.", "."))]
    return found


@pytest.mark.parametrize("path", sorted(SIM.rglob("*.py")), ids=lambda p: p.relative_to(SIM).as_posix())
def test_standard_library_imports_are_at_module_level(path):
    assert late_imports(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_rule_sees_an_import_in_a_function():
    tree = ast.parse("import json\ndef f():\n    import decimal\n    from sim.physics import cache\n")
    assert late_imports(tree) == [(3, "decimal")]
