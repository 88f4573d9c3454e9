"""builder/yamltext.py: libyaml reads the project's YAML as the pure-Python parser does, and a refused document
fails with the pure-Python parser's message and line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from builder import yamltext

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for p in (ROOT / "lessons").rglob("*.yml")) + sorted((ROOT / "site" / "i18n").glob("*.yml"))


def lines(node) -> list:
    """Every node's kind, value and line, depth first."""
    if isinstance(node, yaml.ScalarNode):
        return [(node.tag, node.value, node.start_mark.line)]
    children = node.value if isinstance(node, yaml.SequenceNode) else [part for pair in node.value for part in pair]
    return [(node.tag, None, node.start_mark.line)] + [found for child in children for found in lines(child)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_libyaml_reads_every_file_as_the_python_parser_does(path):
    text = path.read_text(encoding="utf-8-sig")
    assert yamltext.LOADER is not yaml.SafeLoader, "PyYAML without libyaml: builds are slower"
    assert yamltext.safe_load(text) == yaml.safe_load(text)
    assert lines(yamltext.compose(text)) == lines(yaml.compose(text, Loader=yaml.SafeLoader))


def test_a_refused_document_fails_as_the_python_parser_says():
    with pytest.raises(yaml.YAMLError) as python:
        yaml.safe_load("a: 1\nT: [\n")
    with pytest.raises(yaml.YAMLError) as ours:
        yamltext.safe_load("a: 1\nT: [\n")
    assert str(ours.value) == str(python.value) and ours.value.problem_mark.line == 2
